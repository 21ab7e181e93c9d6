//===- TfmOps.h - Operations of the tfm dialect -----------------*- C++ -*-===//
#ifndef TFM_DIALECTS_TFM_IR_TFMOPS_H
#define TFM_DIALECTS_TFM_IR_TFMOPS_H

#include "dialects/Tfm/IR/TfmDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Tfm/IR/TfmOps.h.inc"

namespace mlir::tfm {
/// Whether `type` is strided with a statically contiguous last dim: the
/// flash-attention kernel reads and writes such buffers in place (any
/// strides on the batch and sequence dims, a head split read as a view);
/// bufferization copies any other buffer for it.
bool hasContiguousRows(MemRefType type);

/// Whether the GEMM of tfm.packed_linear reads `type` in place: contiguous,
/// or with a contiguous last dim where the kernel indexes the buffer
/// directly (its packed weight, and matrices of rank 2 or less; other
/// operands are collapsed into matrices, which needs them contiguous).
bool isGemmReadable(MemRefType type, bool indexedDirectly);
} // namespace mlir::tfm

#endif // TFM_DIALECTS_TFM_IR_TFMOPS_H
