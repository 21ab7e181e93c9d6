//===- DecoderLayerTests.cpp - Llama-family layers against float64 --------===//
//
// silu, sigmoid, rms_norm and rope (both pairings, partial rotary dims,
// positions from a cache's offset, theta, linear and Llama 3 scaling)
// against ReferenceDecoder.cpp, at several and run-time sizes.
//
//===----------------------------------------------------------------------===//
#include "Fixture.h"
#include "Harness.h"
#include "ReferenceDecoder.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace e2e;
using ref::Array;

TEST_CASE("silu, sigmoid and rms_norm", "[layers]") {
  static const Fixture fx = [] {
    Random rng(5101);
    Weights w;
    w["g"] = rng.weight({12}, 0.5f, 1.5f);
    return makeFixture(R"(
model decoder_pointwise
input x: f32[batch, seq, 12]
s = sigmoid(x)
a = silu(x)
n = rms_norm(x, weight = "g", eps = 1e-5)
gemma = rms_norm(x, weight = "g", weight_offset = 1.0)
plain = rms_norm(x)
output s, a, n, gemma, plain
)",
                       w);
  }();
  for (auto [batch, seq] :
       {std::pair<int64_t, int64_t>{1, 1}, {2, 7}, {3, 33}}) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(uint32_t(batch * 31 + seq));
      // Values out to +-100: exp(-x) overflows for x < -88 and must give 0,
      // not NaN.
      HostTensor x = rng.f32({batch, seq, 12}, -100.0f, 100.0f);
      RunResult r = fx.model->runOk({x});
      Array X = ref::fromTensor(x), g = fx.w("g");
      E2E_CHECK_CLOSE(r["s"], ref::sigmoid(X));
      E2E_CHECK_CLOSE(r["a"], ref::silu(X));
      E2E_CHECK_CLOSE(r["n"], ref::rmsNorm(X, &g, 1e-5));
      E2E_CHECK_CLOSE(r["gemma"], ref::rmsNorm(X, &g, 1e-6, 1.0));
      E2E_CHECK_CLOSE(r["plain"], ref::rmsNorm(X, nullptr, 1e-6));
    }
  }
}

namespace {
/// The angle p * inverse frequency is formed in float32, so its rounding
/// error grows with the position p: 4 float32 ulps of p on top of atol.
std::vector<double> angleSlack(const Array &x,
                               const std::vector<std::vector<int64_t>> &pos) {
  std::vector<double> slack;
  int64_t B = x.dim(0), H = x.dim(1), S = x.dim(2), D = x.dim(3);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < D; ++d)
          slack.push_back(4.0 * double(pos[size_t(b)][size_t(s)]) *
                          std::ldexp(1.0, -24));
  return slack;
}
} // namespace

TEST_CASE("rope in both pairings, partial, scaled, at a cache's offset",
          "[layers]") {
  // q [batch, heads, seq, 16] at positions past[b] + 0..seq-1, as a decoder
  // over a KV cache computes them.
  static const Fixture fx =
      makeFixture(R"(
model rotary
input q: f32[batch, 3, seq, 16]
input past: i64[batch]
pos = reshape(past, [batch, 1]) + arange(seq)
half = rope(q, pos)
pairs = rope(q, pos, style = "pairs", theta = 500000.0)
partial = rope(q, pos, rotary_dims = 8, theta = 100.0)
partial_pairs = rope(q, pos, rotary_dims = 6, style = "pairs")
linear = rope(q, pos, scaling = "linear", factor = 4.0)
llama3 = rope(q, pos, theta = 500000.0, scaling = "llama3", factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_positions = 64)
shared = rope(q, arange(seq))
factors = rope(q, pos, style = "pairs", theta = 500000.0, freq_factors = "rope_freqs.weight")
partial_factors = rope(q, pos, rotary_dims = 8, scaling = "linear", factor = 2.0, freq_factors = "partial_freqs")
output half, pairs, partial, partial_pairs, linear, llama3, shared, factors, partial_factors
)",
                  [] {
                    Random rng(77);
                    Weights w;
                    // llama.cpp's rope_freqs: 1 for
                    // the high frequencies, up to the
                    // scaling factor for the low.
                    w["rope_freqs.weight"] = rng.weight({8}, 1.0f, 8.0f);
                    w["partial_freqs"] = rng.weight({4}, 1.0f, 8.0f);
                    return w;
                  }());
  struct Shape {
    int64_t batch, seq;
    std::vector<int64_t> past;
  };
  for (const Shape &shape : {Shape{1, 1, {0}}, Shape{2, 5, {0, 3}},
                             Shape{3, 17, {7, 0, 100}}, Shape{1, 1, {1000}}}) {
    DYNAMIC_SECTION("batch " << shape.batch << " seq " << shape.seq << " past "
                             << shape.past[0]) {
      Random rng(uint32_t(shape.batch * 7 + shape.seq));
      HostTensor q = rng.f32({shape.batch, 3, shape.seq, 16});
      RunResult r =
          fx.model->runOk({q, HostTensor::i64({shape.batch}, shape.past)});
      Array Q = ref::fromTensor(q);
      std::vector<std::vector<int64_t>> pos, fromZero;
      for (int64_t b = 0; b < shape.batch; ++b) {
        pos.emplace_back();
        fromZero.emplace_back();
        for (int64_t s = 0; s < shape.seq; ++s) {
          pos.back().push_back(shape.past[size_t(b)] + s);
          fromZero.back().push_back(s);
        }
      }
      std::vector<double> slack = angleSlack(Q, pos);
      auto check = [&](const char *name, const ref::Rope &o,
                       const std::vector<std::vector<int64_t>> &p) {
        INFO(name);
        std::vector<double> s = angleSlack(Q, p);
        E2E_CHECK_CLOSE(r[name], ref::rope(Q, p, o), 1e-4, 1e-5, &s);
      };
      check("half", {}, pos);
      check("pairs", {500000, 0, true}, pos);
      check("partial", {100, 8, false}, pos);
      check("partial_pairs", {10000, 6, true}, pos);
      ref::Rope linear;
      linear.scaling = "linear";
      linear.factor = 4;
      check("linear", linear, pos);
      ref::Rope llama3;
      llama3.theta = 500000;
      llama3.scaling = "llama3";
      llama3.factor = 8;
      llama3.originalMaxPositions = 64;
      check("llama3", llama3, pos);
      check("shared", {}, fromZero);
      auto factorsOf = [&](const char *name) {
        std::vector<double> f;
        for (float v : fx.weights.at(name).data)
          f.push_back(v);
        return f;
      };
      ref::Rope factors{500000, 0, true};
      factors.freqFactors = factorsOf("rope_freqs.weight");
      check("factors", factors, pos);
      ref::Rope partialFactors{10000, 8, false};
      partialFactors.scaling = "linear";
      partialFactors.factor = 2;
      partialFactors.freqFactors = factorsOf("partial_freqs");
      check("partial_factors", partialFactors, pos);
    }
  }
}

TEST_CASE("rope refuses what it cannot rotate", "[layers]") {
  struct Case {
    const char *call, *message;
  };
  for (const Case &c : {
           Case{"rope(q, pos, rotary_dims = 5)",
                "rotary_dims must be even and in [2, 16], got 5"},
           Case{"rope(q, pos, style = \"interleaved\")",
                "rope style 'interleaved' is not supported"},
           Case{"rope(q, pos, scaling = \"yarn\")",
                "rope scaling 'yarn' is not supported"},
           Case{"rope(q, pos, theta = 1.0)",
                "theta must be finite and above 1"},
           Case{"rope(q, cast(pos, f32))", "positions must be i32 or i64"},
           Case{"rope(q, pos, freq_factors = arange(8))",
                "freq_factors must be a float vector of rotary_dims / 2 = 8 "
                "values, got 'i64' [8]"},
           Case{"rope(q, pos, rotary_dims = 8, freq_factors = cast(arange(8), "
                "f32))",
                "freq_factors must be a float vector of rotary_dims / 2 = 4 "
                "values, got 'f32' [8]"},
           Case{"rope(q, arange(4))",
                "positions [4] must end in the sequence dimension"},
       }) {
    std::string source = std::string("model m\ninput q: f32[2, 3, seq, 16]\n"
                                     "pos = arange(seq)\ny = ") +
                         c.call + "\noutput y\n";
    INFO(source);
    CompileResult compiled = compileSource(source);
    CHECK_FALSE(compiled.ok);
    CHECK(compiled.diagnostics.find(c.message) != std::string::npos);
  }
}

TEST_CASE("sdpa with K/V heads shared by groups of query heads", "[layers]") {
  // Grouped-query attention: q [batch, kv heads, group, seq, D] against k
  // and v [batch, kv heads, 1, seq, D], causal and not; multi-query (one
  // K/V head for all) too.
  static const Fixture fx = makeFixture(R"(
model gqa
input q: f32[batch, 2, 3, seq, 8]
input k: f32[batch, 2, 1, seq, 8]
input v: f32[batch, 2, 1, seq, 4]
y = sdpa(q, k, v)
c = sdpa(q, k, v, is_causal = true)
mq = sdpa(reshape(q, [batch, 6, seq, 8]), reshape(k[:, 0:1], [batch, 1, seq, 8]), reshape(v[:, 0:1], [batch, 1, seq, 4]))
output y, c, mq
)",
                                        {});
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 1}, {2, 9}}) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(uint32_t(batch * 13 + seq));
      HostTensor q = rng.f32({batch, 2, 3, seq, 8}),
                 k = rng.f32({batch, 2, 1, seq, 8}),
                 v = rng.f32({batch, 2, 1, seq, 4});
      RunResult r = fx.model->runOk({q, k, v});
      // The reference repeats each K/V head over its group.
      auto repeat = [](const Array &x, int64_t groups, int64_t kvHeads) {
        int64_t b = x.dim(0), s = x.dim(-2), d = x.dim(-1);
        Array y({b, kvHeads, groups, s, d});
        for (int64_t i = 0; i < b; ++i)
          for (int64_t h = 0; h < kvHeads; ++h)
            for (int64_t g = 0; g < groups; ++g)
              for (int64_t e = 0; e < s * d; ++e)
                y.data[size_t(((i * kvHeads + h) * groups + g) * s * d + e)] =
                    x.data[size_t((i * x.dim(1) + h) * s * d + e)];
        return y;
      };
      Array Q = ref::fromTensor(q), K = repeat(ref::fromTensor(k), 3, 2),
            V = repeat(ref::fromTensor(v), 3, 2);
      E2E_CHECK_CLOSE(r["y"], ref::sdpa(Q, K, V));
      Array scores = ref::causalMask(ref::scale(
          ref::matmul(Q, ref::transpose(K, -1, -2)), 1 / std::sqrt(8.0)));
      E2E_CHECK_CLOSE(r["c"], ref::matmul(ref::softmax(scores, -1), V));
      Array Q6 = Q;
      Q6.shape = {batch, 6, seq, 8};
      Array K1 = repeat(ref::fromTensor(k), 6, 1),
            V1 = repeat(ref::fromTensor(v), 6, 1);
      K1.shape = {batch, 6, seq, 8};
      V1.shape = {batch, 6, seq, 4};
      E2E_CHECK_CLOSE(r["mq"], ref::sdpa(Q6, K1, V1));
    }
  }
}
