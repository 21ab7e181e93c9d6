//===- SoftmaxExp.h - The bf16 attention's exponential ----------*- C++ -*-===//
//
// exp(x) for x <= 0 on f32 vectors, as the bf16 attention kernels' online
// softmax needs it: accurate to 2.7e-6 (relative), three orders of magnitude
// inside the bf16 rounding that the probabilities then take, in about half
// the vector operations of MLIR's general `math.exp` expansion.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_COMPILER_CONVERSION_ATTENTIONTOCPU_SOFTMAXEXP_H
#define TFM_COMPILER_CONVERSION_ATTENTIONTOCPU_SOFTMAXEXP_H

#include "mlir/IR/Builders.h"

namespace mlir::tfm {

/// exp(x) of an f32 vector `x` whose lanes are <= 0, -inf (gives 0) or NaN
/// (gives NaN). Lanes below -87.3 (2^-126) give 0: no denormals.
Value emitSoftmaxExp(OpBuilder &b, Location loc, Value x);

} // namespace mlir::tfm

#endif
