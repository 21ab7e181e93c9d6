//===- Pipelines.cpp - Every tfm pass and pipeline, registered ------------===//
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Pipelines/CpuPipeline.h"
#include "compiler/Pipelines/GpuPipeline.h"
#include "compiler/Transforms/Passes.h"

void mlir::tfm::registerAllPassesAndPipelines() {
  registerTfmPasses();
  registerTfmConversionPasses();
  registerCPUPipelines();
  registerGPUPipelines();
}
