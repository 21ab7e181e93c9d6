//===- PredicatesToLinalg.cpp - compare, where, cast to linalg ------------===//
//
// Comparisons and casts are elementwise generics like the arithmetic ones;
// `where` reads its three operands through broadcast maps and selects. The
// float predicates follow PyTorch: ordered comparisons (false for NaN), `ne`
// unordered (true for NaN).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/TfmToLinalg/Utils.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {
arith::CmpFPredicate floatPredicate(ComparePredicate predicate) {
  switch (predicate) {
  case ComparePredicate::lt:
    return arith::CmpFPredicate::OLT;
  case ComparePredicate::le:
    return arith::CmpFPredicate::OLE;
  case ComparePredicate::gt:
    return arith::CmpFPredicate::OGT;
  case ComparePredicate::ge:
    return arith::CmpFPredicate::OGE;
  case ComparePredicate::eq:
    return arith::CmpFPredicate::OEQ;
  case ComparePredicate::ne:
    // True for NaN, as PyTorch's `!=`.
    return arith::CmpFPredicate::UNE;
  }
  llvm_unreachable("unknown predicate");
}

/// Booleans order false < true, hence unsigned for them.
arith::CmpIPredicate integerPredicate(ComparePredicate predicate, bool isBool) {
  switch (predicate) {
  case ComparePredicate::lt:
    return isBool ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
  case ComparePredicate::le:
    return isBool ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
  case ComparePredicate::gt:
    return isBool ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
  case ComparePredicate::ge:
    return isBool ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
  case ComparePredicate::eq:
    return arith::CmpIPredicate::eq;
  case ComparePredicate::ne:
    return arith::CmpIPredicate::ne;
  }
  llvm_unreachable("unknown predicate");
}

Value comparePayload(OpBuilder &b, Location l, ComparePredicate predicate,
                     Value x, Value y) {
  Type type = x.getType();
  if (isa<FloatType>(type))
    return arith::CmpFOp::create(b, l, floatPredicate(predicate), x, y);
  return arith::CmpIOp::create(
      b, l, integerPredicate(predicate, type.isInteger(1)), x, y);
}

struct CompareToLinalg : OpRewritePattern<CompareOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CompareOp op,
                                PatternRewriter &rewriter) const override {
    ComparePredicate predicate = op.getPredicate();
    Value result = createBroadcastGeneric(
        rewriter, op.getLoc(), op.getResult().getType(),
        ValueRange{op.getLhs(), op.getRhs()},
        [&](OpBuilder &b, Location l, ValueRange args) {
          return comparePayload(b, l, predicate, args[0], args[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct WhereToLinalg : OpRewritePattern<WhereOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WhereOp op,
                                PatternRewriter &rewriter) const override {
    Value result = createBroadcastGeneric(
        rewriter, op.getLoc(), op.getResult().getType(),
        ValueRange{op.getCondition(), op.getLhs(), op.getRhs()},
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::SelectOp::create(b, l, args[0], args[1], args[2]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

bool isLowPrecision(Type type) { return type.isBF16() || type.isF16(); }

/// One element converted as Tensor.to(dtype) does.
Value castPayload(OpBuilder &b, Location l, Value x, Type to) {
  Type from = x.getType();
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  Type f32 = b.getF32Type();
  if (fromFloat && toFloat) {
    // bf16 and f16 (of one width) convert to each other through f32, where
    // both are exact; f64 narrows to them through f32 as PyTorch does
    // (c10::BFloat16 and c10::Half are made from a float).
    if (isLowPrecision(from) && isLowPrecision(to))
      return arith::TruncFOp::create(
          b, l, to, Value(arith::ExtFOp::create(b, l, f32, x)));
    if (from.isF64() && isLowPrecision(to))
      return arith::TruncFOp::create(
          b, l, to, Value(arith::TruncFOp::create(b, l, f32, x)));
    // Widening too: f32 is the one type tfm-expand-half-casts converts to.
    if (isLowPrecision(from) && to.isF64())
      return arith::ExtFOp::create(b, l, to,
                                   Value(arith::ExtFOp::create(b, l, f32, x)));
    // truncf rounds to nearest, ties to even.
    return fromFloat.getWidth() < toFloat.getWidth()
               ? Value(arith::ExtFOp::create(b, l, to, x))
               : Value(arith::TruncFOp::create(b, l, to, x));
  }
  // Comparisons and integer conversions of bf16 and f16 go through f32: the
  // target needs no 16-bit float arithmetic.
  if (fromFloat && isLowPrecision(from)) {
    x = arith::ExtFOp::create(b, l, f32, x);
    from = f32;
    fromFloat = cast<FloatType>(f32);
  }
  // Integers become bf16 and f16 through f32, as in PyTorch.
  if (!fromFloat && toFloat && isLowPrecision(to))
    return arith::TruncFOp::create(b, l, to, castPayload(b, l, x, f32));
  if (to.isInteger(1)) {
    // Nonzero (and NaN) is true.
    if (fromFloat) {
      Value zero = arith::ConstantOp::create(b, l, b.getFloatAttr(from, 0.0));
      return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, x, zero);
    }
    Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(from, 0));
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, x, zero);
  }
  bool fromBool = from.isInteger(1);
  if (toFloat)
    return fromBool ? Value(arith::UIToFPOp::create(b, l, to, x))
                    : Value(arith::SIToFPOp::create(b, l, to, x));
  // To i8 through i32, which wraps as PyTorch's CPU conversion does, where
  // a direct fptosi would be undefined past 127.
  if (fromFloat && to.getIntOrFloatBitWidth() < 32)
    return arith::TruncIOp::create(
        b, l, to, Value(arith::FPToSIOp::create(b, l, b.getI32Type(), x)));
  if (fromFloat)
    return arith::FPToSIOp::create(b, l, to, x);
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth > toWidth)
    return arith::TruncIOp::create(b, l, to, x);
  return fromBool ? Value(arith::ExtUIOp::create(b, l, to, x))
                  : Value(arith::ExtSIOp::create(b, l, to, x));
}

struct CastToLinalg : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Type to = type.getElementType();
    if (op.getInput().getType() == type) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    Value result = createBroadcastGeneric(
        rewriter, op.getLoc(), type, ValueRange{op.getInput()},
        [&](OpBuilder &b, Location l, ValueRange args) {
          return castPayload(b, l, args[0], to);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};
} // namespace

void mlir::tfm::populatePredicatesToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<CompareToLinalg, WhereToLinalg, CastToLinalg>(
      patterns.getContext());
}
