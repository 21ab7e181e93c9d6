//===- EmitEntryPoints.cpp - The artifact's C ABI over a lowered model ----===//
//
// After conversion to the LLVM dialect every memref argument of the model
// function is expanded into (allocated, aligned, offset, sizes..., strides...).
// The entry points built here take plain pointers and symbol values, rebuild
// dense row-major descriptors and call the model, so that no C caller ever
// sees MLIR's memref descriptors. Each run entry point comes in two forms:
// without a workspace, and with the caller's (a pointer and its size, which
// the model lays its scratch out in instead of allocating); the workspace's
// size for given dims comes from `_workspace_size`. See docs/artifact.md.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/Signature.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMEMITENTRYPOINTS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// What the entry points return for a negative symbol value or a tensor too
/// large to address (docs/artifact.md). Run-time checks of the model use
/// positive codes.
constexpr int32_t kBadDimensionStatus = -1;
/// What the _with_workspace entry points return for a workspace argument
/// they cannot use: a negative size, NULL with a non-zero size, or a pointer
/// that is not 64-byte aligned (the plan's offsets assume a cache line).
constexpr int32_t kBadWorkspaceStatus = -3;
constexpr int64_t kWorkspaceAlignment = 64;
/// Set by tfm-plan-workspace on a model that takes the caller's workspace.
constexpr llvm::StringLiteral kWorkspaceSizeAttr = "tfm.workspace_size";
/// A memref<?xi8> descriptor: allocated, aligned, offset, size, stride.
constexpr size_t kWorkspaceDescriptorSize = 5;

struct TfmEmitEntryPointsPass
    : tfm::impl::TfmEmitEntryPointsBase<TfmEmitEntryPointsPass> {
  using TfmEmitEntryPointsBase::TfmEmitEntryPointsBase;

  /// Whether the model function takes a trailing tfm_exec pointer.
  bool hasExec = false;
  /// The function computing the model's workspace size, when the model takes
  /// a workspace (tfm-plan-workspace); its arguments are the model's
  /// descriptors of inputs and outputs.
  LLVM::LLVMFuncOp workspaceSize;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> models;
    module.walk([&](LLVM::LLVMFuncOp f) {
      if (tfm::hasSignature(f))
        models.push_back(f);
    });
    if (models.size() != 1) {
      module.emitError("expected exactly one function with tfm.signature, "
                       "found ")
          << models.size();
      return signalPassFailure();
    }
    LLVM::LLVMFuncOp model = models.front();
    FailureOr<Signature> sig = Signature::read(model);
    if (failed(sig) || failed(findWorkspaceSize(module, model)) ||
        failed(checkArity(model, *sig)))
      return signalPassFailure();
    // Before the entry points exist, so that they alone stay external.
    internalizeDefinitions(module);

    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    std::string prefix = "tfm_" + sig->model;
    emitMetadata(b, model.getLoc(), prefix, *sig);
    for (bool withWorkspace : {false, true}) {
      emitPacked(b, model, prefix, *sig, withWorkspace);
      emitTyped(b, model, prefix, *sig, withWorkspace, /*withExec=*/false);
    }
    emitTyped(b, model, prefix, *sig, /*withWorkspace=*/false,
              /*withExec=*/true);
    emitWorkspaceSize(b, model.getLoc(), prefix, *sig, /*packed=*/true);
    emitWorkspaceSize(b, model.getLoc(), prefix, *sig, /*packed=*/false);
  }

  LogicalResult findWorkspaceSize(ModuleOp module, LLVM::LLVMFuncOp model) {
    auto name = model->getAttrOfType<FlatSymbolRefAttr>(kWorkspaceSizeAttr);
    if (!name)
      return success();
    workspaceSize = module.lookupSymbol<LLVM::LLVMFuncOp>(name.getAttr());
    if (!workspaceSize || workspaceSize.isExternal() ||
        !workspaceSize.getFunctionType().getReturnType().isInteger(64))
      return model.emitError("tfm.workspace_size names ")
             << name << ", which is not a defined function returning i64";
    return success();
  }

  /// The artifact exports its C ABI and nothing else. Every model's tasks,
  /// kernel variants and helpers have the same names (__tfm_task_linear_0,
  /// ...), so any of them left global would keep two models from linking
  /// into one program.
  static void internalizeDefinitions(ModuleOp module) {
    auto isLocal = [](LLVM::Linkage linkage) {
      return linkage == LLVM::Linkage::Internal ||
             linkage == LLVM::Linkage::Private;
    };
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (!fn.isExternal() && !isLocal(fn.getLinkage()))
        fn.setLinkage(LLVM::Linkage::Internal);
    for (auto global : module.getOps<LLVM::GlobalOp>()) {
      bool defined = global.getValueOrNull() || global.getInitializerBlock();
      if (defined && !isLocal(global.getLinkage()))
        global.setLinkage(LLVM::Linkage::Internal);
    }
  }

  LogicalResult checkArity(LLVM::LLVMFuncOp model, const Signature &sig) {
    size_t expected = 0;
    for (const auto *list : {&sig.inputs, &sig.outputs})
      for (const SignatureTensor &t : *list)
        expected += 3 + 2 * t.dims.size();
    size_t descriptors = expected;
    if (workspaceSize) {
      if (workspaceSize.getNumArguments() != descriptors)
        return workspaceSize.emitError("workspace size function takes ")
               << workspaceSize.getNumArguments() << " arguments but the "
               << "signature describes " << descriptors;
      expected += kWorkspaceDescriptorSize;
    }
    // tfm-dispatch-tasks appends the exec pointer.
    hasExec = model.getNumArguments() == expected + 1 &&
              isa<LLVM::LLVMPointerType>(model.getArgumentTypes().back());
    if (model.getNumArguments() != expected && !hasExec)
      return model.emitError("model function takes ")
             << model.getNumArguments()
             << " arguments but its signature describes " << expected
             << " (inputs and outputs as memref descriptors"
             << (workspaceSize ? ", then the workspace's" : "") << ")";
    Type returnType = model.getFunctionType().getReturnType();
    if (!isa<LLVM::LLVMVoidType>(returnType) && !returnType.isInteger(32))
      return model.emitError("model function must return its results through "
                             "out-parameters (and nothing or an i32 status)");
    return success();
  }

  void emitMetadata(OpBuilder &b, Location loc, StringRef prefix,
                    const Signature &sig) {
    std::string json = sig.toJson();
    json.push_back('\0');
    auto ctx = b.getContext();
    auto arrayType =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), json.size());
    std::string globalName = (prefix + "_metadata_json").str();
    LLVM::GlobalOp::create(b, loc, arrayType, /*isConstant=*/true,
                           LLVM::Linkage::Internal, globalName,
                           b.getStringAttr(json));
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto fnType = LLVM::LLVMFunctionType::get(ptrType, {});
    SmallVector<std::string> names = {(prefix + "_metadata").str()};
    if (exportArtifactMetadata)
      names.push_back("tfm_artifact_metadata");
    for (const std::string &name : names) {
      OpBuilder::InsertionGuard guard(b);
      auto fn = LLVM::LLVMFuncOp::create(b, loc, name, fnType);
      b.setInsertionPointToStart(fn.addEntryBlock(b));
      Value addr = LLVM::AddressOfOp::create(b, loc, ptrType, globalName);
      LLVM::ReturnOp::create(b, loc, addr);
    }
  }

  /// Returns kBadDimensionStatus when a symbol value is negative or the byte
  /// size of an input or output overflows int64_t: the descriptors built
  /// from such values would make the model write out of bounds. Continues
  /// in a new block otherwise.
  void emitDimensionCheck(OpBuilder &b, Location loc, const Signature &sig,
                          ArrayRef<Value> symbolValues, Type statusType) {
    if (symbolValues.empty())
      return; // Static shapes were checked when the model was compiled.
    auto i64 = b.getI64Type();
    auto i1 = b.getI1Type();
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    Value zero = constant(0);
    Value bad = LLVM::ConstantOp::create(b, loc, i1, b.getBoolAttr(false));
    for (Value v : symbolValues)
      bad = LLVM::OrOp::create(
          b, loc, bad,
          LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, v, zero));
    // llvm.smul.with.overflow returns {product, overflowed}.
    auto pairType = LLVM::LLVMStructType::getLiteral(b.getContext(), {i64, i1});
    const int64_t kValue[] = {0}, kOverflow[] = {1};
    for (const auto *list : {&sig.inputs, &sig.outputs}) {
      for (const SignatureTensor &t : *list) {
        if (llvm::none_of(t.dims,
                          [](const SignatureDim &d) { return d.symbol >= 0; }))
          continue;
        Value bytes = constant(dtypeByteSize(t.dtype));
        for (const SignatureDim &d : t.dims) {
          Value size =
              d.symbol >= 0 ? symbolValues[d.symbol] : constant(d.staticSize);
          Value product =
              LLVM::SMulWithOverflowOp::create(b, loc, pairType, bytes, size);
          bytes = LLVM::ExtractValueOp::create(b, loc, product, kValue);
          bad = LLVM::OrOp::create(
              b, loc, bad,
              LLVM::ExtractValueOp::create(b, loc, product, kOverflow));
        }
      }
    }
    returnIf(b, loc, bad, statusType, kBadDimensionStatus);
  }

  /// Returns `status` (of `statusType`) when `condition` holds; continues in
  /// a new block otherwise.
  static void returnIf(OpBuilder &b, Location loc, Value condition,
                       Type statusType, int64_t status) {
    Region *region = b.getInsertionBlock()->getParent();
    Block *current = b.getInsertionBlock();
    Block *fail = b.createBlock(region, region->end());
    LLVM::ReturnOp::create(
        b, loc,
        LLVM::ConstantOp::create(b, loc, statusType,
                                 b.getIntegerAttr(statusType, status)));
    Block *ok = b.createBlock(region, region->end());
    b.setInsertionPointToEnd(current);
    LLVM::CondBrOp::create(b, loc, condition, fail, ok);
    b.setInsertionPointToStart(ok);
  }

  /// Returns kBadWorkspaceStatus for a workspace the model cannot use,
  /// whatever it needs: a negative size, NULL with a non-zero size, or a
  /// pointer off a 64-byte boundary. NULL with 0 bytes means none.
  void emitWorkspaceCheck(OpBuilder &b, Location loc, Value workspace,
                          Value bytes) {
    auto i64 = b.getI64Type();
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    Value zero = constant(0);
    Value address = LLVM::PtrToIntOp::create(b, loc, i64, workspace);
    Value negative =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, bytes, zero);
    Value null =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, address, zero);
    Value sized =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, bytes, zero);
    Value misaligned = LLVM::ICmpOp::create(
        b, loc, LLVM::ICmpPredicate::ne,
        LLVM::AndOp::create(b, loc, address, constant(kWorkspaceAlignment - 1)),
        zero);
    Value bad = LLVM::OrOp::create(
        b, loc, LLVM::OrOp::create(b, loc, negative, misaligned),
        LLVM::AndOp::create(b, loc, null, sized));
    returnIf(b, loc, bad, b.getI32Type(), kBadWorkspaceStatus);
  }

  /// Dense row-major descriptors built from `buffers` (one pointer per input
  /// then output) and `symbolValues`.
  SmallVector<Value> descriptors(OpBuilder &b, Location loc,
                                 const Signature &sig, ArrayRef<Value> buffers,
                                 ArrayRef<Value> symbolValues) {
    auto i64 = b.getI64Type();
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    SmallVector<Value> args;
    size_t bufferIndex = 0;
    for (const auto *list : {&sig.inputs, &sig.outputs}) {
      for (const SignatureTensor &t : *list) {
        Value ptr = buffers[bufferIndex++];
        SmallVector<Value> sizes;
        for (const SignatureDim &d : t.dims)
          sizes.push_back(d.symbol >= 0 ? symbolValues[d.symbol]
                                        : constant(d.staticSize));
        SmallVector<Value> strides(sizes.size());
        Value stride = constant(1);
        for (int64_t i = int64_t(sizes.size()) - 1; i >= 0; --i) {
          strides[i] = stride;
          if (i > 0)
            stride = LLVM::MulOp::create(b, loc, stride, sizes[i]);
        }
        args.append({ptr, ptr, constant(0)});
        args.append(sizes);
        args.append(strides);
      }
    }
    return args;
  }

  /// Calls the model with descriptors built from `buffers` (one pointer per
  /// input then output) and `symbolValues`, then returns its status (0 when
  /// it has none). `workspace` and `workspaceBytes` are the caller's (checked
  /// here), or null Values for the entry points that take none.
  void emitCallAndReturn(OpBuilder &b, Location loc, LLVM::LLVMFuncOp model,
                         const Signature &sig, ArrayRef<Value> buffers,
                         ArrayRef<Value> symbolValues, Value exec,
                         Value workspace, Value workspaceBytes) {
    auto i64 = b.getI64Type();
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    emitDimensionCheck(b, loc, sig, symbolValues, b.getI32Type());
    if (workspace)
      emitWorkspaceCheck(b, loc, workspace, workspaceBytes);
    SmallVector<Value> args = descriptors(b, loc, sig, buffers, symbolValues);
    if (workspaceSize) {
      // A model without planned scratch ignores the workspace: any the
      // check above accepted is large enough.
      if (!workspace) {
        workspace = LLVM::ZeroOp::create(b, loc, ptrType);
        workspaceBytes = constant(0);
      }
      args.append(
          {workspace, workspace, constant(0), workspaceBytes, constant(1)});
    }
    if (hasExec)
      args.push_back(exec ? exec
                          : LLVM::ZeroOp::create(b, loc, ptrType).getResult());
    auto call = LLVM::CallOp::create(b, loc, model, args);
    Value status = call.getNumResults() == 1
                       ? call.getResult()
                       : LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                                  b.getI32IntegerAttr(0))
                             .getResult();
    LLVM::ReturnOp::create(b, loc, status);
  }

  void emitPacked(OpBuilder &b, LLVM::LLVMFuncOp model, StringRef prefix,
                  const Signature &sig, bool withWorkspace) {
    Location loc = model.getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    SmallVector<Type> params = {ptrType, ptrType, ptrType};
    if (withWorkspace)
      params.append({ptrType, b.getI64Type()});
    auto fnType = LLVM::LLVMFunctionType::get(b.getI32Type(), params);
    OpBuilder::InsertionGuard guard(b);
    std::string name = (prefix + "_run_packed").str();
    if (withWorkspace)
      name += "_with_workspace";
    auto fn = LLVM::LLVMFuncOp::create(b, loc, name, fnType);
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    SmallVector<Value> buffers =
        loadBuffers(b, loc, sig, entry->getArgument(0));
    SmallVector<Value> symbols =
        loadSymbols(b, loc, sig, entry->getArgument(1));
    emitCallAndReturn(b, loc, model, sig, buffers, symbols,
                      entry->getArgument(2),
                      withWorkspace ? entry->getArgument(3) : Value(),
                      withWorkspace ? entry->getArgument(4) : Value());
  }

  SmallVector<Value> loadBuffers(OpBuilder &b, Location loc,
                                 const Signature &sig, Value array) {
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    SmallVector<Value> buffers;
    size_t numBuffers = sig.inputs.size() + sig.outputs.size();
    for (size_t i = 0; i < numBuffers; ++i) {
      Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType, array,
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      buffers.push_back(LLVM::LoadOp::create(b, loc, ptrType, slot));
    }
    return buffers;
  }

  SmallVector<Value> loadSymbols(OpBuilder &b, Location loc,
                                 const Signature &sig, Value array) {
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    SmallVector<Value> symbols;
    for (size_t i = 0; i < sig.symbols.size(); ++i) {
      Value slot = LLVM::GEPOp::create(b, loc, ptrType, b.getI64Type(), array,
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      symbols.push_back(LLVM::LoadOp::create(b, loc, b.getI64Type(), slot));
    }
    return symbols;
  }

  /// `<prefix>_run(<buffers>, <symbols>)`, with `void *workspace, int64_t
  /// workspace_bytes` appended for _with_workspace or `const tfm_exec *exec`
  /// for _with_exec.
  void emitTyped(OpBuilder &b, LLVM::LLVMFuncOp model, StringRef prefix,
                 const Signature &sig, bool withWorkspace, bool withExec) {
    Location loc = model.getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    size_t numBuffers = sig.inputs.size() + sig.outputs.size();
    SmallVector<Type> params(numBuffers, ptrType);
    params.append(sig.symbols.size(), b.getI64Type());
    if (withWorkspace)
      params.append({ptrType, b.getI64Type()});
    if (withExec)
      params.push_back(ptrType);
    auto fnType = LLVM::LLVMFunctionType::get(b.getI32Type(), params);
    OpBuilder::InsertionGuard guard(b);
    std::string name = (prefix + "_run").str();
    if (withWorkspace)
      name += "_with_workspace";
    if (withExec)
      name += "_with_exec";
    auto fn = LLVM::LLVMFuncOp::create(b, loc, name, fnType);
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    ArrayRef<BlockArgument> args = entry->getArguments();
    SmallVector<Value> buffers(args.take_front(numBuffers));
    SmallVector<Value> symbols(
        args.drop_front(numBuffers).take_front(sig.symbols.size()));
    Value workspace, workspaceBytes;
    if (withWorkspace) {
      workspace = args[args.size() - 2];
      workspaceBytes = args.back();
    }
    emitCallAndReturn(b, loc, model, sig, buffers, symbols,
                      withExec ? Value(args.back()) : Value(), workspace,
                      workspaceBytes);
  }

  /// `int64_t <prefix>_workspace_size(<symbols>)` or, packed,
  /// `<prefix>_workspace_size_packed(const int64_t *symbols)`: the bytes a
  /// workspace needs for these dims, 0 for a model without planned scratch,
  /// -1 for dims the run entry points refuse, -2 for a size no allocator can
  /// give. The size function reads only the descriptors' sizes, so the data
  /// pointers are NULL.
  void emitWorkspaceSize(OpBuilder &b, Location loc, StringRef prefix,
                         const Signature &sig, bool packed) {
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    auto i64 = b.getI64Type();
    SmallVector<Type> params;
    if (packed)
      params.push_back(ptrType);
    else
      params.append(sig.symbols.size(), i64);
    OpBuilder::InsertionGuard guard(b);
    std::string name = (prefix + "_workspace_size").str();
    if (packed)
      name += "_packed";
    auto fn = LLVM::LLVMFuncOp::create(
        b, loc, name, LLVM::LLVMFunctionType::get(i64, params));
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    SmallVector<Value> symbols =
        packed ? loadSymbols(b, loc, sig, entry->getArgument(0))
               : SmallVector<Value>(entry->getArguments());
    emitDimensionCheck(b, loc, sig, symbols, i64);
    Value bytes;
    if (workspaceSize) {
      Value null = LLVM::ZeroOp::create(b, loc, ptrType);
      SmallVector<Value> buffers(sig.inputs.size() + sig.outputs.size(), null);
      bytes = LLVM::CallOp::create(b, loc, workspaceSize,
                                   descriptors(b, loc, sig, buffers, symbols))
                  .getResult();
    } else {
      bytes = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0));
    }
    LLVM::ReturnOp::create(b, loc, bytes);
  }
};
} // namespace
