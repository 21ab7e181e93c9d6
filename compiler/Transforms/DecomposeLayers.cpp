//===- DecomposeLayers.cpp - Layer ops to tfm primitives ------------------===//
//
// sdpa and multi_head_attention become the attention chain spelled with
// primitives, the same chain users write by hand, so that one fusion pass
// recognizes attention wherever it comes from.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMDECOMPOSELAYERS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
RankedTensorType withShape(Value like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(
      shape, cast<RankedTensorType>(like.getType()).getElementType());
}

Value transposeLastTwo(OpBuilder &b, Location loc, Value v, int64_t d0 = -2,
                       int64_t d1 = -1) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(type.getShape());
  int64_t rank = type.getRank();
  std::swap(shape[d0 + rank], shape[d1 + rank]);
  return TransposeOp::create(b, loc, withShape(v, shape), v,
                             b.getI64IntegerAttr(d0), b.getI64IntegerAttr(d1));
}

/// softmax(q kᵀ · scale) v over the last two dimensions.
Value buildAttentionChain(OpBuilder &b, Location loc, Value q, Value k,
                          Value v, double scale) {
  ArrayRef<int64_t> qShape = cast<RankedTensorType>(q.getType()).getShape();
  ArrayRef<int64_t> kShape = cast<RankedTensorType>(k.getType()).getShape();
  ArrayRef<int64_t> vShape = cast<RankedTensorType>(v.getType()).getShape();
  Value kT = transposeLastTwo(b, loc, k);
  SmallVector<int64_t> scoresShape(qShape);
  scoresShape.back() = kShape[kShape.size() - 2];
  auto scoresType = withShape(q, scoresShape);
  Value scores = MatmulOp::create(b, loc, scoresType, q, kT);
  Value scaled = ScaleOp::create(b, loc, scoresType, scores,
                                 b.getF64FloatAttr(scale), UnitAttr());
  Value probs =
      SoftmaxOp::create(b, loc, scoresType, scaled, b.getI64IntegerAttr(-1));
  SmallVector<int64_t> outShape(qShape);
  outShape.back() = vShape.back();
  return MatmulOp::create(b, loc, withShape(q, outShape), probs, v);
}

struct DecomposeSdpa : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Value result =
        buildAttentionChain(rewriter, op.getLoc(), op.getQuery(), op.getKey(),
                            op.getValue(), op.getScaleOrDefault());
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// [..., S, E] -> [..., H, S, E/H]
Value splitHeads(OpBuilder &b, Location loc, Value x, int64_t heads) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape().drop_back());
  shape.push_back(heads);
  shape.push_back(type.getShape().back() / heads);
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank - 1; ++i)
    groups.push_back({i});
  groups.push_back({rank - 1, rank});
  Value expanded =
      tensor::ExpandShapeOp::create(b, loc, withShape(x, shape), x, groups);
  return transposeLastTwo(b, loc, expanded, -3, -2);
}

/// [..., H, S, D] -> [..., S, H*D]
Value mergeHeads(OpBuilder &b, Location loc, Value x) {
  Value t = transposeLastTwo(b, loc, x, -3, -2);
  auto type = cast<RankedTensorType>(t.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape().drop_back(2));
  shape.push_back(type.getShape()[rank - 2] * type.getShape()[rank - 1]);
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank - 2; ++i)
    groups.push_back({i});
  groups.push_back({rank - 2, rank - 1});
  return tensor::CollapseShapeOp::create(b, loc, withShape(t, shape), t,
                                         groups);
}

Value project(OpBuilder &b, Location loc, Value x, Value weight, Value bias) {
  SmallVector<int64_t> shape(cast<RankedTensorType>(x.getType()).getShape());
  shape.back() = cast<RankedTensorType>(weight.getType()).getShape()[0];
  return LinearOp::create(b, loc, withShape(x, shape), x, weight, bias);
}

struct DecomposeMultiHeadAttention : OpRewritePattern<MultiHeadAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MultiHeadAttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t heads = op.getNumHeads();
    int64_t embed = op.getQuery().getType().getShape().back();
    Value q = project(rewriter, loc, op.getQuery(), op.getQWeight(),
                      op.getQBias());
    Value k =
        project(rewriter, loc, op.getKey(), op.getKWeight(), op.getKBias());
    Value v = project(rewriter, loc, op.getValue(), op.getVWeight(),
                      op.getVBias());
    Value attended = buildAttentionChain(
        rewriter, loc, splitHeads(rewriter, loc, q, heads),
        splitHeads(rewriter, loc, k, heads),
        splitHeads(rewriter, loc, v, heads),
        1.0 / std::sqrt(double(embed / heads)));
    Value merged = mergeHeads(rewriter, loc, attended);
    rewriter.replaceOp(op, project(rewriter, loc, merged, op.getOutWeight(),
                                   op.getOutBias()));
    return success();
  }
};

struct TfmDecomposeLayersPass
    : tfm::impl::TfmDecomposeLayersBase<TfmDecomposeLayersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeLayersPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::tfm::populateDecomposeLayersPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeSdpa, DecomposeMultiHeadAttention>(
      patterns.getContext());
}
