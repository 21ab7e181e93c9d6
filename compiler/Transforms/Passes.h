//===- Passes.h - tfm transformation passes ---------------------*- C++ -*-===//
#ifndef TFM_COMPILER_TRANSFORMS_PASSES_H
#define TFM_COMPILER_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

#include <functional>

namespace mlir {
class RewritePatternSet;
namespace tfm {
class AttentionOp;

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

/// sdpa and multi_head_attention to tfm.attention (through its decomposition
/// where the weights are returned). With `emitRemarks`, each layer lowered to
/// tfm.attention gets a remark.
void populateLowerLayersPatterns(RewritePatternSet &patterns,
                                 bool emitRemarks = false);

/// tfm.attention on tensors to the attention chain over tfm primitives;
/// with `filter`, only the ops it accepts.
void populateDecomposeAttentionPatterns(
    RewritePatternSet &patterns,
    std::function<bool(AttentionOp)> filter = nullptr);

/// Attention chains over linalg into tfm.attention.
/// With `emitRemarks`, each fused chain gets a remark at its P·V contraction.
void populateFuseAttentionPatterns(RewritePatternSet &patterns,
                                   bool emitRemarks = false);

/// linalg.transposes producing tfm.attention's operands or consuming its result
/// folded into its indexing maps (head split and merge read as views).
void populateFoldAttentionTransposesPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

} // namespace tfm
} // namespace mlir

#endif // TFM_COMPILER_TRANSFORMS_PASSES_H
