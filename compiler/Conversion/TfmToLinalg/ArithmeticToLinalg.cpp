//===- ArithmeticToLinalg.cpp - Broadcast binary and unary math to linalg -===//
//
// sub, mul, div, maximum, minimum, pow and the unary math functions, each one
// elementwise linalg.generic whose operands are read through broadcast maps,
// so that chains of them fuse into one loop nest and tile like any other
// parallel generic. Floats use arith/math float ops, integers the signed
// integer ones.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/TfmToLinalg/Utils.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// The scalar payload of a binary op on two elements of one type.
Value binaryPayload(Operation *op, OpBuilder &b, Location l, Value x, Value y) {
  bool isFloat = isa<FloatType>(x.getType());
  if (isa<SubOp>(op))
    return isFloat ? Value(arith::SubFOp::create(b, l, x, y))
                   : Value(arith::SubIOp::create(b, l, x, y));
  if (isa<MulOp>(op))
    return isFloat ? Value(arith::MulFOp::create(b, l, x, y))
                   : Value(arith::MulIOp::create(b, l, x, y));
  if (isa<DivOp>(op))
    return arith::DivFOp::create(b, l, x, y);
  // maximumf/minimumf propagate NaN, as torch.maximum/minimum do.
  if (isa<MaximumOp>(op))
    return isFloat ? Value(arith::MaximumFOp::create(b, l, x, y))
                   : Value(arith::MaxSIOp::create(b, l, x, y));
  if (isa<MinimumOp>(op))
    return isFloat ? Value(arith::MinimumFOp::create(b, l, x, y))
                   : Value(arith::MinSIOp::create(b, l, x, y));
  if (isa<PowOp>(op))
    return math::PowFOp::create(b, l, x, y);
  if (isa<LogicalAndOp>(op))
    return arith::AndIOp::create(b, l, x, y);
  return arith::OrIOp::create(b, l, x, y);
}

template <typename Op> struct BinaryToLinalg : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Value result = createBroadcastGeneric(
        rewriter, op.getLoc(), op.getResult().getType(),
        ValueRange{op.getLhs(), op.getRhs()},
        [&](OpBuilder &b, Location l, ValueRange args) {
          return binaryPayload(op, b, l, args[0], args[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The scalar payload of a unary op.
Value unaryPayload(Operation *op, OpBuilder &b, Location l, Value x) {
  Type type = x.getType();
  if (isa<ExpOp>(op))
    return math::ExpOp::create(b, l, x);
  if (isa<LogOp>(op))
    return math::LogOp::create(b, l, x);
  if (isa<SqrtOp>(op))
    return math::SqrtOp::create(b, l, x);
  if (isa<RsqrtOp>(op))
    return math::RsqrtOp::create(b, l, x);
  if (isa<TanhOp>(op))
    return math::TanhOp::create(b, l, x);
  if (isa<ErfOp>(op))
    return math::ErfOp::create(b, l, x);
  if (isa<SinOp>(op))
    return math::SinOp::create(b, l, x);
  if (isa<CosOp>(op))
    return math::CosOp::create(b, l, x);
  if (isa<NegOp>(op)) {
    if (isa<FloatType>(type))
      return arith::NegFOp::create(b, l, x);
    Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(type, 0));
    return arith::SubIOp::create(b, l, zero, x);
  }
  if (isa<AbsOp>(op))
    return isa<FloatType>(type) ? Value(math::AbsFOp::create(b, l, x))
                                : Value(math::AbsIOp::create(b, l, x));
  // logical_not.
  Value one = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
  return arith::XOrIOp::create(b, l, x, one);
}

template <typename Op> struct UnaryToLinalg : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, mapElements(rewriter, op.getLoc(), op.getInput(),
                                       [&](OpBuilder &b, Location l, Value x) {
                                         return unaryPayload(op, b, l, x);
                                       }));
    return success();
  }
};
} // namespace

void mlir::tfm::populateArithmeticToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<BinaryToLinalg<SubOp>, BinaryToLinalg<MulOp>,
               BinaryToLinalg<DivOp>, BinaryToLinalg<MaximumOp>,
               BinaryToLinalg<MinimumOp>, BinaryToLinalg<PowOp>,
               BinaryToLinalg<LogicalAndOp>, BinaryToLinalg<LogicalOrOp>>(
      patterns.getContext());
  patterns
      .add<UnaryToLinalg<ExpOp>, UnaryToLinalg<LogOp>, UnaryToLinalg<SqrtOp>,
           UnaryToLinalg<RsqrtOp>, UnaryToLinalg<TanhOp>, UnaryToLinalg<ErfOp>,
           UnaryToLinalg<SinOp>, UnaryToLinalg<CosOp>, UnaryToLinalg<NegOp>,
           UnaryToLinalg<AbsOp>, UnaryToLinalg<LogicalNotOp>>(
          patterns.getContext());
}
