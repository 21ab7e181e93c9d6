//===- EmbeddingToLinalg.cpp - Lookups and their run-time checks ----------===//
//
// embedding and positional_encoding (sinusoidal, or learned from a table)
// to linalg, and the checks that report what a clamped lookup hid:
// check_index as a reduction over the ids, check_size as scalar arithmetic
// on a dimension.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/TfmToLinalg/BlockGather.h"
#include "compiler/Conversion/TfmToLinalg/Utils.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// A gather generic: ids are clamped into the table so that a bad id can
/// never read outside it.
struct EmbeddingToLinalg : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto resultType = op.getResult().getType();
    unsigned rank = resultType.getRank();
    Value table = op.getWeight();

    std::optional<int64_t> packedRows = op.getPackedRows();
    SmallVector<DimSource> sources;
    for (unsigned i = 0; i + 1 < rank; ++i)
      sources.push_back({op.getIndices(), int64_t(i)});
    // A quantized table's dim is the result's (static): its panels hold
    // fewer bytes per row.
    if (op.getScales())
      sources.push_back({Value(), 0});
    else
      sources.push_back({table, 1});
    Value init = createEmptyTensor(rewriter, loc, resultType, sources);

    Value rows =
        packedRows
            ? Value(arith::ConstantIndexOp::create(rewriter, loc, *packedRows))
            : Value(tensor::DimOp::create(rewriter, loc, table, 0));
    // Packed [panels, dim, width]: row r is [r / width, :, r % width].
    int64_t panelWidth =
        packedRows ? cast<RankedTensorType>(table.getType()).getDimSize(2) : 0;
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{op.getIndices()},
        ValueRange{init},
        ArrayRef<AffineMap>{identity.getMajorSubMap(rank - 1), identity},
        getParallelIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value id =
              arith::IndexCastOp::create(b, l, b.getIndexType(), args[0]);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value one = arith::ConstantIndexOp::create(b, l, 1);
          Value last = arith::SubIOp::create(b, l, rows, one);
          Value clamped = arith::MinSIOp::create(
              b, l, arith::MaxSIOp::create(b, l, id, zero), last);
          Value column = linalg::IndexOp::create(b, l, rank - 1);
          Value element;
          if (op.getScales()) {
            // A quantized row: decoded from block panels.
            element = dequantizeBlockElement(b, l, op, clamped, column);
          } else {
            SmallVector<Value> at = {clamped, column};
            if (packedRows) {
              Value width = arith::ConstantIndexOp::create(b, l, panelWidth);
              at = {arith::DivUIOp::create(b, l, clamped, width), column,
                    arith::RemUIOp::create(b, l, clamped, width)};
            }
            element = tensor::ExtractOp::create(b, l, table, at);
          }
          linalg::YieldOp::create(b, l, element);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// table[min(p, max_len - 1), j]: the learned encoding, clamped like the
/// embedding's gather.
Value learnedPositions(PatternRewriter &rewriter, PositionalEncodingOp op) {
  Location loc = op.getLoc();
  auto resultType = op.getResult().getType();
  Value table = op.getTable();
  int64_t inputRank = op.getInput().getType().getRank();
  Value init = createEmptyTensor(
      rewriter, loc, resultType,
      {{op.getInput(), inputRank - 2}, {op.getInput(), inputRank - 1}});
  Value rows = tensor::DimOp::create(rewriter, loc, table, 0);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(2, op.getContext());
  return linalg::GenericOp::create(
             rewriter, loc, TypeRange{resultType}, ValueRange{},
             ValueRange{init}, ArrayRef<AffineMap>{identity},
             getParallelIterators(2),
             [&](OpBuilder &b, Location l, ValueRange) {
               Value one = arith::ConstantIndexOp::create(b, l, 1);
               Value last = arith::SubIOp::create(b, l, rows, one);
               Value row = arith::MinUIOp::create(
                   b, l, linalg::IndexOp::create(b, l, 0), last);
               Value column = linalg::IndexOp::create(b, l, 1);
               linalg::YieldOp::create(b, l,
                                       tensor::ExtractOp::create(
                                           b, l, table, ValueRange{row, column})
                                           .getResult());
             })
      .getResult(0);
}

/// pe[p, j] = sin(p * w) for even j, cos(p * w) for odd j, with
/// w = exp((j - j % 2) * -ln(10000) / D), the float32 formulation PyTorch's
/// tutorials use.
struct PositionalEncodingToLinalg : OpRewritePattern<PositionalEncodingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PositionalEncodingOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getTable()) {
      rewriter.replaceOp(op, learnedPositions(rewriter, op));
      return success();
    }
    Location loc = op.getLoc();
    auto resultType = op.getResult().getType();
    int64_t dim = resultType.getShape()[1];
    if (ShapedType::isDynamic(dim))
      return rewriter.notifyMatchFailure(op, "needs a static model dimension");
    int64_t inputRank = op.getInput().getType().getRank();
    Value init = createEmptyTensor(
        rewriter, loc, resultType,
        {{op.getInput(), inputRank - 2}, {op.getInput(), inputRank - 1}});
    Type elementType = resultType.getElementType();
    double rate = -std::log(10000.0) / double(dim);
    AffineMap identity = AffineMap::getMultiDimIdentityMap(2, op.getContext());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{identity}, getParallelIterators(2),
        [&](OpBuilder &b, Location l, ValueRange) {
          auto toFloat = [&](Value index) -> Value {
            Value i64 = arith::IndexCastOp::create(b, l, b.getI64Type(), index);
            return arith::SIToFPOp::create(b, l, elementType, i64);
          };
          Value pos = linalg::IndexOp::create(b, l, 0);
          Value col = linalg::IndexOp::create(b, l, 1);
          Value two = arith::ConstantIndexOp::create(b, l, 2);
          Value parity = arith::RemUIOp::create(b, l, col, two);
          Value evenCol = arith::SubIOp::create(b, l, col, parity);
          Value rateValue = arith::ConstantOp::create(
              b, l, b.getFloatAttr(elementType, rate));
          Value frequency = math::ExpOp::create(
              b, l, arith::MulFOp::create(b, l, toFloat(evenCol), rateValue));
          Value angle = arith::MulFOp::create(b, l, toFloat(pos), frequency);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value isEven = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                               parity, zero);
          Value value = arith::SelectOp::create(
              b, l, isEven, math::SinOp::create(b, l, angle),
              math::CosOp::create(b, l, angle));
          linalg::YieldOp::create(b, l, value);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};
/// A reduction over every id: `code` if any id is outside [0, bound), else
/// 0, extracted as the op's i32.
struct CheckIndexToLinalg : OpRewritePattern<CheckIndexOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CheckIndexOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto idsType = op.getIndices().getType();
    auto idType = cast<IntegerType>(idsType.getElementType());
    unsigned rank = idsType.getRank();
    auto i32 = rewriter.getI32Type();
    auto statusType = RankedTensorType::get({}, i32);
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getI32IntegerAttr(0));
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, statusType, ValueRange{});
    Value init =
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    // Ids at or past the bound are bad; a bound past the id type's range
    // leaves only negative ids.
    APInt maxId = APInt::getSignedMaxValue(idType.getWidth());
    std::optional<int64_t> bound;
    if (uint64_t(op.getBound()) <= maxId.getZExtValue())
      bound = op.getBound();
    int32_t code = op.getCode();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{statusType}, ValueRange{op.getIndices()},
        ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                            AffineMap::get(rank, 0, {}, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value id = args[0];
          Value bad = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::slt, id,
              arith::ConstantOp::create(b, l, b.getIntegerAttr(idType, 0)));
          if (bound)
            bad = arith::OrIOp::create(
                b, l, bad,
                arith::CmpIOp::create(
                    b, l, arith::CmpIPredicate::sge, id,
                    arith::ConstantOp::create(
                        b, l, b.getIntegerAttr(idType, *bound))));
          Value status = arith::SelectOp::create(
              b, l, bad,
              arith::ConstantOp::create(b, l, b.getI32IntegerAttr(code)),
              arith::ConstantOp::create(b, l, b.getI32IntegerAttr(0)));
          linalg::YieldOp::create(
              b, l, arith::MaxSIOp::create(b, l, args[1], status).getResult());
        });
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(op, generic.getResult(0),
                                                   ValueRange{});
    return success();
  }
};

/// `code` if the dimension exceeds `max`, else 0.
struct CheckSizeToArith : OpRewritePattern<CheckSizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CheckSizeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value size = tensor::DimOp::create(rewriter, loc, op.getInput(),
                                       op.getNormalizedDim());
    Value tooLarge = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ugt, size,
        arith::ConstantIndexOp::create(rewriter, loc, op.getMax()));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(
        op, tooLarge,
        arith::ConstantOp::create(rewriter, loc,
                                  rewriter.getI32IntegerAttr(op.getCode())),
        arith::ConstantOp::create(rewriter, loc,
                                  rewriter.getI32IntegerAttr(0)));
    return success();
  }
};
} // namespace

void mlir::tfm::populateEmbeddingToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<EmbeddingToLinalg, PositionalEncodingToLinalg,
               CheckIndexToLinalg, CheckSizeToArith>(patterns.getContext());
}
