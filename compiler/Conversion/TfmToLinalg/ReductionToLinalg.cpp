//===- ReductionToLinalg.cpp - sum, mean, max, min to linalg --------------===//
//
// One reduction generic (parallel loops for the kept dims, reduction loops
// for the others) into a tensor filled with the reduction's identity; mean
// divides by the reduced element count in an elementwise generic that fuses
// with what follows; keepdim re-inserts the 1s with tensor.expand_shape.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/TfmToLinalg/Utils.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// The value a reduction starts from: 0, or the lowest (highest) value of
/// the type for max (min), so that an empty reduction yields it.
TypedAttr identity(OpBuilder &b, ReduceKind kind, Type type) {
  bool isMax = kind == ReduceKind::max, isMin = kind == ReduceKind::min;
  if (auto f = dyn_cast<FloatType>(type)) {
    double inf = std::numeric_limits<double>::infinity();
    return b.getFloatAttr(f, isMax ? -inf : isMin ? inf : 0.0);
  }
  unsigned width = type.getIntOrFloatBitWidth();
  APInt value = isMax   ? APInt::getSignedMinValue(width)
                : isMin ? APInt::getSignedMaxValue(width)
                        : APInt::getZero(width);
  return b.getIntegerAttr(type, value);
}

Value combine(OpBuilder &b, Location l, ReduceKind kind, Value acc, Value x) {
  bool isFloat = isa<FloatType>(x.getType());
  if (kind == ReduceKind::max)
    return isFloat ? Value(arith::MaximumFOp::create(b, l, acc, x))
                   : Value(arith::MaxSIOp::create(b, l, acc, x));
  if (kind == ReduceKind::min)
    return isFloat ? Value(arith::MinimumFOp::create(b, l, acc, x))
                   : Value(arith::MinSIOp::create(b, l, acc, x));
  return isFloat ? Value(arith::AddFOp::create(b, l, acc, x))
                 : Value(arith::AddIOp::create(b, l, acc, x));
}

struct ReduceToLinalg : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value x = op.getInput();
    auto inputType = cast<RankedTensorType>(x.getType());
    Type element = inputType.getElementType();
    unsigned rank = inputType.getRank();
    ArrayRef<int64_t> dims = op.getDims();
    ReduceKind kind = op.getKind();

    // The result without keepdim's 1s.
    SmallVector<int64_t> keptShape;
    SmallVector<DimSource> keptSources;
    SmallVector<AffineExpr> keptExprs;
    SmallVector<utils::IteratorType> iterators;
    for (unsigned i = 0; i < rank; ++i) {
      bool reduced = llvm::is_contained(dims, int64_t(i));
      iterators.push_back(reduced ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
      if (reduced)
        continue;
      keptShape.push_back(inputType.getDimSize(i));
      keptSources.push_back({x, int64_t(i)});
      keptExprs.push_back(getAffineDimExpr(i, ctx));
    }
    auto keptType = RankedTensorType::get(keptShape, element);
    Value init = createEmptyTensor(rewriter, loc, keptType, keptSources);
    Value start = arith::ConstantOp::create(rewriter, loc,
                                            identity(rewriter, kind, element));
    init = linalg::FillOp::create(rewriter, loc, start, init).getResult(0);
    Value reduced =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{keptType}, ValueRange{x}, ValueRange{init},
            ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                                AffineMap::get(rank, 0, keptExprs, ctx)},
            iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(b, l,
                                      combine(b, l, kind, args[1], args[0]));
            })
            .getResult(0);
    if (kind == ReduceKind::mean)
      reduced = divideByCount(rewriter, loc, x, dims, reduced);
    if (op.getKeepdim())
      reduced = reinsertUnitDims(rewriter, loc, op, reduced);
    rewriter.replaceOp(op, reduced);
    return success();
  }

  /// `sum / n` with n the product of the reduced dims' sizes.
  static Value divideByCount(OpBuilder &b, Location loc, Value x,
                             ArrayRef<int64_t> dims, Value sum) {
    Value count = arith::ConstantIndexOp::create(b, loc, 1);
    for (int64_t d : dims)
      count = arith::MulIOp::create(b, loc, count,
                                    tensor::DimOp::create(b, loc, x, d));
    Type element = cast<RankedTensorType>(sum.getType()).getElementType();
    Value n = arith::UIToFPOp::create(
        b, loc, element,
        arith::IndexCastUIOp::create(b, loc, b.getI64Type(), count));
    return mapElements(b, loc, sum, [&](OpBuilder &nb, Location l, Value s) {
      return arith::DivFOp::create(nb, l, s, n).getResult();
    });
  }

  /// keepdim: [a, c] -> [a, 1, c], each reduced dim grouped with the kept
  /// dim before it (or after it, for leading reduced dims).
  static Value reinsertUnitDims(OpBuilder &b, Location loc, ReduceOp op,
                                Value reduced) {
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    auto reducedType = cast<RankedTensorType>(reduced.getType());
    ArrayRef<int64_t> dims = op.getDims();
    unsigned rank = resultType.getRank();
    if (reducedType.getRank() == 0) {
      return tensor::ExpandShapeOp::create(b, loc, resultType, reduced,
                                           ArrayRef<ReassociationIndices>{});
    }
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (unsigned i = 0; i < rank; ++i) {
      pending.push_back(i);
      if (!llvm::is_contained(dims, int64_t(i))) {
        groups.push_back(pending);
        pending.clear();
      }
    }
    groups.back().append(pending.begin(), pending.end());
    SmallVector<OpFoldResult> sizes;
    for (unsigned i = 0, kept = 0; i < rank; ++i) {
      if (llvm::is_contained(dims, int64_t(i)))
        sizes.push_back(b.getIndexAttr(1));
      else if (resultType.isDynamicDim(i))
        sizes.push_back(
            tensor::DimOp::create(b, loc, reduced, kept++).getResult());
      else
        sizes.push_back(b.getIndexAttr(resultType.getDimSize((++kept, i))));
    }
    return tensor::ExpandShapeOp::create(b, loc, resultType, reduced, groups,
                                         sizes);
  }
};
} // namespace

void mlir::tfm::populateReductionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceToLinalg>(patterns.getContext());
}
