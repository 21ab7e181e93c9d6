//===- HuggingFaceTests.cpp - BERT and GPT-2 checkpoints vs transformers --===//
//
// examples/bert/bert.tfm and examples/gpt2/gpt2.tfm compiled against the
// unmodified model.safetensors of tests/reference/hf (small random
// BertModel and GPT2LMHeadModel saved by transformers' save_pretrained),
// with attention fusion on and off, and compared with what transformers
// computed (the fixtures' .npy files). The same models also run at other
// batch and sequence sizes against a float64 forward pass written from
// transformers' definitions (ReferenceHuggingFace.cpp), which is itself
// checked against the fixtures first.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"
#include "Reference.h"
#include "ReferenceHuggingFace.h"
#include "ReferenceMath.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

using namespace e2e;
using json = nlohmann::json;

namespace {
std::string fixtureDir(const std::string &family) {
  return sourceDir() + "/tests/reference/hf/" + family;
}

HostTensor fixture(const std::string &family, const std::string &name) {
  return HostTensor::readNpy(fixtureDir(family) + "/" + name + ".npy");
}

std::vector<int64_t> ids(const HostTensor &t) {
  std::vector<int64_t> out;
  for (double v : t.toDoubles())
    out.push_back(int64_t(v));
  return out;
}

/// The layers, heads and layer-norm eps of the fixture's config.json, under
/// each family's own key names.
ref::TransformerConfig readConfig(const std::string &family) {
  std::ifstream in(fixtureDir(family) + "/config.json");
  REQUIRE(in.good());
  json config = json::parse(in);
  ref::TransformerConfig c;
  if (family == "bert") {
    c.layers = config.at("num_hidden_layers");
    c.heads = config.at("num_attention_heads");
    c.eps = config.at("layer_norm_eps");
  } else {
    c.layers = config.at("n_layer");
    c.heads = config.at("n_head");
    c.eps = config.at("layer_norm_epsilon");
  }
  return c;
}

const std::map<std::string, ref::Array> &checkpoint(const std::string &family) {
  static std::map<std::string, std::map<std::string, ref::Array>> cache;
  auto it = cache.find(family);
  if (it == cache.end())
    it = cache
             .emplace(family, ref::readCheckpoint(fixtureDir(family) +
                                                  "/model.safetensors"))
             .first;
  return it->second;
}

/// The example compiled against the fixture's checkpoint, once per test run
/// and fusion setting. With fusion on, every attention chain must fuse.
std::shared_ptr<Model> example(const std::string &family, bool fuse) {
  static std::map<std::pair<std::string, bool>, std::shared_ptr<Model>> cache;
  std::shared_ptr<Model> &model = cache[{family, fuse}];
  if (!model) {
    BuildOptions options;
    options.fuseAttention = fuse;
    options.remarks = fuse;
    model = Model::buildFiles(
        sourceDir() + "/examples/" + family + "/" + family + ".tfm",
        fixtureDir(family) + "/model.safetensors", options);
    if (fuse) {
      const std::string &remarks = model->diagnostics();
      // Each layer's attention in the fused kernel: a hand-written chain
      // fused, or an sdpa lowered to it.
      size_t fused = 0;
      for (const char *remark : {"remark: fused attention chain",
                                 "remark: lowered to tfm.attention"})
        for (size_t at = remarks.find(remark); at != std::string::npos;
             at = remarks.find(remark, at + 1))
          ++fused;
      INFO(remarks);
      CHECK(fused == size_t(readConfig(family).layers));
      CHECK(remarks.find("attention not fused") == std::string::npos);
    }
  }
  return model;
}

void checkClose(const HostTensor &got, const HostTensor &expected, double rtol,
                double atol, const std::string &what) {
  Comparison c =
      allClose(got, expected.shape, expected.toDoubles(), rtol, atol);
  INFO(what << ": " << c.message);
  CHECK(c.ok);
}

void checkClose(const HostTensor &got, const ref::Array &expected, double rtol,
                double atol, const std::string &what) {
  Comparison c = allClose(got, expected.shape, expected.data, rtol, atol);
  INFO(what << " vs float64: " << c.message);
  CHECK(c.ok);
}

/// The smallest cosine similarity between corresponding rows.
double minRowCosine(const std::vector<double> &a, const std::vector<double> &b,
                    int64_t width) {
  double worst = 1;
  for (size_t row = 0; row * size_t(width) < a.size(); ++row) {
    double ab = 0, aa = 0, bb = 0;
    for (int64_t c = 0; c < width; ++c) {
      double x = a[row * size_t(width) + size_t(c)];
      double y = b[row * size_t(width) + size_t(c)];
      ab += x * y, aa += x * x, bb += y * y;
    }
    worst = std::min(worst, ab / std::sqrt(aa * bb));
  }
  return worst;
}

std::string fusionName(bool fuse) { return fuse ? "fused" : "unfused"; }
} // namespace

TEST_CASE("hf: the float64 references reproduce transformers' fixtures",
          "[hf]") {
  // The oracle of the other tests is only as good as this agreement.
  ref::BertOutputs bert = ref::bertModel(
      checkpoint("bert"), readConfig("bert"), 2, 7,
      ids(fixture("bert", "input_ids")), ids(fixture("bert", "token_type_ids")),
      ids(fixture("bert", "attention_mask")));
  HostTensor hidden = fixture("bert", "last_hidden_state");
  CHECK(allClose(hidden.toDoubles(), bert.lastHiddenState.data, 1e-4, 1e-4).ok);
  CHECK(allClose(fixture("bert", "pooler_output").toDoubles(),
                 bert.poolerOutput.data, 1e-4, 1e-4)
            .ok);
  CHECK(allClose(fixture("bert", "sentence_embedding").toDoubles(),
                 bert.sentenceEmbedding.data, 1e-4, 1e-5)
            .ok);
  HostTensor input = fixture("gpt2", "input_ids");
  ref::Array logits =
      ref::gpt2LMHeadModel(checkpoint("gpt2"), readConfig("gpt2"),
                           input.shape[0], input.shape[1], ids(input));
  CHECK(allClose(fixture("gpt2", "logits").toDoubles(), logits.data, 1e-4, 1e-4)
            .ok);
}

TEST_CASE("hf: BertModel checkpoint matches transformers", "[hf]") {
  for (bool fuse : {true, false}) {
    DYNAMIC_SECTION(fusionName(fuse)) {
      std::shared_ptr<Model> model = example("bert", fuse);
      CHECK(model->inputNames() == std::vector<std::string>{"input_ids",
                                                            "token_type_ids",
                                                            "attention_mask"});
      RunResult r = model->runOkNamed(
          {{"input_ids", fixture("bert", "input_ids")},
           {"token_type_ids", fixture("bert", "token_type_ids")},
           {"attention_mask", fixture("bert", "attention_mask")}});
      checkClose(r["last_hidden_state"], fixture("bert", "last_hidden_state"),
                 1e-4, 1e-4, "last_hidden_state");
      checkClose(r["pooler_output"], fixture("bert", "pooler_output"), 1e-4,
                 1e-4, "pooler_output");
      HostTensor sentence = fixture("bert", "sentence_embedding");
      checkClose(r["sentence_embedding"], sentence, 1e-4, 1e-5,
                 "sentence_embedding");
      double cosine = minRowCosine(r["sentence_embedding"].toDoubles(),
                                   sentence.toDoubles(), sentence.shape[1]);
      INFO("smallest cosine similarity " << cosine);
      CHECK(cosine > 0.99999);
    }
  }
}

TEST_CASE("hf: BertModel at other batch and sequence sizes", "[hf]") {
  std::shared_ptr<Model> model = example("bert", true);
  ref::TransformerConfig config = readConfig("bert");

  SECTION("the padded fixture row alone, unpadded, gives the same tokens") {
    // Row 1 attends to its first 4 tokens: run by itself as [1, 4] it must
    // reproduce transformers' outputs for those tokens.
    std::vector<int64_t> rowIds = ids(fixture("bert", "input_ids"));
    std::vector<int64_t> rowTypes = ids(fixture("bert", "token_type_ids"));
    std::vector<int64_t> in(rowIds.begin() + 7, rowIds.begin() + 11);
    std::vector<int64_t> types(rowTypes.begin() + 7, rowTypes.begin() + 11);
    RunResult r = model->runOkNamed(
        {{"input_ids", HostTensor::i64({1, 4}, in)},
         {"token_type_ids", HostTensor::i64({1, 4}, types)},
         {"attention_mask", HostTensor::i64({1, 4}, {1, 1, 1, 1})}});
    ref::Array hidden = ref::fromTensor(fixture("bert", "last_hidden_state"));
    checkClose(r["last_hidden_state"],
               ref::reshape(ref::slice(ref::slice(hidden, 0, 1, 2), 1, 0, 4),
                            {1, 4, 64}),
               1e-4, 1e-4, "row 1 of last_hidden_state");
    ref::Array pooler = ref::fromTensor(fixture("bert", "pooler_output"));
    checkClose(r["pooler_output"], ref::slice(pooler, 0, 1, 2), 1e-4, 1e-4,
               "row 1 of pooler_output");
    ref::Array sentence =
        ref::fromTensor(fixture("bert", "sentence_embedding"));
    checkClose(r["sentence_embedding"], ref::slice(sentence, 0, 1, 2), 1e-4,
               1e-5, "row 1 of sentence_embedding");
  }

  for (auto [batch, seq] :
       {std::pair<int64_t, int64_t>{3, 13}, {1, 1}, {2, 64}}) {
    DYNAMIC_SECTION("random ids and padding, batch " << batch << ", seq "
                                                     << seq) {
      Random rng(uint32_t(batch * 100 + seq));
      std::vector<int64_t> in = rng.ids(batch * seq, 0, 502);
      std::vector<int64_t> types = rng.ids(batch * seq, 0, 1);
      std::vector<int64_t> mask(size_t(batch * seq), 1);
      // Row b attends to its first seq - b * seq / 4 tokens (at least one).
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t s = std::max<int64_t>(seq - b * seq / 4, 1); s < seq; ++s)
          mask[size_t(b * seq + s)] = 0;
      RunResult r = model->runOkNamed(
          {{"input_ids", HostTensor::i64({batch, seq}, in)},
           {"token_type_ids", HostTensor::i64({batch, seq}, types)},
           {"attention_mask", HostTensor::i64({batch, seq}, mask)}});
      ref::BertOutputs want = ref::bertModel(checkpoint("bert"), config, batch,
                                             seq, in, types, mask);
      checkClose(r["last_hidden_state"], want.lastHiddenState, 1e-4, 1e-4,
                 "last_hidden_state");
      checkClose(r["pooler_output"], want.poolerOutput, 1e-4, 1e-4,
                 "pooler_output");
      checkClose(r["sentence_embedding"], want.sentenceEmbedding, 1e-4, 1e-5,
                 "sentence_embedding");
      double cosine = minRowCosine(r["sentence_embedding"].toDoubles(),
                                   want.sentenceEmbedding.data, 64);
      INFO("smallest cosine similarity " << cosine);
      CHECK(cosine > 0.99999);
    }
  }

  SECTION("a sequence longer than max_position_embeddings is an error") {
    std::vector<int64_t> zeros(65, 0), ones(65, 1);
    RunResult r =
        model->runNamed({{"input_ids", HostTensor::i64({1, 65}, zeros)},
                         {"token_type_ids", HostTensor::i64({1, 65}, zeros)},
                         {"attention_mask", HostTensor::i64({1, 65}, ones)}});
    CHECK(r.code == TFM_STATUS_RUNTIME_ERROR);
  }
}

TEST_CASE("hf: GPT2LMHeadModel checkpoint matches transformers", "[hf]") {
  for (bool fuse : {true, false}) {
    DYNAMIC_SECTION(fusionName(fuse)) {
      std::shared_ptr<Model> model = example("gpt2", fuse);
      CHECK(model->inputNames() == std::vector<std::string>{"input_ids"});
      RunResult r =
          model->runOkNamed({{"input_ids", fixture("gpt2", "input_ids")}});
      checkClose(r["logits"], fixture("gpt2", "logits"), 1e-4, 1e-4, "logits");
    }
  }
}

TEST_CASE("hf: GPT2LMHeadModel greedy decoding by recomputation matches "
          "generate",
          "[hf]") {
  // Without a KV cache: each step runs the whole growing sequence (a new
  // sequence length every time) and takes the last position's logits, which
  // must match transformers' KV-cached decode steps and pick its tokens.
  std::shared_ptr<Model> model = example("gpt2", true);
  std::vector<int64_t> tokens = ids(fixture("gpt2", "generate_prompt"));
  std::vector<int64_t> expected = ids(fixture("gpt2", "generate_tokens"));
  HostTensor decode = fixture("gpt2", "decode_logits");
  int64_t steps = decode.shape[0], vocab = decode.shape[1];
  REQUIRE(int64_t(expected.size()) == int64_t(tokens.size()) + steps);
  std::vector<double> want = decode.toDoubles();
  for (int64_t step = 0; step < steps; ++step) {
    int64_t seq = int64_t(tokens.size());
    RunResult r =
        model->runOkNamed({{"input_ids", HostTensor::i64({1, seq}, tokens)}});
    std::vector<double> all = r["logits"].toDoubles();
    std::vector<double> last(all.end() - vocab, all.end());
    std::vector<double> ref(want.begin() + step * vocab,
                            want.begin() + (step + 1) * vocab);
    Comparison c = allClose(last, ref, 1e-4, 1e-4);
    INFO("decode step " << step << " (sequence of " << seq
                        << "): " << c.message);
    CHECK(c.ok);
    tokens.push_back(
        int64_t(std::max_element(last.begin(), last.end()) - last.begin()));
  }
  CHECK(tokens == expected);
}

TEST_CASE("hf: GPT2LMHeadModel at other batch and sequence sizes", "[hf]") {
  std::shared_ptr<Model> model = example("gpt2", true);
  ref::TransformerConfig config = readConfig("gpt2");
  for (auto [batch, seq] :
       {std::pair<int64_t, int64_t>{3, 17}, {1, 1}, {1, 64}}) {
    DYNAMIC_SECTION("random ids, batch " << batch << ", seq " << seq) {
      Random rng(uint32_t(batch * 1000 + seq));
      std::vector<int64_t> in = rng.ids(batch * seq, 0, 502);
      RunResult r =
          model->runOkNamed({{"input_ids", HostTensor::i64({batch, seq}, in)}});
      checkClose(
          r["logits"],
          ref::gpt2LMHeadModel(checkpoint("gpt2"), config, batch, seq, in),
          1e-4, 1e-4, "logits");
    }
  }
  SECTION("a sequence longer than n_positions is an error") {
    std::vector<int64_t> zeros(65, 0);
    RunResult r =
        model->runNamed({{"input_ids", HostTensor::i64({1, 65}, zeros)}});
    CHECK(r.code == TFM_STATUS_RUNTIME_ERROR);
  }
}
