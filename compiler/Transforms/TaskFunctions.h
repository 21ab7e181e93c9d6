//===- TaskFunctions.h - Outlined task functions ----------------*- C++ -*-===//
//
// The CPU lowerings outline parallel work into functions marked `tfm.task`
// (named `__tfm_task_*` only for readable IR and symbols), taking their
// operands then a [begin, end) range; tfm-dispatch-tasks hands calls of them
// to the caller's threads.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_TRANSFORMS_TASKFUNCTIONS_H
#define TFM_COMPILER_TRANSFORMS_TASKFUNCTIONS_H

#include "dialects/Tfm/IR/TfmDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::tfm {

/// The prefix of task function names. Passes recognise tasks by their
/// `tfm.task` marker (isTaskFunction), never by this name.
inline constexpr llvm::StringLiteral kTaskPrefix = "__tfm_task_";

/// `task` printed under a fixed name: equal strings mean interchangeable
/// tasks. Printed in local scope, as numbering the whole module (weights
/// included) for every task would make sharing quadratic in the model.
inline std::string printTaskForComparison(func::FuncOp task) {
  StringAttr name = task.getSymNameAttr();
  task.setSymName(kTaskPrefix);
  std::string text;
  llvm::raw_string_ostream os(text);
  task.print(os, OpPrintingFlags().assumeVerified().useLocalScope());
  task.setSymNameAttr(name);
  return text;
}

/// The number of threads the caller's `tfm_exec` runs task ranges on, as an
/// index at `b`'s insertion point: a call of the module's
/// `tfm.exec_threads` declaration (created on first use), which
/// tfm-dispatch-tasks replaces. Lowerings size task ranges by it, so that
/// one thread gets one wide task instead of many narrow ones.
inline Value createExecThreadsQuery(OpBuilder &b, Location loc,
                                    ModuleOp module) {
  constexpr llvm::StringLiteral name = "__tfm_exec_threads";
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    fn = func::FuncOp::create(b, loc, name,
                              b.getFunctionType({}, {b.getIndexType()}));
    fn.setPrivate();
    setExecThreadsFunction(fn);
  }
  return func::CallOp::create(b, loc, fn, ValueRange{}).getResult(0);
}

} // namespace mlir::tfm

#endif // TFM_COMPILER_TRANSFORMS_TASKFUNCTIONS_H
