//===- ElementwiseToLinalg.cpp - add, scale, activations, softmax, concat -===//
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/TfmToLinalg/Utils.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

namespace {
struct AddToLinalg : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    auto resultType = op.getResult().getType();
    ArrayRef<int64_t> result = resultType.getShape();
    unsigned rank = result.size();
    AffineMap lhsMap =
        getBroadcastMap(ctx, op.getLhs().getType().getShape(), result, rank);
    AffineMap rhsMap =
        getBroadcastMap(ctx, op.getRhs().getType().getShape(), result, rank);
    Value init = createEmptyTensor(
        rewriter, op.getLoc(), resultType,
        getBroadcastDimSources(op.getLhs(), op.getRhs(), rank, 0));
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{resultType},
        ValueRange{op.getLhs(), op.getRhs()}, ValueRange{init},
        ArrayRef<AffineMap>{lhsMap, rhsMap,
                            AffineMap::getMultiDimIdentityMap(rank, ctx)},
        getParallelIterators(rank),
        [](OpBuilder &b, Location loc, ValueRange args) {
          Value sum =
              isa<FloatType>(args[0].getType())
                  ? Value(arith::AddFOp::create(b, loc, args[0], args[1]))
                  : Value(arith::AddIOp::create(b, loc, args[0], args[1]));
          linalg::YieldOp::create(b, loc, sum);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct ScaleToLinalg : OpRewritePattern<ScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaleOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value factor = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getFloatAttr(op.getType().getElementType(),
                              op.getFactor().convertToDouble()));
    bool divide = op.getDivide();
    rewriter.replaceOp(
        op, mapElements(rewriter, loc, op.getInput(),
                        [&](OpBuilder &b, Location l, Value x) -> Value {
                          if (divide)
                            return arith::DivFOp::create(b, l, x, factor);
                          return arith::MulFOp::create(b, l, x, factor);
                        }));
    return success();
  }
};

Value floatConstant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

/// max(x, 0); NaN stays NaN, as in torch.relu.
struct ReluToLinalg : OpRewritePattern<ReluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReluOp op,
                                PatternRewriter &rewriter) const override {
    Value result =
        mapElements(rewriter, op.getLoc(), op.getInput(),
                    [](OpBuilder &b, Location l, Value x) -> Value {
                      return arith::MaximumFOp::create(
                          b, l, x, floatConstant(b, l, x.getType(), 0.0));
                    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The formulas of PyTorch's CPU kernels: `x * 0.5 * (1 + erf(x / sqrt(2)))`,
/// or with approximate = "tanh"
/// `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.
struct GeluToLinalg : OpRewritePattern<GeluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GeluOp op,
                                PatternRewriter &rewriter) const override {
    bool tanh = op.getApproximate() == GeluApproximation::tanh;
    Value result = mapElements(
        rewriter, op.getLoc(), op.getInput(),
        [&](OpBuilder &b, Location l, Value x) -> Value {
          Type t = x.getType();
          auto c = [&](double v) { return floatConstant(b, l, t, v); };
          auto mul = [&](Value a, Value v) -> Value {
            return arith::MulFOp::create(b, l, a, v);
          };
          auto add = [&](Value a, Value v) -> Value {
            return arith::AddFOp::create(b, l, a, v);
          };
          if (!tanh) {
            Value erf = math::ErfOp::create(b, l, mul(x, c(M_SQRT1_2)));
            return mul(mul(x, c(0.5)), add(c(1.0), erf));
          }
          Value cube = mul(mul(x, x), x);
          Value inner =
              mul(c(std::sqrt(2.0 / M_PI)), add(x, mul(c(0.044715), cube)));
          Value th = math::TanhOp::create(b, l, inner);
          return mul(mul(c(0.5), x), add(c(1.0), th));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SoftmaxToLinalg : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Value init = createEmptyTensor(rewriter, op.getLoc(), type,
                                   getDimSources(op.getInput()));
    auto softmax =
        linalg::SoftmaxOp::create(rewriter, op.getLoc(), TypeRange{type},
                                  op.getInput(), init, op.getNormalizedDim());
    rewriter.replaceOp(op, softmax->getResults());
    return success();
  }
};

struct ConcatToTensor : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    Value concat = tensor::ConcatOp::create(
        rewriter, op.getLoc(), op.getNormalizedDim(), op.getInputs());
    if (concat.getType() != op.getResult().getType())
      concat = tensor::CastOp::create(rewriter, op.getLoc(),
                                      op.getResult().getType(), concat);
    rewriter.replaceOp(op, concat);
    return success();
  }
};
} // namespace

void mlir::tfm::populateElementwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AddToLinalg, ScaleToLinalg, ReluToLinalg, GeluToLinalg,
               SoftmaxToLinalg, ConcatToTensor>(patterns.getContext());
}
