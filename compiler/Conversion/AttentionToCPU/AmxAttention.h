//===- AmxAttention.h - QK^T and PV of flash attention on AMX ---*- C++ -*-===//
//
// The level-6 (AMX) variant of the flash-attention kernel computes its two
// products with tdpbf16ps on the typed GEMM's AMX building block
// (KernelVariants/AmxTiles.h); the rest of the kernel (the key range and
// masks, the online softmax in f32, the query pack) is FlashAttention.cpp's.
// The products keep the kernel's transposed layout, queries along the
// columns:
//
//   St[keys, queries]  = K[keys, dims] . Qs^T      A: key rows in bf16
//                                                  B: scaled queries, bf16
//                                                     pairs of head dims
//   accT[dims, queries] += V^T[dims, keys] . Pt    A: the value block
//                                                     transposed, in bf16
//                                                  B: probabilities, bf16
//                                                     pairs of keys
//
// so that the online softmax's per-query statistics stay vectors across
// the lanes, and the accumulator's rescaling is one vector multiply per
// row of accT.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CONVERSION_ATTENTIONTOCPU_AMXATTENTION_H
#define TFM_COMPILER_CONVERSION_ATTENTIONTOCPU_AMXATTENTION_H

#include "mlir/IR/Builders.h"

namespace mlir::tfm {

/// The head dims an AMX tile multiplies at once: whole K tiles of 32 bf16.
int64_t amxAttentionHeadDim(int64_t headDim);
/// Value dims in whole C tiles of 16 rows.
int64_t amxAttentionValueDim(int64_t valueDim);

/// The AMX kernel's stack tiles for a query block of `blockQ` queries (a
/// multiple of 16) and a key block of `blockK` keys (a multiple of 32),
/// head dims padded to `headDim` (amxAttentionHeadDim) and value dims to
/// `valueDim` (amxAttentionValueDim). Padding holds zeros: a bf16 zero
/// times anything finite adds nothing.
struct AmxAttentionTiles {
  int64_t blockQ, blockK, headDim, valueDim;
  Value keys;          ///< [blockK, headDim / 2] i32: key rows in bf16
  Value queries;       ///< [headDim / 2, 2 blockQ] bf16: query pairs
  Value scores;        ///< [blockK, blockQ] f32: St
  Value valuesT;       ///< [valueDim, blockK] bf16: V^T, zeros past keys
  Value probabilities; ///< [blockK / 2, blockQ] i32: bf16 pairs of keys
  Value accT;          ///< [valueDim, blockQ] f32: (P V)^T
};

/// Moves `b` into an scf.if that runs only when `first` < `rows`: the AMX
/// kernel skips the groups of queries past a short block's last one. The
/// caller's InsertionGuard restores the builder.
void emitSkipPastRows(OpBuilder &b, Location loc, Value first, Value rows);

/// St[0 : ceil(validKeys / 32) * 32, :] = keys . queries, over the groups of
/// 32 queries that hold one of the block's first `rows`.
void emitAmxScores(OpBuilder &b, Location loc, const AmxAttentionTiles &t,
                   Value validKeys, Value rows);

/// valuesT[c][jj] = bf16(V[j0 + jj, c]) for the block's keys, zero past
/// `validKeys` and past `valueDim` (V's dims); V [Sk, valueDim] f32 is read
/// in 16 x 16 blocks transposed through registers.
void emitAmxPackValues(OpBuilder &b, Location loc, const AmxAttentionTiles &t,
                       Value v, int64_t valueDim, Value j0, Value validKeys);

/// accT = accT * rowScale (per query, the online softmax's correction) +
/// valuesT . probabilities over the block's whole tiles of 32 keys (the
/// groups of 32 queries that hold one of the first `rows`).
void emitAmxAccumulate(OpBuilder &b, Location loc, const AmxAttentionTiles &t,
                       Value rowScale, Value validKeys, Value rows);

/// O[i0 + q, c] = accT[c, q] / rowSum[q] for q < rows and c < valueDim (0
/// where a query saw no key), transposed back through registers.
void emitAmxStoreOutput(OpBuilder &b, Location loc, const AmxAttentionTiles &t,
                        Value rowSum, Value o, int64_t valueDim, Value i0,
                        Value rows);

} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_ATTENTIONTOCPU_AMXATTENTION_H
