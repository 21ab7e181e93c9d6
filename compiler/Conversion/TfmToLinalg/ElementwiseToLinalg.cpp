//===- ElementwiseToLinalg.cpp - add, scale, softmax, concat to linalg ----===//
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/TfmToLinalg/Utils.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {
SmallVector<utils::IteratorType> allParallel(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

struct AddToLinalg : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    auto resultType = op.getResult().getType();
    ArrayRef<int64_t> result = resultType.getShape();
    unsigned rank = result.size();
    AffineMap lhsMap = getBroadcastMap(
        ctx, op.getLhs().getType().getShape(), result, rank);
    AffineMap rhsMap = getBroadcastMap(
        ctx, op.getRhs().getType().getShape(), result, rank);
    Value init = createEmptyTensor(
        rewriter, op.getLoc(), resultType,
        getBroadcastDimSources(op.getLhs(), op.getRhs(), rank, 0));
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{resultType},
        ValueRange{op.getLhs(), op.getRhs()}, ValueRange{init},
        ArrayRef<AffineMap>{lhsMap, rhsMap,
                            AffineMap::getMultiDimIdentityMap(rank, ctx)},
        allParallel(rank), [](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(
              b, loc, arith::AddFOp::create(b, loc, args[0], args[1]).getResult());
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

SmallVector<DimSource> sameShapeAs(Value v) {
  SmallVector<DimSource> sources;
  for (int64_t i = 0, e = cast<RankedTensorType>(v.getType()).getRank(); i < e;
       ++i)
    sources.push_back({v, i});
  return sources;
}

struct ScaleToLinalg : OpRewritePattern<ScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaleOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    unsigned rank = type.getRank();
    Value factor = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getFloatAttr(type.getElementType(),
                              op.getFactor().convertToDouble()));
    bool divide = op.getDivide();
    Value init =
        createEmptyTensor(rewriter, loc, type, sameShapeAs(op.getInput()));
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(rank, op.getContext());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{op.getInput()},
        ValueRange{init}, ArrayRef<AffineMap>{identity, identity},
        allParallel(rank), [&](OpBuilder &b, Location l, ValueRange args) {
          Value scaled =
              divide ? arith::DivFOp::create(b, l, args[0], factor).getResult()
                     : arith::MulFOp::create(b, l, args[0], factor).getResult();
          linalg::YieldOp::create(b, l, scaled);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct SoftmaxToLinalg : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Value init = createEmptyTensor(rewriter, op.getLoc(), type,
                                   sameShapeAs(op.getInput()));
    auto softmax = linalg::SoftmaxOp::create(
        rewriter, op.getLoc(), TypeRange{type}, op.getInput(), init,
        op.getNormalizedDim());
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
  patterns.add<AddToLinalg, ScaleToLinalg, SoftmaxToLinalg, ConcatToTensor>(
      patterns.getContext());
}
