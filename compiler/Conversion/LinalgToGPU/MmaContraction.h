//===- MmaContraction.h - Contractions on tensor cores ----------*- C++ -*-===//
#ifndef TFM_COMPILER_CONVERSION_LINALGTOGPU_MMACONTRACTION_H
#define TFM_COMPILER_CONVERSION_LINALGTOGPU_MMACONTRACTION_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir::tfm {
/// Replaces a bufferized contraction C += A B with f32 C, one M (or several,
/// flattened), one N and one K loop, any batch loops, and a plain
/// multiply-add body, by a tensor-core GEMM launch: A and B rounded to
/// `half` (f16 or bf16) as they are loaded into shared memory, or read as
/// they are when they already have that type (tfm-gpu-round-weights then
/// rounds constant weights at compile time); products summed in f32 by
/// mma.sync m16n8k16. The bias broadcast before it and the elementwise op
/// after it are computed in the kernel when ContractionFusion allows, and
/// erased (added to `fused`). Returns false, leaving the op, when it is not
/// such a contraction.
FailureOr<bool> convertToMmaContraction(RewriterBase &rewriter,
                                        linalg::LinalgOp op, Type half,
                                        SmallVectorImpl<Operation *> &fused);
} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_LINALGTOGPU_MMACONTRACTION_H
