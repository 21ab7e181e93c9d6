//===- LowerStridedCopies.cpp - Non-contiguous memref.copy to loops -------===//
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMLOWERSTRIDEDCOPIES
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct StridedCopyToLinalg : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    auto source = cast<MemRefType>(op.getSource().getType());
    auto target = cast<MemRefType>(op.getTarget().getType());
    if (source.getLayout().isIdentity() && target.getLayout().isIdentity())
      return rewriter.notifyMatchFailure(op, "contiguous copies stay memcpy");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                op.getTarget());
    return success();
  }
};

struct TfmLowerStridedCopiesPass
    : tfm::impl::TfmLowerStridedCopiesBase<TfmLowerStridedCopiesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedCopyToLinalg>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
