//===- CommonPipelines.h - Stages every target runs -------------*- C++ -*-===//
//
// The target-independent stages: a tfm model to tfm primitives with its
// weights bound, those to linalg on tensors with attention chains fused,
// and bufferization. The CPU and GPU pipelines (CpuPipeline.h,
// GpuPipeline.h) put their own steps between and after them; neither
// includes the other.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_PIPELINES_COMMONPIPELINES_H
#define TFM_COMPILER_PIPELINES_COMMONPIPELINES_H

#include <string>

namespace mlir {
class OpPassManager;
namespace tfm {

/// What the shared front end needs of a target's options.
struct FrontEndOptions {
  /// The .safetensors or GGUF file to bind.
  std::string weights;
  /// Off: tfm.weight ops stay, for looking at the IR without weights.
  bool bindWeights = true;
  /// Attention as the fused tfm.attention (off: every attention decomposed
  /// into its chain).
  bool fuseAttention = true;
  /// Remarks on lowered, fused and refused attention.
  bool remarks = false;
};

/// tfm layers -> tfm primitives (low-precision ops widened, layers lowered,
/// attention as tfm.attention), weights bound to the file's data.
void buildFrontEndPipeline(OpPassManager &pm, const FrontEndOptions &options);

/// tfm primitives -> linalg on tensors; hand-written attention chains, as
/// linalg spells them, fused into tfm.attention.
void buildPrimitivesToLinalgPipeline(OpPassManager &pm,
                                     const FrontEndOptions &options);

/// linalg on tensors -> buffers: softmax decomposed, elementwise chains
/// fused, one-shot bufferization, results as out-parameters, deallocation.
void buildBufferizationPipeline(OpPassManager &pm);

} // namespace tfm
} // namespace mlir

#endif // TFM_COMPILER_PIPELINES_COMMONPIPELINES_H
