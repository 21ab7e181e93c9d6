//===- FuseElementwise.cpp - Elementwise fusion that never recomputes -----===//
//
// Upstream's linalg-fuse-elementwise-ops, with two cost rules more: an
// elementwise producer that computes something (not a copy, transpose or
// broadcast) is not fused into a consumer that reads each of its elements
// more than once. A linear layer's generic reads each activation once per
// output column: fusing the GELU before a feed-forward's second projection
// into it evaluated erf N times per element and hid the multiply-add from
// the tensor-core GEMM. Row reductions (softmax, layer norm) read each
// element once and still take their producers. And a fused payload holds
// at most 256 ops, which keeps fusing a long chain linear in its length.
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

/// The most operations one fused payload may hold. Each fusion copies the
/// producer's payload into the consumer's, so a chain of n ops fused into
/// one payload cost O(n^2) (4000 chained ops: 16 s); capped, a chain
/// becomes kernels of this size, each still one pass over memory per
/// kMaxFusedPayloadOps ops.
constexpr size_t kMaxFusedPayloadOps = 256;

size_t payloadSize(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp ? linalgOp.getBlock()->getOperations().size() : 0;
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
      if (!singleUse(fused) || payloadSize(fused->get().getDefiningOp()) +
                                       payloadSize(fused->getOwner()) >
                                   kMaxFusedPayloadOps)
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
