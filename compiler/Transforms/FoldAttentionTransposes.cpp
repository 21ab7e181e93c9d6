//===- FoldAttentionTransposes.cpp - Transposes into tfm.attention maps ---===//
//
// Patterns that fold a linalg.transpose producing an operand of
// tfm.attention, or consuming its result, into the op's indexing maps. A head
// split ([B, S, H, D] -> [B, H, S, D]) and merge written around a hand-written
// chain thus cost nothing: the kernel reads the heads through their strides
// instead of a copy (tfm-lower-layers builds the layers' attention with the
// heads in the maps already). Transposes that move the head dim stay: the
// kernel needs it contiguous.
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
/// The permutation of a transpose on tensors (result dim i is input dim
/// permutation[i]), or nothing when `op` is not one.
std::optional<SmallVector<int64_t>> transposePermutation(Operation *op) {
  auto transpose = dyn_cast_if_present<linalg::TransposeOp>(op);
  if (!transpose || !transpose.hasPureTensorSemantics())
    return std::nullopt;
  return SmallVector<int64_t>(transpose.getPermutation());
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
      Value input = cast<linalg::TransposeOp>(producer).getInput();
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
