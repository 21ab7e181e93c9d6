//===- FuseElementwise.cpp - Elementwise fusion that never recomputes -----===//
//
// Upstream's linalg-fuse-elementwise-ops, with one cost rule more: an
// elementwise producer that computes something (not a copy, transpose or
// broadcast) is not fused into a consumer that reads each of its elements
// more than once. A linear layer's generic reads each activation once per
// output column: fusing the GELU before a feed-forward's second projection
// into it evaluated erf N times per element and hid the multiply-add from
// the tensor-core GEMM. Row reductions (softmax, layer norm) read each
// element once and still take their producers.
//
//===----------------------------------------------------------------------===//
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFUSEELEMENTWISE
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// Whether the producer's payload is only a yield of its inputs (a copy,
/// transpose or broadcast): reading it twice costs no recomputation.
bool onlyMovesData(Operation *producer) {
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  return generic && generic.getBody()->without_terminator().empty();
}

/// Whether `consumer` reads `operand` at each element more than once: it has
/// a loop the operand's indexing map does not use.
bool readsElementsRepeatedly(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  if (!consumer)
    return false;
  AffineMap map = consumer.getMatchingIndexingMap(operand);
  for (unsigned d = 0, e = map.getNumDims(); d < e; ++d)
    if (!map.isFunctionOfDim(d))
      return true;
  return false;
}

struct TfmFuseElementwisePass
    : tfm::impl::TfmFuseElementwiseBase<TfmFuseElementwisePass> {
  void runOnOperation() override {
    Operation *op = getOperation();
    MLIRContext *context = op->getContext();
    RewritePatternSet patterns(context);

    linalg::ControlFusionFn singleUse = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    linalg::ControlFusionFn noRecomputation = [singleUse](OpOperand *fused) {
      if (!singleUse(fused))
        return false;
      return onlyMovesData(fused->get().getDefiningOp()) ||
             !readsElementsRepeatedly(fused);
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, noRecomputation);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, singleUse);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, singleUse);
    // Top-down for compile time, as upstream.
    (void)applyPatternsGreedily(op, std::move(patterns),
                                GreedyRewriteConfig().setUseTopDownTraversal());
  }
};

} // namespace
