//===- Passes.h - tfm conversion passes -------------------------*- C++ -*-===//
#ifndef TFM_COMPILER_CONVERSION_PASSES_H
#define TFM_COMPILER_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace tfm {

#define GEN_PASS_DECL
#include "compiler/Conversion/Passes.h.inc"

/// matmul, linear, transpose.
void populateLinearAlgebraToLinalgPatterns(RewritePatternSet &patterns);
/// add, scale, relu, gelu, softmax, concat.
void populateElementwiseToLinalgPatterns(RewritePatternSet &patterns);
/// embedding, positional_encoding, check_index, check_size.
void populateEmbeddingToLinalgPatterns(RewritePatternSet &patterns);
/// layer_norm.
void populateNormalizationToLinalgPatterns(RewritePatternSet &patterns);
/// masked_fill, causal_mask.
void populateMaskToLinalgPatterns(RewritePatternSet &patterns);
/// sub, mul, div, maximum, minimum, pow, logical_and/or and the unary math
/// ops (exp, log, ..., logical_not).
void populateArithmeticToLinalgPatterns(RewritePatternSet &patterns);
/// compare, where, cast.
void populatePredicatesToLinalgPatterns(RewritePatternSet &patterns);
/// reduce (sum, mean, max, min).
void populateReductionToLinalgPatterns(RewritePatternSet &patterns);
/// reshape, permute.
void populateShapeToTensorPatterns(RewritePatternSet &patterns);
/// The ops that compute, on bf16 and f16 tensors, to the same ops on f32
/// between tfm.casts (tfm-widen-low-precision).
void populateWidenLowPrecisionPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "compiler/Conversion/Passes.h.inc"

} // namespace tfm
} // namespace mlir

#endif // TFM_COMPILER_CONVERSION_PASSES_H
