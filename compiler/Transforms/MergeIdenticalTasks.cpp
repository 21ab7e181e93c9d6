//===- MergeIdenticalTasks.cpp - One function per distinct task -----------===//
//
// The lowerings outline a task function per op they lower, and a 12-layer
// model has 12 attention ops of the same shapes: 12 identical kernels (36
// with per-CPU variants) for LLVM to optimize and emit. Functions that print
// the same (name aside) are merged into the first.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/TaskFunctions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMMERGEIDENTICALTASKS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct TfmMergeIdenticalTasksPass
    : tfm::impl::TfmMergeIdenticalTasksBase<TfmMergeIdenticalTasksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<StringAttr> canonical;
    SmallVector<std::pair<func::FuncOp, StringAttr>> duplicates;
    for (auto task : module.getOps<func::FuncOp>()) {
      if (!task.isPrivate() || task.isExternal() || !tfm::isTaskFunction(task))
        continue;
      auto [it, inserted] = canonical.try_emplace(
          tfm::printTaskForComparison(task), task.getSymNameAttr());
      if (!inserted)
        duplicates.emplace_back(task, it->second);
    }
    for (auto [task, keep] : duplicates) {
      if (failed(SymbolTable::replaceAllSymbolUses(task, keep, module)))
        return signalPassFailure();
      task.erase();
    }
  }
};
} // namespace
