//===- FoldAttentionTransposes.cpp - Transposes into tfm.attention maps ---===//
//
// Patterns that fold a transpose producing an operand of tfm.attention, or
// consuming its result, into the op's indexing maps. The head split of
// multi-head attention ([B, S, H, D] -> [B, H, S, D]) and its merge thus cost
// nothing: the kernel reads the heads through their strides instead of a
// copy. Transposes that move the head dim stay: the kernel needs it
// contiguous.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// The permutation of a transpose (result dim i is input dim
/// permutation[i]), or nothing when `op` is not a transpose.
std::optional<SmallVector<int64_t>> transposePermutation(Operation *op) {
  if (auto transpose = dyn_cast_if_present<linalg::TransposeOp>(op)) {
    if (!transpose.hasPureTensorSemantics())
      return std::nullopt;
    return SmallVector<int64_t>(transpose.getPermutation());
  }
  auto transpose = dyn_cast_if_present<tfm::TransposeOp>(op);
  if (!transpose)
    return std::nullopt;
  int64_t rank = transpose.getInput().getType().getRank();
  int64_t d0 = transpose.getDim0(), d1 = transpose.getDim1();
  d0 += d0 < 0 ? rank : 0;
  d1 += d1 < 0 ? rank : 0;
  if (d0 < 0 || d1 < 0 || d0 >= rank || d1 >= rank)
    return std::nullopt;
  auto permutation = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(permutation[d0], permutation[d1]);
  return permutation;
}

Value transposeInput(Operation *op) {
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return transpose.getInput();
  return cast<tfm::TransposeOp>(op).getInput();
}

ArrayAttr mapsAttr(Builder &b, ArrayRef<AffineMap> maps) {
  return b.getAffineMapArrayAttr(maps);
}

/// attention(transpose(x)) -> attention(x) reading x through the composed
/// map, for query, key, value and mask.
struct FoldOperandTranspose : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (op.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "on buffers");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<OpOperand *> operands = {
        &op.getQueryMutable(), &op.getKeyMutable(), &op.getValueMutable()};
    if (op.getMask())
      operands.push_back(&op.getMaskMutable()[0]);
    for (size_t index = 0; index < operands.size(); ++index) {
      OpOperand *operand = operands[index];
      Operation *producer = operand->get().getDefiningOp();
      std::optional<SmallVector<int64_t>> permutation =
          transposePermutation(producer);
      if (!permutation)
        continue;
      bool isMask = index == 3;
      int64_t rank = permutation->size();
      // The kernel reads rows of the head dim: a transpose that moves it is
      // a real copy.
      if (!isMask && permutation->back() != rank - 1)
        continue;
      // Result dim i of the transpose is its input's dim permutation[i].
      ArrayRef<AffineExpr> results = maps[index].getResults();
      SmallVector<AffineExpr> composed(rank);
      for (int64_t i = 0; i < rank; ++i)
        composed[(*permutation)[i]] = results[i];
      maps[index] = AffineMap::get(maps[index].getNumDims(), 0, composed,
                                   op.getContext());
      Value input = transposeInput(producer);
      rewriter.modifyOpInPlace(op, [&] {
        operand->set(input);
        op.setIndexingMapsAttr(mapsAttr(rewriter, maps));
      });
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no operand transpose to fold");
  }
};

/// transpose(attention(..., init)) -> attention(..., init') writing the
/// transposed layout through the composed init map.
struct FoldResultTranspose : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (op.hasPureBufferSemantics() || !op->getResult(0).hasOneUse())
      return rewriter.notifyMatchFailure(op, "result is not used once");
    Operation *consumer = *op->getResult(0).getUsers().begin();
    std::optional<SmallVector<int64_t>> permutation =
        transposePermutation(consumer);
    if (!permutation || permutation->back() != int64_t(permutation->size()) - 1)
      return rewriter.notifyMatchFailure(op, "no result transpose to fold");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    ArrayRef<AffineExpr> results = maps.back().getResults();
    // Result dim i of the transpose is the attention output's dim
    // permutation[i].
    SmallVector<AffineExpr> composed;
    for (int64_t source : *permutation)
      composed.push_back(results[source]);
    maps.back() =
        AffineMap::get(maps.back().getNumDims(), 0, composed, op.getContext());
    // The op writes every element of its init, so any tensor of the
    // transposed shape serves.
    auto resultType = cast<RankedTensorType>(consumer->getResult(0).getType());
    rewriter.setInsertionPoint(consumer);
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < resultType.getRank(); ++d)
      if (resultType.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(rewriter, op.getLoc(),
                                              op.getInit(), (*permutation)[d]));
    Value init =
        tensor::EmptyOp::create(rewriter, op.getLoc(), resultType, sizes);
    SmallVector<Value> operands(op->getOperands());
    operands.back() = init;
    OperationState state(op.getLoc(), op->getName(), operands,
                         TypeRange{resultType}, op->getAttrs());
    Operation *folded = rewriter.create(state);
    cast<AttentionOp>(folded).setIndexingMapsAttr(mapsAttr(rewriter, maps));
    rewriter.replaceOp(consumer, folded->getResults());
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void mlir::tfm::populateFoldAttentionTransposesPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FoldOperandTranspose, FoldResultTranspose>(
      patterns.getContext());
}
