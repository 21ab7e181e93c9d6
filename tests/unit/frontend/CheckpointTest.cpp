//===- CheckpointTest.cpp - Sharded and multimodal transformers files -----===//
//
// tests/reference/decoders/gemma3-vlm holds gemma3/'s weights as Gemma 3 4B
// and larger are published: a Gemma3ForConditionalGeneration, sharded, its
// text model under "language_model.model.", its config.json's text_config
// leaving out what Gemma3TextConfig defaults.
//
//===----------------------------------------------------------------------===//
#include "compiler/Checkpoint/Checkpoint.h"
#include "compiler/Checkpoint/LlamaCppNames.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace mlir::tfm;

namespace {
std::string decoders() {
  return std::string(TFM_SOURCE_DIR) + "/tests/reference/decoders/";
}

double number(const Checkpoint &file, const std::string &key) {
  std::string error;
  std::optional<CheckpointConfig> value = file.config(key, error);
  INFO(key << ": " << error);
  REQUIRE(value);
  REQUIRE(value->kind == CheckpointConfig::Kind::Number);
  return value->number;
}
} // namespace

TEST_CASE("the multimodal wrapper's prefix is dropped as the converter does",
          "[checkpoint]") {
  CHECK(withoutLanguageModelPrefix(
            "language_model.model.layers.3.self_attn.q_proj.weight") ==
        "model.layers.3.self_attn.q_proj.weight");
  CHECK(withoutLanguageModelPrefix(
            "model.language_model.layers.3.self_attn.q_proj.weight") ==
        "model.layers.3.self_attn.q_proj.weight");
  CHECK(withoutLanguageModelPrefix("model.embed_tokens.weight") ==
        "model.embed_tokens.weight");
  CHECK(withoutLanguageModelPrefix("vision_tower.vision_model.x") ==
        "vision_tower.vision_model.x");
  std::optional<LlamaCppTensor> mapped = llamaCppTensorName(
      "gemma3",
      withoutLanguageModelPrefix("model.language_model.layers.5.mlp.up_proj."
                                 "weight"));
  REQUIRE(mapped);
  CHECK(mapped->name == "blk.5.ffn_up.weight");
  CHECK(llamaCppArchitecture("gemma3") == "gemma3");
}

TEST_CASE("a sharded Gemma3ForConditionalGeneration checkpoint reads as its "
          "Gemma3ForCausalLM",
          "[checkpoint]") {
  std::string error;
  std::shared_ptr<Checkpoint> text =
      Checkpoint::open(decoders() + "gemma3/model.safetensors", error);
  REQUIRE(text);
  for (std::string path : {decoders() + "gemma3-vlm",
                           decoders() + "gemma3-vlm/"
                                        "model.safetensors.index.json"}) {
    INFO(path);
    std::shared_ptr<Checkpoint> vlm = Checkpoint::open(path, error);
    INFO(error);
    REQUIRE(vlm);
    CHECK(vlm->llamaCppArchitecture() == "gemma3");
    // Stated in text_config.
    CHECK(number(*vlm, "gemma3.attention.head_count") == 4);
    CHECK(number(*vlm, "gemma3.attention.head_count_kv") == 2);
    CHECK(number(*vlm, "gemma3.attention.key_length") == 16);
    CHECK(number(*vlm, "hidden_size") == 32);
    // Left to Gemma3TextConfig's defaults, which the converter writes.
    CHECK(number(*vlm, "gemma3.attention.layer_norm_rms_epsilon") == 1e-6);
    CHECK(number(*vlm, "gemma3.rope.freq_base") == 1e6);
    CHECK(number(*vlm, "gemma3.context_length") == 131072);
    // Every tensor of the text model, under llama.cpp's name, with the
    // bytes of the unsharded file's (Gemma's norms + 1 included).
    for (const char *name :
         {"token_embd.weight", "output_norm.weight", "blk.0.attn_q.weight",
          "blk.2.attn_q_norm.weight", "blk.5.ffn_down.weight",
          "blk.5.post_ffw_norm.weight"}) {
      INFO(name);
      const CheckpointTensor *got = vlm->find(name);
      const CheckpointTensor *want = text->find(name);
      REQUIRE(got);
      REQUIRE(want);
      CHECK(got->shape == want->shape);
      REQUIRE(got->byteSize == want->byteSize);
      CHECK(std::memcmp(got->data, want->data, got->byteSize) == 0);
    }
    // The vision tower keeps its own names; nothing maps it.
    CHECK(vlm->find("vision_tower.post_layernorm.weight"));
  }
}

TEST_CASE("the converter's Gemma 3 defaults are Gemma 3's alone",
          "[checkpoint]") {
  CHECK(llamaCppConverterDefault("gemma3", "attention.head_count") == 8);
  CHECK(llamaCppConverterDefault("gemma3", "attention.head_count_kv") == 4);
  CHECK(llamaCppConverterDefault("gemma3", "attention.key_length") == 256);
  CHECK_FALSE(llamaCppConverterDefault("gemma3", "block_count"));
  CHECK_FALSE(llamaCppConverterDefault("llama", "attention.head_count"));
  CHECK_FALSE(llamaCppConverterDefault("qwen2", "rope.freq_base"));
}
