//===- EmitEntryPoints.cpp - The artifact's C ABI over a lowered model ----===//
//
// After conversion to the LLVM dialect every memref argument of the model
// function is expanded into (allocated, aligned, offset, sizes..., strides...).
// The entry points built here take plain pointers and symbol values, rebuild
// dense row-major descriptors and call the model, so that no C caller ever
// sees MLIR's memref descriptors. See docs/artifact.md.
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

struct TfmEmitEntryPointsPass
    : tfm::impl::TfmEmitEntryPointsBase<TfmEmitEntryPointsPass> {
  using TfmEmitEntryPointsBase::TfmEmitEntryPointsBase;

  /// Whether the model function takes a trailing tfm_exec pointer.
  bool hasExec = false;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> models;
    module.walk([&](LLVM::LLVMFuncOp f) {
      if (f->hasAttr("tfm.signature"))
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
    if (failed(sig) || failed(checkArity(model, *sig)))
      return signalPassFailure();
    // Before the entry points exist, so that they alone stay external.
    internalizeDefinitions(module);

    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    std::string prefix = "tfm_" + sig->model;
    emitMetadata(b, model.getLoc(), prefix, *sig);
    emitPacked(b, model, prefix, *sig);
    emitTyped(b, model, prefix, *sig);
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
    // tfm-dispatch-tasks appends the exec pointer.
    hasExec = model.getNumArguments() == expected + 1 &&
              isa<LLVM::LLVMPointerType>(
                  model.getArgumentTypes().back());
    if (model.getNumArguments() != expected && !hasExec)
      return model.emitError("model function takes ")
             << model.getNumArguments()
             << " arguments but its signature describes " << expected
             << " (inputs and outputs as memref descriptors)";
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
                          ArrayRef<Value> symbolValues) {
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
        Value bytes = constant(t.dtype == "f64" || t.dtype == "i64" ? 8
                               : t.dtype == "bool"                  ? 1
                                                                    : 4);
        for (const SignatureDim &d : t.dims) {
          Value size = d.symbol >= 0 ? symbolValues[d.symbol]
                                     : constant(d.staticSize);
          Value product =
              LLVM::SMulWithOverflowOp::create(b, loc, pairType, bytes, size);
          bytes = LLVM::ExtractValueOp::create(b, loc, product, kValue);
          bad = LLVM::OrOp::create(
              b, loc, bad,
              LLVM::ExtractValueOp::create(b, loc, product, kOverflow));
        }
      }
    }
    Region *region = b.getInsertionBlock()->getParent();
    Block *current = b.getInsertionBlock();
    Block *fail = b.createBlock(region, region->end());
    LLVM::ReturnOp::create(
        b, loc,
        LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                 b.getI32IntegerAttr(kBadDimensionStatus)));
    Block *ok = b.createBlock(region, region->end());
    b.setInsertionPointToEnd(current);
    LLVM::CondBrOp::create(b, loc, bad, fail, ok);
    b.setInsertionPointToStart(ok);
  }

  /// Calls the model with descriptors built from `buffers` (one pointer per
  /// input then output) and `symbolValues`, then returns its status (0 when
  /// it has none).
  void emitCallAndReturn(OpBuilder &b, Location loc, LLVM::LLVMFuncOp model,
                         const Signature &sig, ArrayRef<Value> buffers,
                         ArrayRef<Value> symbolValues, Value exec) {
    auto i64 = b.getI64Type();
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    emitDimensionCheck(b, loc, sig, symbolValues);
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
    if (hasExec)
      args.push_back(exec ? exec
                          : LLVM::ZeroOp::create(
                                b, loc, LLVM::LLVMPointerType::get(
                                            b.getContext())).getResult());
    auto call = LLVM::CallOp::create(b, loc, model, args);
    Value status = call.getNumResults() == 1
                       ? call.getResult()
                       : LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                                  b.getI32IntegerAttr(0))
                             .getResult();
    LLVM::ReturnOp::create(b, loc, status);
  }

  void emitPacked(OpBuilder &b, LLVM::LLVMFuncOp model, StringRef prefix,
                  const Signature &sig) {
    Location loc = model.getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    auto fnType = LLVM::LLVMFunctionType::get(b.getI32Type(),
                                              {ptrType, ptrType, ptrType});
    OpBuilder::InsertionGuard guard(b);
    auto fn = LLVM::LLVMFuncOp::create(b, loc, (prefix + "_run_packed").str(),
                                       fnType);
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    SmallVector<Value> buffers;
    size_t numBuffers = sig.inputs.size() + sig.outputs.size();
    for (size_t i = 0; i < numBuffers; ++i) {
      Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType,
                                       entry->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      buffers.push_back(LLVM::LoadOp::create(b, loc, ptrType, slot));
    }
    SmallVector<Value> symbols;
    for (size_t i = 0; i < sig.symbols.size(); ++i) {
      Value slot = LLVM::GEPOp::create(b, loc, ptrType, b.getI64Type(),
                                       entry->getArgument(1),
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      symbols.push_back(LLVM::LoadOp::create(b, loc, b.getI64Type(), slot));
    }
    emitCallAndReturn(b, loc, model, sig, buffers, symbols,
                      entry->getArgument(2));
  }

  void emitTyped(OpBuilder &b, LLVM::LLVMFuncOp model, StringRef prefix,
                 const Signature &sig) {
    Location loc = model.getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    size_t numBuffers = sig.inputs.size() + sig.outputs.size();
    SmallVector<Type> params(numBuffers, ptrType);
    params.append(sig.symbols.size(), b.getI64Type());
    auto fnType = LLVM::LLVMFunctionType::get(b.getI32Type(), params);
    OpBuilder::InsertionGuard guard(b);
    auto fn = LLVM::LLVMFuncOp::create(b, loc, (prefix + "_run").str(), fnType);
    Block *entry = fn.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    SmallVector<Value> args(entry->getArguments());
    emitCallAndReturn(b, loc, model, sig, ArrayRef(args).take_front(numBuffers),
                      ArrayRef(args).drop_front(numBuffers), Value());
  }
};
} // namespace
