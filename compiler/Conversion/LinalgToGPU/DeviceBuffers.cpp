//===- DeviceBuffers.cpp - Buffers that kernels touch live on the device --===//
//
// A buffer moves to device memory when a kernel reads or writes it through
// any view; buffers only the host reads (reshape shapes) stay where they
// are, so the host never dereferences a device pointer. Weights are
// uploaded once per loaded artifact, not once per run: each gets a slot in
// the artifact that the runtime fills at first use (tfmGpuConstant) and a
// global destructor empties when the artifact is unloaded.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/LinalgToGPU/BufferRoot.h"
#include "compiler/Conversion/Passes.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUDEVICEBUFFERS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// Adds every buffer `view` may be a view of: its root and, where the root
/// is a select between buffers (an index checked at run time picks the
/// input or a fallback buffer), the roots of both.
void collectRoots(Value view, llvm::SetVector<Value> &roots) {
  Value root = tfm::bufferRoot(view);
  if (!roots.insert(root))
    return;
  if (auto select = root.getDefiningOp<arith::SelectOp>()) {
    collectRoots(select.getTrueValue(), roots);
    collectRoots(select.getFalseValue(), roots);
  }
}

/// The runtime's entry points (runtime/src/cuda/MgpuWrappers.cpp) and the
/// artifact's own symbols for its resident weights.
constexpr llvm::StringLiteral kConstantFunction = "tfmGpuConstant";
constexpr llvm::StringLiteral kReleaseFunction = "tfmGpuReleaseConstants";
constexpr llvm::StringLiteral kSlotsGlobal = "__tfm_gpu_weights";
constexpr llvm::StringLiteral kReleaseDestructor = "__tfm_gpu_release_weights";

struct TfmGpuDeviceBuffersPass
    : tfm::impl::TfmGpuDeviceBuffersBase<TfmGpuDeviceBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The pass instance is reused across modules (-split-input-file).
    slots.clear();
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (!func.isExternal() && failed(placeOnDevice(func)))
        return signalPassFailure();
    if (!slots.empty())
      emitSlotsAndDestructor(module);
  }

  /// The weights (globals) that kernels read, each with its index in the
  /// artifact's slot array; shared by every function of the module.
  llvm::MapVector<StringAttr, unsigned> slots;

  LogicalResult placeOnDevice(func::FuncOp func) {
    // Every buffer a kernel captures from the host.
    llvm::SetVector<Value> roots;
    func.walk([&](gpu::LaunchOp launch) {
      launch.getBody().walk([&](Operation *op) {
        for (Value operand : op->getOperands()) {
          if (!isa<BaseMemRefType>(operand.getType()))
            continue;
          Region *defined = operand.getParentRegion();
          if (!launch.getBody().isAncestor(defined))
            collectRoots(operand, roots);
        }
      });
    });
    if (roots.empty())
      return success();
    SmallVector<memref::DeallocOp> deallocs;
    func.walk([&](memref::DeallocOp d) {
      if (roots.contains(tfm::bufferRoot(d.getMemref())))
        deallocs.push_back(d);
    });
    SmallVector<memref::LoadOp> hostLoads;
    bool failedStore = false;
    func.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (auto load = dyn_cast<memref::LoadOp>(op);
          load && roots.contains(tfm::bufferRoot(load.getMemref())))
        hostLoads.push_back(load);
      if (auto store = dyn_cast<memref::StoreOp>(op);
          store && roots.contains(tfm::bufferRoot(store.getMemref()))) {
        store.emitOpError("writes from the host into a buffer that GPU "
                          "kernels use: not supported by --target cuda");
        failedStore = true;
      }
    });
    if (failedStore)
      return failure();

    IRRewriter rewriter(&getContext());
    // Device copies of stack buffers are freed before every return.
    SmallVector<Value> freeAtReturn;
    for (memref::DeallocOp d : deallocs) {
      rewriter.setInsertionPoint(d);
      rewriter.replaceOpWithNewOp<gpu::DeallocOp>(d, TypeRange(), ValueRange(),
                                                  d.getMemref());
    }
    // Weights are looked up first thing in the run, before its first GPU
    // op: gpu-async-region synchronizes the stream before a call, so calls
    // between GPU ops would split the run over several streams.
    Block &entry = func.getBody().front();
    Operation *lookedUp = nullptr; // The last weight's lookup so far.
    for (Value root : roots) {
      if (isa<BlockArgument>(root))
        continue; // The model's inputs and outputs are device buffers.
      if (root.getDefiningOp<arith::SelectOp>())
        continue; // Both of its buffers are roots of their own.
      Operation *def = root.getDefiningOp();
      auto type = cast<MemRefType>(root.getType());
      if (auto alloc = dyn_cast<memref::AllocOp>(def)) {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPoint(def);
        rewriter.replaceOpWithNewOp<gpu::AllocOp>(
            alloc, type, Type(), ValueRange(), alloc.getDynamicSizes(),
            alloc.getSymbolOperands(), /*hostShared=*/UnitAttr());
        continue;
      }
      if (auto alloca = dyn_cast<memref::AllocaOp>(def)) {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPoint(def);
        auto device = gpu::AllocOp::create(
            rewriter, def->getLoc(), type, Type(), ValueRange(),
            alloca.getDynamicSizes(), alloca.getSymbolOperands(),
            /*hostShared=*/UnitAttr());
        rewriter.replaceOp(alloca, device.getMemref());
        freeAtReturn.push_back(device.getMemref());
        continue;
      }
      if (auto global = dyn_cast<memref::GetGlobalOp>(def)) {
        if (lookedUp)
          rewriter.setInsertionPointAfter(lookedUp);
        else
          rewriter.setInsertionPointToStart(&entry);
        FailureOr<Value> device = residentCopy(rewriter, global);
        if (failed(device))
          return failure();
        lookedUp = device->getDefiningOp();
        rewriter.replaceOp(global, *device);
        continue;
      }
      return def->emitOpError("defines a buffer that a GPU kernel uses but "
                              "--target cuda cannot place on the device");
    }
    for (memref::LoadOp load : hostLoads)
      readBack(rewriter, load);
    func.walk([&](func::ReturnOp ret) {
      rewriter.setInsertionPoint(ret);
      for (Value buffer : freeAtReturn)
        gpu::DeallocOp::create(rewriter, ret.getLoc(), TypeRange(),
                               ValueRange(), buffer);
    });
    return success();
  }

  /// The device copy of the weight that `global` reads, at the rewriter's
  /// insertion point: the runtime uploads it into the weight's slot at the
  /// first run that gets here and returns the slot's pointer afterwards (or
  /// null with the error pending, which the run's status reports). The
  /// pointer becomes a memref through a descriptor that the LLVM lowering
  /// of the memref ops meets through unrealized_conversion_cast.
  FailureOr<Value> residentCopy(IRRewriter &rewriter,
                                memref::GetGlobalOp global) {
    Location loc = global.getLoc();
    auto type = cast<MemRefType>(global.getType());
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        type.getMemorySpace())
      return global.emitOpError("reads a weight of type ")
             << type << " that --target cuda cannot keep on the device "
             << "(it takes static, contiguous ones in the default memory "
             << "space)";
    MLIRContext *ctx = rewriter.getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64 = rewriter.getI64Type();
    ModuleOp module = global->getParentOfType<ModuleOp>();
    declareRuntime(rewriter, module);

    unsigned index =
        slots.try_emplace(global.getNameAttr().getAttr(), slots.size())
            .first->second;
    DataLayout layout = DataLayout::closest(global);
    uint64_t bytes =
        type.getNumElements() * layout.getTypeSize(type.getElementType());

    // A get_global of its own at the entry: `global` may sit anywhere.
    auto host =
        memref::GetGlobalOp::create(rewriter, loc, type, global.getNameAttr());
    Value hostIndex =
        memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, host);
    Value hostInt = arith::IndexCastOp::create(rewriter, loc, i64, hostIndex);
    Value hostPtr = LLVM::IntToPtrOp::create(rewriter, loc, ptrType, hostInt);
    Value slotArray =
        LLVM::AddressOfOp::create(rewriter, loc, ptrType, kSlotsGlobal);
    Value slot = LLVM::GEPOp::create(
        rewriter, loc, ptrType, ptrType, slotArray,
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(index)});
    Value size = LLVM::ConstantOp::create(rewriter, loc, i64,
                                          rewriter.getI64IntegerAttr(bytes));
    Value device =
        LLVM::CallOp::create(rewriter, loc, TypeRange{ptrType},
                             kConstantFunction, ValueRange{slot, hostPtr, size})
            .getResult();
    LLVMTypeConverter converter(ctx);
    Value descriptor = MemRefDescriptor::fromStaticShape(
        rewriter, loc, converter, type, device);
    return UnrealizedConversionCastOp::create(rewriter, loc, type, descriptor)
        .getResult(0);
  }

  /// Declares the runtime's two entry points, once.
  static void declareRuntime(OpBuilder &b, ModuleOp module) {
    if (module.lookupSymbol(kConstantFunction))
      return;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    MLIRContext *ctx = b.getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64 = b.getI64Type();
    LLVM::LLVMFuncOp::create(
        b, module.getLoc(), kConstantFunction,
        LLVM::LLVMFunctionType::get(ptrType, {ptrType, ptrType, i64}));
    LLVM::LLVMFuncOp::create(b, module.getLoc(), kReleaseFunction,
                             LLVM::LLVMFunctionType::get(
                                 LLVM::LLVMVoidType::get(ctx), {ptrType, i64}));
  }

  /// The slot array (null pointers until a run uploads) and the destructor
  /// that frees what the slots hold when the artifact is unloaded. Its
  /// default priority runs it before the kernel module's unload, which the
  /// translation of gpu.binary registers at a lower one.
  void emitSlotsAndDestructor(ModuleOp module) {
    MLIRContext *ctx = module.getContext();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = module.getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto arrayType = LLVM::LLVMArrayType::get(ptrType, slots.size());
    auto array = LLVM::GlobalOp::create(b, loc, arrayType, /*isConstant=*/false,
                                        LLVM::Linkage::Internal, kSlotsGlobal,
                                        Attribute());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(b.createBlock(&array.getInitializerRegion()));
      Value zero = LLVM::ZeroOp::create(b, loc, arrayType);
      LLVM::ReturnOp::create(b, loc, zero);
    }
    auto dtor = LLVM::LLVMFuncOp::create(
        b, loc, kReleaseDestructor,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {}),
        LLVM::Linkage::Internal);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(dtor.addEntryBlock(b));
      Value slotArray =
          LLVM::AddressOfOp::create(b, loc, ptrType, kSlotsGlobal);
      Value count = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                             b.getI64IntegerAttr(slots.size()));
      LLVM::CallOp::create(b, loc, TypeRange(), kReleaseFunction,
                           ValueRange{slotArray, count});
      LLVM::ReturnOp::create(b, loc, ValueRange());
    }
    LLVM::GlobalDtorsOp::create(
        b, loc, b.getArrayAttr({FlatSymbolRefAttr::get(dtor)}),
        b.getI32ArrayAttr({65535}), b.getArrayAttr({LLVM::ZeroAttr::get(ctx)}));
  }

  /// A host load from a device buffer: a one-thread kernel copies the
  /// element into a device scalar, which is copied to the host and read.
  static void readBack(IRRewriter &rewriter, memref::LoadOp load) {
    Location loc = load.getLoc();
    rewriter.setInsertionPoint(load);
    auto scalarType = MemRefType::get({1}, load.getType());
    auto device = gpu::AllocOp::create(rewriter, loc, scalarType, Type(),
                                       ValueRange(), ValueRange(), ValueRange(),
                                       /*hostShared=*/UnitAttr());
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    auto launch =
        gpu::LaunchOp::create(rewriter, loc, one, one, one, one, one, one);
    rewriter.setInsertionPointToEnd(&launch.getBody().front());
    Value value = memref::LoadOp::create(rewriter, loc, load.getMemref(),
                                         load.getIndices());
    memref::StoreOp::create(rewriter, loc, value, device.getMemref(),
                            ValueRange{zero});
    gpu::TerminatorOp::create(rewriter, loc);
    rewriter.setInsertionPointAfter(launch);
    auto host = memref::AllocaOp::create(rewriter, loc, scalarType);
    gpu::MemcpyOp::create(rewriter, loc, TypeRange(), ValueRange(), host,
                          device.getMemref());
    Value result =
        memref::LoadOp::create(rewriter, loc, host, ValueRange{zero});
    gpu::DeallocOp::create(rewriter, loc, TypeRange(), ValueRange(),
                           device.getMemref());
    rewriter.replaceOp(load, result);
  }
};

} // namespace
