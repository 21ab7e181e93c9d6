//===- TfmDialect.h - The tfm dialect ---------------------------*- C++ -*-===//
#ifndef TFM_DIALECTS_TFM_IR_TFMDIALECT_H
#define TFM_DIALECTS_TFM_IR_TFMDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "dialects/Tfm/IR/TfmEnums.h.inc"

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

/// Whether `op` is the declaration `() -> index` whose calls stand for the
/// number of threads the caller's `tfm_exec` runs tasks on (1 without one,
/// and inside a task, where nested ranges run inline): tfm-dispatch-tasks
/// replaces them once the model function has its `exec` argument.
bool isExecThreadsFunction(Operation *op);
void setExecThreadsFunction(Operation *op);
} // namespace mlir::tfm

#endif // TFM_DIALECTS_TFM_IR_TFMDIALECT_H
