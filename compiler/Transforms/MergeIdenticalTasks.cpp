//===- MergeIdenticalTasks.cpp - One function per distinct task -----------===//
//
// The lowerings outline a task function per op they lower, and a 12-layer
// model has 12 attention ops of the same shapes: 12 identical kernels (36
// with per-CPU variants) for LLVM to optimize and emit. Equivalent functions
// (name aside: TaskIndex) are merged into the first.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/TaskFunctions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMMERGEIDENTICALTASKS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
struct TfmMergeIdenticalTasksPass
    : tfm::impl::TfmMergeIdenticalTasksBase<TfmMergeIdenticalTasksPass> {
  void runOnOperation() override {
    // A multiversioned task calls its variants: once the variants of two
    // tasks are merged, the tasks become identical too, so merging runs
    // until nothing changes (twice, then once to see nothing left).
    while (mergeOnce()) {
    }
  }

  /// Merges the duplicates among the tasks; whether there were any.
  bool mergeOnce() {
    ModuleOp module = getOperation();
    tfm::TaskIndex index;
    llvm::DenseMap<StringAttr, StringAttr> keptFor;
    SmallVector<func::FuncOp> duplicates;
    for (auto task : module.getOps<func::FuncOp>()) {
      if (!task.isPrivate() || task.isExternal() || !tfm::isTaskFunction(task))
        continue;
      if (func::FuncOp keep = index.findOrAdd(task)) {
        keptFor[task.getSymNameAttr()] = keep.getSymNameAttr();
        duplicates.push_back(task);
      }
    }
    if (duplicates.empty())
      return false;
    for (func::FuncOp task : duplicates)
      task.erase();
    // One walk renames every use (a walk per duplicate was quadratic in the
    // number of layers).
    AttrTypeReplacer replacer;
    replacer.addReplacement(
        [&](FlatSymbolRefAttr ref) -> std::optional<Attribute> {
          auto it = keptFor.find(ref.getAttr());
          if (it == keptFor.end())
            return std::nullopt;
          return FlatSymbolRefAttr::get(it->second);
        });
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/false);
    return true;
  }
};
} // namespace
