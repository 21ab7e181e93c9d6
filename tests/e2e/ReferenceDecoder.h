//===- ReferenceDecoder.h - float64 decoder layers -------------*- C++ -*-===//
//
// RMSNorm, SiLU and rotary position embeddings written in float64 from
// transformers' Llama code (LlamaRMSNorm, ACT2FN["silu"], rotate_half and
// apply_rotary_pos_emb, the rope_scaling recipes) and from llama.cpp's
// adjacent-pair form, sharing no code with the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TESTS_E2E_REFERENCEDECODER_H
#define TFM_TESTS_E2E_REFERENCEDECODER_H

#include "Reference.h"

#include <functional>
#include <string>

namespace ref {

Array sigmoid(const Array &x);
Array silu(const Array &x);
/// x / sqrt(mean(x^2, -1) + eps) * (offset + weight) over the last dim.
Array rmsNorm(const Array &x, const Array *weight, double eps,
              double offset = 0);

struct Rope {
  double theta = 10000;
  int64_t rotaryDims = 0; ///< 0: the whole head
  bool pairs = false;     ///< llama.cpp's (2i, 2i+1) instead of (i, i+d/2)
  std::string scaling = "none";
  double factor = 1, lowFreqFactor = 1, highFreqFactor = 4;
  int64_t originalMaxPositions = 8192;
  /// llama.cpp's rope_freqs: each inverse frequency divided by its factor.
  std::vector<double> freqFactors = {};
};
/// x [B, H, S, D] rotated at positions[b][s].
Array rope(const Array &x, const std::vector<std::vector<int64_t>> &positions,
           const Rope &options);

/// A Llama-family decoder's sizes.
struct LlamaConfig {
  int64_t layers, hidden, heads, kvHeads, headDim, vocab;
  double eps = 1e-5;
  Rope rope;
};
/// Which weight of a Llama decoder (per layer unless noted).
enum class LlamaWeight {
  Embedding, ///< [vocab, hidden], model-wide
  AttentionNorm,
  Query, ///< [heads * headDim, hidden]
  Key,   ///< [kvHeads * headDim, hidden]
  Value,
  Output, ///< [hidden, heads * headDim]
  FeedForwardNorm,
  Gate, ///< [ffn, hidden]
  Up,
  Down,      ///< [hidden, ffn]
  FinalNorm, ///< model-wide
  LmHead,    ///< [vocab, hidden], model-wide
};
/// LlamaForCausalLM's logits [S][vocab] of one sequence `ids`: RMSNorm,
/// rotary embeddings, grouped-query causal attention (query head h reads
/// K/V head h / (heads / kvHeads)), a SwiGLU feed-forward. `weight(which,
/// layer)` gives the weights (layer is -1 for the model-wide ones).
std::vector<std::vector<double>>
llamaLogits(const LlamaConfig &config,
            const std::function<Array(LlamaWeight, int)> &weight,
            const std::vector<int64_t> &ids);

} // namespace ref

#endif // TFM_TESTS_E2E_REFERENCEDECODER_H
