//===- FlashAttention.h - The CPU flash-attention kernel --------*- C++ -*-===//
//
// The loop nest convert-attention-to-cpu lowers each tfm.attention to
// (FlashAttention.cpp), and the tiling it is emitted with.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CONVERSION_ATTENTIONTOCPU_FLASHATTENTION_H
#define TFM_COMPILER_CONVERSION_ATTENTIONTOCPU_FLASHATTENTION_H

#include "compiler/Conversion/KernelVariants/KernelVariants.h"
#include "dialects/Tfm/IR/TfmOps.h"

namespace mlir::tfm {

struct FlashAttentionTiling {
  int64_t lanes;        ///< elements per vector register
  int64_t blockQ;       ///< query rows per block
  int64_t microRows;    ///< query rows per micro-kernel
  int64_t keyVectors;   ///< vectors of keys per block
  int64_t valueVectors; ///< value vectors accumulated at once
  int64_t queryVectors; ///< query vectors per scores micro-kernel
  int64_t taskBlockQ;   ///< query rows per task, a multiple of blockQ
  int64_t blockK() const { return keyVectors * lanes; }
};

/// Register-resident micro-kernels for `vectorBits`-wide registers and
/// elements of `elementBits`.
FlashAttentionTiling defaultFlashAttentionTiling(int64_t vectorBits,
                                                 unsigned elementBits);

/// The length of the query sequence of `op`.
Value queryLength(OpBuilder &b, Location loc, AttentionOp op);

/// Emits the task function of `op`, with one variant per entry of
/// `variants` tiled as `tilingOf` says (every tiling with the same
/// taskBlockQ: the tasks are the same whichever variant runs), and its
/// call at `at`'s insertion point; the caller erases the op. With
/// `roundToBF16`, the variants with vdpbf16ps (16 lanes) compute QK^T and PV
/// on operands rounded to bf16 (the softmax stays f32); the others in f32.
LogicalResult emitFlashAttention(
    AttentionOp op, ArrayRef<KernelVariant> variants,
    function_ref<FlashAttentionTiling(const KernelVariant &)> tilingOf,
    OpBuilder &at, bool roundToBF16 = false);

} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_ATTENTIONTOCPU_FLASHATTENTION_H
