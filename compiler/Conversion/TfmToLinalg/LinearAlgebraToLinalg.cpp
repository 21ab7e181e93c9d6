//===- LinearAlgebraToLinalg.cpp - matmul, linear, transpose to linalg ----===//
//
// Contractions become linalg.generic rather than named ops so that batch
// broadcasting (a rank-2 weight against a batched activation) lives in the
// indexing maps instead of materialized copies.
//
//===----------------------------------------------------------------------===//

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
SmallVector<utils::IteratorType> contractionIterators(unsigned parallel) {
  SmallVector<utils::IteratorType> iterators(parallel,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  return iterators;
}

void multiplyAccumulate(OpBuilder &b, Location loc, ValueRange args) {
  Value product = arith::MulFOp::create(b, loc, args[0], args[1]);
  Value sum = arith::AddFOp::create(b, loc, args[2], product);
  linalg::YieldOp::create(b, loc, sum);
}

struct MatmulToLinalg : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto resultType = op.getResult().getType();
    ArrayRef<int64_t> lhs = op.getLhs().getType().getShape();
    ArrayRef<int64_t> rhs = op.getRhs().getType().getShape();
    ArrayRef<int64_t> result = resultType.getShape();
    unsigned rank = result.size(), numLoops = rank + 1;
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };

    auto batchMap = [&](ArrayRef<int64_t> shape) {
      return getBroadcastMap(ctx, shape.drop_back(2), result.drop_back(2),
                             numLoops);
    };
    AffineMap lhsMap = batchMap(lhs)
                           .insertResult(d(rank - 2), lhs.size() - 2)
                           .insertResult(d(rank), lhs.size() - 1);
    AffineMap rhsMap = batchMap(rhs)
                           .insertResult(d(rank), rhs.size() - 2)
                           .insertResult(d(rank - 1), rhs.size() - 1);
    AffineMap outMap =
        AffineMap::getMultiDimIdentityMap(numLoops, ctx).getMajorSubMap(rank);

    SmallVector<DimSource> sources =
        getBroadcastDimSources(op.getLhs(), op.getRhs(), rank - 2, 2);
    sources.push_back({op.getLhs(), int64_t(lhs.size()) - 2});
    sources.push_back({op.getRhs(), int64_t(rhs.size()) - 1});
    Value init = createFilledTensor(rewriter, loc, resultType, sources, 0.0);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType},
        ValueRange{op.getLhs(), op.getRhs()}, ValueRange{init},
        ArrayRef<AffineMap>{lhsMap, rhsMap, outMap}, contractionIterators(rank),
        multiplyAccumulate);
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct LinearToLinalg : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto resultType = op.getResult().getType();
    unsigned rank = resultType.getRank(), numLoops = rank + 1;
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };

    SmallVector<DimSource> sources;
    for (unsigned i = 0; i + 1 < rank; ++i)
      sources.push_back({op.getInput(), int64_t(i)});
    sources.push_back({op.getWeight(), 0});

    Value init;
    if (Value bias = op.getBias()) {
      // Start the accumulator at the bias, broadcast over leading dims.
      Value empty = createEmptyTensor(rewriter, loc, resultType, sources);
      AffineMap biasMap = AffineMap::get(rank, 0, {d(rank - 1)}, ctx);
      AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
      init = linalg::GenericOp::create(
                 rewriter, loc, TypeRange{resultType}, ValueRange{bias},
                 ValueRange{empty}, ArrayRef<AffineMap>{biasMap, identity},
                 SmallVector<utils::IteratorType>(
                     rank, utils::IteratorType::parallel),
                 [](OpBuilder &b, Location l, ValueRange args) {
                   linalg::YieldOp::create(b, l, args[0]);
                 })
                 .getResult(0);
    } else {
      init = createFilledTensor(rewriter, loc, resultType, sources, 0.0);
    }

    SmallVector<AffineExpr> inputExprs;
    for (unsigned i = 0; i + 1 < rank; ++i)
      inputExprs.push_back(d(i));
    inputExprs.push_back(d(rank));
    AffineMap inputMap = AffineMap::get(numLoops, 0, inputExprs, ctx);
    AffineMap weightMap =
        AffineMap::get(numLoops, 0, {d(rank - 1), d(rank)}, ctx);
    AffineMap outMap =
        AffineMap::getMultiDimIdentityMap(numLoops, ctx).getMajorSubMap(rank);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType},
        ValueRange{op.getInput(), op.getWeight()}, ValueRange{init},
        ArrayRef<AffineMap>{inputMap, weightMap, outMap},
        contractionIterators(rank), multiplyAccumulate);
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct TransposeToLinalg : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto [d0, d1] = op.getNormalizedDims();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    SmallVector<int64_t> permutation =
        llvm::to_vector(llvm::seq<int64_t>(0, resultType.getRank()));
    std::swap(permutation[d0], permutation[d1]);
    if (d0 == d1) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    SmallVector<DimSource> sources;
    for (int64_t p : permutation)
      sources.push_back({op.getInput(), p});
    Value init = createEmptyTensor(rewriter, op.getLoc(), resultType, sources);
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), op.getInput(), init, permutation);
    rewriter.replaceOp(op, transpose->getResults());
    return success();
  }
};
} // namespace

void mlir::tfm::populateLinearAlgebraToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<MatmulToLinalg, LinearToLinalg, TransposeToLinalg>(
      patterns.getContext());
}
