//===- ReferenceHuggingFace.h - float64 BertModel and GPT2LMHeadModel -*- C++
//-*-===//
//
// Hugging Face's BertModel and GPT2LMHeadModel forward passes in float64,
// written from transformers' modeling_bert.py / modeling_gpt2.py over the
// reference layers, reading a checkpoint's model.safetensors by its own
// names. Shares no code with the compiler or the example .tfm files.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TESTS_E2E_REFERENCEHUGGINGFACE_H
#define TFM_TESTS_E2E_REFERENCEHUGGINGFACE_H

#include "Reference.h"

#include <map>
#include <string>

namespace ref {

/// Every F32 tensor of a .safetensors file, by name; throws on failure.
std::map<std::string, Array> readCheckpoint(const std::string &path);

/// The sizes the forward passes need from config.json.
struct TransformerConfig {
  int64_t layers = 0, heads = 0;
  double eps = 0;
};

struct BertOutputs {
  Array lastHiddenState; ///< [B, S, H]
  Array poolerOutput;    ///< [B, H]
  /// Mean of the last hidden state over attended tokens, L2-normalised.
  Array sentenceEmbedding; ///< [B, H]
};

/// BertModel(input_ids, attention_mask, token_type_ids) (exact GELU);
/// `ids`, `types`, `mask` are [B, S] row-major, mask 1 = attend. Every row
/// must attend to at least one token.
BertOutputs bertModel(const std::map<std::string, Array> &w,
                      const TransformerConfig &config, int64_t batch,
                      int64_t seq, const std::vector<int64_t> &ids,
                      const std::vector<int64_t> &types,
                      const std::vector<int64_t> &mask);

/// GPT2LMHeadModel(input_ids).logits, [B, S, V] (tanh GELU, LM head tied to
/// transformer.wte.weight).
Array gpt2LMHeadModel(const std::map<std::string, Array> &w,
                      const TransformerConfig &config, int64_t batch,
                      int64_t seq, const std::vector<int64_t> &ids);

} // namespace ref

#endif // TFM_TESTS_E2E_REFERENCEHUGGINGFACE_H
