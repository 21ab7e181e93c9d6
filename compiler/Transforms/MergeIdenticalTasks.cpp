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
      return;
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
  }
};
} // namespace
