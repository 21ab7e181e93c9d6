//===- CpuPipeline.cpp - tfm's x86-64 pipeline ----------------------------===//
#include "compiler/Pipelines/CpuPipeline.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Pipelines/CommonPipelines.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
tfm::FrontEndOptions frontEndOptions(const tfm::CPUPipelineOptions &options) {
  tfm::FrontEndOptions frontEnd;
  frontEnd.weights = options.weights;
  frontEnd.bindWeights = options.bindWeights;
  frontEnd.fuseAttention = options.fuseAttention;
  frontEnd.remarks = options.remarks;
  return frontEnd;
}
} // namespace

void tfm::buildTfmToLinalgPipeline(OpPassManager &pm,
                                   const CPUPipelineOptions &options) {
  FrontEndOptions frontEnd = frontEndOptions(options);
  buildFrontEndPipeline(pm, frontEnd);
  // Constant weights are packed for the GEMM micro-kernel now, once: a
  // layout for this target's vector registers, which the GPU never sees.
  if (options.bindWeights && options.packLinear) {
    TfmPackLinearOptions pack;
    pack.vectorBits = options.vectorBits;
    pack.multiversion = options.multiversion;
    pack.weightType = options.weightType;
    pack.keepF32.assign(options.keepF32.begin(), options.keepF32.end());
    pack.remarks = options.remarks;
    pm.addNestedPass<func::FuncOp>(createTfmPackLinear(pack));
  }
  buildPrimitivesToLinalgPipeline(pm, frontEnd);
}

void tfm::buildLinalgToLLVMPipeline(OpPassManager &pm,
                                    const CPUPipelineOptions &options) {
  // Matmuls between activations (what attention fusion left) join the
  // packed GEMM, before elementwise fusion can merge into them.
  if (options.packLinear)
    pm.addNestedPass<func::FuncOp>(createTfmPackMatmul(TfmPackMatmulOptions{
        options.vectorBits, options.multiversion, /*minRows=*/4}));
  if (options.tileAttention > 0)
    pm.addNestedPass<func::FuncOp>(createTfmTileAttention(
        TfmTileAttentionOptions{/*batchTile=*/1, options.tileAttention,
                                /*valueTile=*/0}));
  buildBufferizationPipeline(pm);
  // Each tile's kernel spreads its work over the threads itself.
  if (options.tileAttention > 0)
    pm.addPass(createForallToForLoopPass());
  // Scratch in one allocation, buffers sharing bytes by lifetime, in the
  // caller's workspace when it gives one.
  if (options.planWorkspace) {
    pm.addPass(tfm::createTfmPlanWorkspace());
    pm.addPass(createCanonicalizerPass());
  }

  tfm::ConvertAttentionToCPUOptions attention;
  attention.vectorBits = options.vectorBits;
  attention.blockQ = options.attentionBlockQ;
  attention.microRows = options.attentionMicroRows;
  attention.keyVectors = options.attentionKeyVectors;
  attention.valueVectors = options.attentionValueVectors;
  attention.multiversion = options.multiversion;
  attention.bf16 = options.weightType == "bf16";
  attention.targetBF16Dot = options.targetBF16Dot;
  // Module-level: it outlines task functions next to the model.
  pm.addPass(tfm::createConvertAttentionToCPU(attention));
  tfm::ConvertLinearToCPUOptions linear;
  linear.vectorBits = options.vectorBits;
  linear.multiversion = options.multiversion;
  linear.targetBF16Dot = options.targetBF16Dot;
  linear.targetInt8Dot = options.targetInt8Dot;
  pm.addPass(tfm::createConvertLinearToCPU(linear));
  pm.addNestedPass<func::FuncOp>(tfm::createTfmLowerStridedCopies());
  // Everything else: rows over the caller's threads, vectors inside a row.
  if (options.tileLinalg) {
    pm.addNestedPass<func::FuncOp>(tfm::createTfmTileLinalg());
    pm.addPass(tfm::createConvertForallToTasks(tfm::ConvertForallToTasksOptions{
        options.vectorBits, options.multiversion}));
  }
  // Every layer's kernels of the same shapes become one function.
  pm.addPass(tfm::createTfmMergeIdenticalTasks());
  // Cache appends copy only the new rows, one subview per sequence: a few
  // rows each, serial (after tiling, which would make each a task).
  pm.addNestedPass<func::FuncOp>(tfm::createTfmLowerCacheAppend());
  pm.addNestedPass<func::FuncOp>(tfm::createTfmLowerStridedCopies());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Weights as byte strings: one LLVM constant each, copied in one go.
  // External weights never become LLVM constants.
  if (!options.externalWeights)
    pm.addPass(tfm::createTfmWeightsAsBytes());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (math.erf of the exact GELU) calls libm.
  pm.addPass(createConvertMathToLibmPass());
  // bf16 and f16 conversions as integer operations (round to nearest
  // even) where the target has no instruction for them: the object needs
  // no compiler-rt or libgcc helper. A portable artifact's multiversioned
  // functions say in their target_features whether theirs has one.
  pm.addPass(tfm::createTfmExpandHalfCasts(
      tfm::TfmExpandHalfCastsOptions{options.targetBF16Dot}));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(tfm::createTfmDispatchTasks());
  pm.addPass(tfm::createTfmEmitEntryPoints(
      tfm::TfmEmitEntryPointsOptions{options.exportArtifactMetadata}));
  if (options.externalWeights)
    pm.addPass(tfm::createTfmExternalizeWeights(
        tfm::TfmExternalizeWeightsOptions{options.weightsFile}));
}

void tfm::buildCPUPipeline(OpPassManager &pm,
                           const CPUPipelineOptions &options) {
  buildTfmToLinalgPipeline(pm, options);
  buildLinalgToLLVMPipeline(pm, options);
}

void tfm::registerCPUPipelines() {
  PassPipelineRegistration<CPUPipelineOptions>(
      "tfm-to-linalg", "tfm layers to linalg on tensors",
      buildTfmToLinalgPipeline);
  PassPipelineRegistration<CPUPipelineOptions>(
      "tfm-linalg-to-llvm",
      "linalg on tensors to the LLVM dialect with the artifact entry points",
      buildLinalgToLLVMPipeline);
  PassPipelineRegistration<CPUPipelineOptions>(
      "tfm-cpu-pipeline", "a tfm model to the LLVM dialect for x86-64",
      buildCPUPipeline);
}
