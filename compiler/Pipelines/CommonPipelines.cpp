//===- CommonPipelines.cpp - Stages every target runs ---------------------===//
#include "compiler/Pipelines/CommonPipelines.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tfm::buildFrontEndPipeline(OpPassManager &pm,
                                const FrontEndOptions &options) {
  // bf16 and f16 ops compute in f32 between casts, first: the layers, the
  // packed GEMM and the attention kernels below then see f32 only.
  pm.addNestedPass<func::FuncOp>(createTfmWidenLowPrecision());
  // The attention layers become tfm.attention; the unfused path spells
  // every tfm.attention as its primitive chain instead.
  pm.addNestedPass<func::FuncOp>(createTfmLowerLayers(
      TfmLowerLayersOptions{options.remarks && options.fuseAttention}));
  if (!options.fuseAttention)
    pm.addNestedPass<func::FuncOp>(createTfmDecomposeAttention());
  // Without a weights file the pass explains what is missing.
  if (options.bindWeights)
    pm.addPass(createTfmBindWeights(TfmBindWeightsOptions{options.weights}));
}

void tfm::buildPrimitivesToLinalgPipeline(OpPassManager &pm,
                                          const FrontEndOptions &options) {
  pm.addNestedPass<func::FuncOp>(createConvertTfmToLinalg());
  pm.addPass(createCanonicalizerPass());
  // Hand-written chains, as linalg spells them whatever the source wrote.
  if (options.fuseAttention)
    pm.addNestedPass<func::FuncOp>(
        createTfmFuseAttention(TfmFuseAttentionOptions{options.remarks}));
  pm.addPass(createCSEPass());
}

void tfm::buildBufferizationPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createTfmDecomposeSoftmax());
  // Chains of elementwise generics (and the softmax's pieces) become one
  // pass over memory each, after fusion into tfm.attention has had its look;
  // fewer ops also keep bufferization's analysis near-linear in the model.
  // Never into a consumer that would recompute each element (a GEMM).
  pm.addPass(createTfmFuseElementwise());
  pm.addPass(createCanonicalizerPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Results become caller-provided out-parameters (docs/artifact.md).
  pm.addPass(tfm::createTfmResultsToOutParams());
  // A cache slice written in place is inserted back into the cache as a copy
  // onto a second, identical subview: CSE makes it a self-copy, which the
  // canonicalizer below erases (otherwise every step would copy the cache).
  pm.addPass(createCSEPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createCanonicalizerPass());
}
