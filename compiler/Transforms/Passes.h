//===- Passes.h - tfm transformation passes ---------------------*- C++ -*-===//
#ifndef TFM_COMPILER_TRANSFORMS_PASSES_H
#define TFM_COMPILER_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace tfm {

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

/// sdpa and multi_head_attention to tfm primitives.
void populateDecomposeLayersPatterns(RewritePatternSet &patterns);

/// Attention chains over tfm primitives and over linalg into tfm.attention.
/// With `emitRemarks`, each fused chain gets a remark at its P·V contraction.
void populateFuseAttentionPatterns(RewritePatternSet &patterns,
                                   bool emitRemarks = false);

/// Transposes producing tfm.attention's operands or consuming its result
/// folded into its indexing maps (head split and merge read as views).
void populateFoldAttentionTransposesPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

} // namespace tfm
} // namespace mlir

#endif // TFM_COMPILER_TRANSFORMS_PASSES_H
