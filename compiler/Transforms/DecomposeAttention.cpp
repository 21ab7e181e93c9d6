//===- DecomposeAttention.cpp - tfm.attention as tfm primitives -----------===//
//
// tfm-decompose-attention: every tfm.attention on tensors becomes the chain
// `matmul(softmax(mask(scale(matmul(q, transpose(k))))), v)`, the unfused
// path kept for comparison (`--no-fuse-attention`). Its operands are read
// through the op's indexing maps, so a head split or merge in the maps
// becomes a permute again.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/DecomposeAttention.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMDECOMPOSEATTENTION
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

bool isIdentity(ArrayRef<int64_t> permutation) {
  for (auto [i, p] : llvm::enumerate(permutation))
    if (p != int64_t(i))
      return false;
  return true;
}

/// `v` with result dim i taken from its dim permutation[i].
Value permute(OpBuilder &b, Location loc, Value v,
              ArrayRef<int64_t> permutation) {
  if (isIdentity(permutation))
    return v;
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(shapeOf(v)[p]);
  return PermuteOp::create(b, loc, withShape(v, shape), v,
                           b.getDenseI64ArrayAttr(permutation));
}

/// The mask in the chain's form: its dims in the canonical order of the
/// scores (batch..., Sq, Sk), aligned with them at the trailing end, with a
/// 1 for each dim its map leaves out after its first one (NumPy
/// broadcasting does the rest). `positions` holds, per canonical dim, its
/// position in the mask or -1.
Value canonicalMask(OpBuilder &b, Location loc, Value mask,
                    ArrayRef<int64_t> positions) {
  SmallVector<int64_t> present;
  for (int64_t position : positions)
    if (position >= 0)
      present.push_back(position);
  if (present.empty())
    return mask;
  Value m = permute(b, loc, mask, present);
  auto first = llvm::find_if(positions, [](int64_t p) { return p >= 0; });
  SmallVector<int64_t> shape;
  SmallVector<Value> sizes;
  bool insertsDims = false;
  int64_t next = 0;
  for (int64_t position : llvm::make_range(first, positions.end())) {
    if (position < 0) {
      shape.push_back(1);
      insertsDims = true;
      continue;
    }
    int64_t size = shapeOf(m)[next];
    shape.push_back(size);
    if (ShapedType::isDynamic(size))
      sizes.push_back(tensor::DimOp::create(b, loc, m, next));
    ++next;
  }
  if (!insertsDims)
    return m;
  return ReshapeOp::create(b, loc, withShape(m, shape), m, sizes);
}

Value transposeLastTwo(OpBuilder &b, Location loc, Value v) {
  SmallVector<int64_t> shape(shapeOf(v));
  std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
  return TransposeOp::create(b, loc, withShape(v, shape), v,
                             b.getI64IntegerAttr(-2), b.getI64IntegerAttr(-1));
}

/// softmax(mask(q kᵀ · scale)) v over the last two dimensions, with the mask
/// as tfm.masked_fill(-inf) (boolean) or tfm.add (float) and the causal mask
/// as tfm.causal_mask: the spelling tfm-fuse-attention recognizes.
DecomposedAttention buildChain(OpBuilder &b, Location loc, Value q, Value k,
                               Value v, double scale, Value mask, bool causal) {
  ArrayRef<int64_t> qShape = shapeOf(q), kShape = shapeOf(k),
                    vShape = shapeOf(v);
  Value kT = transposeLastTwo(b, loc, k);
  SmallVector<int64_t> scoresShape(qShape);
  scoresShape.back() = kShape[kShape.size() - 2];
  auto scoresType = withShape(q, scoresShape);
  Value scores = MatmulOp::create(b, loc, scoresType, q, kT);
  Value x = ScaleOp::create(b, loc, scoresType, scores,
                            b.getF64FloatAttr(scale), UnitAttr());
  if (mask) {
    if (getElementTypeOrSelf(mask.getType()).isInteger(1))
      x = MaskedFillOp::create(
          b, loc, scoresType, x, mask,
          b.getF64FloatAttr(-std::numeric_limits<double>::infinity()));
    else
      x = AddOp::create(b, loc, scoresType, x, mask);
  }
  if (causal)
    x = CausalMaskOp::create(b, loc, scoresType, x);
  Value probs =
      SoftmaxOp::create(b, loc, scoresType, x, b.getI64IntegerAttr(-1));
  SmallVector<int64_t> outShape(qShape);
  outShape.back() = vShape.back();
  Value output = MatmulOp::create(b, loc, withShape(q, outShape), probs, v);
  return {probs, output};
}
} // namespace

FailureOr<DecomposedAttention> mlir::tfm::decomposeAttention(OpBuilder &b,
                                                             AttentionOp op) {
  if (op.hasPureBufferSemantics() || op.getKvLength() || op.getQueryOffset() ||
      op.getWindow())
    return failure();
  Location loc = op.getLoc();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue(),
        mask = op.getMask();
  // A bf16/f16 key/value cache of f32 attention: the chain's matmuls take
  // one element type, so K and V are widened first (exactly).
  Type elementType = getElementTypeOrSelf(q.getType());
  for (Value *x : {&k, &v})
    if (getElementTypeOrSelf(x->getType()) != elementType)
      *x = CastOp::create(
          b, loc, cast<RankedTensorType>(x->getType()).clone(elementType), *x);
  // Without maps the operands are in the canonical order, and their ranks
  // may differ (the chain broadcasts them where the op would not).
  bool hasMaps = bool(op.getIndexingMaps());
  if (hasMaps) {
    q = permute(b, loc, q, op.getCanonicalDimPositions(0));
    k = permute(b, loc, k, op.getCanonicalDimPositions(1));
    v = permute(b, loc, v, op.getCanonicalDimPositions(2));
    if (mask)
      mask = canonicalMask(b, loc, mask, op.getCanonicalDimPositions(3));
  }
  DecomposedAttention chain = buildChain(
      b, loc, q, k, v, op.getScale().convertToDouble(), mask, op.getCausal());
  if (hasMaps) {
    // Init dim j holds canonical dim c where positions[c] == j.
    SmallVector<int64_t> positions = op.getCanonicalDimPositions(mask ? 4 : 3);
    SmallVector<int64_t> permutation(positions.size());
    for (auto [c, position] : llvm::enumerate(positions))
      permutation[position] = c;
    chain.output = permute(b, loc, chain.output, permutation);
  }
  return chain;
}

namespace {
struct DecomposeAttentionPattern : OpRewritePattern<AttentionOp> {
  DecomposeAttentionPattern(MLIRContext *context,
                            std::function<bool(AttentionOp)> filter)
      : OpRewritePattern(context), filter(std::move(filter)) {}
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (filter && !filter(op))
      return rewriter.notifyMatchFailure(op, "kept fused");
    FailureOr<DecomposedAttention> chain = decomposeAttention(rewriter, op);
    if (failed(chain))
      return rewriter.notifyMatchFailure(
          op, "on buffers, or over a cache (kv_length, query_offset)");
    rewriter.replaceOp(op, chain->output);
    return success();
  }

private:
  std::function<bool(AttentionOp)> filter;
};

struct TfmDecomposeAttentionPass
    : tfm::impl::TfmDecomposeAttentionBase<TfmDecomposeAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::tfm::populateDecomposeAttentionPatterns(
    RewritePatternSet &patterns, std::function<bool(AttentionOp)> filter) {
  patterns.add<DecomposeAttentionPattern>(patterns.getContext(),
                                          std::move(filter));
}
