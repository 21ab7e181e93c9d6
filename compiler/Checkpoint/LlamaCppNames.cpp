//===- LlamaCppNames.cpp - transformers decoders under llama.cpp's names --===//
//
// The tables of convert_hf_to_gguf.py (and gguf-py's tensor_mapping.py) for
// the architectures examples/llama compiles.
//
//===----------------------------------------------------------------------===//
#include "compiler/Checkpoint/LlamaCppNames.h"

#include <cstdlib>
#include <utility>

using namespace mlir::tfm;

namespace {
bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
} // namespace

std::string mlir::tfm::llamaCppArchitecture(std::string_view modelType) {
  if (modelType == "llama" || modelType == "qwen2" || modelType == "qwen3" ||
      modelType == "phi3")
    return std::string(modelType);
  // Gemma3ForCausalLM's config is Gemma3TextConfig, "gemma3_text";
  // Gemma3ForConditionalGeneration's (4B and up) is "gemma3", with the
  // text model's keys in its text_config.
  if (modelType == "gemma3_text" || modelType == "gemma3")
    return "gemma3";
  return "";
}

std::optional<LlamaCppTensor>
mlir::tfm::llamaCppTensorName(std::string_view arch, std::string_view name) {
  using T = LlamaCppTransform;
  bool gemma = arch == "gemma3";
  // Every Gemma norm weight, as the converter's
  // `name.endswith("norm.weight")`.
  constexpr std::string_view normWeight = "norm.weight";
  bool addOne = gemma && name.size() >= normWeight.size() &&
                name.substr(name.size() - normWeight.size()) == normWeight;
  auto plain = [&](std::string mapped) -> std::optional<LlamaCppTensor> {
    return LlamaCppTensor{std::move(mapped), addOne ? T::AddOne : T::None};
  };
  if (name == "model.embed_tokens.weight")
    return plain("token_embd.weight");
  if (name == "model.norm.weight")
    return plain("output_norm.weight");
  if (name == "lm_head.weight")
    return plain("output.weight");

  constexpr std::string_view layers = "model.layers.";
  if (!startsWith(name, layers))
    return std::nullopt;
  std::string_view rest = name.substr(layers.size());
  size_t dot = rest.find('.');
  if (dot == 0 || dot == std::string_view::npos)
    return std::nullopt;
  std::string_view index = rest.substr(0, dot);
  for (char c : index)
    if (c < '0' || c > '9')
      return std::nullopt;
  std::string_view leaf = rest.substr(dot + 1);
  // The parameter's kind (weight or bias) stays as it is.
  size_t kindDot = leaf.rfind('.');
  if (kindDot == std::string_view::npos)
    return std::nullopt;
  std::string_view module = leaf.substr(0, kindDot);
  std::string_view kind = leaf.substr(kindDot + 1);
  if (kind != "weight" && kind != "bias")
    return std::nullopt;

  static const std::pair<std::string_view, std::string_view> common[] = {
      {"input_layernorm", "attn_norm"},    {"self_attn.q_proj", "attn_q"},
      {"self_attn.k_proj", "attn_k"},      {"self_attn.v_proj", "attn_v"},
      {"self_attn.o_proj", "attn_output"}, {"mlp.gate_proj", "ffn_gate"},
      {"mlp.up_proj", "ffn_up"},           {"mlp.down_proj", "ffn_down"},
  };
  // Gemma 2/3 norm both sides of each sub-layer: their
  // post_attention_layernorm is a post-norm, and the FFN's pre-norm has a
  // name of its own (tensor_mapping.py's ATTN_POST_NORM, FFN_NORM,
  // FFN_POST_NORM).
  // Qwen3 norms each head's queries and keys (as Gemma 3 does) before RoPE;
  // Phi-3 fuses Q, K and V into one projection, and the FFN's gate and up
  // into ffn_up.
  static const std::pair<std::string_view, std::string_view> llama[] = {
      {"post_attention_layernorm", "ffn_norm"},
      {"self_attn.q_norm", "attn_q_norm"},
      {"self_attn.k_norm", "attn_k_norm"},
      {"self_attn.qkv_proj", "attn_qkv"},
      {"mlp.gate_up_proj", "ffn_up"},
  };
  static const std::pair<std::string_view, std::string_view> gemma3[] = {
      {"post_attention_layernorm", "post_attention_norm"},
      {"pre_feedforward_layernorm", "ffn_norm"},
      {"post_feedforward_layernorm", "post_ffw_norm"},
      {"self_attn.q_norm", "attn_q_norm"},
      {"self_attn.k_norm", "attn_k_norm"},
  };
  std::string_view mapped;
  for (const auto &[hf, gguf] : common)
    if (module == hf)
      mapped = gguf;
  if (mapped.empty()) {
    if (gemma) {
      for (const auto &[hf, gguf] : gemma3)
        if (module == hf)
          mapped = gguf;
    } else {
      for (const auto &[hf, gguf] : llama)
        if (module == hf)
          mapped = gguf;
    }
  }
  if (mapped.empty())
    return std::nullopt;
  std::optional<LlamaCppTensor> result =
      plain("blk." + std::string(index) + "." + std::string(mapped) + "." +
            std::string(kind));
  if (arch == "llama" && module == "self_attn.q_proj")
    result->transform = T::PermuteQueryHeads;
  if (arch == "llama" && module == "self_attn.k_proj")
    result->transform = T::PermuteKeyHeads;
  return result;
}

std::vector<std::string> mlir::tfm::hfConfigKeys(std::string_view arch,
                                                 std::string_view suffix) {
  bool gemma = arch == "gemma3";
  // transformers 4 writes rope_theta at the top; 5 moves it into
  // rope_parameters, per layer type for Gemma 3.
  if (suffix == "rope.freq_base")
    return gemma ? std::vector<std::string>{"rope_theta",
                                            "rope_parameters.full_attention."
                                            "rope_theta"}
                 : std::vector<std::string>{"rope_theta",
                                            "rope_parameters.rope_theta"};
  // RoPE scaling: llama.cpp's type ("linear", "yarn", ...) and factor,
  // from rope_scaling (transformers 4) or rope_parameters (5; Gemma 3's
  // global layers only). llama3's low/high frequency factors have no
  // llama.cpp key (its converter writes a rope_freqs tensor instead): tfm
  // names them so.
  if (suffix.substr(0, 13) == "rope.scaling.") {
    std::string_view field = suffix.substr(13);
    std::string hf = field == "type" ? "rope_type"
                     : field == "original_context_length"
                         ? "original_max_position_embeddings"
                         : std::string(field);
    if (field != "type" && field != "factor" &&
        field != "original_context_length" && field != "low_freq_factor" &&
        field != "high_freq_factor")
      return {};
    std::vector<std::string> keys = {gemma ? "rope_parameters.full_attention." +
                                                 hf
                                           : "rope_parameters." + hf,
                                     "rope_scaling." + hf};
    if (field == "type")
      keys.push_back("rope_scaling.type");
    return keys;
  }
  if (suffix == "rope.freq_base_swa" && gemma)
    return {"rope_local_base_freq",
            "rope_parameters.sliding_attention.rope_theta"};
  if (suffix == "attention.sliding_window" && (gemma || arch == "phi3"))
    return {"sliding_window"};
  // Phi-3 states it at the top of config.json.
  if (suffix == "rope.scaling.original_context_length" && arch == "phi3")
    return {"original_max_position_embeddings",
            "rope_parameters.original_max_position_embeddings",
            "rope_scaling.original_max_position_embeddings"};
  // Not a key convert_hf_to_gguf.py writes (llama.cpp derives it from the
  // model's size); stated for a checkpoint that states it.
  if (suffix == "attention.query_pre_attn_scalar" && gemma)
    return {"query_pre_attn_scalar"};
  if (suffix == "attention.sliding_window_pattern" && gemma)
    return {"sliding_window_pattern", "_sliding_window_pattern"};
  if (suffix == "rope.dimension_count" && arch == "llama")
    return {"head_dim"};
  static const std::pair<std::string_view, std::string_view> keys[] = {
      {"block_count", "num_hidden_layers"},
      {"context_length", "max_position_embeddings"},
      {"embedding_length", "hidden_size"},
      {"feed_forward_length", "intermediate_size"},
      {"attention.head_count", "num_attention_heads"},
      {"attention.head_count_kv", "num_key_value_heads"},
      {"attention.layer_norm_rms_epsilon", "rms_norm_eps"},
      {"attention.key_length", "head_dim"},
      {"attention.value_length", "head_dim"},
      {"vocab_size", "vocab_size"},
  };
  for (const auto &[gguf, hf] : keys)
    if (suffix == gguf)
      return {std::string(hf)};
  return {};
}

std::optional<double>
mlir::tfm::llamaCppConverterDefault(std::string_view arch,
                                    std::string_view suffix) {
  if (arch != "gemma3")
    return std::nullopt;
  static const std::pair<std::string_view, double> defaults[] = {
      {"context_length", 131072},
      {"attention.head_count", 8},
      {"attention.head_count_kv", 4},
      {"attention.key_length", 256},
      {"attention.value_length", 256},
      {"attention.layer_norm_rms_epsilon", 1e-6},
      {"rope.freq_base", 1000000.0},
  };
  for (const auto &[key, value] : defaults)
    if (suffix == key)
      return value;
  return std::nullopt;
}

std::string mlir::tfm::withoutLanguageModelPrefix(std::string_view name) {
  constexpr std::string_view prefix = "language_model.";
  size_t at = name.find(prefix);
  if (at == std::string_view::npos)
    return std::string(name);
  return std::string(name.substr(0, at)) +
         std::string(name.substr(at + prefix.size()));
}

std::optional<int64_t>
mlir::tfm::slidingWindowPattern(const std::vector<std::string> &layerTypes) {
  int64_t pattern = 0;
  for (size_t i = 0; i < layerTypes.size(); ++i)
    if (layerTypes[i] == "full_attention") {
      pattern = int64_t(i) + 1;
      break;
    }
  if (pattern == 0)
    return std::nullopt;
  for (size_t i = 0; i < layerTypes.size(); ++i) {
    bool global = (int64_t(i) + 1) % pattern == 0;
    if (layerTypes[i] != (global ? "full_attention" : "sliding_attention"))
      return std::nullopt;
  }
  return pattern;
}
