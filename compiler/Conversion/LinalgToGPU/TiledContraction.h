//===- TiledContraction.h - Contractions as tiled GEMM launches -*- C++ -*-===//
#ifndef TFM_COMPILER_CONVERSION_LINALGTOGPU_TILEDCONTRACTION_H
#define TFM_COMPILER_CONVERSION_LINALGTOGPU_TILEDCONTRACTION_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir::tfm {
/// Replaces a bufferized f32 contraction with one M, N and K loop (any
/// batch loops) by a shared-memory tiled GEMM launch of threadsM x threadsN
/// threads, each computing a 4 x 4 patch. The bias broadcast before it and
/// the elementwise op after it are computed in the kernel when
/// ContractionFusion allows, and erased (added to `fused`). Returns false,
/// leaving the op, when it is not such a contraction.
FailureOr<bool> convertToTiledContraction(RewriterBase &rewriter,
                                          linalg::LinalgOp op, int64_t threadsM,
                                          int64_t threadsN,
                                          SmallVectorImpl<Operation *> &fused);
} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_LINALGTOGPU_TILEDCONTRACTION_H
