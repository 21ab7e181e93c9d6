//===- DispatchTasks.cpp - Outlined tasks onto the caller's threads -------===//
//
// The generated code owns no threads: the app (or tfm's runtime) passes a
// `tfm_exec` with a parallel_for callback, and each outlined task range is
// handed to it through a trampoline taking a pointer to the packed operands.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/TaskFunctions.h"
#include "dialects/Tfm/IR/TfmDialect.h"
#include "tfm/exec.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstddef>
#include <type_traits>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMDISPATCHTASKS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// A C field's LLVM type: pointers are `ptr`, integers their width.
template <typename Field> Type llvmFieldType(MLIRContext *ctx) {
  if constexpr (std::is_pointer_v<Field>) {
    return LLVM::LLVMPointerType::get(ctx);
  } else {
    static_assert(std::is_integral_v<Field>, "tfm_exec: a field of a new kind");
    return IntegerType::get(ctx, 8 * sizeof(Field));
  }
}

/// `tfm_exec` from its one declaration, runtime/include/tfm/exec.h (which
/// the generated header copies): the field types come from it, and these
/// checks stop the build when a field is added, removed or reordered there
/// but not here.
enum ExecField : int32_t { kExecThreads = 1, kExecParallelFor, kExecContext };
static_assert(offsetof(tfm_exec, abi_version) == 0);
static_assert(offsetof(tfm_exec, num_threads) == sizeof(tfm_exec::abi_version));
static_assert(offsetof(tfm_exec, parallel_for) ==
              offsetof(tfm_exec, num_threads) + sizeof(tfm_exec::num_threads));
static_assert(offsetof(tfm_exec, context) ==
              offsetof(tfm_exec, parallel_for) +
                  sizeof(tfm_exec::parallel_for));
static_assert(sizeof(tfm_exec) ==
              offsetof(tfm_exec, context) + sizeof(tfm_exec::context));

LLVM::LLVMStructType execStructType(MLIRContext *ctx) {
  return LLVM::LLVMStructType::getLiteral(
      ctx, {llvmFieldType<decltype(tfm_exec::abi_version)>(ctx),
            llvmFieldType<decltype(tfm_exec::num_threads)>(ctx),
            llvmFieldType<decltype(tfm_exec::parallel_for)>(ctx),
            llvmFieldType<decltype(tfm_exec::context)>(ctx)});
}

struct TfmDispatchTasksPass
    : tfm::impl::TfmDispatchTasksBase<TfmDispatchTasksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> models;
    module.walk([&](LLVM::LLVMFuncOp f) {
      if (tfm::hasSignature(f))
        models.push_back(f);
    });
    // Symbols through one table: a lookup in the module walks its
    // functions, once per call of a deep model's thousands.
    SymbolTable symbols(module);
    table = &symbols;
    for (LLVM::LLVMFuncOp model : models) {
      Value exec = addExecArgument(model);
      resolveExecThreads(model, exec);
      // Last call first: each split then moves only the ops up to the next
      // call's (already split) block, linear in the function rather than
      // quadratic (200 encoder layers: 33 s in this pass).
      SmallVector<LLVM::CallOp> calls = callsOf(model, tfm::isTaskFunction);
      for (LLVM::CallOp call : llvm::reverse(calls))
        if (failed(dispatch(model, call, exec)))
          return signalPassFailure();
    }
    // Outside a model function (inside a task, say) ranges run inline on
    // one thread.
    SmallVector<LLVM::LLVMFuncOp> queries;
    module.walk([&](LLVM::LLVMFuncOp f) {
      if (tfm::isExecThreadsFunction(f))
        queries.push_back(f);
    });
    for (LLVM::LLVMFuncOp query : queries) {
      SmallVector<Operation *> users;
      if (std::optional<SymbolTable::UseRange> uses =
              query.getSymbolUses(module))
        for (const SymbolTable::SymbolUse &use : *uses)
          users.push_back(use.getUser());
      for (Operation *user : users) {
        auto call = dyn_cast<LLVM::CallOp>(user);
        if (!call) {
          user->emitError("a tfm.exec_threads function may only be called");
          return signalPassFailure();
        }
        replaceQuery(call, Value());
      }
      query.erase();
    }
  }

  SymbolTable *table = nullptr;

  /// Replaces a thread-count query by `exec`'s thread count, or by 1
  /// without `exec`.
  void replaceQuery(LLVM::CallOp call, Value exec) {
    OpBuilder b(call);
    Location loc = call.getLoc();
    auto type = cast<IntegerType>(call.getResult().getType());
    Value count =
        exec ? LLVM::CallOp::create(b, loc, getOrCreateThreadCount(call, type),
                                    ValueRange{exec})
                   .getResult()
             : LLVM::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 1))
                   .getResult();
    call.getResult().replaceAllUsesWith(count);
    call.erase();
  }

  /// `exec == NULL || exec->num_threads < 1 ? 1 : exec->num_threads`, as
  /// an internal function LLVM inlines.
  LLVM::LLVMFuncOp getOrCreateThreadCount(Operation *at, IntegerType type) {
    auto module = at->getParentOfType<ModuleOp>();
    std::string name =
        "__tfm_exec_thread_count_i" + std::to_string(type.getWidth());
    if (auto existing = table->lookup<LLVM::LLVMFuncOp>(name))
      return existing;
    MLIRContext *ctx = at->getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i32 = IntegerType::get(ctx, 32);
    Location loc = at->getLoc();
    OpBuilder b(ctx);
    b.setInsertionPointToStart(module.getBody());
    auto fn = LLVM::LLVMFuncOp::create(
        b, loc, name, LLVM::LLVMFunctionType::get(type, {ptr}));
    fn.setLinkage(LLVM::Linkage::Internal);
    Block *entry = fn.addEntryBlock(b);
    Block *read = fn.addBlock(), *none = fn.addBlock();
    Value exec = entry->getArgument(0);
    b.setInsertionPointToStart(entry);
    Value one =
        LLVM::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 1));
    Value isNull = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, exec,
                                        LLVM::ZeroOp::create(b, loc, ptr));
    LLVM::CondBrOp::create(b, loc, isNull, none, read);
    b.setInsertionPointToStart(none);
    LLVM::ReturnOp::create(b, loc, one);
    b.setInsertionPointToStart(read);
    Value slot = LLVM::GEPOp::create(b, loc, ptr, execStructType(ctx), exec,
                                     ArrayRef<LLVM::GEPArg>{0, kExecThreads});
    Value threads = LLVM::LoadOp::create(b, loc, i32, slot);
    if (type.getWidth() > 32)
      threads = LLVM::ZExtOp::create(b, loc, type, threads);
    else if (type.getWidth() < 32)
      threads = LLVM::TruncOp::create(b, loc, type, threads);
    Value many =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ugt, threads, one);
    LLVM::ReturnOp::create(
        b, loc, LLVM::SelectOp::create(b, loc, many, threads, one).getResult());
    table->insert(fn);
    return fn;
  }

  /// The direct calls in `model` of functions `isCallee` accepts.
  SmallVector<LLVM::CallOp> callsOf(LLVM::LLVMFuncOp model,
                                    bool (*isCallee)(Operation *)) {
    SmallVector<LLVM::CallOp> calls;
    model.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      Operation *fn = callee ? table->lookup(StringRef(*callee)) : nullptr;
      if (fn && isCallee(fn))
        calls.push_back(call);
    });
    return calls;
  }

  /// Replaces the model's thread-count queries by its `exec` argument's
  /// thread count.
  void resolveExecThreads(LLVM::LLVMFuncOp model, Value exec) {
    for (LLVM::CallOp call : callsOf(model, tfm::isExecThreadsFunction))
      replaceQuery(call, exec);
  }

  Value addExecArgument(LLVM::LLVMFuncOp model) {
    auto ptr = LLVM::LLVMPointerType::get(model.getContext());
    LLVM::LLVMFunctionType type = model.getFunctionType();
    SmallVector<Type> params(type.getParams());
    params.push_back(ptr);
    model.setFunctionType(
        LLVM::LLVMFunctionType::get(type.getReturnType(), params));
    return model.getBody().front().addArgument(ptr, model.getLoc());
  }

  /// `<task>_trampoline(ptr args, i64 begin, i64 end)`: unpacks the operands
  /// and runs tasks [offset + begin, offset + end).
  LLVM::LLVMFuncOp getOrCreateTrampoline(LLVM::LLVMFuncOp task,
                                         LLVM::LLVMStructType packed) {
    std::string name = (task.getName() + "_trampoline").str();
    if (auto existing = table->lookup<LLVM::LLVMFuncOp>(name))
      return existing;
    MLIRContext *ctx = task.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    OpBuilder b(task);
    b.setInsertionPointAfter(task);
    Location loc = task.getLoc();
    auto fn = LLVM::LLVMFuncOp::create(
        b, loc, name,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                    {ptr, i64, i64}));
    fn.setLinkage(LLVM::Linkage::Internal);
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    SmallVector<Value> args;
    ArrayRef<Type> fields = packed.getBody();
    for (auto [i, type] : llvm::enumerate(fields)) {
      Value slot =
          LLVM::GEPOp::create(b, loc, ptr, packed, entry->getArgument(0),
                              ArrayRef<LLVM::GEPArg>{0, int32_t(i)});
      args.push_back(LLVM::LoadOp::create(b, loc, type, slot));
    }
    // The last packed field is the range's offset.
    Value offset = args.pop_back_val();
    args.push_back(LLVM::AddOp::create(b, loc, offset, entry->getArgument(1)));
    args.push_back(LLVM::AddOp::create(b, loc, offset, entry->getArgument(2)));
    LLVM::CallOp::create(b, loc, task, args);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    table->insert(fn);
    return fn;
  }

  LogicalResult dispatch(LLVM::LLVMFuncOp model, LLVM::CallOp call,
                         Value exec) {
    auto task = table->lookup<LLVM::LLVMFuncOp>(*call.getCallee());
    if (!task || call.getNumOperands() < 2)
      return call.emitError("malformed task call");
    MLIRContext *ctx = call.getContext();
    Location loc = call.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    SmallVector<Value> operands(call.getOperands());
    Value end = operands.pop_back_val();
    Value begin = operands.pop_back_val();
    if (!begin.getType().isInteger(64) || !end.getType().isInteger(64))
      return call.emitError("task ranges must be i64");

    SmallVector<Type> fields;
    for (Value v : operands)
      fields.push_back(v.getType());
    fields.push_back(i64); // range offset
    auto packed = LLVM::LLVMStructType::getLiteral(ctx, fields);
    LLVM::LLVMFuncOp trampoline = getOrCreateTrampoline(task, packed);

    // The packed operands live in the model's entry block: a stack slot per
    // call site, never one per loop iteration.
    OpBuilder b(ctx);
    b.setInsertionPointToStart(&model.getBody().front());
    Value one = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
    Value argsSlot = LLVM::AllocaOp::create(b, loc, ptr, packed, one);

    Block *before = call->getBlock();
    Block *join = before->splitBlock(call->getNextNode());
    Block *serial = new Block(), *check = new Block(), *parallel = new Block();
    Region &region = model.getBody();
    region.getBlocks().insertAfter(before->getIterator(), check);
    region.getBlocks().insertAfter(check->getIterator(), parallel);
    region.getBlocks().insertAfter(parallel->getIterator(), serial);

    // Serial path: the original call, moved.
    call->moveBefore(serial, serial->end());
    b.setInsertionPointToEnd(serial);
    LLVM::BrOp::create(b, loc, join);

    b.setInsertionPointToEnd(before);
    Value null = LLVM::ZeroOp::create(b, loc, ptr);
    Value noExec =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, exec, null);
    LLVM::CondBrOp::create(b, loc, noExec, serial, check);

    b.setInsertionPointToEnd(check);
    auto execType = execStructType(ctx);
    Value forSlot =
        LLVM::GEPOp::create(b, loc, ptr, execType, exec,
                            ArrayRef<LLVM::GEPArg>{0, kExecParallelFor});
    Value parallelFor = LLVM::LoadOp::create(b, loc, ptr, forSlot);
    Value noParallelFor = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                                               parallelFor, null);
    LLVM::CondBrOp::create(b, loc, noParallelFor, serial, parallel);

    b.setInsertionPointToEnd(parallel);
    Value contextSlot = LLVM::GEPOp::create(
        b, loc, ptr, execType, exec, ArrayRef<LLVM::GEPArg>{0, kExecContext});
    Value context = LLVM::LoadOp::create(b, loc, ptr, contextSlot);
    SmallVector<Value> values(operands);
    values.push_back(begin);
    for (auto [i, value] : llvm::enumerate(values)) {
      Value slot = LLVM::GEPOp::create(b, loc, ptr, packed, argsSlot,
                                       ArrayRef<LLVM::GEPArg>{0, int32_t(i)});
      LLVM::StoreOp::create(b, loc, value, slot);
    }
    Value count = LLVM::SubOp::create(b, loc, end, begin);
    Value fn = LLVM::AddressOfOp::create(b, loc, ptr, trampoline.getName());
    auto parallelForType = LLVM::LLVMFunctionType::get(
        LLVM::LLVMVoidType::get(ctx), {ptr, i64, ptr, ptr});
    LLVM::CallOp::create(b, loc, parallelForType,
                         ValueRange{parallelFor, context, count, fn, argsSlot});
    LLVM::BrOp::create(b, loc, join);
    return success();
  }
};
} // namespace
