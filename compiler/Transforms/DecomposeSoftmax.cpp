//===- DecomposeSoftmax.cpp - linalg.softmax to generics ------------------===//
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMDECOMPOSESOFTMAX
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct DecomposeSoftmaxOp : OpRewritePattern<linalg::SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<Value>> results =
        cast<linalg::AggregatedOpInterface>(op.getOperation())
            .decomposeOperation(rewriter);
    if (failed(results))
      return rewriter.notifyMatchFailure(op, "softmax did not decompose");
    rewriter.replaceOp(op, *results);
    return success();
  }
};

struct TfmDecomposeSoftmaxPass
    : tfm::impl::TfmDecomposeSoftmaxBase<TfmDecomposeSoftmaxPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeSoftmaxOp>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
