//===- BufferRoot.cpp - The buffer a view is of ---------------------------===//
#include "compiler/Conversion/LinalgToGPU/BufferRoot.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value tfm::bufferRoot(Value buffer) {
  while (Operation *def = buffer.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      buffer = view.getViewSource();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      buffer = cast.getSource();
    // Not a ViewLikeOpInterface.
    else if (auto transpose = dyn_cast<memref::TransposeOp>(def))
      buffer = transpose.getIn();
    else if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(def))
      buffer = metadata.getSource();
    else
      break;
  }
  return buffer;
}
