//===- TfmDialect.h - The tfm dialect ---------------------------*- C++ -*-===//
#ifndef TFM_DIALECTS_TFM_IR_TFMDIALECT_H
#define TFM_DIALECTS_TFM_IR_TFMDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

// The dialect's discardable-attribute helpers name SignatureAttr.
#define GET_ATTRDEF_CLASSES
#include "dialects/Tfm/IR/TfmAttrs.h.inc"

#include "dialects/Tfm/IR/TfmDialect.h.inc"

namespace mlir::tfm {
/// The `tfm.signature` of `op` (a model function), or null.
SignatureAttr getSignatureAttr(Operation *op);
void setSignatureAttr(Operation *op, SignatureAttr signature);
/// Whether `op` is a model function: it carries a `tfm.signature`.
inline bool hasSignature(Operation *op) { return bool(getSignatureAttr(op)); }

/// Whether `op` is a task function: outlined by a CPU lowering, it takes its
/// operands then a [begin, end) range of independent tasks, and
/// tfm-dispatch-tasks hands its calls to the caller's threads.
bool isTaskFunction(Operation *op);
void setTaskFunction(Operation *op);
} // namespace mlir::tfm

#endif // TFM_DIALECTS_TFM_IR_TFMDIALECT_H
