//===- CpuPipeline.h - tfm's x86-64 pipeline --------------------*- C++ -*-===//
//
// The shared front end (CommonPipelines.h), the weights packed for the
// register-tiled GEMM, then the CPU kernels, tasks and the LLVM dialect.
// The compiler driver and tfm-opt build the same pipelines from these
// functions, so what the lit tests check is what tfm-compile runs.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_PIPELINES_CPUPIPELINE_H
#define TFM_COMPILER_PIPELINES_CPUPIPELINE_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace tfm {

struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<std::string> weights{
      *this, "weights", llvm::cl::desc("The .safetensors file to bind")};
  PassOptions::Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Vector register width of the target (128, 256, 512)"),
      llvm::cl::init(512)};
  PassOptions::Option<int64_t> attentionBlockQ{
      *this, "attention-block-q",
      llvm::cl::desc("Query rows per flash-attention block"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> attentionMicroRows{
      *this, "attention-micro-rows",
      llvm::cl::desc("Query rows per flash-attention micro-kernel"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> attentionKeyVectors{
      *this, "attention-key-vectors",
      llvm::cl::desc("Vectors of keys per flash-attention block"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> attentionValueVectors{
      *this, "attention-value-vectors",
      llvm::cl::desc("Value vectors accumulated at once (0: auto)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> fuseAttention{
      *this, "fuse-attention",
      llvm::cl::desc("Attention as the fused tfm.attention: layers lowered "
                     "to it, hand-written chains fused into it (off: every "
                     "attention decomposed into its chain, for comparison)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> tileAttention{
      *this, "tile-attention",
      llvm::cl::desc("Tile tfm.attention into an scf.forall of tiles of this "
                     "many queries (tfm-tile-attention) before "
                     "bufferization, the tiles run one after the other "
                     "(0: off, the kernel tiles internally; the tiled form "
                     "the GPU maps to blocks, checked on the CPU)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> multiversion{
      *this, "multiversion",
      llvm::cl::desc("Emit the GEMM and attention kernels for SSE, AVX2+FMA "
                     "and AVX-512, chosen at run time (vector-bits is then "
                     "ignored by them)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> weightType{
      *this, "weight-type",
      llvm::cl::desc("Element type linear layers' weights are packed in: "
                     "f32, bf16 (vdpbf16ps kernels) or i8 (per-column "
                     "symmetric, inputs quantized per row; vpdpbusd)"),
      llvm::cl::init("f32")};
  PassOptions::ListOption<std::string> keepF32{
      *this, "keep-f32",
      llvm::cl::desc("Glob patterns of weight names packed in f32 whatever "
                     "weight-type says")};
  PassOptions::Option<bool> targetBF16Dot{
      *this, "target-bf16-dot",
      llvm::cl::desc("Without multiversion: the target has AVX512-BF16 "
                     "(vdpbf16ps, and vcvtneps2bf16 for f32 to bf16 casts)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> targetInt8Dot{
      *this, "target-int8-dot",
      llvm::cl::desc("Without multiversion: the target has AVX512-VNNI"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> packLinear{
      *this, "pack-linear",
      llvm::cl::desc("Lower linear layers with constant weights, and "
                     "matmuls between activations (packed at run time), to "
                     "the register-tiled GEMM (off: linalg loops, for "
                     "comparison)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> tileLinalg{
      *this, "tile-linalg",
      llvm::cl::desc("Tile the remaining linalg ops into threaded, vectorized "
                     "rows (off: serial scalar loops, for comparison)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> planWorkspace{
      *this, "plan-workspace",
      llvm::cl::desc("Place scratch buffers in one allocation per run, "
                     "sharing bytes by lifetime (off: one malloc each)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> remarks{
      *this, "remarks",
      llvm::cl::desc("Report attention layers lowered to tfm.attention and "
                     "fused and refused attention chains as remarks"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> bindWeights{
      *this, "bind-weights",
      llvm::cl::desc("Replace tfm.weight ops with the file's data (off: keep "
                     "them, for looking at the IR without weights)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> externalWeights{
      *this, "external-weights",
      llvm::cl::desc("Leave constant data out of the artifact: a sidecar "
                     "file holds it, bound at load (tfm-externalize-weights)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> weightsFile{
      *this, "weights-file",
      llvm::cl::desc("With external-weights: where to write the sidecar")};
  PassOptions::Option<bool> exportArtifactMetadata{
      *this, "export-artifact-metadata",
      llvm::cl::desc("Define tfm_artifact_metadata() (shared libraries)"),
      llvm::cl::init(false)};
};

/// tfm layers -> tfm primitives (weights bound) -> the constant weights
/// packed for the GEMM micro-kernel -> linalg on tensors.
void buildTfmToLinalgPipeline(OpPassManager &pm,
                              const CPUPipelineOptions &options);

/// linalg on tensors -> bufferized loops -> LLVM dialect with the
/// artifact's entry points.
void buildLinalgToLLVMPipeline(OpPassManager &pm,
                               const CPUPipelineOptions &options);

/// Both of the above: a tfm model to the LLVM dialect for x86-64.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Registers the pipelines above as `tfm-to-linalg`, `tfm-linalg-to-llvm`
/// and `tfm-cpu-pipeline`.
void registerCPUPipelines();

} // namespace tfm
} // namespace mlir

#endif // TFM_COMPILER_PIPELINES_CPUPIPELINE_H
