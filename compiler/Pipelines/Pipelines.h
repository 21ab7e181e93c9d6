//===- Pipelines.h - tfm's named pass pipelines -----------------*- C++ -*-===//
//
// The compiler driver and tfm-opt build the same pipelines from these
// functions, so what the lit tests check is what tfm-compile runs.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_PIPELINES_PIPELINES_H
#define TFM_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace tfm {

struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<std::string> weights{
      *this, "weights", llvm::cl::desc("The .safetensors file to bind")};
  PassOptions::Option<bool> exportArtifactMetadata{
      *this, "export-artifact-metadata",
      llvm::cl::desc("Define tfm_artifact_metadata() (shared libraries)"),
      llvm::cl::init(false)};
};

/// tfm layers -> tfm primitives -> linalg on tensors (weights bound).
void buildTfmToLinalgPipeline(OpPassManager &pm,
                              const CPUPipelineOptions &options);

/// linalg on tensors -> bufferized loops -> LLVM dialect with the
/// artifact's entry points.
void buildLinalgToLLVMPipeline(OpPassManager &pm,
                               const CPUPipelineOptions &options);

/// Both of the above: a tfm model to the LLVM dialect for x86-64.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Registers tfm's passes and the pipelines above under the names
/// `tfm-to-linalg`, `tfm-linalg-to-llvm` and `tfm-cpu-pipeline`.
void registerAllPassesAndPipelines();

} // namespace tfm
} // namespace mlir

#endif // TFM_COMPILER_PIPELINES_PIPELINES_H
