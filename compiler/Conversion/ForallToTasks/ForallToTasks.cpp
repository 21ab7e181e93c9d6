//===- ForallToTasks.cpp - scf.forall on buffers to outlined tasks --------===//
//
// The generated code owns no threads: parallel work reaches the caller's
// `tfm_exec` as a call of an outlined `__tfm_task_*` function over a range of
// task indices (tfm-dispatch-tasks splits the range). An `scf.forall` says
// exactly what such a range needs, that its iterations are independent, so
// each one becomes a task function running a sub-range of its linearized
// iterations.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/KernelVariants/KernelVariants.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Transforms/TaskFunctions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_CONVERTFORALLTOTASKS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// `value` as an index inside the task: constants are rebuilt there,
/// captured values come through `mapping`.
Value materialize(OpBuilder &b, Location loc, OpFoldResult value,
                  const IRMapping &mapping) {
  if (auto attr = dyn_cast<Attribute>(value))
    return arith::ConstantIndexOp::create(b, loc,
                                          cast<IntegerAttr>(attr).getInt());
  return mapping.lookupOrDefault(cast<Value>(value));
}

/// Iterations of each dimension of `loop`, built with `b` from bounds
/// mapped through `mapping`.
SmallVector<Value> tripCounts(OpBuilder &b, Location loc, scf::ForallOp loop,
                              const IRMapping &mapping) {
  SmallVector<Value> counts;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getMixedLowerBound(), loop.getMixedUpperBound(),
                 loop.getMixedStep())) {
    Value lower = materialize(b, loc, lb, mapping);
    Value upper = materialize(b, loc, ub, mapping);
    Value stride = materialize(b, loc, step, mapping);
    Value extent = b.createOrFold<arith::SubIOp>(loc, upper, lower);
    counts.push_back(b.createOrFold<arith::CeilDivSIOp>(loc, extent, stride));
  }
  return counts;
}

struct ConvertForallToTasksPass
    : tfm::impl::ConvertForallToTasksBase<ConvertForallToTasksPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    known.clear();
    multiversionedByTask.clear();
    // The keys are not in the module: destroyed when the pass is done.
    llvm::scope_exit destroyKeys([&] {
      for (func::FuncOp task : outlined)
        task->erase();
      outlined.clear();
    });
    SmallVector<scf::ForallOp> loops;
    module.walk([&](scf::ForallOp loop) {
      if (!loop->getParentOfType<scf::ForallOp>())
        loops.push_back(loop);
    });
    SmallVector<KernelVariant> variants =
        getKernelVariants(vectorBits, multiversion);
    for (scf::ForallOp loop : loops)
      if (failed(outline(module, loop, variants)))
        return signalPassFailure();
  }

  LogicalResult outline(ModuleOp module, scf::ForallOp loop,
                        ArrayRef<KernelVariant> variants) {
    if (loop.getNumResults() != 0)
      return loop.emitOpError(
          "must be bufferized before convert-forall-to-tasks");
    Location loc = loop.getLoc();
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(loop.getRegion(), used);
    for (OpFoldResult bound : llvm::concat<OpFoldResult>(
             loop.getMixedLowerBound(), loop.getMixedUpperBound(),
             loop.getMixedStep()))
      if (auto value = dyn_cast<Value>(bound))
        used.insert(value);
    // Constants are rebuilt inside the task, where they fold; the rest is
    // passed.
    SmallVector<Value> captured, constants;
    for (Value value : used) {
      Operation *def = value.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>())
        constants.push_back(value);
      else
        captured.push_back(value);
    }

    func::FuncOp task = createTask(module, loop, captured, constants);
    FailureOr<func::FuncOp> multiversioned =
        multiversionedOf(loop, task, variants);
    if (failed(multiversioned))
      return failure();

    OpBuilder b(loop);
    IRMapping identity;
    Value count = arith::ConstantIndexOp::create(b, loc, 1);
    for (Value trips : tripCounts(b, loc, loop, identity))
      count = b.createOrFold<arith::MulIOp>(loc, count, trips);
    SmallVector<Value> args(captured.begin(), captured.end());
    args.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    args.push_back(count);
    func::CallOp::create(b, loc, *multiversioned, args);
    loop.erase();
    return success();
  }

  /// `task(captured..., begin, end)`: for r in [begin, end), the forall's
  /// body at the r-th iteration in row-major order.
  func::FuncOp createTask(ModuleOp module, scf::ForallOp loop,
                          ArrayRef<Value> captured, ArrayRef<Value> constants) {
    MLIRContext *ctx = module.getContext();
    Location loc = loop.getLoc();
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> types;
    for (Value value : captured)
      types.push_back(value.getType());
    types.append(2, b.getIndexType());
    auto task = func::FuncOp::create(b, loc, "__tfm_task_forall",
                                     b.getFunctionType(types, {}));
    task.setPrivate();
    setTaskFunction(task);
    Block *entry = task.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping mapping;
    for (auto [value, arg] : llvm::zip(captured, entry->getArguments()))
      mapping.map(value, arg);
    for (Value constant : constants)
      b.clone(*constant.getDefiningOp(), mapping);
    SmallVector<Value> counts = tripCounts(b, loc, loop, mapping);
    SmallVector<Value> lbs, steps;
    for (OpFoldResult lb : loop.getMixedLowerBound())
      lbs.push_back(materialize(b, loc, lb, mapping));
    for (OpFoldResult step : loop.getMixedStep())
      steps.push_back(materialize(b, loc, step, mapping));

    unsigned n = captured.size();
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto range = scf::ForOp::create(b, loc, entry->getArgument(n),
                                    entry->getArgument(n + 1), one);
    b.setInsertionPoint(range.getBody()->getTerminator());
    // Delinearize, innermost dimension fastest.
    Value rest = range.getInductionVar();
    SmallVector<Value> ivs(counts.size());
    for (int64_t d = counts.size() - 1; d >= 0; --d) {
      Value index = rest;
      if (d > 0) {
        index = b.createOrFold<arith::RemUIOp>(loc, rest, counts[d]);
        rest = b.createOrFold<arith::DivUIOp>(loc, rest, counts[d]);
      }
      Value scaled = b.createOrFold<arith::MulIOp>(loc, index, steps[d]);
      ivs[d] = b.createOrFold<arith::AddIOp>(loc, lbs[d], scaled);
    }
    for (auto [iv, value] : llvm::zip(loop.getInductionVars(), ivs))
      mapping.map(iv, value);
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, mapping);
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(b, loc);
    return task;
  }

  /// The task that runs `task`'s body compiled for the CPU's variant (one
  /// copy per variant); a task identical to an earlier one gets the earlier
  /// one's.
  FailureOr<func::FuncOp> multiversionedOf(Operation *at, func::FuncOp task,
                                           ArrayRef<KernelVariant> variants) {
    if (func::FuncOp earlier = known.findOrAdd(task)) {
      task.erase();
      return multiversionedByTask[earlier];
    }
    OpBuilder atEnd =
        OpBuilder::atBlockEnd(at->getParentOfType<ModuleOp>().getBody());
    FailureOr<func::FuncOp> multiversioned = createMultiversionTask(
        atEnd, task.getLoc(), (kTaskPrefix + "forall_").str(),
        task.getArgumentTypes(), variants,
        [&](const KernelVariant &, func::FuncOp copy) {
          IRMapping mapping;
          mapping.map(task.getArguments(), copy.getArguments());
          OpBuilder b = OpBuilder::atBlockBegin(&copy.getBody().front());
          for (Operation &op : task.getBody().front())
            b.clone(op, mapping);
          return success();
        });
    // Kept, outside the module, as the key later tasks are compared with.
    task->remove();
    outlined.push_back(task);
    if (succeeded(multiversioned))
      multiversionedByTask[task] = *multiversioned;
    return multiversioned;
  }

  /// The distinct tasks so far (taken out of the module), and the
  /// multiversioned task made of each.
  TaskIndex known;
  llvm::DenseMap<func::FuncOp, func::FuncOp> multiversionedByTask;
  SmallVector<func::FuncOp> outlined;
};
} // namespace
