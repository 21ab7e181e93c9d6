//===- OccupancyHint.cpp - No spills for an occupancy target --------------===//
//
// Left to itself, ptxas (13.0, -O3) caps a kernel's registers to reach an
// occupancy of its own choosing and spills what no longer fits: 64
// registers for a block of 256 threads, 80 for 128 on sm_80. The
// shared-memory tiled kernels hit that cap: the f32 GEMM with a fused bias
// (76 registers wanted, 4 bytes spilled at 64), the tensor-core flash
// attention over short sequences (4 to 16 bytes at 80). Their occupancy is
// bounded by their shared memory and block size anyway, and a spill costs
// a local-memory round trip in the inner loop: `.minnctapersm 1`
// (nvvm.minctasm) lifts the target for both. The single-product
// tensor-core GEMM (128 registers) and the f32 flash attention (80-100 for
// 128 threads) fit ptxas's targets and keep them: lifting it there only
// costs occupancy (151 registers for the attention, 3 blocks per SM
// instead of the 6 its shared memory allows).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUOCCUPANCYHINT
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// Whether `mma`'s A fragment is computed in registers (flash attention's
/// probabilities for P·V) rather than loaded by ldmatrix, possibly through
/// the extracts and bitcasts that split an ldmatrix result into registers.
bool chainsProducts(NVVM::MmaOp mma) {
  return llvm::any_of(mma.getOperandA(), [](Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (isa<nvgpu::LdMatrixOp>(def))
        return false;
      if (auto extract = dyn_cast<vector::ExtractOp>(def))
        v = extract.getSource();
      else if (auto cast = dyn_cast<vector::BitCastOp>(def))
        v = cast.getSource();
      else
        break;
    }
    return true;
  });
}

/// Threads per block from which ptxas's register target (64) is too low
/// for the f32 tiled GEMM.
constexpr int64_t kWideBlock = 256;

struct TfmGpuOccupancyHintPass
    : tfm::impl::TfmGpuOccupancyHintBase<TfmGpuOccupancyHintPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel() || func.getNumWorkgroupAttributions() == 0 ||
          func->hasAttr(NVVM::NVVMDialect::getMinctasmAttrName()))
        return;
      bool products = false, chained = false;
      func.walk([&](NVVM::MmaOp mma) {
        products = true;
        chained |= chainsProducts(mma);
      });
      int64_t threads = 1;
      if (std::optional<ArrayRef<int32_t>> block = func.getKnownBlockSize())
        for (int32_t extent : *block)
          threads *= extent;
      // ptxas aims at 64 registers for 256 threads, which the f32 GEMM's
      // 4 x 4 patch with a fused epilogue exceeds (76). A middle target
      // does not work: at 3 blocks of 256 (85 registers) ptxas unrolls the
      // small static GEMMs of the fixtures further and spills 16 bytes, so
      // the GEMM gets no target (76 registers for a dynamic M; up to 151
      // for tiny static shapes, where occupancy does not matter). The f32
      // flash attention (128 threads) fits ptxas's target and keeps it.
      int64_t blocks = 0;
      if (chained || (!products && threads >= kWideBlock))
        blocks = 1;
      if (blocks)
        func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      b.getI32IntegerAttr(blocks));
    });
  }
};

} // namespace
