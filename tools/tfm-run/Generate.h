//===- Generate.h - tfm-run --generate: greedy decoding ---------*- C++ -*-===//
//
// Runs a decoder compiled with a KV cache (docs/generation.md) as a greedy
// generator: the prompt in one run (prefill), then one run per new token
// (decode), with the caches allocated and the offset tracked here.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TFM_RUN_GENERATE_H
#define TFM_TOOLS_TFM_RUN_GENERATE_H

#include "tfm/exec.h"
#include "tfm/runtime.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tfm::run {

struct GenerateOptions {
  /// Tokens to generate after the prompt (1 or more).
  long tokens = 0;
  /// The prompt's ids, .npy of i64 [seq] or [batch, seq]; or, when
  /// `promptIds` is not empty, those ids (one sequence).
  std::string promptPath;
  std::vector<int64_t> promptIds;
  /// Where to write the prompt step's logits (empty: nowhere).
  std::string logitsPath;
  /// Print only the ids and the timing line.
  bool quiet = false;
  /// Called once the model and the prompt are known to fit each other,
  /// before the prefill runs.
  std::function<void()> onStart;
  /// Called with each generated id of sequence 0 as soon as it is chosen
  /// (before the next step runs); may throw std::runtime_error.
  std::function<void(int64_t)> onToken;
  /// Called once after the last token, before the ids line.
  std::function<void()> onFinish;
};

/// Generates with `model` as `options` say and prints, per sequence, the
/// generated ids on one line, then the prefill time and the decode time
/// per token. Returns the process's exit code; reports errors on stderr.
int generate(tfm_model *model, const GenerateOptions &options,
             const tfm_exec *exec);

} // namespace tfm::run

#endif // TFM_TOOLS_TFM_RUN_GENERATE_H
