//===- FuseAttention.cpp - Fuse the attention chain -----------------------===//
//
// The tfm-fuse-attention pass: the pattern that replaces an attention chain
// recognized over linalg (FuseAttentionLinalg.cpp) with one tfm.attention,
// and the remarks that say what was fused and what was not.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/AttentionChain.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#include <cmath>

#define DEBUG_TYPE "tfm-fuse-attention"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFUSEATTENTION
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

//===----------------------------------------------------------------------===//
// Shared checks and the rewrite
//===----------------------------------------------------------------------===//

namespace {
/// The shape `operand` has once a pending transpose is applied.
SmallVector<int64_t> operandShape(const ChainOperand &operand) {
  SmallVector<int64_t> shape(
      cast<ShapedType>(operand.value.getType()).getShape());
  if (operand.transposed && shape.size() >= 2)
    std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
  return shape;
}

/// A value with the shape of `v` that is not computed by a destination-style
/// op (whose result has its init's shape), or null when there is none.
Value shapeSource(Value v) {
  while (auto dps = v.getDefiningOp<DestinationStyleOpInterface>()) {
    auto result = cast<OpResult>(v);
    if (result.getResultNumber() >= unsigned(dps.getNumDpsInits()))
      return {};
    v = dps.getDpsInitOperand(result.getResultNumber())->get();
  }
  return v;
}

std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}
} // namespace

std::optional<std::string>
mlir::tfm::checkChainOperands(const AttentionChain &chain) {
  auto resultType =
      dyn_cast<RankedTensorType>(chain.root->getResult(0).getType());
  for (Value v : {chain.query.value, chain.key.value, chain.value.value})
    if (!isa<RankedTensorType>(v.getType()) || !resultType)
      return std::string("operands are not ranked tensors");

  SmallVector<int64_t> q = operandShape(chain.query),
                       k = operandShape(chain.key),
                       v = operandShape(chain.value);
  ArrayRef<int64_t> o = resultType.getShape();
  size_t rank = q.size();
  if (rank < 2 || k.size() != rank || v.size() != rank || o.size() != rank)
    return "query, key and value have ranks " + std::to_string(q.size()) +
           ", " + std::to_string(k.size()) + " and " +
           std::to_string(v.size()) +
           ": batch dims that broadcast are not fused";
  // tfm.attention does not broadcast. Two dynamic sizes are equal by the
  // contractions' semantics (the frontend only lets one symbol meet itself),
  // but a static size against a dynamic one may be a broadcast at run time
  // (a static 1 against `batch`), so only identical sizes fuse.
  auto differ = [](int64_t a, int64_t b) { return a != b; };
  for (size_t d = 0; d + 2 < rank; ++d)
    if (differ(q[d], k[d]) || differ(q[d], v[d]) || differ(q[d], o[d]))
      return "query, key and value differ in batch dim " + std::to_string(d) +
             ": batch dims that broadcast are not fused";

  Type element = cast<ShapedType>(chain.query.value.getType()).getElementType();
  Type keyElement =
      cast<ShapedType>(chain.key.value.getType()).getElementType();
  Type valueElement =
      cast<ShapedType>(chain.value.value.getType()).getElementType();
  if (keyElement != element || valueElement != element ||
      resultType.getElementType() != element)
    return "element types differ (query " + typeString(element) + ", key " +
           typeString(keyElement) + ", value " + typeString(valueElement) +
           ", result " + typeString(resultType.getElementType()) + ")";
  if (!isa<FloatType>(element))
    return "the element type " + typeString(element) + " is not a float";
  if (!std::isfinite(chain.scale))
    return std::string("the combined scale is not finite");
  if (chain.mask) {
    Type maskElement = cast<ShapedType>(chain.mask.getType()).getElementType();
    if (maskElement != element && !maskElement.isInteger(1))
      return "element types differ (mask " + typeString(maskElement) +
             ", scores " + typeString(element) + ")";
  }
  return std::nullopt;
}

void mlir::tfm::rewriteAttentionChain(RewriterBase &rewriter,
                                      const AttentionChain &chain) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(chain.root);
  Location loc = chain.root->getLoc();

  auto materialize = [&](const ChainOperand &operand) -> Value {
    if (!operand.transposed)
      return operand.value;
    auto type = cast<RankedTensorType>(operand.value.getType());
    int64_t rank = type.getRank();
    auto swapped =
        RankedTensorType::get(operandShape(operand), type.getElementType());
    SmallVector<int64_t> permutation =
        llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(permutation[rank - 2], permutation[rank - 1]);
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank; ++d)
      if (swapped.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, operand.value,
                                              permutation[d]));
    Value init = tensor::EmptyOp::create(rewriter, loc, swapped, sizes);
    return linalg::TransposeOp::create(rewriter, loc, operand.value, init,
                                       permutation)
        ->getResult(0);
  };
  Value query = materialize(chain.query);
  Value key = materialize(chain.key);
  Value value = materialize(chain.value);

  // The result is [..., Sq, Dv]: every dim but the last is the query's.
  auto resultType = cast<RankedTensorType>(chain.root->getResult(0).getType());
  int64_t rank = resultType.getRank();
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    if (resultType.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(rewriter, loc,
                                            d + 1 < rank ? query : value, d));
  Value init = tensor::EmptyOp::create(rewriter, loc, resultType, sizes);

  auto attention = AttentionOp::create(
      rewriter, loc, TypeRange{resultType}, query, key, value, chain.mask,
      /*kv_length=*/Value(),
      /*query_offset=*/Value(), init, rewriter.getF64FloatAttr(chain.scale),
      chain.causal ? rewriter.getUnitAttr() : UnitAttr(),
      /*indexing_maps=*/ArrayAttr(), /*window=*/IntegerAttr());
  rewriter.replaceOp(chain.root, attention->getResults());
  for (Operation *op : llvm::reverse(chain.ops)) {
    // Shape queries on the chain (a softmax sizing its temporaries) read the
    // same sizes from the destination the op would have written.
    for (OpResult result : op->getResults())
      for (OpOperand &use : llvm::make_early_inc_range(result.getUses()))
        if (isa<tensor::DimOp>(use.getOwner()))
          if (Value source = shapeSource(result))
            rewriter.modifyOpInPlace(use.getOwner(), [&] { use.set(source); });
    if (op->use_empty())
      rewriter.eraseOp(op);
  }
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {
/// Rewrites a chain when `match` finds one; otherwise reports the reason to
/// the rewriter and, in debug builds, under -debug-only=tfm-fuse-attention.
LogicalResult fuseOrExplain(Operation *root, ChainMatch match,
                            PatternRewriter &rewriter, bool emitRemarks) {
  if (!match.chain) {
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": " << root->getLoc() << ": "
                            << (match.candidate ? "not fused: " : "skipped: ")
                            << match.reason << "\n");
    return rewriter.notifyMatchFailure(root, match.reason);
  }
  LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": " << root->getLoc()
                          << ": fused (scale " << match.chain->scale
                          << (match.chain->mask ? ", mask" : "")
                          << (match.chain->causal ? ", causal" : "") << ")\n");
  if (emitRemarks)
    root->emitRemark("fused attention chain into tfm.attention");
  rewriteAttentionChain(rewriter, *match.chain);
  return success();
}

struct FuseLinalgAttention : OpInterfaceRewritePattern<linalg::LinalgOp> {
  FuseLinalgAttention(MLIRContext *ctx, bool emitRemarks)
      : OpInterfaceRewritePattern(ctx), emitRemarks(emitRemarks) {}
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    return fuseOrExplain(op, matchLinalgAttention(op), rewriter, emitRemarks);
  }
  bool emitRemarks;
};

struct TfmFuseAttentionPass
    : tfm::impl::TfmFuseAttentionBase<TfmFuseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseAttentionPatterns(patterns, remarks);
    // Only the chains change; leave regions as they are. Top-down, remarks
    // come in source order.
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    config.setUseTopDownTraversal(true);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    if (remarks)
      reportRefusals();
  }

  /// The greedy driver retries patterns as the IR changes, so refusals are
  /// reported from one walk over what is left, once per chain.
  void reportRefusals() {
    getOperation().walk([](linalg::LinalgOp op) {
      ChainMatch match = matchLinalgAttention(op);
      if (match.candidate && !match.chain)
        op->emitRemark("attention not fused: ") << match.reason;
    });
  }
};
} // namespace

void mlir::tfm::populateFuseAttentionPatterns(RewritePatternSet &patterns,
                                              bool emitRemarks) {
  patterns.add<FuseLinalgAttention>(patterns.getContext(), emitRemarks);
  populateFoldAttentionTransposesPatterns(patterns);
}
