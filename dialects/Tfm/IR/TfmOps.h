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

#endif // TFM_DIALECTS_TFM_IR_TFMOPS_H
