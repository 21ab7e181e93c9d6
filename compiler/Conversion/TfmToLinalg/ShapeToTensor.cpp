//===- ShapeToTensor.cpp - reshape to tensor reshapes, permute to linalg --===//
//
// A reshape becomes one tensor.collapse_shape or tensor.expand_shape (views
// after bufferization) where the dims group that way: static shapes, or
// named dims passing through at both ends of a static middle (the frontend
// reads their sizes with tensor.dim, which tells them apart from `?`s that
// only look alike). Anything else is a tensor.reshape over a shape tensor.
// permute is a linalg.transpose.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/TfmToLinalg/Utils.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// Whether result dim `j` of `op` is input dim `i` unchanged: equal static
/// sizes, or a dynamic size the frontend read with `tensor.dim` of the input
/// at `i` (a named dim passing through).
bool passesThrough(ReshapeOp op, int64_t i, int64_t j) {
  auto from = cast<RankedTensorType>(op.getInput().getType());
  auto to = cast<RankedTensorType>(op.getResult().getType());
  if (!from.isDynamicDim(i) || !to.isDynamicDim(j))
    return from.getDimSize(i) == to.getDimSize(j);
  Value size = op.getSizes()[to.getDynamicDimIndex(j)];
  auto dim = size.getDefiningOp<tensor::DimOp>();
  std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
  return dim && dim.getSource() == op.getInput() && index == i;
}

/// The groups of a reshape that keeps some dims at both ends and reshapes a
/// static middle (head splits and merges, squeeze and unsqueeze next to
/// named dims), indexed over the side of higher rank; nullopt otherwise.
std::optional<SmallVector<ReassociationIndices>> groupsFor(ReshapeOp op) {
  auto from = cast<RankedTensorType>(op.getInput().getType());
  auto to = cast<RankedTensorType>(op.getResult().getType());
  int64_t m = from.getRank(), n = to.getRank();
  if (m == n || m == 0 || n == 0)
    return std::nullopt;
  int64_t prefix = 0, suffix = 0;
  while (prefix < std::min(m, n) && passesThrough(op, prefix, prefix))
    ++prefix;
  while (suffix < std::min(m, n) - prefix &&
         passesThrough(op, m - 1 - suffix, n - 1 - suffix))
    ++suffix;
  ArrayRef<int64_t> inMiddle =
      from.getShape().slice(prefix, m - prefix - suffix);
  ArrayRef<int64_t> outMiddle =
      to.getShape().slice(prefix, n - prefix - suffix);
  if (ShapedType::isDynamicShape(inMiddle) ||
      ShapedType::isDynamicShape(outMiddle))
    return std::nullopt;
  ArrayRef<int64_t> big = m > n ? inMiddle : outMiddle;
  ArrayRef<int64_t> small = m > n ? outMiddle : inMiddle;
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < prefix; ++i)
    groups.push_back({i});
  if (!small.empty()) {
    std::optional<SmallVector<ReassociationIndices>> middle =
        getReassociationIndicesForCollapse(big, small);
    if (!middle)
      return std::nullopt;
    for (ReassociationIndices g : *middle) {
      for (int64_t &i : g)
        i += prefix;
      groups.push_back(g);
    }
  } else if (llvm::any_of(big, [](int64_t d) { return d != 1; })) {
    return std::nullopt;
  }
  int64_t bigRank = std::max(m, n);
  for (int64_t i = bigRank - suffix; i < bigRank; ++i)
    groups.push_back({i});
  if (small.empty()) {
    // Only 1s in the middle: they join the group before (or after) them.
    ReassociationIndices ones;
    for (int64_t i = prefix; i < prefix + int64_t(big.size()); ++i)
      ones.push_back(i);
    if (prefix > 0) {
      groups[prefix - 1].append(ones.begin(), ones.end());
    } else {
      ones.append(groups[prefix].begin(), groups[prefix].end());
      groups[prefix] = ones;
    }
  }
  return groups;
}

/// The result's sizes: static ones as attributes, the op's operands for the
/// dynamic ones.
SmallVector<OpFoldResult> resultSizes(OpBuilder &b, ReshapeOp op) {
  SmallVector<OpFoldResult> sizes;
  auto dynamic = op.getSizes().begin();
  for (int64_t d : op.getResult().getType().getShape())
    sizes.push_back(ShapedType::isDynamic(d) ? OpFoldResult(*dynamic++)
                                             : b.getIndexAttr(d));
  return sizes;
}

struct ReshapeToTensor : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    auto from = cast<RankedTensorType>(x.getType());
    auto to = cast<RankedTensorType>(op.getResult().getType());
    if (from == to && from.hasStaticShape()) {
      rewriter.replaceOp(op, x);
      return success();
    }
    std::optional<SmallVector<ReassociationIndices>> groups;
    if (from.hasStaticShape() && to.hasStaticShape() &&
        from.getRank() != to.getRank())
      groups = from.getRank() > to.getRank()
                   ? getReassociationIndicesForCollapse(from.getShape(),
                                                        to.getShape())
                   : getReassociationIndicesForCollapse(to.getShape(),
                                                        from.getShape());
    if (!groups)
      groups = groupsFor(op);
    // Flattening is always one group, whatever the sizes.
    if (!groups && to.getRank() == 1 && from.getRank() > 1)
      groups = SmallVector<ReassociationIndices>{
          llvm::to_vector(llvm::seq<int64_t>(0, from.getRank()))};
    if (groups && from.getRank() > to.getRank()) {
      rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, to, x, *groups);
      return success();
    }
    if (groups) {
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
          op, to, x, *groups, resultSizes(rewriter, op));
      return success();
    }
    // Anything else reads the sizes from a shape tensor (memref.reshape
    // after bufferization, which copies only non-contiguous sources).
    SmallVector<Value> shape;
    for (OpFoldResult size : resultSizes(rewriter, op))
      shape.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, size));
    Value shapeTensor = tensor::FromElementsOp::create(
        rewriter, loc,
        RankedTensorType::get({to.getRank()}, rewriter.getIndexType()), shape);
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, to, x, shapeTensor);
    return success();
  }
};

struct PermuteToLinalg : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> permutation = op.getPermutation();
    if (llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size()))) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    SmallVector<DimSource> sources;
    for (int64_t p : permutation)
      sources.push_back({op.getInput(), p});
    Value init = createEmptyTensor(
        rewriter, op.getLoc(), cast<RankedTensorType>(op.getResult().getType()),
        sources);
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), op.getInput(), init, permutation);
    rewriter.replaceOp(op, transpose->getResults());
    return success();
  }
};
} // namespace

void mlir::tfm::populateShapeToTensorPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeToTensor, PermuteToLinalg>(patterns.getContext());
}
