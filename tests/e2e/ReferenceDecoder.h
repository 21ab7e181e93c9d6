//===- ReferenceDecoder.h - float64 reference for decoder layers -*- C++
//-*-===//
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
};
/// x [B, H, S, D] rotated at positions[b][s].
Array rope(const Array &x, const std::vector<std::vector<int64_t>> &positions,
           const Rope &options);

} // namespace ref

#endif // TFM_TESTS_E2E_REFERENCEDECODER_H
