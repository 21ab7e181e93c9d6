//===- DecomposeSoftmax.cpp - linalg.softmax to generics ------------------===//
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMDECOMPOSESOFTMAX
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// linalg.softmax as max, exp(x - max), sum and divide generics, like its
/// own AggregatedOpInterface decomposition but total: a row whose elements
/// are all -inf (every key masked) gives zeros instead of NaN, the same
/// answer as the fused attention kernel.
struct DecomposeSoftmaxOp : OpRewritePattern<linalg::SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto type = dyn_cast<RankedTensorType>(input.getType());
    if (!type || !isa<RankedTensorType>(op.getOutput().getType()))
      return rewriter.notifyMatchFailure(op, "needs tensor semantics");
    Type element = type.getElementType();
    int64_t rank = type.getRank(), dim = op.getDimension();
    MLIRContext *ctx = op.getContext();

    // Reduced tensor: the input's shape without `dim`.
    SmallVector<int64_t> reducedShape;
    SmallVector<Value> reducedSizes;
    SmallVector<AffineExpr> reducedExprs;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == dim)
        continue;
      reducedShape.push_back(type.getDimSize(d));
      reducedExprs.push_back(rewriter.getAffineDimExpr(d));
      if (type.isDynamicDim(d))
        reducedSizes.push_back(tensor::DimOp::create(rewriter, loc, input, d));
    }
    auto reducedType = RankedTensorType::get(reducedShape, element);
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap reduced = AffineMap::get(rank, 0, reducedExprs, ctx);
    SmallVector<utils::IteratorType> reduction(rank,
                                               utils::IteratorType::parallel);
    reduction[dim] = utils::IteratorType::reduction;
    SmallVector<utils::IteratorType> parallel(rank,
                                              utils::IteratorType::parallel);
    auto constant = [&](double v) -> Value {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getFloatAttr(element, v));
    };
    auto filled = [&](double v) {
      Value empty =
          tensor::EmptyOp::create(rewriter, loc, reducedType, reducedSizes);
      return linalg::FillOp::create(rewriter, loc, constant(v), empty)
          .getResult(0);
    };
    auto reduce = [&](Value in, double init, auto combine) {
      return linalg::GenericOp::create(
                 rewriter, loc, TypeRange{reducedType}, ValueRange{in},
                 ValueRange{filled(init)},
                 ArrayRef<AffineMap>{identity, reduced}, reduction,
                 [&](OpBuilder &b, Location l, ValueRange args) {
                   linalg::YieldOp::create(b, l, combine(b, l, args));
                 })
          .getResult(0);
    };
    auto elementwise = [&](Value full, Value row, auto body) {
      return linalg::GenericOp::create(
                 rewriter, loc, TypeRange{type}, ValueRange{full, row},
                 ValueRange{op.getOutput()},
                 ArrayRef<AffineMap>{identity, reduced, identity}, parallel,
                 [&](OpBuilder &b, Location l, ValueRange args) {
                   linalg::YieldOp::create(b, l, body(b, l, args));
                 })
          .getResult(0);
    };

    double negInf = -std::numeric_limits<double>::infinity();
    Value max = reduce(
        input, negInf, [](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::MaxNumFOp::create(b, l, args[0], args[1]);
        });
    Value exp = elementwise(
        input, max, [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          // An all -inf row subtracts 0, so exp gives 0 rather than NaN.
          Value allMasked = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OEQ, args[1], constant(negInf));
          Value pivot =
              arith::SelectOp::create(b, l, allMasked, constant(0.0), args[1]);
          Value diff = arith::SubFOp::create(b, l, args[0], pivot);
          return math::ExpOp::create(b, l, diff);
        });
    Value sum = reduce(exp, 0.0,
                       [](OpBuilder &b, Location l, ValueRange args) -> Value {
                         return arith::AddFOp::create(b, l, args[0], args[1]);
                       });
    Value result = elementwise(
        exp, sum, [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value quotient = arith::DivFOp::create(b, l, args[0], args[1]);
          Value empty = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                              args[1], constant(0.0));
          return arith::SelectOp::create(b, l, empty, constant(0.0), quotient);
        });
    rewriter.replaceOp(op, result);
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
