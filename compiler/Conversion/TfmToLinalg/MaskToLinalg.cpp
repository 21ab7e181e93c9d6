//===- MaskToLinalg.cpp - masked_fill, causal_mask to linalg --------------===//
//
// Both masks become one elementwise select generic. The payloads are the
// ones tfm-fuse-attention reads back at the linalg level: `select(mask,
// value, x)` with the mask broadcast through its indexing map, and
// `select(j > i, -inf, x)` over linalg.index of the last two loops.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/TfmToLinalg/Utils.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfm;

namespace {
struct MaskedFillToLinalg : OpRewritePattern<MaskedFillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaskedFillOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    unsigned rank = type.getRank();
    Value fill = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getFloatAttr(type.getElementType(),
                              op.getValue().convertToDouble()));
    // The mask aligns at the trailing dims and broadcasts its static 1s.
    AffineMap maskMap = getBroadcastMap(ctx, op.getMask().getType().getShape(),
                                        type.getShape(), rank);
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    Value init =
        createEmptyTensor(rewriter, loc, type, getDimSources(op.getInput()));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{op.getInput(), op.getMask()},
        ValueRange{init}, ArrayRef<AffineMap>{identity, maskMap, identity},
        getParallelIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value selected =
              arith::SelectOp::create(b, l, args[1], fill, args[0]);
          linalg::YieldOp::create(b, l, selected);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct CausalMaskToLinalg : OpRewritePattern<CausalMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CausalMaskOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t rank = op.getType().getRank();
    Value minusInf = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getFloatAttr(op.getType().getElementType(),
                              -std::numeric_limits<double>::infinity()));
    rewriter.replaceOp(
        op, mapElements(rewriter, loc, op.getInput(),
                        [&](OpBuilder &b, Location l, Value x) -> Value {
                          // Query i, key j: keys after the query are masked
                          // (top-left aligned, as tfm.attention's `causal`).
                          Value i = linalg::IndexOp::create(b, l, rank - 2);
                          Value j = linalg::IndexOp::create(b, l, rank - 1);
                          Value future = arith::CmpIOp::create(
                              b, l, arith::CmpIPredicate::ugt, j, i);
                          return arith::SelectOp::create(b, l, future, minusInf,
                                                         x);
                        }));
    return success();
  }
};
} // namespace

void mlir::tfm::populateMaskToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MaskedFillToLinalg, CausalMaskToLinalg>(patterns.getContext());
}
