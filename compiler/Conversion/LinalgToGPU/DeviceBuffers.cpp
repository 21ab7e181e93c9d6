//===- DeviceBuffers.cpp - Buffers that kernels touch live on the device --===//
//
// A buffer moves to device memory when a kernel reads or writes it through
// any view; buffers only the host reads (reshape shapes) stay where they
// are, so the host never dereferences a device pointer.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUDEVICEBUFFERS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// The allocation, constant or argument that `buffer` is a view of.
Value rootOf(Value buffer) {
  while (Operation *def = buffer.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      buffer = view.getViewSource();
      continue;
    }
    if (auto cast = dyn_cast<memref::CastOp>(def)) {
      buffer = cast.getSource();
      continue;
    }
    // Not a ViewLikeOpInterface: how attention's permuted operands are seen.
    if (auto transpose = dyn_cast<memref::TransposeOp>(def)) {
      buffer = transpose.getIn();
      continue;
    }
    if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(def)) {
      buffer = metadata.getSource();
      continue;
    }
    break;
  }
  return buffer;
}

struct TfmGpuDeviceBuffersPass
    : tfm::impl::TfmGpuDeviceBuffersBase<TfmGpuDeviceBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Every buffer a kernel captures from the host.
    llvm::SetVector<Value> roots;
    func.walk([&](gpu::LaunchOp launch) {
      launch.getBody().walk([&](Operation *op) {
        for (Value operand : op->getOperands()) {
          if (!isa<BaseMemRefType>(operand.getType()))
            continue;
          Region *defined = operand.getParentRegion();
          if (!launch.getBody().isAncestor(defined))
            roots.insert(rootOf(operand));
        }
      });
    });
    if (roots.empty())
      return;
    SmallVector<memref::DeallocOp> deallocs;
    func.walk([&](memref::DeallocOp d) {
      if (roots.contains(rootOf(d.getMemref())))
        deallocs.push_back(d);
    });
    SmallVector<memref::LoadOp> hostLoads;
    bool failedStore = false;
    func.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (auto load = dyn_cast<memref::LoadOp>(op);
          load && roots.contains(rootOf(load.getMemref())))
        hostLoads.push_back(load);
      if (auto store = dyn_cast<memref::StoreOp>(op);
          store && roots.contains(rootOf(store.getMemref()))) {
        store.emitOpError("writes from the host into a buffer that GPU "
                          "kernels use: not supported by --target cuda");
        failedStore = true;
      }
    });
    if (failedStore)
      return signalPassFailure();

    IRRewriter rewriter(&getContext());
    // Device copies of constants and stack buffers are freed before every
    // return.
    SmallVector<Value> freeAtReturn;
    for (memref::DeallocOp d : deallocs) {
      rewriter.setInsertionPoint(d);
      rewriter.replaceOpWithNewOp<gpu::DeallocOp>(d, TypeRange(), ValueRange(),
                                                  d.getMemref());
    }
    for (Value root : roots) {
      if (isa<BlockArgument>(root))
        continue; // The model's inputs and outputs are device buffers.
      Operation *def = root.getDefiningOp();
      auto type = cast<MemRefType>(root.getType());
      rewriter.setInsertionPoint(def);
      if (auto alloc = dyn_cast<memref::AllocOp>(def)) {
        rewriter.replaceOpWithNewOp<gpu::AllocOp>(
            alloc, type, Type(), ValueRange(), alloc.getDynamicSizes(),
            alloc.getSymbolOperands(), /*hostShared=*/UnitAttr());
        continue;
      }
      if (auto alloca = dyn_cast<memref::AllocaOp>(def)) {
        auto device = gpu::AllocOp::create(
            rewriter, def->getLoc(), type, Type(), ValueRange(),
            alloca.getDynamicSizes(), alloca.getSymbolOperands(),
            /*hostShared=*/UnitAttr());
        rewriter.replaceOp(alloca, device.getMemref());
        freeAtReturn.push_back(device.getMemref());
        continue;
      }
      if (auto global = dyn_cast<memref::GetGlobalOp>(def)) {
        rewriter.setInsertionPointAfter(global);
        auto device =
            gpu::AllocOp::create(rewriter, def->getLoc(), type, Type(),
                                 ValueRange(), ValueRange(), ValueRange(),
                                 /*hostShared=*/UnitAttr());
        auto copy = gpu::MemcpyOp::create(rewriter, def->getLoc(), TypeRange(),
                                          ValueRange(), device.getMemref(),
                                          global.getResult());
        rewriter.replaceAllUsesExcept(global.getResult(), device.getMemref(),
                                      copy);
        freeAtReturn.push_back(device.getMemref());
        continue;
      }
      def->emitOpError("defines a buffer that a GPU kernel uses but "
                       "--target cuda cannot place on the device");
      return signalPassFailure();
    }
    for (memref::LoadOp load : hostLoads)
      readBack(rewriter, load);
    func.walk([&](func::ReturnOp ret) {
      rewriter.setInsertionPoint(ret);
      for (Value buffer : freeAtReturn)
        gpu::DeallocOp::create(rewriter, ret.getLoc(), TypeRange(),
                               ValueRange(), buffer);
    });
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
