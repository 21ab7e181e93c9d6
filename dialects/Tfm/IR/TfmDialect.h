//===- TfmDialect.h - The tfm dialect ---------------------------*- C++ -*-===//
#ifndef TFM_DIALECTS_TFM_IR_TFMDIALECT_H
#define TFM_DIALECTS_TFM_IR_TFMDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Tfm/IR/TfmDialect.h.inc"

#endif // TFM_DIALECTS_TFM_IR_TFMDIALECT_H
