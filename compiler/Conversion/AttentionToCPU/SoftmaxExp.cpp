//===- SoftmaxExp.cpp - The bf16 attention's exponential
//-------------------===//
//
// exp(x) = 2^t, t = x·log2(e) = k + f with k = round(t), |f| <= 1/2:
// 2^f is a degree-4 polynomial (fitted for relative error on [-1/2, 1/2]:
// 2.7e-6 evaluated in f32, against bf16's 2^-9 = 2e-3 that each probability
// is then rounded to), 2^k goes into the exponent bits. The softmax
// subtracts the running max first, so x <= 0: no overflow to handle, and
// t below -126 (an exponent field that would wrap, or -inf) gives 0. MLIR's
// `math.exp` expansion handles the whole f32 range (overflow, infinities,
// a Cody-Waite reduction, a degree-6 polynomial and the selects around
// them): about 2x the operations per 16 scores, most of the AMX attention's
// softmax at S = 512.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/AttentionToCPU/SoftmaxExp.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

Value mlir::tfm::emitSoftmaxExp(OpBuilder &b, Location loc, Value x) {
  auto type = cast<VectorType>(x.getType());
  auto intType = VectorType::get(type.getShape(), b.getI32Type());
  auto f = [&](double v) -> Value {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(float(v))));
  };
  auto i = [&](int32_t v) -> Value {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(intType, b.getI32IntegerAttr(v)));
  };
  Value t = arith::MulFOp::create(b, loc, x, f(1.4426950408889634));
  // OLT: false for NaN, which then runs through and stays NaN.
  Value under =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, t, f(-126.0));
  t = arith::SelectOp::create(b, loc, under, f(-126.0), t);
  Value k = math::RoundEvenOp::create(b, loc, t);
  Value frac = arith::SubFOp::create(b, loc, t, k);
  // 2^f on [-1/2, 1/2], Horner.
  const double c[] = {0.9999992847442627, 0.6931218504905701, 0.240247443318367,
                      0.055917542427778244, 0.009569993242621422};
  Value p = f(c[4]);
  for (int n = 3; n >= 0; --n)
    p = math::FmaOp::create(b, loc, p, frac, f(c[n]));
  // 2^k, k in [-126, 0]: the biased exponent k + 127 in bits 23..30.
  Value bits = arith::ShLIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, arith::FPToSIOp::create(b, loc, intType, k),
                            i(127)),
      i(23));
  Value scale = arith::BitcastOp::create(b, loc, type, bits);
  Value y = arith::MulFOp::create(b, loc, p, scale);
  return arith::SelectOp::create(b, loc, under, f(0.0), y);
}
