//===- TiledContraction.h - Contractions as tiled GEMM launches -*- C++ -*-===//
#ifndef TFM_COMPILER_CONVERSION_LINALGTOGPU_TILEDCONTRACTION_H
#define TFM_COMPILER_CONVERSION_LINALGTOGPU_TILEDCONTRACTION_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
/// Replaces a bufferized f32 contraction with one M, N and K loop (any
/// batch loops) by a shared-memory tiled GEMM launch of threadsM x threadsN
/// threads, each computing a 4 x 4 patch. Returns false, leaving the op,
/// when it is not such a contraction.
FailureOr<bool> convertToTiledContraction(RewriterBase &rewriter,
                                          linalg::LinalgOp op, int64_t threadsM,
                                          int64_t threadsN);
} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_LINALGTOGPU_TILEDCONTRACTION_H
