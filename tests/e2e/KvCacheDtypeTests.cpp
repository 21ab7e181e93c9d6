//===- KvCacheDtypeTests.cpp - bf16 and f16 key/value caches --------------===//
//
// f32 attention over a bf16/f16 key/value cache (tfm-compile
// --kv-cache-dtype, or a `cache` declared bf16/f16): the CPU flash kernel
// reads the narrow K and V and widens them in registers. Checked against a
// float64 reference computed on the same rounded K/V at every CPU kernel
// level the host has (grouped-query, causal with offsets, sliding windows,
// kv_length, odd head dims and lengths; rows no query may see hold NaN);
// cache_append's rounding (nearest even) against the runtime's conversion;
// and examples/llama/llama.tfm with bf16/f16 caches against transformers'
// logits and greedy tokens on the tests/reference/decoders fixtures.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"
#include "LowPrecisionHarness.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

using namespace e2e;
using namespace e2e::lowp;

namespace {
struct AttentionShape {
  int64_t batch, groups, perGroup, sq, d;
  int64_t window;             // 0: none
  bool causal;                // else bounded by kv_length
  std::vector<int64_t> where; // query_offset (causal) or kv_length per sequence
};

/// softmax(q kᵀ scale) v in float64 for q [B, G, R, Sq, D] and k, v
/// [B, G, 1, Sk, D] (query head (g, r) reads K/V head g).
std::vector<double> reference(const std::vector<double> &q,
                              const std::vector<double> &k,
                              const std::vector<double> &v,
                              const AttentionShape &s, int64_t sk) {
  std::vector<double> out(q.size(), 0.0);
  double scale = 1.0 / std::sqrt(double(s.d));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t g = 0; g < s.groups; ++g)
      for (int64_t r = 0; r < s.perGroup; ++r)
        for (int64_t i = 0; i < s.sq; ++i) {
          int64_t first = 0, last = s.where[size_t(b)] - 1;
          if (s.causal) {
            int64_t pos = s.where[size_t(b)] + i;
            last = std::min(pos, sk - 1);
            if (s.window > 0)
              first = std::max<int64_t>(0, pos - s.window + 1);
          }
          size_t row =
              size_t((((b * s.groups + g) * s.perGroup + r) * s.sq + i) * s.d);
          size_t kv = size_t((b * s.groups + g) * sk * s.d);
          std::vector<double> p;
          double max = -std::numeric_limits<double>::infinity();
          for (int64_t j = first; j <= last; ++j) {
            double dot = 0;
            for (int64_t c = 0; c < s.d; ++c)
              dot += q[row + size_t(c)] * k[kv + size_t(j * s.d + c)];
            p.push_back(dot * scale);
            max = std::max(max, p.back());
          }
          double sum = 0;
          for (double &x : p)
            sum += (x = std::exp(x - max));
          for (int64_t j = first; j <= last; ++j)
            for (int64_t c = 0; c < s.d; ++c)
              out[row + size_t(c)] +=
                  p[size_t(j - first)] / sum * v[kv + size_t(j * s.d + c)];
        }
  return out;
}

HostTensor narrow(const std::string &dtype, std::vector<int64_t> shape,
                  const std::vector<float> &values) {
  return dtype == "bf16" ? HostTensor::bf16(std::move(shape), values)
                         : HostTensor::f16(std::move(shape), values);
}

std::string dims(std::initializer_list<int64_t> sizes) {
  std::string s;
  for (int64_t n : sizes)
    s += ", " + std::to_string(n);
  return s;
}

/// The flash kernel's variants without --dtype bf16: what TFM_CPU_LEVEL
/// selects (6 leaves the host's own level).
const Level kAttentionLevels[] = {
    {6, "the host's level"}, {3, "AVX-512"}, {2, "AVX2+FMA"}, {1, "SSE"}};
} // namespace

TEST_CASE("f32 attention over a bf16/f16 cache matches float64 on the "
          "rounded keys and values at every CPU level",
          "[attention][kv-cache-dtype]") {
  const AttentionShape shapes[] = {
      {1, 1, 1, 9, 8, 0, true, {0}},         // a prefill, one head
      {2, 2, 3, 1, 64, 0, true, {5, 40}},    // decode, GQA 3:1, offsets
      {1, 3, 3, 37, 7, 0, true, {0}},        // odd head dim, query blocks
      {1, 2, 1, 70, 33, 0, true, {3}},       // D > 32: a partial vector
      {2, 1, 2, 5, 12, 16, true, {3, 70}},   // window past a key block
      {3, 1, 4, 1, 16, 5, true, {0, 1, 90}}, // decode in a window
      {2, 2, 2, 3, 24, 0, false, {10, 1}},   // kv_length, not causal
  };
  const std::pair<const char *, const char *> types[] = {
      {"bf16", "bf16"}, {"f16", "f16"}, {"bf16", "f16"}};
  int seed = 0;
  for (const AttentionShape &s : shapes)
    for (auto [kt, vt] : types) {
      ++seed;
      int64_t most = *std::max_element(s.where.begin(), s.where.end());
      int64_t sk = (s.causal ? most + s.sq : most) + 3; // rows never read
      DYNAMIC_SECTION("K " << kt << " V " << vt << ": B " << s.batch << " G "
                           << s.groups << "x" << s.perGroup << " Sq " << s.sq
                           << " D " << s.d << " window " << s.window
                           << (s.causal ? " causal" : " kv_length")) {
        std::string call =
            s.causal ? "sdpa(q, k, v, is_causal = true, query_offset = at" +
                           (s.window ? ", window = " + std::to_string(s.window)
                                     : std::string()) +
                           ")"
                     : std::string("sdpa(q, k, v, kv_length = at)");
        std::string source =
            "model c\ninput q: f32[batch" + dims({s.groups, s.perGroup}) +
            ", seq" + dims({s.d}) + "]\ninput k: " + kt + "[batch" +
            dims({s.groups, 1}) + ", keys" + dims({s.d}) + "]\ninput v: " + vt +
            "[batch" + dims({s.groups, 1}) + ", keys" + dims({s.d}) +
            "]\ninput at: i64[batch]\ny = " + call + "\noutput y\n";
        std::shared_ptr<Model> model = Model::build(source);
        Random rng(uint32_t(1000 + seed));
        std::vector<int64_t> qShape = {s.batch, s.groups, s.perGroup, s.sq,
                                       s.d},
                             kShape = {s.batch, s.groups, 1, sk, s.d};
        std::vector<float> q = rng.uniform(elementCount(qShape), -2, 2);
        std::vector<float> k = rng.uniform(elementCount(kShape), -2, 2);
        std::vector<float> v = rng.uniform(elementCount(kShape));
        // NaN in every row past what a sequence's queries may see.
        for (int64_t b = 0; b < s.batch; ++b) {
          int64_t valid = s.where[size_t(b)] + (s.causal ? s.sq : 0);
          for (int64_t g = 0; g < s.groups; ++g)
            for (int64_t j = valid; j < sk; ++j)
              for (int64_t c = 0; c < s.d; ++c) {
                size_t at = size_t(((b * s.groups + g) * sk + j) * s.d + c);
                k[at] = v[at] = std::nanf("");
              }
        }
        HostTensor kn = narrow(kt, kShape, k), vn = narrow(vt, kShape, v);
        // The reference reads the values the cache holds: K and V rounded.
        std::vector<double> want =
            reference(std::vector<double>(q.begin(), q.end()), kn.toDoubles(),
                      vn.toDoubles(), s, sk);
        for (const Level &level : kAttentionLevels) {
          if (hostCpuLevel() < level.level && level.level < 6) {
            WARN("skipped TFM_CPU_LEVEL=" << level.level << " (" << level.kernel
                                          << "): this host's CPU level is "
                                          << hostCpuLevel());
            continue;
          }
          CpuLevelScope scope(level.level);
          std::shared_ptr<Model> copy = model->reload();
          RunResult r = copy->runOk({HostTensor::f32(qShape, q), kn, vn,
                                     HostTensor::i64({s.batch}, s.where)});
          Comparison c = allClose(r["y"].toDoubles(), want, 1e-5, 1e-5);
          INFO("CPU level " << level.level << " (" << level.kernel
                            << "): " << c.message);
          CHECK(c.ok);
        }
      }
    }
}

TEST_CASE("with --dtype bf16 the vdpbf16ps and AMX attentions read a bf16 "
          "cache",
          "[attention][kv-cache-dtype]") {
  if (hostCpuLevel() < 5) {
    WARN("skipped: vdpbf16ps needs AVX512-BF16 (CPU level 5); this host's "
         "level is "
         << hostCpuLevel());
    return;
  }
  AttentionShape s{2, 2, 2, 19, 24, 0, true, {0, 33}};
  int64_t sk = 33 + s.sq + 1;
  std::string source = "model c\ninput q: f32[batch, 2, 2, seq, 24]\n"
                       "input k: bf16[batch, 2, 1, keys, 24]\n"
                       "input v: bf16[batch, 2, 1, keys, 24]\n"
                       "input at: i64[batch]\n"
                       "y = sdpa(q, k, v, is_causal = true, query_offset = "
                       "at)\noutput y\n";
  BuildOptions options;
  options.dtype = "bf16";
  std::shared_ptr<Model> model = Model::build(source, {}, options);
  Random rng(77);
  std::vector<int64_t> qShape = {2, 2, 2, s.sq, 24}, kShape = {2, 2, 1, sk, 24};
  std::vector<float> q = rng.uniform(elementCount(qShape), -2, 2);
  HostTensor k = HostTensor::bf16(kShape, rng.uniform(elementCount(kShape)));
  HostTensor v = HostTensor::bf16(kShape, rng.uniform(elementCount(kShape)));
  std::vector<double> want = reference(std::vector<double>(q.begin(), q.end()),
                                       k.toDoubles(), v.toDoubles(), s, sk);
  // Level 5: vdpbf16ps; 6: AMX tiles, whose value pack widens the cache's
  // rows itself.
  for (int level : {5, 6}) {
    if (hostCpuLevel() < level) {
      WARN("skipped TFM_CPU_LEVEL=6 (AMX): this host's CPU level is "
           << hostCpuLevel());
      continue;
    }
    INFO("CPU level " << level);
    CpuLevelScope scope(level);
    std::shared_ptr<Model> copy = model->reload();
    RunResult r = copy->runOk(
        {HostTensor::f32(qShape, q), k, v, HostTensor::i64({2}, s.where)});
    // The queries (scaled) and the probabilities are rounded to bf16 too:
    // relative errors of 2^-9 each, on outputs of magnitude <= 1.
    Comparison c = allClose(r["y"].toDoubles(), want, 1e-2, 1e-2);
    INFO(c.message);
    CHECK(c.ok);
  }
}

TEST_CASE("cache_append rounds f32 rows to nearest even into a bf16/f16 "
          "cache (--kv-cache-dtype)",
          "[kv-cache-dtype]") {
  std::string source = "model a\ninput x: f32[batch, 2, seq, 5]\n"
                       "input past: i64[batch]\n"
                       "cache c: f32[batch, 2, 8, 5]\n"
                       "c2 = cache_append(c, x, past)\n"
                       "y = x * 2\noutput y\n";
  for (const char *dtype : {"bf16", "f16"}) {
    DYNAMIC_SECTION(dtype) {
      BuildOptions options;
      options.kvCacheDtype = dtype;
      std::shared_ptr<Model> model = Model::build(source, {}, options);
      tfm_dtype want =
          std::string(dtype) == "bf16" ? TFM_DTYPE_BF16 : TFM_DTYPE_F16;
      REQUIRE(tfm_model_input_dtype(model->handle(), 2) == want);
      // Values that sit halfway between two bf16/f16 neighbours, and random
      // ones: ties go to the even neighbour.
      Random rng(5);
      std::vector<float> x = rng.uniform(2 * 2 * 3 * 5, -100, 100);
      x[0] = 1.0f + 0x1p-8f;      // bf16 tie: down to 1
      x[1] = 1.0f + 3 * 0x1p-8f;  // bf16 tie: up to 1 + 2^-6
      x[2] = 1.0f + 0x1p-11f;     // f16 tie: down to 1
      x[3] = 1.0f + 3 * 0x1p-11f; // f16 tie: up to 1 + 2^-9
      x[4] = -std::numeric_limits<float>::infinity();
      std::vector<float> before(2 * 2 * 8 * 5, 7.0f);
      std::vector<HostTensor> inputs = {HostTensor::f32({2, 2, 3, 5}, x),
                                        HostTensor::i64({2}, {0, 4}),
                                        narrow(dtype, {2, 2, 8, 5}, before)};
      RunResult r = model->runOk(inputs);
      // The rows where they went, the runtime's rounding of the same
      // floats; every other row untouched.
      std::vector<float> expected = before;
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t s = 0; s < 3; ++s)
            for (int64_t c = 0; c < 5; ++c)
              expected[size_t(((b * 2 + h) * 8 + (b * 4 + s)) * 5 + c)] =
                  x[size_t(((b * 2 + h) * 3 + s) * 5 + c)];
      CHECK(inputs[2].halfBits() ==
            narrow(dtype, {2, 2, 8, 5}, expected).halfBits());
      std::vector<double> got = inputs[2].toDoubles();
      if (std::string(dtype) == "bf16") {
        CHECK(got[0] == 1.0);
        CHECK(got[1] == 1.0 + 0x1p-6);
      } else {
        CHECK(got[2] == 1.0);
        CHECK(got[3] == 1.0 + 0x1p-9);
      }
    }
  }
}

namespace {
std::string decoderDir(const std::string &arch) {
  return sourceDir() + "/tests/reference/decoders/" + arch;
}

HostTensor decoderFixture(const std::string &arch, const std::string &name) {
  return HostTensor::readNpy(decoderDir(arch) + "/" + name + ".npy");
}

/// The cache shape [L, 1, G, 1024, D] (llama.tfm's CAPACITY) of a fixture.
std::vector<int64_t> decoderCacheShape(const std::string &arch) {
  std::ifstream in(decoderDir(arch) + "/config.json");
  REQUIRE(in.good());
  nlohmann::json c = nlohmann::json::parse(in);
  int64_t heads = c.at("num_attention_heads");
  int64_t headDim = c.value("head_dim", int64_t(c.at("hidden_size")) / heads);
  return {c.at("num_hidden_layers"), 1, c.at("num_key_value_heads"), 1024,
          headDim};
}
} // namespace

TEST_CASE("examples/llama/llama.tfm with bf16/f16 caches generates "
          "transformers' tokens",
          "[decoders][kv-cache-dtype]") {
  // Each decode step's logits against transformers' f32 cached step: the
  // cache's rounding (2^-9 relative for bf16, 2^-12 for f16, on every K/V
  // element) moved these fixtures' logits (|logit| < 4) by at most
  // 2.6e-2 (bf16) and 4.3e-3 (f16), the llama fixture's being the largest;
  // the f32 cache is held to 1e-4 (DecoderCheckpointTests.cpp).
  const std::pair<const char *, double> types[] = {{"bf16", 4e-2},
                                                   {"f16", 8e-3}};
  for (const char *arch : {"llama", "qwen2", "gemma3"})
    for (auto [dtype, tolerance] : types) {
      DYNAMIC_SECTION(arch << " with " << dtype << " caches") {
        BuildOptions options;
        options.kvCacheDtype = dtype;
        std::shared_ptr<Model> model =
            Model::buildFiles(sourceDir() + "/examples/llama/llama.tfm",
                              decoderDir(arch) + "/model.gguf", options);
        std::vector<int64_t> tokens;
        for (double id : decoderFixture(arch, "generate_prompt").toDoubles())
          tokens.push_back(int64_t(id));
        std::vector<int64_t> expected;
        for (double id : decoderFixture(arch, "generate_tokens").toDoubles())
          expected.push_back(int64_t(id));
        HostTensor decode = decoderFixture(arch, "decode_logits");
        int64_t steps = decode.shape[0], vocab = decode.shape[1];
        std::vector<double> want = decode.toDoubles();
        std::vector<int64_t> shape = decoderCacheShape(arch);
        // NaN in every row: attention reading an unwritten one would show.
        std::vector<float> nan(size_t(elementCount(shape)), std::nanf(""));
        std::vector<HostTensor> inputs = {
            HostTensor::i64({1, int64_t(tokens.size())}, tokens),
            HostTensor::i64({1}, {0}), narrow(dtype, shape, nan),
            narrow(dtype, shape, nan)};
        double worst = 0;
        for (int64_t step = 0; step < steps; ++step) {
          RunResult r = model->runOk(inputs);
          std::vector<double> all = r["logits"].toDoubles();
          std::vector<double> last(all.end() - vocab, all.end());
          Comparison c =
              allClose(last,
                       std::vector<double>(want.begin() + step * vocab,
                                           want.begin() + (step + 1) * vocab),
                       0, tolerance);
          worst = std::max(worst, c.maxAbsError);
          INFO("decode step " << step << ": " << c.message);
          CHECK(c.ok);
          int64_t next = int64_t(std::max_element(last.begin(), last.end()) -
                                 last.begin());
          inputs[0] = HostTensor::i64({1, 1}, {next});
          inputs[1] = HostTensor::i64({1}, {int64_t(tokens.size())});
          tokens.push_back(next);
        }
        CHECK(tokens == expected);
        // The rounding shows (a cache that stayed f32 would not move the
        // logits past 1e-4), within the tolerance.
        CHECK(worst > 1e-4);
        WARN(arch << " " << dtype << " cache: largest logit error " << worst
                  << " over " << steps << " steps");
      }
    }
}
