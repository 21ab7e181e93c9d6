//===- LowerLayers.cpp - Attention layers to tfm.attention ----------------===//
//
// sdpa and multi_head_attention become one tfm.attention each, the op
// hand-written chains are fused into: multi-head attention projects, splits
// the heads with an expand_shape that the op reads through its indexing
// maps (no transposes), and merges them back with a collapse_shape. Masks
// become the op's one mask after one elementwise generic where PyTorch's
// polarity or broadcasting needs it. A layer whose attention weights are
// returned, or whose operands the fused kernel cannot take, goes through
// the op's decomposition into primitives instead.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/DecomposeAttention.h"
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
#define GEN_PASS_DEF_TFMLOWERLAYERS
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
/// shape `shape` for tfm.attention: boolean (true = masked out) when
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

/// sdpa's mask for tfm.attention. tfm.attention's lowerings read a mask whose
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

/// The shape of the operand of map `mapIndex` in the op's canonical order (1
/// where a mask broadcasts).
SmallVector<int64_t> canonicalShape(AttentionOp op, Value v,
                                    unsigned mapIndex) {
  if (!op.getIndexingMaps())
    return SmallVector<int64_t>(shapeOf(v));
  SmallVector<int64_t> shape;
  for (int64_t position : op.getCanonicalDimPositions(mapIndex))
    shape.push_back(position < 0 ? 1 : shapeOf(v)[position]);
  return shape;
}

/// Whether the fused kernel takes `op` as built from a layer: operands of
/// one rank and one float element type, batch dims identical (a static size
/// against a dynamic one may be a broadcast at run time, which the kernel
/// does not do) but for the key's and value's static 1s, which broadcast (a
/// K/V head shared by several query heads). tfm-fuse-attention asks the
/// same of a chain.
bool fitsKernel(AttentionOp op) {
  SmallVector<int64_t> q = canonicalShape(op, op.getQuery(), 0),
                       k = canonicalShape(op, op.getKey(), 1),
                       v = canonicalShape(op, op.getValue(), 2),
                       o = canonicalShape(op, op.getInit(),
                                          op.getMask() ? 4 : 3);
  size_t rank = q.size();
  if (rank < 2 || k.size() != rank || v.size() != rank || o.size() != rank)
    return false;
  for (size_t d = 0; d + 2 < rank; ++d)
    if ((q[d] != k[d] && k[d] != 1) || (q[d] != v[d] && v[d] != 1) ||
        q[d] != o[d])
      return false;
  Type element = elementTypeOf(op.getQuery());
  if (!isa<FloatType>(element) || elementTypeOf(op.getKey()) != element ||
      elementTypeOf(op.getValue()) != element ||
      elementTypeOf(op.getInit()) != element)
    return false;
  if (Value mask = op.getMask())
    return elementTypeOf(mask) == element || elementTypeOf(mask).isInteger(1);
  return true;
}

/// A tfm.attention into a `tensor.empty` of `resultType` whose dynamic dims
/// are `sizes`.
AttentionOp buildAttention(OpBuilder &b, Location loc, Value q, Value k,
                           Value v, Value mask, double scale, bool causal,
                           RankedTensorType resultType, ValueRange sizes,
                           ArrayAttr maps) {
  Value init = tensor::EmptyOp::create(b, loc, resultType, sizes);
  return AttentionOp::create(b, loc, TypeRange{resultType}, q, k, v, mask,
                             /*kv_length=*/Value(), /*query_offset=*/Value(),
                             init, b.getF64FloatAttr(scale),
                             causal ? b.getUnitAttr() : UnitAttr(), maps,
                             /*window=*/IntegerAttr());
}

/// Keeps `attention` when the fused kernel takes it and its weights are not
/// needed; otherwise replaces it with its decomposition (whose softmax result
/// gives the weights). Returns the output and, decomposed, the weights.
DecomposedAttention finishAttention(PatternRewriter &rewriter,
                                    AttentionOp attention, bool needWeights,
                                    Operation *layer, bool remarks) {
  if (!needWeights && fitsKernel(attention)) {
    if (remarks)
      layer->emitRemark("lowered to tfm.attention");
    return {Value(), attention.getResult()[0]};
  }
  FailureOr<DecomposedAttention> chain =
      decomposeAttention(rewriter, attention);
  assert(succeeded(chain) && "a layer's attention has a decomposition");
  rewriter.eraseOp(attention);
  return *chain;
}

struct LowerSdpa : OpRewritePattern<SdpaOp> {
  LowerSdpa(MLIRContext *ctx, bool remarks)
      : OpRewritePattern(ctx), remarks(remarks) {}
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
    Value mask;
    if (Value m = op.getMask())
      mask = prepareSdpaMask(rewriter, loc, m, q, k);
    // The result is [..., Sq, Dv]: every dim but the last is the query's.
    RankedTensorType type = op.getResult().getType();
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(
            rewriter, loc, d + 1 < type.getRank() ? q : v, d));
    AttentionOp attention =
        buildAttention(rewriter, loc, q, k, v, mask, op.getScaleOrDefault(),
                       op.getCausal(), type, sizes, /*maps=*/ArrayAttr());
    rewriter.replaceOp(op, finishAttention(rewriter, attention,
                                           /*needWeights=*/false, op, remarks)
                               .output);
    return success();
  }
  bool remarks;
};

/// [..., S, E] -> [..., S, H, E/H]: the heads as a view, which tfm.attention
/// reads through its indexing maps.
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
  return tensor::ExpandShapeOp::create(b, loc, withShape(x, shape), x, groups);
}

/// [..., S, H, D] -> [..., S, H*D]
Value mergeHeads(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape().drop_back(2));
  shape.push_back(type.getShape()[rank - 2] * type.getShape()[rank - 1]);
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank - 2; ++i)
    groups.push_back({i});
  groups.push_back({rank - 2, rank - 1});
  return tensor::CollapseShapeOp::create(b, loc, withShape(x, shape), x,
                                         groups);
}

Value project(OpBuilder &b, Location loc, Value x, Value weight, Value bias) {
  SmallVector<int64_t> shape(cast<RankedTensorType>(x.getType()).getShape());
  shape.back() = cast<RankedTensorType>(weight.getType()).getShape()[0];
  return LinearOp::create(b, loc, withShape(x, shape), x, weight, bias);
}

/// nn.MultiheadAttention's masks as one mask of tfm.attention, aligned with
/// the scores [B, H, Sq, Sk] (batched) or [H, Sq, Sk] (`scores`, with the
/// sizes of its dynamic dims in `scoreSizes`). One mask passes as it is (a
/// [B*H, Sq, Sk] attn_mask reshaped to [B, H, Sq, Sk]); a key_padding_mask
/// [B, Sk] becomes [B, H, 1, Sk] (tfm.attention's lowerings read batch dims
/// all present or all absent), and with an attn_mask too both merge into one
/// [B, H, Sq, Sk] mask as PyTorch merges them.
Value prepareMhaMask(OpBuilder &b, Location loc, MultiHeadAttentionOp op,
                     ArrayRef<int64_t> scores, ArrayRef<Value> scoreSizes,
                     Type floatType) {
  Value attnMask = op.getAttnMask(), padding = op.getKeyPaddingMask();
  if (!attnMask && !padding)
    return {};
  MLIRContext *ctx = b.getContext();
  bool batched = shapeOf(op.getQuery()).size() == 3;
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
    shape.assign(scores.begin(), scores.end());
  if (!attnMask)
    shape[rank - 2] = 1; // [B, H, 1, Sk]
  SmallVector<Value> sizes(scoreSizes.take_back(shape.size()));
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
  return combineMasks(b, loc, inputs, shape, sizes, floatType);
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

/// The maps of a multi-head tfm.attention over heads split as [..., S, H, D]:
/// iteration space (b?, h, m, k1, k2, n), a mask of rank `maskRank` (none
/// when negative) aligned with the scores (b?, h, m, k2) at its trailing
/// dims.
ArrayAttr headMaps(Builder &b, bool batched, int64_t maskRank) {
  MLIRContext *ctx = b.getContext();
  unsigned h = batched ? 1 : 0, m = h + 1, k1 = h + 2, k2 = h + 3, n = h + 4;
  auto map = [&](ArrayRef<unsigned> dims) {
    SmallVector<AffineExpr> results;
    if (batched)
      results.push_back(getAffineDimExpr(0, ctx));
    for (unsigned d : dims)
      results.push_back(getAffineDimExpr(d, ctx));
    return AffineMap::get(n + 1, 0, results, ctx);
  };
  SmallVector<AffineMap> maps = {map({m, h, k1}), map({k2, h, k1}),
                                 map({k2, h, n})};
  if (maskRank >= 0) {
    AffineMap scores = map({h, m, k2});
    maps.push_back(
        scores.getSliceMap(scores.getNumResults() - maskRank, maskRank));
  }
  maps.push_back(map({m, h, n}));
  return b.getAffineMapArrayAttr(maps);
}

struct LowerMultiHeadAttention : OpRewritePattern<MultiHeadAttentionOp> {
  LowerMultiHeadAttention(MLIRContext *ctx, bool remarks)
      : OpRewritePattern(ctx), remarks(remarks) {}
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
    int64_t rank = shapeOf(q).size();
    bool batched = rank == 3;

    // The scores [B?, H, Sq, Sk] and their sizes (null where static).
    auto dimOf = [&](Value x, int64_t d) -> Value {
      if (!ShapedType::isDynamic(shapeOf(x)[d]))
        return Value();
      return tensor::DimOp::create(rewriter, loc, x, d);
    };
    SmallVector<int64_t> scores = {heads, shapeOf(q)[rank - 2],
                                   shapeOf(k)[rank - 2]};
    SmallVector<Value> scoreSizes = {Value(), dimOf(q, rank - 2),
                                     dimOf(k, rank - 2)};
    if (batched) {
      scores.insert(scores.begin(), shapeOf(q)[0]);
      scoreSizes.insert(scoreSizes.begin(), dimOf(q, 0));
    }
    Value mask =
        prepareMhaMask(rewriter, loc, op, scores, scoreSizes, elementTypeOf(q));

    Value qh = splitHeads(rewriter, loc, q, heads);
    Value kh = splitHeads(rewriter, loc, k, heads);
    Value vh = splitHeads(rewriter, loc, v, heads);
    SmallVector<int64_t> outShape(shapeOf(qh));
    outShape.back() = shapeOf(vh).back();
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank - 1; ++d)
      if (Value size = dimOf(q, d))
        sizes.push_back(size);
    int64_t maskRank = mask ? int64_t(shapeOf(mask).size()) : -1;
    AttentionOp attention = buildAttention(
        rewriter, loc, qh, kh, vh, mask, 1.0 / std::sqrt(double(embed / heads)),
        /*causal=*/false, withShape(q, outShape), sizes,
        headMaps(rewriter, batched, maskRank));
    DecomposedAttention result = finishAttention(
        rewriter, attention, bool(op.getAttnWeights()), op, remarks);

    Value merged = mergeHeads(rewriter, loc, result.output);
    SmallVector<Value> results = {
        project(rewriter, loc, merged, op.getOutWeight(), op.getOutBias())};
    if (op.getAttnWeights())
      results.push_back(op.getAverageAttnWeights()
                            ? averageHeads(rewriter, loc, result.probs)
                            : result.probs);
    rewriter.replaceOp(op, results);
    return success();
  }
  bool remarks;
};

struct TfmLowerLayersPass : tfm::impl::TfmLowerLayersBase<TfmLowerLayersPass> {
  using Base::Base;
  void runOnOperation() override {
    // An sdpa over a cache is built as tfm.attention by the front end (its
    // kernel is what bounds the keys visited): no layer is left to lower,
    // but the remark that confirms fusion is owed all the same.
    if (remarks)
      getOperation()->walk([](AttentionOp op) {
        if (!op.getKvLength() && !op.getQueryOffset())
          return;
        InFlightDiagnostic remark =
            op->emitRemark("lowered to tfm.attention over a cache");
        if (op.getKvLength())
          remark << " (keys up to kv_length";
        else
          remark << " (keys";
        remark << (op.getQueryOffset() ? ", causal from query_offset)" : ")");
      });
    RewritePatternSet patterns(&getContext());
    populateLowerLayersPatterns(patterns, remarks);
    // Top-down, remarks come in source order.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace

void mlir::tfm::populateLowerLayersPatterns(RewritePatternSet &patterns,
                                            bool emitRemarks) {
  patterns.add<LowerSdpa, LowerMultiHeadAttention>(patterns.getContext(),
                                                   emitRemarks);
}
