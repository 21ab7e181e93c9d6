//===- LlamaCppNames.h - transformers decoders under llama.cpp's names -*- C++
//-*-===//
//
// A transformers checkpoint of a decoder architecture llama.cpp knows also
// answers to llama.cpp's tensor names and metadata keys, mapped as its
// convert_hf_to_gguf.py maps them, so that one .tfm file (examples/llama)
// is written once against llama.cpp's vocabulary and compiles both formats.
// These are the tables; Checkpoint applies them.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CHECKPOINT_LLAMACPPNAMES_H
#define TFM_COMPILER_CHECKPOINT_LLAMACPPNAMES_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlir::tfm {

/// llama.cpp's architecture ("llama", "qwen2", "qwen3", "gemma3") for a
/// config.json's `model_type`, or empty for one it does not map.
std::string llamaCppArchitecture(std::string_view modelType);

/// What the converter does to a tensor's values besides renaming it.
enum class LlamaCppTransform {
  None,
  /// `llama` files: Q and K rows reordered within each head so that
  /// rotating adjacent pairs computes transformers' rotate_half
  /// (LlamaModel.permute), by the query or the K/V head count.
  PermuteQueryHeads,
  PermuteKeyHeads,
  /// Gemma's RMSNorm multiplies by (1 + w): the file stores w + 1.
  AddOne,
};

struct LlamaCppTensor {
  std::string name;
  LlamaCppTransform transform = LlamaCppTransform::None;
};

/// The llama.cpp name of transformers tensor `name` in architecture
/// `arch` ("model.layers.3.self_attn.q_proj.weight" ->
/// "blk.3.attn_q.weight"), or nullopt for a tensor it does not map.
std::optional<LlamaCppTensor> llamaCppTensorName(std::string_view arch,
                                                 std::string_view name);

/// The config.json keys, in order of preference, that hold llama.cpp's
/// metadata key `arch.suffix` ("block_count" <- "num_hidden_layers"); a
/// dotted key reads into an object (transformers 5's
/// "rope_parameters.rope_theta"). Empty for a key the converter does not
/// write for `arch`.
std::vector<std::string> hfConfigKeys(std::string_view arch,
                                      std::string_view suffix);

/// The value convert_hf_to_gguf.py writes for `arch.suffix` when the
/// config.json leaves the key out (Gemma 3's multimodal configs state
/// little more than the sizes: Gemma3Model's `hparams.get(key, default)`),
/// or nullopt where it writes nothing.
std::optional<double> llamaCppConverterDefault(std::string_view arch,
                                               std::string_view suffix);

/// A transformers tensor name without the multimodal wrapper's
/// "language_model." (Gemma3ForConditionalGeneration's
/// "language_model.model.layers.0..." as published,
/// "model.language_model.layers.0..." as transformers 5 saves it), as the
/// converter's filter_tensors drops it.
std::string withoutLanguageModelPrefix(std::string_view name);

/// Gemma 3's sliding-window layer pattern (every P-th layer global) from a
/// config.json's `layer_types` (transformers 5): nullopt when the list is
/// not that periodic pattern.
std::optional<int64_t>
slidingWindowPattern(const std::vector<std::string> &layerTypes);

} // namespace mlir::tfm

#endif // TFM_COMPILER_CHECKPOINT_LLAMACPPNAMES_H
