//===- Models.h - The attention model, compiled in-process -----*- C++ -*-===//
#ifndef TFM_BENCH_ATTENTION_MODELS_H
#define TFM_BENCH_ATTENTION_MODELS_H

#include "Bench.h"

#include <string>

namespace bench {

/// The .tfm source of y = softmax([causal_mask](q @ transpose(k) / sqrt(D))) @
/// v for `shape`, with every dim static, or with S as the named dim `seq` when
/// `dynamicSeq`.
std::string attentionSource(const Shape &shape, bool causal, bool dynamicSeq);

/// Whether this build's CompileOptions has `fuseAttention` (without it there
/// is no way to ask for the unfused path).
bool canChooseFusion();

struct CompiledModel {
  bool ok = false;
  std::string libraryPath;
  /// The compiler's diagnostics (first line) when !ok.
  std::string error;
  double seconds = 0;
};

/// Writes the model to `dir` and compiles it with mlir::tfm::compileModel
/// (cpu = "host") to a shared library, with attention fusion on or off.
CompiledModel compileAttention(const std::string &dir, const Shape &shape,
                               bool causal, bool fuse, bool dynamicSeq);

} // namespace bench

#endif // TFM_BENCH_ATTENTION_MODELS_H
