//===- GeluApproximation.cpp - A short GELU for low-precision GEMMs -------===//
//
// MLIR's erf approximation (math::ErfOp's polynomial expansion) picks one of
// three rational functions per lane: every coefficient is blended from three
// constants, ~50 instructions for 16 values, which made GELU 27% of a bf16
// AMX GEMM of BERT's feed-forward (128 x 768 x 3072). One rational function
// over the whole range needs no blends: erf(z) = z P(z^2) / Q(z^2) on z
// clamped to [-4, 4], where erf is 1 to f32's precision (the numerator has
// degree 13 and the denominator 8; the coefficients are Eigen's and XLA's
// fast f32 erf).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/LinearToCPU/GeluApproximation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;

Value mlir::tfm::emitRationalGelu(OpBuilder &b, Location loc, Value x) {
  auto type = cast<VectorType>(x.getType());
  auto splat = [&](double v) -> Value {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(float(v))));
  };
  auto horner = [&](Value t, ArrayRef<double> coefficients) {
    Value p = splat(coefficients.front());
    for (double c : coefficients.drop_front())
      p = vector::FMAOp::create(b, loc, p, t, splat(c));
    return p;
  };
  // Highest power first: z P(z^2) of degree 13, Q(z^2) of degree 8.
  static const double numerator[] = {
      -2.72614225801306e-10, 2.77068142495902e-08,  -2.10102402082508e-06,
      -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
      -1.60960333262415e-02};
  static const double denominator[] = {
      -1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
      -7.37332916720468e-03, -1.42647390514189e-02};
  // minnum/maxnum turn a NaN z into a bound, but the NaN comes back through
  // h below.
  Value z = arith::MulFOp::create(b, loc, x, splat(M_SQRT1_2));
  z = arith::MaxNumFOp::create(
      b, loc, arith::MinNumFOp::create(b, loc, z, splat(4.0)), splat(-4.0));
  Value z2 = arith::MulFOp::create(b, loc, z, z);
  Value erf = arith::DivFOp::create(
      b, loc, arith::MulFOp::create(b, loc, z, horner(z2, numerator)),
      horner(z2, denominator));
  // h erf + h rounds once: h (1 + erf) would round 1 + erf first, which
  // loses the negative tail (erf near -1) to cancellation.
  Value h = arith::MulFOp::create(b, loc, x, splat(0.5));
  return vector::FMAOp::create(b, loc, h, erf, h);
}
