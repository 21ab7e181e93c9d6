//===- TestSerialLaunch.cpp - Run one-thread launches as host loops -------===//
//
// A test pass that only tfm-opt registers: a gpu.launch of one thread per
// block becomes a loop nest over its blocks on the host, its workgroup
// memory a stack buffer and its barriers nothing (one thread has no one to
// wait for). With it the kernels convert-attention-to-gpu emits for
// `threads=1` run on the CPU and their numerics are checked there
// (tests/gpu/check_attention_schedule.py).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/AttentionToGPU/TestPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {

bool isOne(Value v) {
  auto c = v.getDefiningOp<arith::ConstantIndexOp>();
  return c && c.value() == 1;
}

struct TestSerialLaunchPass
    : PassWrapper<TestSerialLaunchPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestSerialLaunchPass)
  StringRef getArgument() const override { return "tfm-test-serial-launch"; }
  StringRef getDescription() const override {
    return "Run gpu.launch ops of one-thread blocks as host loops (tests)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<scf::SCFDialect, memref::MemRefDialect>();
  }

  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp l) { launches.push_back(l); });
    for (gpu::LaunchOp launch : launches) {
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      if (!isOne(block.x) || !isOne(block.y) || !isOne(block.z) ||
          launch.getAsyncToken() || !launch.getPrivateAttributions().empty()) {
        launch.emitOpError("tfm-test-serial-launch takes synchronous "
                           "launches of one-thread blocks only");
        return signalPassFailure();
      }
      OpBuilder b(launch);
      Location loc = launch.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      IRMapping map;
      for (BlockArgument shared : launch.getWorkgroupAttributions()) {
        auto type = cast<MemRefType>(shared.getType());
        map.map(shared,
                memref::AllocaOp::create(
                    b, loc,
                    MemRefType::get(type.getShape(), type.getElementType())));
      }
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 ids = launch.getBlockIds();
      gpu::KernelDim3 threads = launch.getThreadIds();
      gpu::KernelDim3 gridArgs = launch.getGridSize();
      gpu::KernelDim3 blockArgs = launch.getBlockSize();
      SmallVector<Value> args = {threads.x,   threads.y,   threads.z,
                                 blockArgs.x, blockArgs.y, blockArgs.z,
                                 gridArgs.x,  gridArgs.y,  gridArgs.z};
      SmallVector<Value> values = {zero, zero,   zero,   one,   one,
                                   one,  grid.x, grid.y, grid.z};
      for (auto [arg, value] : llvm::zip(args, values))
        map.map(arg, value);
      SmallVector<Value> bounds = {grid.z, grid.y, grid.x};
      SmallVector<Value> ivs = {ids.z, ids.y, ids.x};
      Block &body = launch.getBody().front();
      std::function<void(unsigned)> nest = [&](unsigned depth) {
        if (depth == bounds.size()) {
          for (Operation &op : body.without_terminator())
            if (!isa<gpu::BarrierOp>(op))
              b.clone(op, map);
          return;
        }
        auto loop = scf::ForOp::create(b, loc, zero, bounds[depth], one);
        map.map(ivs[depth], loop.getInductionVar());
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(loop.getBody()->getTerminator());
        nest(depth + 1);
      };
      nest(0);
      // Barriers nested in the body's regions were cloned: drop them.
      launch.erase();
    }
    getOperation().walk([](gpu::BarrierOp barrier) { barrier.erase(); });
  }
};

} // namespace

void mlir::tfm::registerTestGPUPasses() {
  PassRegistration<TestSerialLaunchPass>();
}
