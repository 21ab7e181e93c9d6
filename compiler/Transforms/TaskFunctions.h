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
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::tfm {

/// The prefix of task function names. Passes recognise tasks by their
/// `tfm.task` marker (isTaskFunction), never by this name.
inline constexpr llvm::StringLiteral kTaskPrefix = "__tfm_task_";

/// Finds, among the tasks added so far, one interchangeable with a given
/// task: the same type, the same attributes (a kernel variant's target
/// features among them) but the name, and equivalent bodies
/// (OperationEquivalence, locations ignored). Tasks are bucketed by a
/// structural hash of their operations, so each comparison is with tasks
/// that are most likely equal.
class TaskIndex {
public:
  /// The task equivalent to `task` added earlier, or null after adding it.
  func::FuncOp findOrAdd(func::FuncOp task) {
    llvm::hash_code hash = hashOf(task);
    SmallVector<func::FuncOp, 1> &bucket = buckets[hash];
    for (func::FuncOp known : bucket)
      if (equivalent(known, task))
        return known;
    bucket.push_back(task);
    ++count;
    return nullptr;
  }
  void clear() {
    buckets.clear();
    count = 0;
  }
  /// The number of distinct tasks added.
  size_t size() const { return count; }

private:
  /// The task's own attributes but its name.
  static SmallVector<NamedAttribute> attributesOf(func::FuncOp task) {
    SmallVector<NamedAttribute> attrs;
    for (NamedAttribute attr : task->getAttrs())
      if (attr.getName() != SymbolTable::getSymbolAttrName())
        attrs.push_back(attr);
    return attrs;
  }

  static llvm::hash_code hashOf(func::FuncOp task) {
    llvm::hash_code hash = llvm::hash_combine(
        task.getFunctionType(),
        DictionaryAttr::get(task.getContext(), attributesOf(task)));
    task.getBody().walk([&](Operation *op) {
      hash = llvm::hash_combine(
          hash, op->getName(), op->getRawDictionaryAttrs(),
          op->getResultTypes(), op->getNumOperands(), op->getNumRegions());
    });
    return hash;
  }

  static bool equivalent(func::FuncOp a, func::FuncOp b) {
    return a.getFunctionType() == b.getFunctionType() &&
           attributesOf(a) == attributesOf(b) &&
           OperationEquivalence::isRegionEquivalentTo(
               &a.getBody(), &b.getBody(),
               OperationEquivalence::IgnoreLocations);
  }

  llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>> buckets;
  size_t count = 0;
};

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
