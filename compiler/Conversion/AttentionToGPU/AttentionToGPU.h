//===- AttentionToGPU.h - Flash attention kernel tiling ---------*- C++ -*-===//
//
// The flash-attention kernel's tile shapes, chosen from the head dimensions
// and the shared memory a block may use; shared with the unit test that
// replays the kernel's schedule on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CONVERSION_ATTENTIONTOGPU_ATTENTIONTOGPU_H
#define TFM_COMPILER_CONVERSION_ATTENTIONTOGPU_ATTENTIONTOGPU_H

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace mlir::tfm {
class AttentionOp;

/// One block of `threads` threads computes `blockQ` query rows, visiting
/// the keys `blockK` at a time.
struct FlashAttentionTiles {
  int64_t threads = 128;
  int64_t blockQ = 64;
  int64_t blockK = 64;
  int64_t headDim = 0;  ///< Dk
  int64_t valueDim = 0; ///< Dv

  /// Shared rows are padded by one float against bank conflicts.
  int64_t queryStride() const { return headDim + 1; }
  int64_t keyValueStride() const {
    return (headDim > valueDim ? headDim : valueDim) + 1;
  }
  int64_t scoreStride() const { return blockK + 1; }
  /// Accumulator elements [blockQ, valueDim] held by each thread.
  int64_t accumulatorsPerThread() const {
    return (blockQ * valueDim + threads - 1) / threads;
  }
  /// The query, key/value and score tiles and three per-query rows.
  int64_t sharedFloats() const;
};

/// What a block may use, and tile sizes forced by the caller (0: choose).
struct FlashAttentionLimits {
  int64_t threads = 128;
  int64_t sharedBytes = 48 * 1024;
  int64_t accumulators = 32; ///< output elements per thread (registers)
  int64_t blockQ = 0;
  int64_t blockK = 0;
  int64_t queries = 0; ///< the static query count, 0 when dynamic
};

/// The largest tiles (blockQ <= 64, <= threads and no larger than the
/// queries' power of two; blockK <= 64) within `limits`, or the forced
/// ones if they fit; failure when none fit.
FailureOr<FlashAttentionTiles>
chooseFlashAttentionTiles(const FlashAttentionLimits &limits, int64_t headDim,
                          int64_t valueDim);

/// Whether the kernel reads `op`'s operands as laid out (see the .cpp).
bool flashAttentionTakesLayout(AttentionOp op);
/// Whether convert-attention-to-gpu (default limits) can lower `op`, on
/// tensors or buffers: f32, static head dimensions within the tiles' shared
/// memory, the mask read through its default map.
bool gpuFlashAttentionTakes(AttentionOp op);
/// `op` itself when its operands are read in the default order, otherwise
/// the same attention over views of its operands in that order (built at
/// `b`'s insertion point; the caller erases it once lowered).
AttentionOp withDefaultLayout(OpBuilder &b, AttentionOp op);

/// The grid of a flash-attention launch, shared by the f32 and the
/// tensor-core kernels: one block per (batch*head, block of queries).
struct AttentionGrid {
  Value sq, sk;      ///< queries and keys per sequence
  Value queryBlocks; ///< blocks per sequence
  Value blocks;      ///< blocks in all
  Value grid;        ///< `blocks`, at least 1 (a zero grid is invalid)
  SmallVector<OpFoldResult> batchDims; ///< Q's (batch, head, ...) sizes
};
AttentionGrid emitAttentionGrid(OpBuilder &b, Location loc, AttentionOp op,
                                int64_t blockQ);
/// Inside the launch: the first query of block `block`, and its
/// (batch, head, ...) indices into `leading`.
Value emitBlockStart(OpBuilder &b, Location loc, const AttentionGrid &grid,
                     Value block, int64_t blockQ,
                     SmallVectorImpl<Value> &leading);

/// The indices of element (i, d) of the [S, D] matrix of `buffer` (an
/// operand in the canonical layout) at the block's `leading` (batch, head,
/// ...) indices; a batch dim of static size 1 is read at 0, so that a K/V
/// head shared by a group of query heads (grouped-query attention) is read
/// in place.
SmallVector<Value> sharedHeadIndices(OpBuilder &b, Location loc, Value buffer,
                                     ArrayRef<Value> leading, Value i, Value d);

/// The keys one block of queries visits, shared by the f32 and the
/// tensor-core kernels.
struct AttentionKeyRange {
  Value keyLimit;    ///< keys at or past it are hidden (kv_length, causal)
  Value queryOffset; ///< query i's position is queryOffset + i
  Value keyEnd;      ///< the block's key loop stops here
};

/// The key range of the `rows` queries from `i0` of the sequence whose
/// leading (batch, head, ...) indices are `leading`, in [S, D] matrices of
/// `sq` queries and `sk` keys.
AttentionKeyRange emitKeyRange(OpBuilder &b, Location loc, AttentionOp op,
                               ArrayRef<Value> leading, Value sq, Value sk,
                               Value i0, Value rows);

/// `score` of query `i` and key `j` (index values), or -inf where the key
/// is hidden from the query: past the key limit, in the future (causal),
/// or masked by the op's mask operand (boolean: true hides; float: added).
/// The mask is read only for i < sq.
Value emitMaskedScore(OpBuilder &b, Location loc, AttentionOp op, Value score,
                      Value i, Value j, Value sq, const AttentionKeyRange &keys,
                      ArrayRef<Value> leading);

/// Lowers `op` (bufferized, in the default layout, static head dimensions
/// of at most 128 after rounding up to 16) to the tensor-core kernel in
/// `half` (f16 or bf16) at `b`'s insertion point; false (nothing built)
/// when the op's head dimensions need more than `sharedBytes` or more
/// registers than the kernel allows. MmaAttention.cpp.
bool emitMmaFlashAttention(OpBuilder &b, AttentionOp op, Type half,
                           int64_t sharedBytes);

} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_ATTENTIONTOGPU_ATTENTIONTOGPU_H
