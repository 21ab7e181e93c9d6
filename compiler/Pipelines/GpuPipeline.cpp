//===- GpuPipeline.cpp - tfm's CUDA pipeline ------------------------------===//
#include "compiler/Pipelines/GpuPipeline.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Pipelines/CommonPipelines.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/OptimizeForNVVM.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tfm::buildGPUTfmToLinalgPipeline(OpPassManager &pm,
                                      const GPUPipelineOptions &options) {
  // tfm.packed_linear's panels are laid out for CPU vector registers: the
  // GPU takes the linalg form of linear layers. Attention is fused as on
  // the CPU and becomes the flash-attention kernel (docs/gpu.md).
  FrontEndOptions frontEnd;
  frontEnd.weights = options.weights;
  frontEnd.bindWeights = options.bindWeights;
  frontEnd.fuseAttention = true;
  buildFrontEndPipeline(pm, frontEnd);
  buildPrimitivesToLinalgPipeline(pm, frontEnd);
  // What the flash-attention kernel cannot take runs unfused (its chain's
  // primitives become linalg like the rest).
  pm.addNestedPass<func::FuncOp>(tfm::createTfmGpuDecomposeAttention());
  pm.addNestedPass<func::FuncOp>(tfm::createConvertTfmToLinalg());
  pm.addPass(createCanonicalizerPass());
}

void tfm::buildGPUKernelsPipeline(OpPassManager &pm,
                                  const GPUPipelineOptions &options) {
  buildBufferizationPipeline(pm);
  std::string mma = options.dtype;
  if (mma == "f32")
    mma.clear();
  pm.addNestedPass<func::FuncOp>(
      tfm::createConvertAttentionToGPU(tfm::ConvertAttentionToGPUOptions{
          options.threads, 48 * 1024, 32, 0, 0, mma}));
  // A cache append copies each sequence's new rows at its offset, which the
  // host reads back from the device: one small copy kernel per sequence.
  pm.addNestedPass<func::FuncOp>(tfm::createTfmLowerCacheAppend());
  pm.addNestedPass<func::FuncOp>(tfm::createTfmLowerStridedCopies());
  pm.addNestedPass<func::FuncOp>(tfm::createConvertLinalgToGPU(
      tfm::ConvertLinalgToGPUOptions{options.threads, 16, 16, mma}));
  // Weights the tensor-core GEMMs round as they load them are stored
  // rounded (half the bytes to embed, upload and read).
  if (!mma.empty())
    pm.addPass(tfm::createTfmGpuRoundWeights());
  // Per module: the resident weights' slots are shared by its functions.
  pm.addPass(tfm::createTfmGpuDeviceBuffers());
  pm.addPass(createCanonicalizerPass());
  // Constants and index arithmetic into the kernels: loop bounds stay
  // compile-time constants there instead of becoming kernel parameters.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createCSEPass());
}

void tfm::buildGPUToNVVMPipeline(OpPassManager &pm,
                                 const GPUPipelineOptions &options) {
  // Kernels and host alike: views to pointer arithmetic, delinearized
  // indices to divisions, structured control flow to branches.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createCanonicalizerPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  // ldmatrix (the tensor-core GEMM) reads 16-byte rows of shared memory.
  kernels.addPass(tfm::createTfmGpuAlignWorkgroupMemory());
  kernels.addPass(tfm::createTfmGpuOccupancyHint());
  kernels.addPass(createConvertNVGPUToNVVMPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(LLVM::createNVVMOptimizeForTargetPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
}

void tfm::buildGPUHostToLLVMPipeline(OpPassManager &pm,
                                     const GPUPipelineOptions &options) {
  // One stream per run: copies, launches and frees are ordered on it, and
  // the run waits for it before returning (and before any host read).
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  pm.addPass(tfm::createTfmGpuStatus());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(tfm::createTfmEmitEntryPoints(
      tfm::TfmEmitEntryPointsOptions{options.exportArtifactMetadata}));
}

void tfm::buildGPUPipeline(OpPassManager &pm,
                           const GPUPipelineOptions &options) {
  buildGPUTfmToLinalgPipeline(pm, options);
  buildGPUKernelsPipeline(pm, options);
  buildGPUToNVVMPipeline(pm, options);
  buildGPUHostToLLVMPipeline(pm, options);
}

void tfm::registerGPUPipelines() {
  PassPipelineRegistration<GPUPipelineOptions>(
      "tfm-gpu-to-linalg", "tfm layers to linalg on tensors for the GPU",
      buildGPUTfmToLinalgPipeline);
  PassPipelineRegistration<GPUPipelineOptions>(
      "tfm-gpu-kernels",
      "linalg on tensors to host code launching outlined GPU kernels",
      buildGPUKernelsPipeline);
  PassPipelineRegistration<GPUPipelineOptions>("tfm-gpu-to-nvvm",
                                               "outlined GPU kernels to NVVM",
                                               buildGPUToNVVMPipeline);
  PassPipelineRegistration<GPUPipelineOptions>(
      "tfm-gpu-host-to-llvm",
      "host code to the LLVM dialect with the kernels embedded",
      buildGPUHostToLLVMPipeline);
  PassPipelineRegistration<GPUPipelineOptions>(
      "tfm-gpu-pipeline", "a tfm model to the LLVM dialect for CUDA",
      buildGPUPipeline);
}
