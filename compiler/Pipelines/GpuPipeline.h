//===- GpuPipeline.h - tfm's CUDA pipeline -----------------------*- C++
//-*-===//
//
// --target cuda: the tfm-to-linalg stage the CPU pipeline runs, then
// bufferization as on the CPU, then kernels (convert-linalg-to-gpu), NVVM,
// PTX/cubin (LLVM's NVPTX backend, ptxas) and host code that launches them
// through the runtime's mgpu* functions. See docs/gpu.md.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_PIPELINES_GPUPIPELINE_H
#define TFM_COMPILER_PIPELINES_GPUPIPELINE_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace tfm {

struct GPUPipelineOptions : public PassPipelineOptions<GPUPipelineOptions> {
  PassOptions::Option<std::string> weights{
      *this, "weights", llvm::cl::desc("The .safetensors file to bind")};
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture: sm_80 or sm_90"),
      llvm::cl::init("sm_80")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("NVPTX features (the PTX ISA version)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What the host object embeds: isa (PTX, JIT-compiled "
                     "by the driver), bin (cubin) or fatbin (cubin and PTX); "
                     "bin and fatbin need the CUDA toolkit"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit (ptxas, fatbinary, libdevice)"),
      llvm::cl::init("/usr/local/cuda")};
  PassOptions::Option<int64_t> threads{*this, "threads",
                                       llvm::cl::desc("Threads per block"),
                                       llvm::cl::init(128)};
  PassOptions::Option<std::string> dtype{
      *this, "dtype",
      llvm::cl::desc("The contractions' operand type: f32, or f16/bf16 on "
                     "tensor cores with f32 accumulation"),
      llvm::cl::init("f32")};
  PassOptions::Option<bool> bindWeights{
      *this, "bind-weights",
      llvm::cl::desc("Replace tfm.weight ops with the file's data"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> exportArtifactMetadata{
      *this, "export-artifact-metadata",
      llvm::cl::desc("Define tfm_artifact_metadata() (shared libraries)"),
      llvm::cl::init(false)};
};

/// tfm layers to linalg on tensors, as for the CPU (attention fused into
/// tfm.attention) but without the CPU's packed GEMM.
void buildGPUTfmToLinalgPipeline(OpPassManager &pm,
                                 const GPUPipelineOptions &options);

/// linalg on tensors -> bufferized host code launching outlined kernels
/// (gpu.module of gpu.func): what --emit=gpu prints.
void buildGPUKernelsPipeline(OpPassManager &pm,
                             const GPUPipelineOptions &options);

/// The kernels to the NVVM and LLVM dialects for `chip` (--emit=nvvm).
void buildGPUToNVVMPipeline(OpPassManager &pm,
                            const GPUPipelineOptions &options);

/// The host code to the LLVM dialect with the artifact's entry points, the
/// kernels serialized as `format` into a gpu.binary.
void buildGPUHostToLLVMPipeline(OpPassManager &pm,
                                const GPUPipelineOptions &options);

/// All of the above: a tfm model to the LLVM dialect with embedded kernels.
void buildGPUPipeline(OpPassManager &pm, const GPUPipelineOptions &options);

/// Registers the pipelines above as tfm-gpu-to-linalg, tfm-gpu-kernels,
/// tfm-gpu-to-nvvm, tfm-gpu-host-to-llvm and tfm-gpu-pipeline.
void registerGPUPipelines();

} // namespace tfm
} // namespace mlir

#endif // TFM_COMPILER_PIPELINES_GPUPIPELINE_H
