//===- TensorCoreOccupancy.cpp - No spills for an occupancy target --------===//
//
// Left to itself, ptxas (13.0, -O3) caps a kernel's registers to reach an
// occupancy of its own choosing and spills what no longer fits: the
// tensor-core flash attention over short static sequences gets 80
// registers and 4 to 16 bytes of spills on sm_80. Such a kernel keeps two
// sets of accumulators live (the scores, whose probabilities feed the
// second product, and the output), and its occupancy is bounded by shared
// memory anyway: `.minnctapersm 1` (nvvm.minctasm) lifts the target and the
// same kernels assemble with no spills. The GEMM's one product is left to
// ptxas's choice (128 registers, no spills, 4 blocks per SM).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUTENSORCOREOCCUPANCY
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

struct TfmGpuTensorCoreOccupancyPass
    : tfm::impl::TfmGpuTensorCoreOccupancyBase<TfmGpuTensorCoreOccupancyPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel() ||
          func->hasAttr(NVVM::NVVMDialect::getMinctasmAttrName()))
        return;
      bool chained = func.walk([](NVVM::MmaOp mma) {
                           return chainsProducts(mma) ? WalkResult::interrupt()
                                                      : WalkResult::advance();
                         })
                         .wasInterrupted();
      if (chained)
        func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      b.getI32IntegerAttr(1));
    });
  }
};

} // namespace
