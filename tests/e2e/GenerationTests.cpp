//===- GenerationTests.cpp - KV-cache prefill and decode vs recomputation -===//
//
// A small random pre-norm decoder (2 layers, 2 heads of 12 features: not a
// multiple of any vector width) compiled with caller-owned key/value caches.
// A prefill then decode steps must give, at every step, the logits of a full
// recomputation of the growing sequence: by a float64 reference written here
// and by the same decoder compiled without a cache (fused and unfused).
// Sequences of one batch sit at different offsets, stale cache rows past a
// sequence's length are never read, and a sequence that would overflow the
// cache returns the status code and leaves its cache untouched.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace e2e;

namespace {
constexpr int64_t kLayers = 2, kHeads = 2, kHeadDim = 12, kHidden = 24,
                  kVocab = 23, kMlp = 40, kCapacity = 16, kPositions = 20;

/// One decoder layer in the language; `cached` appends to the caches and
/// attends over them, else attends over the sequence itself.
std::string layerSource(int i, bool cached) {
  std::string n = std::to_string(i), p = "\"h." + n + ".";
  std::string s;
  s += "a" + n + " = layer_norm(x" + n + ", weight = " + p +
       "ln_1.weight\", bias = " + p + "ln_1.bias\")\n";
  s += "q" + n + ", k" + n + ", v" + n + " = split(a" + n + " @ weight(" + p +
       "c_attn.weight\") + weight(" + p + "c_attn.bias\"), 24)\n";
  for (const char *t : {"q", "k", "v"})
    s += std::string(t) + "h" + n + " = permute(reshape(" + t + n +
         ", [batch, seq, 2, 12]), [0, 2, 1, 3])\n";
  if (cached) {
    s += "kc" + n + " = cache_append(k_cache[" + n + "], kh" + n + ", past)\n";
    s += "vc" + n + " = cache_append(v_cache[" + n + "], vh" + n + ", past)\n";
    s += "o" + n + " = sdpa(qh" + n + ", kc" + n + ", vc" + n +
         ", is_causal = true, query_offset = past)\n";
  } else {
    s += "o" + n + " = sdpa(qh" + n + ", kh" + n + ", vh" + n +
         ", is_causal = true)\n";
  }
  s += "m" + n + " = reshape(permute(o" + n +
       ", [0, 2, 1, 3]), [batch, seq, 24])\n";
  s += "r" + n + " = x" + n + " + m" + n + " @ weight(" + p +
       "c_proj.weight\") + weight(" + p + "c_proj.bias\")\n";
  s += "f" + n + " = gelu(layer_norm(r" + n + ", weight = " + p +
       "ln_2.weight\", bias = " + p + "ln_2.bias\") @ weight(" + p +
       "fc.weight\") + weight(" + p + "fc.bias\"), approximate = \"tanh\")\n";
  s += "x" + std::to_string(i + 1) + " = r" + n + " + f" + n + " @ weight(" +
       p + "proj.weight\") + weight(" + p + "proj.bias\")\n";
  return s;
}

/// The decoder with caches of `capacity` positions: a number, or a name
/// that the caller sizes at run time.
std::string decoderSource(bool cached, const std::string &capacity = "16") {
  std::string s = cached ? "model kv_decoder\n" : "model full_decoder\n";
  s += "input ids: i64[batch, seq]\n";
  if (cached) {
    s += "input past: i64[batch]\n";
    s += "cache k_cache: f32[2, batch, 2, " + capacity + ", 12]\n";
    s += "cache v_cache: f32[2, batch, 2, " + capacity + ", 12]\n";
    s += "pos = reshape(past, [batch, 1]) + arange(seq)\n";
  } else {
    s += "pos = arange(seq)\n";
  }
  s += "x0 = embedding(ids, weight = \"wte\") + embedding(pos, weight = "
       "\"wpe\")\n";
  for (int i = 0; i < kLayers; ++i)
    s += layerSource(i, cached);
  s += "logits = layer_norm(x2, weight = \"ln_f.weight\", bias = "
       "\"ln_f.bias\") @ transpose(weight(\"wte\"), 0, 1)\n";
  s += "output logits\n";
  return s;
}

Weights decoderWeights() {
  Random rng(20261123);
  Weights w;
  w["wte"] = rng.weight({kVocab, kHidden});
  w["wpe"] = rng.weight({kPositions, kHidden}, -0.5f, 0.5f);
  for (int i = 0; i < kLayers; ++i) {
    std::string p = "h." + std::to_string(i) + ".";
    w[p + "ln_1.weight"] = rng.weight({kHidden}, 0.5f, 1.5f);
    w[p + "ln_1.bias"] = rng.weight({kHidden}, -0.2f, 0.2f);
    w[p + "ln_2.weight"] = rng.weight({kHidden}, 0.5f, 1.5f);
    w[p + "ln_2.bias"] = rng.weight({kHidden}, -0.2f, 0.2f);
    // Conv1D weights, [in, out] as GPT-2 stores them.
    w[p + "c_attn.weight"] = rng.weight({kHidden, 3 * kHidden}, -0.4f, 0.4f);
    w[p + "c_attn.bias"] = rng.weight({3 * kHidden}, -0.2f, 0.2f);
    w[p + "c_proj.weight"] = rng.weight({kHidden, kHidden}, -0.3f, 0.3f);
    w[p + "c_proj.bias"] = rng.weight({kHidden}, -0.2f, 0.2f);
    w[p + "fc.weight"] = rng.weight({kHidden, kMlp}, -0.3f, 0.3f);
    w[p + "fc.bias"] = rng.weight({kMlp}, -0.2f, 0.2f);
    w[p + "proj.weight"] = rng.weight({kMlp, kHidden}, -0.3f, 0.3f);
    w[p + "proj.bias"] = rng.weight({kHidden}, -0.2f, 0.2f);
  }
  w["ln_f.weight"] = rng.weight({kHidden}, 0.5f, 1.5f);
  w["ln_f.bias"] = rng.weight({kHidden}, -0.2f, 0.2f);
  return w;
}

//===----------------------------------------------------------------------===//
// float64 reference: the whole sequence, no cache
//===----------------------------------------------------------------------===//

using Matrix = std::vector<std::vector<double>>; // [rows][features]

const std::vector<float> &data(const Weights &w, const std::string &name) {
  return w.at(name).data;
}

Matrix layerNorm(const Matrix &x, const Weights &w, const std::string &p) {
  Matrix y = x;
  for (auto &row : y) {
    double mean = 0, var = 0;
    for (double v : row)
      mean += v;
    mean /= double(row.size());
    for (double v : row)
      var += (v - mean) * (v - mean);
    var /= double(row.size());
    for (size_t j = 0; j < row.size(); ++j)
      row[j] =
          (row[j] - mean) / std::sqrt(var + 1e-5) * data(w, p + ".weight")[j] +
          data(w, p + ".bias")[j];
  }
  return y;
}

/// x [rows, in] @ W [in, out] + b.
Matrix conv1d(const Matrix &x, const Weights &w, const std::string &p) {
  const std::vector<int64_t> &shape = w.at(p + ".weight").shape;
  Matrix y(x.size(), std::vector<double>(size_t(shape[1])));
  for (size_t r = 0; r < x.size(); ++r)
    for (int64_t o = 0; o < shape[1]; ++o) {
      double acc = data(w, p + ".bias")[size_t(o)];
      for (int64_t i = 0; i < shape[0]; ++i)
        acc +=
            x[r][size_t(i)] * data(w, p + ".weight")[size_t(i * shape[1] + o)];
      y[r][size_t(o)] = acc;
    }
  return y;
}

/// Logits [positions, vocab] of one sequence of token ids.
Matrix referenceLogits(const Weights &w, const std::vector<int64_t> &ids) {
  size_t n = ids.size();
  Matrix x(n, std::vector<double>(kHidden));
  for (size_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < kHidden; ++j)
      x[t][size_t(j)] = data(w, "wte")[size_t(ids[t] * kHidden + j)] +
                        data(w, "wpe")[size_t(int64_t(t) * kHidden + j)];
  for (int i = 0; i < kLayers; ++i) {
    std::string p = "h." + std::to_string(i) + ".";
    Matrix qkv = conv1d(layerNorm(x, w, p + "ln_1"), w, p + "c_attn");
    Matrix merged(n, std::vector<double>(kHidden, 0.0));
    for (int64_t h = 0; h < kHeads; ++h)
      for (size_t t = 0; t < n; ++t) {
        std::vector<double> scores(t + 1);
        double max = -INFINITY;
        for (size_t s = 0; s <= t; ++s) {
          double dot = 0;
          for (int64_t d = 0; d < kHeadDim; ++d)
            dot += qkv[t][size_t(h * kHeadDim + d)] *
                   qkv[s][size_t(kHidden + h * kHeadDim + d)];
          scores[s] = dot / std::sqrt(double(kHeadDim));
          max = std::max(max, scores[s]);
        }
        double sum = 0;
        for (double &v : scores)
          sum += (v = std::exp(v - max));
        for (size_t s = 0; s <= t; ++s)
          for (int64_t d = 0; d < kHeadDim; ++d)
            merged[t][size_t(h * kHeadDim + d)] +=
                scores[s] / sum *
                qkv[s][size_t(2 * kHidden + h * kHeadDim + d)];
      }
    Matrix attn = conv1d(merged, w, p + "c_proj");
    for (size_t t = 0; t < n; ++t)
      for (int64_t j = 0; j < kHidden; ++j)
        x[t][size_t(j)] += attn[t][size_t(j)];
    Matrix f = conv1d(layerNorm(x, w, p + "ln_2"), w, p + "fc");
    for (auto &row : f)
      for (double &v : row)
        v = 0.5 * v *
            (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    Matrix m = conv1d(f, w, p + "proj");
    for (size_t t = 0; t < n; ++t)
      for (int64_t j = 0; j < kHidden; ++j)
        x[t][size_t(j)] += m[t][size_t(j)];
  }
  Matrix y = layerNorm(x, w, "ln_f");
  Matrix logits(n, std::vector<double>(kVocab));
  for (size_t t = 0; t < n; ++t)
    for (int64_t v = 0; v < kVocab; ++v) {
      double acc = 0;
      for (int64_t j = 0; j < kHidden; ++j)
        acc += y[t][size_t(j)] * data(w, "wte")[size_t(v * kHidden + j)];
      logits[t][size_t(v)] = acc;
    }
  return logits;
}

//===----------------------------------------------------------------------===//
// Running the cached model
//===----------------------------------------------------------------------===//

/// The cached model's inputs: ids, past, and the two caches, which runs
/// update in place (the runtime passes their memory to the model).
struct Session {
  std::vector<HostTensor> inputs;
  explicit Session(int64_t batch)
      : Session({kLayers, batch, kHeads, kCapacity, kHeadDim}) {}
  explicit Session(std::vector<int64_t> cacheShape) {
    inputs.resize(4);
    // NaN in every unwritten cache row: attention reading one would show.
    std::vector<float> nan(size_t(elementCount(cacheShape)), std::nanf(""));
    inputs[2] = HostTensor::f32(cacheShape, nan);
    inputs[3] = HostTensor::f32(cacheShape, nan);
  }
  RunResult step(const Model &model,
                 const std::vector<std::vector<int64_t>> &ids,
                 const std::vector<int64_t> &past) {
    int64_t batch = int64_t(ids.size()), seq = int64_t(ids[0].size());
    std::vector<int64_t> flat;
    for (const auto &row : ids)
      flat.insert(flat.end(), row.begin(), row.end());
    inputs[0] = HostTensor::i64({batch, seq}, flat);
    inputs[1] = HostTensor::i64({batch}, past);
    return model.run(inputs);
  }
};

/// Row `t` of sequence `b` of logits [batch, seq, vocab].
std::vector<double> logitsRow(const HostTensor &logits, int64_t b, int64_t t) {
  std::vector<double> all = logits.toDoubles();
  int64_t seq = logits.shape[1], vocab = logits.shape[2];
  auto begin = all.begin() + (b * seq + t) * vocab;
  return std::vector<double>(begin, begin + vocab);
}

void checkRow(const std::vector<double> &got, const std::vector<double> &ref,
              const std::string &what) {
  Comparison c = allClose(got, ref, 1e-4, 1e-4);
  INFO(what << ": " << c.message);
  CHECK(c.ok);
}

const std::shared_ptr<Model> &cachedModel() {
  static const std::shared_ptr<Model> model =
      Model::build(decoderSource(true), decoderWeights());
  return model;
}
} // namespace

TEST_CASE("prefill then decode matches recomputing the whole sequence",
          "[kv]") {
  const Weights weights = decoderWeights();
  const Model &model = *cachedModel();
  // S = 1 is a prefill of one token: the decode shape from an empty cache.
  for (int64_t promptLength : {int64_t(5), int64_t(1)}) {
    Random rng(uint32_t(7 + promptLength));
    std::vector<int64_t> tokens = rng.ids(promptLength, 0, kVocab - 1);
    Session session(1);
    RunResult prefill = session.step(model, {tokens}, {0});
    REQUIRE(prefill.ok());
    Matrix ref = referenceLogits(weights, tokens);
    for (int64_t t = 0; t < promptLength; ++t)
      checkRow(logitsRow(prefill["logits"], 0, t), ref[size_t(t)],
               "prefill position " + std::to_string(t));
    // Decode to the cache's capacity, one token at a time.
    while (int64_t(tokens.size()) < kCapacity) {
      int64_t past = int64_t(tokens.size());
      int64_t next = rng.ids(1, 0, kVocab - 1)[0];
      tokens.push_back(next);
      RunResult step = session.step(model, {{next}}, {past});
      REQUIRE(step.ok());
      checkRow(logitsRow(step["logits"], 0, 0),
               referenceLogits(weights, tokens).back(),
               "decode at position " + std::to_string(past));
    }
  }
}

TEST_CASE("decode matches the decoder compiled without a cache, fused and "
          "unfused",
          "[kv]") {
  const Weights weights = decoderWeights();
  Random rng(99);
  std::vector<int64_t> tokens = rng.ids(7, 0, kVocab - 1);
  Session session(1);
  REQUIRE(session.step(*cachedModel(), {tokens}, {0}).ok());
  for (bool fuse : {true, false}) {
    BuildOptions options;
    options.fuseAttention = fuse;
    auto full = Model::build(decoderSource(false), weights, options);
    std::vector<int64_t> sequence = tokens;
    Session copy = session;
    for (int step = 0; step < 4; ++step) {
      int64_t past = int64_t(sequence.size());
      sequence.push_back((3 * step + 5) % kVocab);
      RunResult cached = copy.step(*cachedModel(), {{sequence.back()}}, {past});
      REQUIRE(cached.ok());
      RunResult whole = full->runOk(
          {HostTensor::i64({1, int64_t(sequence.size())}, sequence)});
      checkRow(logitsRow(cached["logits"], 0, 0),
               logitsRow(whole["logits"], 0, past),
               std::string(fuse ? "fused" : "unfused") + " at position " +
                   std::to_string(past));
    }
  }
}

TEST_CASE("sequences of one batch decode at different offsets", "[kv]") {
  const Weights weights = decoderWeights();
  const Model &model = *cachedModel();
  Random rng(3);
  // A prefill of 6 tokens for each of 3 sequences; then each keeps only its
  // first past[b] tokens: the rows after them are stale and must be ignored
  // (and are overwritten by the next tokens).
  std::vector<std::vector<int64_t>> prompts;
  for (int b = 0; b < 3; ++b)
    prompts.push_back(rng.ids(6, 0, kVocab - 1));
  Session session(3);
  REQUIRE(session.step(model, prompts, {0, 0, 0}).ok());
  std::vector<int64_t> past = {2, 4, 6};
  std::vector<std::vector<int64_t>> sequences;
  for (int b = 0; b < 3; ++b)
    sequences.emplace_back(prompts[size_t(b)].begin(),
                           prompts[size_t(b)].begin() + past[size_t(b)]);
  // Two tokens per step, then one: the query offsets differ per sequence
  // within each step.
  for (int64_t seq : {int64_t(2), int64_t(1), int64_t(1)}) {
    std::vector<std::vector<int64_t>> ids;
    for (int b = 0; b < 3; ++b)
      ids.push_back(rng.ids(seq, 0, kVocab - 1));
    RunResult step = session.step(model, ids, past);
    REQUIRE(step.ok());
    for (int b = 0; b < 3; ++b) {
      auto &s = sequences[size_t(b)];
      s.insert(s.end(), ids[size_t(b)].begin(), ids[size_t(b)].end());
      Matrix ref = referenceLogits(weights, s);
      for (int64_t t = 0; t < seq; ++t)
        checkRow(logitsRow(step["logits"], b, t),
                 ref[size_t(past[size_t(b)] + t)],
                 "sequence " + std::to_string(b) + " at position " +
                     std::to_string(past[size_t(b)] + t));
      past[size_t(b)] += seq;
    }
  }
}

TEST_CASE("a cache overflow returns the status code and writes nothing",
          "[kv]") {
  const Model &model = *cachedModel();
  Random rng(5);
  Session session(2);
  REQUIRE(session
              .step(model,
                    {rng.ids(4, 0, kVocab - 1), rng.ids(4, 0, kVocab - 1)},
                    {0, 0})
              .ok());
  const std::vector<unsigned char> kBefore = session.inputs[2].bytes,
                                   vBefore = session.inputs[3].bytes;
  // Sequence 0 would need positions 14..16 of 16; past = -1 is no position.
  for (int64_t badPast : {int64_t(14), int64_t(-1)}) {
    RunResult r = session.step(
        model, {rng.ids(3, 0, kVocab - 1), rng.ids(3, 0, kVocab - 1)},
        {badPast, 4});
    CHECK(r.code == TFM_STATUS_RUNTIME_ERROR);
    INFO(r.message);
    // (At -1 the position embedding's check, earlier in the model, is the
    // one reported.)
    if (badPast == 14)
      CHECK(r.message.find("exceeds its capacity 16") != std::string::npos);
    // Sequence 0's part of each cache (every layer) is as it was.
    int64_t perSequence = kHeads * kCapacity * kHeadDim * 4;
    for (int64_t layer = 0; layer < kLayers; ++layer) {
      size_t at = size_t((layer * 2) * perSequence);
      CHECK(std::memcmp(session.inputs[2].bytes.data() + at,
                        kBefore.data() + at, size_t(perSequence)) == 0);
      CHECK(std::memcmp(session.inputs[3].bytes.data() + at,
                        vBefore.data() + at, size_t(perSequence)) == 0);
    }
  }
}

TEST_CASE("one artifact with a named capacity decodes in caches of two "
          "capacities",
          "[kv]") {
  const Weights weights = decoderWeights();
  auto model = Model::build(decoderSource(true, "capacity"), weights);
  for (int64_t capacity : {int64_t(8), int64_t(19)}) {
    INFO("capacity " << capacity);
    Random rng(uint32_t(40 + capacity));
    std::vector<int64_t> tokens = rng.ids(3, 0, kVocab - 1);
    Session session({kLayers, 1, kHeads, capacity, kHeadDim});
    RunResult prefill = session.step(*model, {tokens}, {0});
    REQUIRE(prefill.ok());
    Matrix ref = referenceLogits(weights, tokens);
    for (int64_t t = 0; t < 3; ++t)
      checkRow(logitsRow(prefill["logits"], 0, t), ref[size_t(t)],
               "prefill position " + std::to_string(t));
    while (int64_t(tokens.size()) < capacity) {
      int64_t past = int64_t(tokens.size());
      tokens.push_back(rng.ids(1, 0, kVocab - 1)[0]);
      RunResult step = session.step(*model, {{tokens.back()}}, {past});
      REQUIRE(step.ok());
      checkRow(logitsRow(step["logits"], 0, 0),
               referenceLogits(weights, tokens).back(),
               "decode at position " + std::to_string(past));
    }
    // Full: the next token is an overflow of this capacity, named as the
    // model names it, and the cache is left as it was.
    const std::vector<unsigned char> before = session.inputs[2].bytes;
    RunResult over = session.step(*model, {{1}}, {capacity});
    CHECK(over.code == TFM_STATUS_RUNTIME_ERROR);
    INFO(over.message);
    CHECK(over.message.find("exceeds its capacity 'capacity'") !=
          std::string::npos);
    CHECK(session.inputs[2].bytes == before);
  }
}

TEST_CASE("caches that overlap each other or an input are refused, nothing "
          "written",
          "[kv]") {
  const Model &model = *cachedModel();
  Session session(1);
  session.inputs[0] = HostTensor::i64({1, 3}, {1, 2, 3});
  session.inputs[1] = HostTensor::i64({1}, {0});
  const std::vector<unsigned char> before = session.inputs[2].bytes;
  std::vector<tfm_tensor> inputs;
  for (const HostTensor &t : session.inputs)
    inputs.push_back(t.view());
  std::vector<float> logits(3 * kVocab);
  int64_t shape[] = {1, 3, kVocab};
  tfm_tensor output{TFM_DTYPE_F32, 3, {}, logits.data()};
  std::copy(std::begin(shape), std::end(shape), output.shape);
  struct Case {
    const char *what;
    void *vCache;
    const char *message;
  };
  // One buffer for both caches (an easy slip with one allocation); caches
  // overlapping by a row; a cache over the token ids.
  auto *k = static_cast<unsigned char *>(inputs[2].data);
  for (const Case &c :
       {Case{"one buffer", k,
             "input 'k_cache' (a cache, written in place) overlaps input "
             "'v_cache' in memory"},
        Case{"shifted by a row", k + kHeadDim * sizeof(float),
             "input 'k_cache' (a cache, written in place) overlaps input "
             "'v_cache' in memory"}}) {
    inputs[3].data = c.vCache;
    tfm_status status =
        tfm_model_run(model.handle(), inputs.data(), inputs.size(), &output, 1);
    INFO(c.what);
    REQUIRE(status != nullptr);
    CHECK(tfm_status_code(status) == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(std::string(tfm_status_message(status)) == c.message);
    tfm_status_free(status);
  }
  inputs[3] = session.inputs[3].view();
  inputs[0].data = k; // The ids inside the k cache.
  tfm_status status =
      tfm_model_run(model.handle(), inputs.data(), inputs.size(), &output, 1);
  REQUIRE(status != nullptr);
  CHECK(std::string(tfm_status_message(status)) ==
        "input 'k_cache' (a cache, written in place) overlaps input "
        "'ids' in memory");
  tfm_status_free(status);
  CHECK(session.inputs[2].bytes == before);
}

TEST_CASE("GPT-2 from transformers: prefill and greedy decode steps match "
          "generate()",
          "[kv]") {
  std::string fixtures = sourceDir() + "/tests/reference/hf/gpt2/";
  auto model =
      Model::buildFiles(sourceDir() + "/examples/generate-c/gpt2_cached.tfm",
                        fixtures + "model.safetensors");
  HostTensor prompt = HostTensor::readNpy(fixtures + "generate_prompt.npy");
  HostTensor expected = HostTensor::readNpy(fixtures + "generate_tokens.npy");
  HostTensor decode = HostTensor::readNpy(fixtures + "decode_logits.npy");
  std::vector<double> all = decode.toDoubles();
  int64_t vocab = decode.shape[1], promptLength = prompt.shape[1];

  Session session({2, 1, 4, 64, 16});
  std::vector<double> promptIds = prompt.toDoubles();
  std::vector<int64_t> tokens(promptIds.begin(), promptIds.end());
  RunResult r = session.step(*model, {tokens}, {0});
  REQUIRE(r.ok());
  std::vector<double> row = logitsRow(r["logits"], 0, promptLength - 1);
  for (int64_t step = 0; step < decode.shape[0]; ++step) {
    std::vector<double> ref(all.begin() + step * vocab,
                            all.begin() + (step + 1) * vocab);
    checkRow(row, ref, "logits choosing token " + std::to_string(step));
    tokens.push_back(
        int64_t(std::max_element(row.begin(), row.end()) - row.begin()));
    if (step + 1 == decode.shape[0])
      break;
    int64_t past = int64_t(tokens.size()) - 1;
    r = session.step(*model, {{tokens.back()}}, {past});
    REQUIRE(r.ok());
    row = logitsRow(r["logits"], 0, 0);
  }
  std::vector<double> want = expected.toDoubles();
  CHECK(std::vector<int64_t>(want.begin(), want.end()) == tokens);

  // A batch of two prompts in one prefill: transformers' full forward.
  HostTensor ids = HostTensor::readNpy(fixtures + "input_ids.npy");
  HostTensor logits = HostTensor::readNpy(fixtures + "logits.npy");
  Session batch({2, ids.shape[0], 4, 64, 16});
  batch.inputs[0] = ids;
  batch.inputs[1] = HostTensor::i64({ids.shape[0]}, {0, 0});
  RunResult full = model->run(batch.inputs);
  REQUIRE(full.ok());
  Comparison c =
      allClose(full["logits"], logits.shape, logits.toDoubles(), 1e-4, 1e-4);
  INFO(c.message);
  CHECK(c.ok);
}
