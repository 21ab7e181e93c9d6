//===- AlignWorkgroupMemory.cpp - 16-byte aligned shared memory -----------===//
//
// ldmatrix reads 16-byte rows; the NVVM lowering aligns a shared buffer only
// to its element type unless the attribution says otherwise.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUALIGNWORKGROUPMEMORY
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

constexpr int64_t kAlignment = 16;

struct TfmGpuAlignWorkgroupMemoryPass
    : tfm::impl::TfmGpuAlignWorkgroupMemoryBase<
          TfmGpuAlignWorkgroupMemoryPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    StringRef name = LLVM::LLVMDialect::getAlignAttrName();
    getOperation().walk([&](gpu::GPUFuncOp func) {
      for (unsigned i = 0, e = func.getNumWorkgroupAttributions(); i < e; ++i)
        if (!func.getWorkgroupAttributionAttr(i, name))
          func.setWorkgroupAttributionAttr(i, name,
                                           b.getI64IntegerAttr(kAlignment));
    });
  }
};

} // namespace
