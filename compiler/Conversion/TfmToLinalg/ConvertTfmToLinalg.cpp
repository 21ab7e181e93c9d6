//===- ConvertTfmToLinalg.cpp - The convert-tfm-to-linalg pass ------------===//
#include "compiler/Conversion/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_CONVERTTFMTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
struct ConvertTfmToLinalgPass
    : tfm::impl::ConvertTfmToLinalgBase<ConvertTfmToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // bf16 and f16 ops compute in f32 (the pipeline has done this already,
    // before the layers lowered).
    populateWidenLowPrecisionPatterns(patterns);
    populateLinearAlgebraToLinalgPatterns(patterns);
    populateElementwiseToLinalgPatterns(patterns);
    populateEmbeddingToLinalgPatterns(patterns);
    populateMaskToLinalgPatterns(patterns);
    populateNormalizationToLinalgPatterns(patterns);
    populateArithmeticToLinalgPatterns(patterns);
    populatePredicatesToLinalgPatterns(patterns);
    populateReductionToLinalgPatterns(patterns);
    populateShapeToTensorPatterns(patterns);
    // insert_slices bufferize in place; tensor.concat would copy.
    tensor::populateDecomposeTensorConcatPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    WalkResult leftover = getOperation().walk([](Operation *op) {
      // These stay to the buffer-level lowerings: kernels, and the cache
      // append that must write the caller's buffer in place.
      if (isa<TfmDialect>(op->getDialect()) &&
          !isa<WeightOp, AttentionOp, PackedLinearOp, CacheAppendOp>(op)) {
        op->emitError("could not lower '")
            << op->getName() << "' to linalg"
            << (isa<SdpaOp, MultiHeadAttentionOp>(op)
                    ? " (run tfm-lower-layers first)"
                    : "");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
