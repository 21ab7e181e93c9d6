//===- DecomposeAttention.h - tfm.attention as tfm primitives ---*- C++ -*-===//
//
// The decomposition of tfm.attention into the chain users write by hand,
// shared by tfm-decompose-attention (the unfused path) and tfm-lower-layers
// (a layer whose attention weights are returned, or that the fused kernel
// cannot take).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_TRANSFORMS_DECOMPOSEATTENTION_H
#define TFM_COMPILER_TRANSFORMS_DECOMPOSEATTENTION_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::tfm {
class AttentionOp;

/// The values of the decomposed chain.
struct DecomposedAttention {
  /// The softmax result, [batch..., Sq, Sk] in the op's canonical order:
  /// the attention weights.
  Value probs;
  /// The op's result, in its init's layout.
  Value output;
};

/// Builds `matmul(softmax(mask(scale(matmul(q, transpose(k))))), v)` over tfm
/// primitives at `op`, reading the operands through the op's indexing maps
/// (a permute where they are not in the canonical order) and writing the
/// result in the init's layout. The mask becomes `tfm.masked_fill` with -inf
/// (i1) or `tfm.add` (float), `causal` a `tfm.causal_mask`. Fails on buffers
/// and on attention over a cache (`kv_length`, `query_offset`), which has no
/// primitive spelling. Does not replace `op`.
FailureOr<DecomposedAttention> decomposeAttention(OpBuilder &b, AttentionOp op);

} // namespace mlir::tfm

#endif // TFM_COMPILER_TRANSFORMS_DECOMPOSEATTENTION_H
