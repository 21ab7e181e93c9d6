//===- BufferRoot.h - The buffer a view is of -------------------*- C++ -*-===//
#ifndef TFM_COMPILER_CONVERSION_LINALGTOGPU_BUFFERROOT_H
#define TFM_COMPILER_CONVERSION_LINALGTOGPU_BUFFERROOT_H

#include "mlir/IR/Value.h"

namespace mlir::tfm {

/// The allocation, constant or argument that `buffer` is a view of, through
/// view-like ops, casts, transposes (how attention's permuted operands are
/// seen) and strided-metadata extraction.
Value bufferRoot(Value buffer);

} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_LINALGTOGPU_BUFFERROOT_H
