//===- LlamaTests.cpp - A Llama-family decoder over a KV cache ------------===//
//
// A two-layer decoder written as transformers' LlamaForCausalLM computes
// (RMSNorm, rotary embeddings, grouped-query attention with 4 query heads
// sharing 2 K/V heads, a SwiGLU feed-forward, an untied LM head), under
// its checkpoint's names, run as prefill then decode steps over K/V caches
// that hold only the K/V heads; every step's logits against a float64
// forward pass over the whole sequence so far.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"
#include "Reference.h"
#include "ReferenceDecoder.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace e2e;
using ref::Array;

namespace {
constexpr int64_t kLayers = 2, kHidden = 32, kHeads = 4, kKvHeads = 2,
                  kHeadDim = 8, kFfn = 48, kVocab = 29, kCapacity = 24;
constexpr double kEps = 1e-5, kTheta = 10000;

std::string llamaSource() {
  return R"(
model llama
input input_ids: i64[batch, seq]
input past: i64[batch]
cache k_cache: f32[2, batch, 2, 24, 8]
cache v_cache: f32[2, batch, 2, 24, 8]

def heads(x, n):
    return permute(reshape(x, [batch, seq, n, 8]), [0, 2, 1, 3])
end
def block(x, p, kc, vc, past, pos):
    h = rms_norm(x, weight = p + ".input_layernorm.weight", eps = 1e-5)
    q = rope(heads(linear(h, weight = p + ".self_attn.q_proj.weight"), 4), pos)
    k = rope(heads(linear(h, weight = p + ".self_attn.k_proj.weight"), 2), pos)
    v = heads(linear(h, weight = p + ".self_attn.v_proj.weight"), 2)
    # Query heads 2g and 2g + 1 read K/V head g.
    qg = reshape(q, [batch, 2, 2, seq, 8])
    kg = unsqueeze(cache_append(kc, k, past), 2)
    vg = unsqueeze(cache_append(vc, v, past), 2)
    o = sdpa(qg, kg, vg, is_causal = true, query_offset = past)
    o = reshape(permute(reshape(o, [batch, 4, seq, 8]), [0, 2, 1, 3]), [batch, seq, 32])
    x = x + linear(o, weight = p + ".self_attn.o_proj.weight")
    h = rms_norm(x, weight = p + ".post_attention_layernorm.weight", eps = 1e-5)
    g = silu(linear(h, weight = p + ".mlp.gate_proj.weight")) * linear(h, weight = p + ".mlp.up_proj.weight")
    return x + linear(g, weight = p + ".mlp.down_proj.weight")
end

pos = reshape(past, [batch, 1]) + arange(seq)
x = embedding(input_ids, weight = "model.embed_tokens.weight")
for i in 0..2:
    x = block(x, "model.layers.{i}", k_cache[i], v_cache[i], past, pos)
end
logits = linear(rms_norm(x, weight = "model.norm.weight", eps = 1e-5), weight = "lm_head.weight")
output logits
)";
}

Weights llamaWeights() {
  Random rng(7001);
  Weights w;
  w["model.embed_tokens.weight"] = rng.weight({kVocab, kHidden});
  w["model.norm.weight"] = rng.weight({kHidden}, 0.5f, 1.5f);
  w["lm_head.weight"] = rng.weight({kVocab, kHidden}, -0.3f, 0.3f);
  for (int i = 0; i < kLayers; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    w[p + "input_layernorm.weight"] = rng.weight({kHidden}, 0.5f, 1.5f);
    w[p + "post_attention_layernorm.weight"] =
        rng.weight({kHidden}, 0.5f, 1.5f);
    w[p + "self_attn.q_proj.weight"] =
        rng.weight({kHeads * kHeadDim, kHidden}, -0.3f, 0.3f);
    w[p + "self_attn.k_proj.weight"] =
        rng.weight({kKvHeads * kHeadDim, kHidden}, -0.3f, 0.3f);
    w[p + "self_attn.v_proj.weight"] =
        rng.weight({kKvHeads * kHeadDim, kHidden}, -0.3f, 0.3f);
    w[p + "self_attn.o_proj.weight"] =
        rng.weight({kHidden, kHeads * kHeadDim}, -0.3f, 0.3f);
    w[p + "mlp.gate_proj.weight"] = rng.weight({kFfn, kHidden}, -0.3f, 0.3f);
    w[p + "mlp.up_proj.weight"] = rng.weight({kFfn, kHidden}, -0.3f, 0.3f);
    w[p + "mlp.down_proj.weight"] = rng.weight({kHidden, kFfn}, -0.2f, 0.2f);
  }
  return w;
}

/// LlamaForCausalLM's logits [S, vocab] of one sequence, in float64.
std::vector<std::vector<double>>
referenceLogits(const Weights &w, const std::vector<int64_t> &ids) {
  ref::LlamaConfig config{kLayers,  kHidden, kHeads, kKvHeads,
                          kHeadDim, kVocab,  kEps,   {}};
  config.rope.theta = kTheta;
  auto weight = [&](ref::LlamaWeight which, int layer) {
    using W = ref::LlamaWeight;
    std::string p = "model.layers." + std::to_string(layer) + ".";
    const char *name = nullptr;
    switch (which) {
    case W::Embedding:
      return ref::fromWeight(w.at("model.embed_tokens.weight"));
    case W::FinalNorm:
      return ref::fromWeight(w.at("model.norm.weight"));
    case W::LmHead:
      return ref::fromWeight(w.at("lm_head.weight"));
    case W::AttentionNorm:
      name = "input_layernorm.weight";
      break;
    case W::Query:
      name = "self_attn.q_proj.weight";
      break;
    case W::Key:
      name = "self_attn.k_proj.weight";
      break;
    case W::Value:
      name = "self_attn.v_proj.weight";
      break;
    case W::Output:
      name = "self_attn.o_proj.weight";
      break;
    case W::FeedForwardNorm:
      name = "post_attention_layernorm.weight";
      break;
    case W::Gate:
      name = "mlp.gate_proj.weight";
      break;
    case W::Up:
      name = "mlp.up_proj.weight";
      break;
    case W::Down:
      name = "mlp.down_proj.weight";
      break;
    }
    return ref::fromWeight(w.at(p + name));
  };
  return ref::llamaLogits(config, weight, ids);
}
} // namespace

TEST_CASE("a Llama-family decoder with grouped-query attention: prefill and "
          "decode steps over the cache match float64",
          "[kv]") {
  Weights w = llamaWeights();
  std::shared_ptr<Model> model = Model::build(llamaSource(), w);
  Random rng(7002);
  std::vector<int64_t> tokens = rng.ids(6, 0, kVocab - 1);
  std::vector<int64_t> cacheShape = {kLayers, 1, kKvHeads, kCapacity, kHeadDim};
  // NaN in every unwritten row: attention reading one would show.
  std::vector<float> nan(size_t(kLayers * kKvHeads * kCapacity * kHeadDim),
                         std::nanf(""));
  std::vector<HostTensor> inputs = {
      HostTensor::i64({1, 6}, tokens), HostTensor::i64({1}, {0}),
      HostTensor::f32(cacheShape, nan), HostTensor::f32(cacheShape, nan)};
  RunResult r = model->runOk(inputs);
  std::vector<std::vector<double>> want = referenceLogits(w, tokens);
  std::vector<double> got = r["logits"].toDoubles();
  for (int64_t t = 0; t < 6; ++t) {
    INFO("prefill position " << t);
    Comparison c = allClose(std::vector<double>(got.begin() + t * kVocab,
                                                got.begin() + (t + 1) * kVocab),
                            want[size_t(t)], 1e-4, 1e-4);
    INFO(c.message);
    CHECK(c.ok);
  }
  // Greedy decode steps: one token each, at past = tokens so far.
  for (int step = 0; step < 5; ++step) {
    const std::vector<double> &last = want.back();
    int64_t next =
        int64_t(std::max_element(last.begin(), last.end()) - last.begin());
    inputs[0] = HostTensor::i64({1, 1}, {next});
    inputs[1] = HostTensor::i64({1}, {int64_t(tokens.size())});
    tokens.push_back(next);
    r = model->runOk(inputs);
    want = referenceLogits(w, tokens);
    INFO("decode step " << step << " at position " << tokens.size() - 1);
    Comparison c = allClose(r["logits"].toDoubles(), want.back(), 1e-4, 1e-4);
    INFO(c.message);
    CHECK(c.ok);
  }
}
