//===- GeluApproximation.h - GELU for low-precision GEMMs -------*- C++ -*-===//
//
// GELU(x) = 0.5 x (1 + erf(x / sqrt(2))) with erf as one rational function
// on a clamped range: the epilogue of a bf16 or int8 GEMM, whose output
// feeds a GEMM that rounds it to bf16 (or quantizes it) anyway.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CONVERSION_LINEARTOCPU_GELUAPPROXIMATION_H
#define TFM_COMPILER_CONVERSION_LINEARTOCPU_GELUAPPROXIMATION_H

#include "mlir/IR/Builders.h"

namespace mlir::tfm {

/// GELU (exact form, erf) of `x`, a vector of f32, at `b`'s insertion point:
/// 17 vector operations (FMAs, multiplies, a clamp) and one division, no
/// blends. Measured against float64 in the GEMM's epilogue, its error is at
/// most 1.6e-7 (|x| + 1) with FMA, 2.1e-7 (|x| + 1) with SSE (MLIR's erf
/// polynomial, which the f32 GEMM keeps: 1.1e-7 (|x| + 1)); NaN stays NaN,
/// +inf stays +inf, -inf is NaN as in 0.5 x (1 + erf(x / sqrt(2))).
Value emitRationalGelu(OpBuilder &b, Location loc, Value x);

} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_LINEARTOCPU_GELUAPPROXIMATION_H
