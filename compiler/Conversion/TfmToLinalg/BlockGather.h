//===- BlockGather.h - One weight of a quantized embedding row --*- C++ -*-===//
#ifndef TFM_COMPILER_CONVERSION_TFMTOLINALG_BLOCKGATHER_H
#define TFM_COMPILER_CONVERSION_TFMTOLINALG_BLOCKGATHER_H

#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::tfm {

/// Element (`row`, `column`) of the table of a quantized `tfm.embedding`
/// (i8 block panels with `scales`, `packed_rows`), read from its panels and
/// dequantized: `scale * q (+ offset)`, in the result's element type.
Value dequantizeBlockElement(OpBuilder &b, Location loc, EmbeddingOp op,
                             Value row, Value column);

} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_TFMTOLINALG_BLOCKGATHER_H
