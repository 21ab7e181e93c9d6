//===- Pipelines.h - Every tfm pass and pipeline, registered ----*- C++ -*-===//
//
// For tools that offer them all by name (tfm-opt, tfm-compile's
// --pass-pipeline): the passes and the pipelines of both targets.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_PIPELINES_PIPELINES_H
#define TFM_COMPILER_PIPELINES_PIPELINES_H

namespace mlir::tfm {

/// Registers tfm's passes, the CPU pipelines (CpuPipeline.h) and the GPU
/// pipelines (GpuPipeline.h).
void registerAllPassesAndPipelines();

} // namespace mlir::tfm

#endif // TFM_COMPILER_PIPELINES_PIPELINES_H
