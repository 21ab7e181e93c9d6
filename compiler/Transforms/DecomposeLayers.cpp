//===- DecomposeLayers.cpp - Layer ops to tfm primitives ------------------===//
//
// sdpa and multi_head_attention become the attention chain spelled with
// primitives, the same chain users write by hand, so that one fusion pass
// recognizes attention wherever it comes from. Masks become one mask in the
// chain (tfm.masked_fill with -inf for booleans, tfm.add for floats) after
// one elementwise generic where PyTorch's polarity or broadcasting needs it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

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

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
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

/// A mask ready for the attention chain: boolean (true = masked out, the
/// polarity of tfm.masked_fill) or float (added to the scaled scores), and
/// shaped so that tfm.attention's lowerings read it (see combineMasks).
struct ChainMask {
  Value value;
  bool causal = false;
};

/// The chain's intermediate values: the softmax result (the attention
/// weights) and the output.
struct Chain {
  Value probs, output;
};

/// softmax(mask(q kᵀ · scale)) v over the last two dimensions, with the mask
/// as tfm.masked_fill(-inf) (boolean) or tfm.add (float) and the causal mask
/// as tfm.causal_mask: the spelling tfm-fuse-attention recognizes.
Chain buildAttentionChain(OpBuilder &b, Location loc, Value q, Value k, Value v,
                          double scale, const ChainMask &mask = {}) {
  ArrayRef<int64_t> qShape = shapeOf(q), kShape = shapeOf(k),
                    vShape = shapeOf(v);
  Value kT = transposeLastTwo(b, loc, k);
  SmallVector<int64_t> scoresShape(qShape);
  scoresShape.back() = kShape[kShape.size() - 2];
  auto scoresType = withShape(q, scoresShape);
  Value scores = MatmulOp::create(b, loc, scoresType, q, kT);
  Value x = ScaleOp::create(b, loc, scoresType, scores,
                            b.getF64FloatAttr(scale), UnitAttr());
  if (mask.value) {
    if (elementTypeOf(mask.value).isInteger(1))
      x = MaskedFillOp::create(
          b, loc, scoresType, x, mask.value,
          b.getF64FloatAttr(-std::numeric_limits<double>::infinity()));
    else
      x = AddOp::create(b, loc, scoresType, x, mask.value);
  }
  if (mask.causal)
    x = CausalMaskOp::create(b, loc, scoresType, x);
  Value probs =
      SoftmaxOp::create(b, loc, scoresType, x, b.getI64IntegerAttr(-1));
  SmallVector<int64_t> outShape(qShape);
  outShape.back() = vShape.back();
  Value output = MatmulOp::create(b, loc, withShape(q, outShape), probs, v);
  return {probs, output};
}

/// One input of combineMasks: a mask read through `map` from the loops over
/// the combined mask.
struct MaskInput {
  Value value;
  AffineMap map;
  /// An i1 mask that is true where a key takes part (SDPA's polarity).
  bool keepWhereTrue = false;
};

/// The map reading `shape`, aligned with `loops` at the trailing end, with
/// its static 1s broadcast (read at 0) where the loop's extent is not 1.
AffineMap trailingBroadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> loops) {
  SmallVector<AffineExpr> exprs;
  size_t offset = loops.size() - shape.size();
  for (auto [i, size] : llvm::enumerate(shape))
    exprs.push_back(size == 1 && loops[offset + i] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(offset + i, ctx));
  return AffineMap::get(loops.size(), 0, exprs, ctx);
}

/// One elementwise linalg.generic that turns `inputs` into a single mask of
/// shape `shape` for the attention chain: boolean (true = masked out) when
/// every input is boolean, their OR; otherwise float, the sum of the float
/// inputs and -inf for each boolean that masks (as PyTorch merges an
/// attn_mask with a key_padding_mask). `sizes` gives each dynamic dim.
Value combineMasks(OpBuilder &b, Location loc, ArrayRef<MaskInput> inputs,
                   ArrayRef<int64_t> shape, ArrayRef<Value> sizes,
                   Type floatType) {
  bool allBoolean = llvm::all_of(inputs, [](const MaskInput &m) {
    return elementTypeOf(m.value).isInteger(1);
  });
  Type elementType = allBoolean ? b.getI1Type() : floatType;
  auto type = RankedTensorType::get(shape, elementType);
  SmallVector<Value> dynamicSizes;
  for (auto [i, size] : llvm::enumerate(shape))
    if (ShapedType::isDynamic(size))
      dynamicSizes.push_back(sizes[i]);
  Value init = tensor::EmptyOp::create(b, loc, type, dynamicSizes);
  SmallVector<AffineMap> maps;
  SmallVector<Value> values;
  for (const MaskInput &m : inputs) {
    maps.push_back(m.map);
    values.push_back(m.value);
  }
  maps.push_back(
      AffineMap::getMultiDimIdentityMap(shape.size(), b.getContext()));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, values, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(shape.size(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value combined;
        for (auto [m, arg] : llvm::zip(inputs, args)) {
          Value x = arg;
          if (x.getType().isInteger(1)) {
            if (m.keepWhereTrue) {
              Value one =
                  arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
              x = arith::XOrIOp::create(nb, l, x, one);
            }
            if (!allBoolean) {
              Value minusInf = arith::ConstantOp::create(
                  nb, l,
                  nb.getFloatAttr(floatType,
                                  -std::numeric_limits<double>::infinity()));
              Value zero = arith::ConstantOp::create(
                  nb, l, nb.getFloatAttr(floatType, 0.0));
              x = arith::SelectOp::create(nb, l, x, minusInf, zero);
            }
          }
          if (!combined)
            combined = x;
          else if (allBoolean)
            combined = arith::OrIOp::create(nb, l, combined, x);
          else
            combined = arith::AddFOp::create(nb, l, combined, x);
        }
        linalg::YieldOp::create(nb, l, combined);
      });
  return generic.getResult(0);
}

/// The size of every dim of the scores [..., Sq, Sk] of `q` and `k`.
SmallVector<Value> scoresSizes(OpBuilder &b, Location loc, Value q, Value k) {
  int64_t rank = shapeOf(q).size();
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(d + 1 < rank ? tensor::DimOp::create(b, loc, q, d)
                                 : tensor::DimOp::create(b, loc, k, d - 1));
  return sizes;
}

/// sdpa's mask for the chain. tfm.attention's lowerings read a mask whose
/// leading (batch) dims are all absent or all present; a boolean mask that
/// keeps where true is inverted. Either needs one elementwise pass over the
/// mask; a float mask of the right shape is used as it is.
Value prepareSdpaMask(OpBuilder &b, Location loc, Value mask, Value q,
                      Value k) {
  SmallVector<int64_t> scores(shapeOf(q).drop_back());
  scores.push_back(shapeOf(k)[shapeOf(k).size() - 2]);
  ArrayRef<int64_t> m = shapeOf(mask);
  size_t rank = scores.size();
  bool partialBatch = false;
  if (m.size() > 2) {
    partialBatch = m.size() != rank;
    for (size_t d = 0; d + 2 < m.size(); ++d)
      partialBatch |= m[d] == 1 && scores[d + rank - m.size()] != 1;
  }
  bool boolean = elementTypeOf(mask).isInteger(1);
  if (!boolean && !partialBatch)
    return mask;
  // The combined mask keeps the mask's own rows and columns (a 1 stays 1)
  // and takes every batch dim of the scores when it has any.
  SmallVector<int64_t> shape;
  if (m.size() > 2)
    shape.assign(scores.begin(), scores.end() - 2);
  shape.push_back(m.size() >= 2 && m[m.size() - 2] != 1 ? scores[rank - 2] : 1);
  shape.push_back(m.back() != 1 ? scores[rank - 1] : 1);
  if (m.size() == 1)
    shape.erase(shape.begin());
  SmallVector<Value> all = scoresSizes(b, loc, q, k);
  SmallVector<Value> sizes(ArrayRef(all).take_back(shape.size()));
  MaskInput input{mask, trailingBroadcastMap(b.getContext(), m, shape),
                  boolean};
  return combineMasks(b, loc, input, shape, sizes, elementTypeOf(q));
}

struct DecomposeSdpa : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ChainMask mask;
    mask.causal = op.getCausal();
    if (Value m = op.getMask())
      mask.value =
          prepareSdpaMask(rewriter, loc, m, op.getQuery(), op.getKey());
    Chain chain =
        buildAttentionChain(rewriter, loc, op.getQuery(), op.getKey(),
                            op.getValue(), op.getScaleOrDefault(), mask);
    rewriter.replaceOp(op, chain.output);
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

/// nn.MultiheadAttention's masks for the chain over heads split as
/// [B, H, Sq, Sk] (batched) or [H, Sq, Sk]. One mask passes as it is (a
/// [B*H, Sq, Sk] attn_mask reshaped to [B, H, Sq, Sk]); a key_padding_mask
/// [B, Sk] becomes [B, H, 1, Sk] (tfm.attention's lowerings read batch dims
/// all present or all absent), and with an attn_mask too both merge into one
/// [B, H, Sq, Sk] mask as PyTorch merges them.
Value prepareMhaMask(OpBuilder &b, Location loc, MultiHeadAttentionOp op,
                     Value q, Value k) {
  Value attnMask = op.getAttnMask(), padding = op.getKeyPaddingMask();
  if (!attnMask && !padding)
    return {};
  MLIRContext *ctx = b.getContext();
  bool batched = shapeOf(op.getQuery()).size() == 3;
  SmallVector<int64_t> scores(shapeOf(q).drop_back());
  scores.push_back(shapeOf(k)[shapeOf(k).size() - 2]);
  size_t rank = scores.size();
  if (attnMask && batched && shapeOf(attnMask).size() == 3) {
    // [B*H, Sq, Sk] -> [B, H, Sq, Sk]
    ArrayRef<int64_t> m = shapeOf(attnMask);
    SmallVector<int64_t> shape = {scores[0], scores[1], m[1], m[2]};
    attnMask = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, elementTypeOf(attnMask)), attnMask,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  }
  if (attnMask && !padding)
    return attnMask;
  if (!batched && !attnMask)
    return padding; // [Sk] broadcasts over heads and queries.

  SmallVector<int64_t> shape;
  if (attnMask && shapeOf(attnMask).size() == 2 && !batched)
    shape = {scores[rank - 2], scores[rank - 1]};
  else
    shape = scores;
  if (!attnMask)
    shape[rank - 2] = 1; // [B, H, 1, Sk]
  SmallVector<Value> all = scoresSizes(b, loc, q, k);
  SmallVector<Value> sizes(ArrayRef(all).take_back(shape.size()));
  SmallVector<MaskInput> inputs;
  if (attnMask)
    inputs.push_back(
        {attnMask, trailingBroadcastMap(ctx, shapeOf(attnMask), shape)});
  // The padding mask [B, Sk] (or [Sk]) is indexed by the batch and key loops.
  SmallVector<AffineExpr> exprs;
  if (batched)
    exprs.push_back(getAffineDimExpr(0, ctx));
  exprs.push_back(getAffineDimExpr(shape.size() - 1, ctx));
  inputs.push_back({padding, AffineMap::get(shape.size(), 0, exprs, ctx)});
  return combineMasks(b, loc, inputs, shape, sizes, elementTypeOf(q));
}

/// The mean over the heads of weights [..., H, Sq, Sk], as
/// need_weights=True with average_attn_weights=True returns them.
Value averageHeads(OpBuilder &b, Location loc, Value probs) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = shapeOf(probs);
  int64_t rank = shape.size(), headDim = rank - 3;
  SmallVector<int64_t> outShape(shape);
  outShape.erase(outShape.begin() + headDim);
  auto type = withShape(probs, outShape);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    if (d != headDim && ShapedType::isDynamic(shape[d]))
      sizes.push_back(tensor::DimOp::create(b, loc, probs, d));
  Value zero = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), 0.0));
  Value empty = tensor::EmptyOp::create(b, loc, type, sizes);
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    iterators.push_back(d == headDim ? utils::IteratorType::reduction
                                     : utils::IteratorType::parallel);
    if (d != headDim)
      outExprs.push_back(getAffineDimExpr(d, ctx));
  }
  Value sum =
      linalg::GenericOp::create(
          b, loc, TypeRange{type}, ValueRange{probs}, ValueRange{init},
          ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                              AffineMap::get(rank, 0, outExprs, ctx)},
          iterators,
          [](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(
                nb, l,
                arith::AddFOp::create(nb, l, args[1], args[0]).getResult());
          })
          .getResult(0);
  return ScaleOp::create(b, loc, type, sum,
                         b.getF64FloatAttr(double(shape[headDim])),
                         b.getUnitAttr());
}

struct DecomposeMultiHeadAttention : OpRewritePattern<MultiHeadAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MultiHeadAttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t heads = op.getNumHeads();
    int64_t embed = op.getQuery().getType().getShape().back();
    Value q =
        project(rewriter, loc, op.getQuery(), op.getQWeight(), op.getQBias());
    Value k =
        project(rewriter, loc, op.getKey(), op.getKWeight(), op.getKBias());
    Value v =
        project(rewriter, loc, op.getValue(), op.getVWeight(), op.getVBias());
    Value qh = splitHeads(rewriter, loc, q, heads);
    Value kh = splitHeads(rewriter, loc, k, heads);
    Value vh = splitHeads(rewriter, loc, v, heads);
    ChainMask mask;
    mask.value = prepareMhaMask(rewriter, loc, op, qh, kh);
    Chain chain =
        buildAttentionChain(rewriter, loc, qh, kh, vh,
                            1.0 / std::sqrt(double(embed / heads)), mask);
    Value merged = mergeHeads(rewriter, loc, chain.output);
    SmallVector<Value> results = {
        project(rewriter, loc, merged, op.getOutWeight(), op.getOutBias())};
    if (op.getAttnWeights())
      results.push_back(op.getAverageAttnWeights()
                            ? averageHeads(rewriter, loc, chain.probs)
                            : chain.probs);
    rewriter.replaceOp(op, results);
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
