//===- AttentionTests.cpp - Attention models against the f64 reference ----===//
//
// Random weights and inputs (fixed-seed mt19937, uniform [-1, 1]) at sequence
// lengths 1, 3, 17 and 1031. Each model has symbolic dims and is compiled
// once (static fixtures), then run at every shape.
//
//===----------------------------------------------------------------------===//
#include "Fixture.h"
#include "Harness.h"
#include "Reference.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <iterator>
#include <map>

using namespace e2e;
using ref::Array;

namespace {
const int64_t kSeqs[] = {1, 3, 17, 1031};
} // namespace

//===----------------------------------------------------------------------===//
// Hand-written attention, as in seed 001 (d_q = d_k = 24, d_v = 28)
//===----------------------------------------------------------------------===//

TEST_CASE("hand-written attention chain, d_k 24 and d_v 28", "[attention]") {
  static const Fixture fx = [] {
    Random rng(1001);
    Weights w;
    w["Wq"] = rng.weight({24, 16});
    w["Wk"] = rng.weight({24, 16});
    w["Wv"] = rng.weight({28, 16});
    return makeFixture(R"(
model attention_chain
input x: f32[seq, 16]
q = linear(x, weight = "Wq")
k = linear(x, weight = "Wk")
v = linear(x, weight = "Wv")
scores = q @ transpose(k, -2, -1) / sqrt(24)
p = softmax(scores, dim = -1)
y = p @ v
output y, p, scores, q
)",
                       w);
  }();
  for (int64_t seq : kSeqs) {
    DYNAMIC_SECTION("seq " << seq) {
      Random rng(static_cast<uint32_t>(seq));
      HostTensor x = rng.f32({seq, 16});
      RunResult r = fx.model->runOk({x});
      Array X = ref::fromTensor(x);
      Array q = ref::linear(X, fx.w("Wq")), k = ref::linear(X, fx.w("Wk")),
            v = ref::linear(X, fx.w("Wv"));
      Array scores = ref::scale(ref::matmul(q, ref::transpose(k, -2, -1)),
                                1.0 / std::sqrt(24.0));
      Array p = ref::softmax(scores, -1);
      Array y = ref::matmul(p, v);
      E2E_CHECK_CLOSE(r["q"], q);
      E2E_CHECK_CLOSE(r["scores"], scores);
      E2E_CHECK_CLOSE(r["p"], p);
      E2E_CHECK_CLOSE(r["y"], y);
    }
  }
}

TEST_CASE("batched attention chain with biases", "[attention]") {
  static const Fixture fx = [] {
    Random rng(1002);
    Weights w;
    w["Wq"] = rng.weight({24, 16});
    w["bq"] = rng.weight({24});
    w["Wk"] = rng.weight({24, 16});
    w["bk"] = rng.weight({24});
    w["Wv"] = rng.weight({28, 16});
    w["bv"] = rng.weight({28});
    return makeFixture(R"(
model batched_chain
input x: f32[batch, seq, 16]
q = linear(x, weight = "Wq", bias = "bq")
k = linear(x, weight = "Wk", bias = "bk")
v = linear(x, weight = "Wv", bias = "bv")
p = softmax(q @ transpose(k, 1, 2) / sqrt(24), dim = 2)
y = p @ v
output y, p
)",
                       w);
  }();
  const std::pair<int64_t, int64_t> shapes[] = {
      {1, 1}, {2, 3}, {3, 17}, {1, 1031}};
  for (auto [batch, seq] : shapes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(static_cast<uint32_t>(batch * 7919 + seq));
      HostTensor x = rng.f32({batch, seq, 16});
      RunResult r = fx.model->runOk({x});
      Array X = ref::fromTensor(x);
      Array bq = fx.w("bq"), bk = fx.w("bk"), bv = fx.w("bv");
      Array q = ref::linear(X, fx.w("Wq"), &bq),
            k = ref::linear(X, fx.w("Wk"), &bk),
            v = ref::linear(X, fx.w("Wv"), &bv);
      Array p = ref::softmax(ref::scale(ref::matmul(q, ref::transpose(k, 1, 2)),
                                        1 / std::sqrt(24.0)),
                             2);
      E2E_CHECK_CLOSE(r["p"], p);
      E2E_CHECK_CLOSE(r["y"], ref::matmul(p, v));
    }
  }
}

//===----------------------------------------------------------------------===//
// sdpa
//===----------------------------------------------------------------------===//

TEST_CASE("sdpa on [batch, seq, d] with default and custom scale",
          "[attention]") {
  static const Fixture fx = makeFixture(R"(
model sdpa_self
input q: f32[batch, seq, 8]
input k: f32[batch, seq, 8]
input v: f32[batch, seq, 5]
y = sdpa(q, k, v)
z = sdpa(q, k, v, scale = 0.3)
output y, z
)",
                                        {});
  const std::pair<int64_t, int64_t> shapes[] = {
      {1, 1}, {2, 3}, {3, 17}, {1, 1031}};
  for (auto [batch, seq] : shapes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(static_cast<uint32_t>(batch * 31 + seq));
      HostTensor q = rng.f32({batch, seq, 8}), k = rng.f32({batch, seq, 8}),
                 v = rng.f32({batch, seq, 5});
      RunResult r = fx.model->runOk({q, k, v});
      Array Q = ref::fromTensor(q), K = ref::fromTensor(k),
            V = ref::fromTensor(v);
      E2E_CHECK_CLOSE(r["y"], ref::sdpa(Q, K, V));
      E2E_CHECK_CLOSE(r["z"], ref::sdpa(Q, K, V, 0.3));
    }
  }
}

TEST_CASE("sdpa cross attention with different symbolic lengths",
          "[attention]") {
  static const Fixture fx = [] {
    Random rng(1003);
    Weights w;
    w["Wk"] = rng.weight({8, 6});
    w["Wv"] = rng.weight({5, 6});
    w["bv"] = rng.weight({5});
    return makeFixture(R"(
model sdpa_cross
input x: f32[batch, tq, 8]
input mem: f32[batch, tk, 6]
k = linear(mem, weight = "Wk")
v = linear(mem, weight = "Wv", bias = "bv")
y = sdpa(x, k, v, scale = 0.25)
z = sdpa(x, k, v)
output y, z
)",
                       w);
  }();
  struct Shape {
    int64_t batch, tq, tk;
  };
  const Shape shapes[] = {
      {1, 1, 3}, {2, 3, 1}, {2, 17, 5}, {1, 4, 1031}, {1, 1031, 17}};
  for (Shape s : shapes) {
    DYNAMIC_SECTION("batch " << s.batch << " tq " << s.tq << " tk " << s.tk) {
      Random rng(static_cast<uint32_t>(s.batch * 1000003 + s.tq * 1009 + s.tk));
      HostTensor x = rng.f32({s.batch, s.tq, 8}),
                 mem = rng.f32({s.batch, s.tk, 6});
      RunResult r = fx.model->runOk({x, mem});
      Array X = ref::fromTensor(x), M = ref::fromTensor(mem);
      Array bv = fx.w("bv");
      Array k = ref::linear(M, fx.w("Wk")), v = ref::linear(M, fx.w("Wv"), &bv);
      E2E_CHECK_CLOSE(r["y"], ref::sdpa(X, k, v, 0.25));
      E2E_CHECK_CLOSE(r["z"], ref::sdpa(X, k, v));
    }
  }
}

TEST_CASE("sdpa on 2-D and 4-D inputs", "[attention]") {
  static const Fixture fx = makeFixture(R"(
model sdpa_ranks
input q2: f32[seq, 4]
input k2: f32[seq, 4]
input q4: f32[batch, 3, seq, 4]
input k4: f32[batch, 3, seq, 4]
input v4: f32[batch, 3, seq, 2]
a = sdpa(q2, k2, k2)
b = sdpa(q4, k4, v4, scale = 1.5)
output a, b
)",
                                        {});
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {2, 17}, {1, 1031}};
  for (auto [batch, seq] : shapes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(static_cast<uint32_t>(batch * 13 + seq));
      HostTensor q2 = rng.f32({seq, 4}), k2 = rng.f32({seq, 4}),
                 q4 = rng.f32({batch, 3, seq, 4}),
                 k4 = rng.f32({batch, 3, seq, 4}),
                 v4 = rng.f32({batch, 3, seq, 2});
      RunResult r = fx.model->runOk({q2, k2, q4, k4, v4});
      Array K2 = ref::fromTensor(k2);
      E2E_CHECK_CLOSE(r["a"], ref::sdpa(ref::fromTensor(q2), K2, K2));
      E2E_CHECK_CLOSE(r["b"],
                      ref::sdpa(ref::fromTensor(q4), ref::fromTensor(k4),
                                ref::fromTensor(v4), 1.5));
    }
  }
}

//===----------------------------------------------------------------------===//
// multi_head_attention
//===----------------------------------------------------------------------===//

namespace {
/// nn.MultiheadAttention(8, heads) weights under `prefix`.
void addMha(Random &rng, Weights &w, const std::string &prefix, int64_t e,
            bool bias) {
  w[prefix + ".in_proj_weight"] = rng.weight({3 * e, e});
  w[prefix + ".out_proj.weight"] = rng.weight({e, e});
  if (bias) {
    w[prefix + ".in_proj_bias"] = rng.weight({3 * e});
    w[prefix + ".out_proj.bias"] = rng.weight({e});
  }
}

ref::MhaWeights mhaWeights(const Fixture &fx, const std::string &prefix,
                           bool bias) {
  Array in = fx.w(prefix + ".in_proj_weight"),
        out = fx.w(prefix + ".out_proj.weight");
  if (!bias)
    return ref::MhaWeights::packed(in, nullptr, out, nullptr);
  Array inB = fx.w(prefix + ".in_proj_bias"),
        outB = fx.w(prefix + ".out_proj.bias");
  return ref::MhaWeights::packed(in, &inB, out, &outB);
}

/// One self-attention output per (heads, bias) pair.
struct MhaCase {
  int64_t heads;
  bool bias;
  std::string name() const {
    return "h" + std::to_string(heads) + (bias ? "b" : "n");
  }
};

Fixture mhaFixture(bool batched, const std::vector<MhaCase> &cases,
                   uint32_t seed) {
  Random rng(seed);
  Weights w;
  std::string source = std::string("model mha_") +
                       (batched ? "batched\ninput x: f32[batch, seq, 8]\n"
                                : "unbatched\ninput x: f32[seq, 8]\n");
  std::string outputs;
  for (const MhaCase &c : cases) {
    addMha(rng, w, c.name(), 8, c.bias);
    source += c.name() + " = multi_head_attention(x, x, x, heads = " +
              std::to_string(c.heads) + ", weights = \"" + c.name() + "\"" +
              (c.bias ? "" : ", bias = false") + ")\n";
    outputs += (outputs.empty() ? "output " : ", ") + c.name();
  }
  return makeFixture(source + outputs + "\n", w);
}

void checkMha(const Fixture &fx, bool batched,
              const std::vector<MhaCase> &cases) {
  const std::pair<int64_t, int64_t> shapes[] = {
      {1, 1}, {2, 3}, {3, 17}, {1, 1031}};
  for (auto [batch, seq] : shapes) {
    if (!batched && batch != 1)
      continue;
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(static_cast<uint32_t>(batch * 101 + seq));
      std::vector<int64_t> shape = batched ? std::vector<int64_t>{batch, seq, 8}
                                           : std::vector<int64_t>{seq, 8};
      HostTensor x = rng.f32(shape);
      RunResult r = fx.model->runOk({x});
      Array X = ref::fromTensor(x);
      for (const MhaCase &c : cases) {
        INFO(c.heads << " heads, " << (c.bias ? "with" : "without") << " bias");
        E2E_CHECK_CLOSE(r[c.name()], ref::multiHeadAttention(
                                         X, X, X, c.heads,
                                         mhaWeights(fx, c.name(), c.bias)));
      }
    }
  }
}
} // namespace

TEST_CASE("multi_head_attention batched, heads 1 2 4, with and without bias",
          "[attention]") {
  static const std::vector<MhaCase> cases = {
      {1, true}, {2, true}, {4, true}, {2, false}};
  static const Fixture fx = mhaFixture(true, cases, 2001);
  checkMha(fx, true, cases);
}

TEST_CASE("multi_head_attention unbatched, heads 1 2 4, with and without bias",
          "[attention]") {
  static const std::vector<MhaCase> cases = {{1, false}, {2, true}, {4, false}};
  static const Fixture fx = mhaFixture(false, cases, 2003);
  checkMha(fx, false, cases);
}

TEST_CASE("multi_head_attention cross attention and separate q/k/v weights",
          "[attention]") {
  static const Fixture fx = [] {
    Random rng(2005);
    Weights w;
    addMha(rng, w, "cross", 8, true);
    // kdim 6 and vdim 5, as nn.MultiheadAttention(8, 2, kdim=6, vdim=5).
    w["wq"] = rng.weight({8, 8});
    w["wk"] = rng.weight({8, 6});
    w["wv"] = rng.weight({8, 5});
    w["wo"] = rng.weight({8, 8});
    w["bq"] = rng.weight({8});
    w["bk"] = rng.weight({8});
    w["bv"] = rng.weight({8});
    w["bo"] = rng.weight({8});
    return makeFixture(R"(
model mha_cross
input x: f32[batch, tq, 8]
input mem: f32[batch, tk, 8]
input keys: f32[batch, tk, 6]
input vals: f32[batch, tk, 5]
c = multi_head_attention(x, mem, mem, heads = 2, weights = "cross")
s = multi_head_attention(x, keys, vals, heads = 2, q_weight = "wq",
                         k_weight = "wk", v_weight = "wv", out_weight = "wo")
sb = multi_head_attention(x, keys, vals, heads = 4, q_weight = "wq",
                          k_weight = "wk", v_weight = "wv", q_bias = "bq",
                          k_bias = "bk", v_bias = "bv", out_weight = "wo",
                          out_bias = "bo")
output c, s, sb
)",
                       w);
  }();
  struct Shape {
    int64_t batch, tq, tk;
  };
  const Shape shapes[] = {{1, 1, 3}, {2, 3, 1}, {2, 17, 5}, {1, 5, 1031}};
  for (Shape s : shapes) {
    DYNAMIC_SECTION("batch " << s.batch << " tq " << s.tq << " tk " << s.tk) {
      Random rng(static_cast<uint32_t>(s.batch * 100003 + s.tq * 101 + s.tk));
      HostTensor x = rng.f32({s.batch, s.tq, 8}),
                 mem = rng.f32({s.batch, s.tk, 8}),
                 keys = rng.f32({s.batch, s.tk, 6}),
                 vals = rng.f32({s.batch, s.tk, 5});
      RunResult r = fx.model->runOk({x, mem, keys, vals});
      Array X = ref::fromTensor(x), M = ref::fromTensor(mem),
            K = ref::fromTensor(keys), V = ref::fromTensor(vals);
      E2E_CHECK_CLOSE(r["c"], ref::multiHeadAttention(
                                  X, M, M, 2, mhaWeights(fx, "cross", true)));
      ref::MhaWeights sep;
      sep.wq = fx.w("wq");
      sep.wk = fx.w("wk");
      sep.wv = fx.w("wv");
      sep.wo = fx.w("wo");
      E2E_CHECK_CLOSE(r["s"], ref::multiHeadAttention(X, K, V, 2, sep));
      sep.bq = fx.w("bq");
      sep.bk = fx.w("bk");
      sep.bv = fx.w("bv");
      sep.bo = fx.w("bo");
      E2E_CHECK_CLOSE(r["sb"], ref::multiHeadAttention(X, K, V, 4, sep));
    }
  }
}

//===----------------------------------------------------------------------===//
// Numerical stability: logits around 1e3
//===----------------------------------------------------------------------===//

TEST_CASE("softmax of logits around +-1e3 is stable", "[attention]") {
  static const Fixture fx = makeFixture(R"(
model softmax_big
input s: f32[rows, n]
p = softmax(s, dim = -1)
output p
)",
                                        {});
  for (int64_t n : {1, 7, 1031}) {
    DYNAMIC_SECTION("row length " << n) {
      Random rng(static_cast<uint32_t>(n));
      // Rows: 1000 + ints, -1000 + ints, mixed +-1000, constant 1000, 3000 +
      // ints.
      const int64_t rows = 5;
      std::vector<float> s;
      std::vector<float> noise = rng.integers(rows * n, -20, 20);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < n; ++j) {
          float e = noise[size_t(r * n + j)];
          switch (r) {
          case 0:
            s.push_back(1000 + e);
            break;
          case 1:
            s.push_back(-1000 + e);
            break;
          case 2:
            s.push_back(j % 2 ? -1000.0f + e : 1000.0f + e);
            break;
          case 3:
            s.push_back(1000);
            break;
          default:
            s.push_back(3000 + e);
            break;
          }
        }
      HostTensor in = HostTensor::f32({rows, n}, s);
      RunResult r = fx.model->runOk({in});
      CHECK(allFinite(r["p"].toDoubles()));
      E2E_CHECK_CLOSE(r["p"], ref::softmax(ref::fromTensor(in), -1));
    }
  }
}

TEST_CASE("attention with q.k around 1e3 is stable", "[attention]") {
  // Integer-valued q and k with d = 4 make every logit, and its scale by
  // 1/sqrt(4), exact in float32, so the reference sees the same logits.
  static const Fixture fx = makeFixture(R"(
model attention_big
input q: f32[seq, 4]
input k: f32[seq, 4]
input v: f32[seq, 3]
y = sdpa(q, k, v)
p = softmax(q @ transpose(k, -2, -1) / sqrt(4), dim = -1)
z = p @ v
output y, p, z
)",
                                        {});
  for (int64_t seq : kSeqs) {
    DYNAMIC_SECTION("seq " << seq) {
      Random rng(static_cast<uint32_t>(seq + 5));
      HostTensor q = HostTensor::f32({seq, 4}, rng.integers(seq * 4, -31, 31));
      HostTensor k = HostTensor::f32({seq, 4}, rng.integers(seq * 4, -31, 31));
      HostTensor v = rng.f32({seq, 3});
      RunResult r = fx.model->runOk({q, k, v});
      Array Q = ref::fromTensor(q), K = ref::fromTensor(k),
            V = ref::fromTensor(v);
      Array logits = ref::scale(ref::matmul(Q, ref::transpose(K, -2, -1)), 0.5);
      double maxLogit = 0;
      for (double l : logits.data)
        maxLogit = std::max(maxLogit, std::fabs(l));
      INFO("max |logit| " << maxLogit);
      if (seq > 3)
        CHECK(maxLogit > 500);
      for (const char *name : {"y", "p", "z"}) {
        INFO("output " << name);
        CHECK(allFinite(r[name].toDoubles()));
      }
      Array p = ref::softmax(logits, -1);
      E2E_CHECK_CLOSE(r["p"], p);
      E2E_CHECK_CLOSE(r["z"], ref::matmul(p, V));
      // y is the fused kernel (sdpa alone fuses): issue 3 asks for 1e-5
      // relative to float64, also with logits around 1e3.
      E2E_CHECK_CLOSE(r["y"], ref::sdpa(Q, K, V), 1e-5, 1e-6);
    }
  }
}

//===----------------------------------------------------------------------===//
// Tile boundaries of a blocked attention kernel
//===----------------------------------------------------------------------===//

TEST_CASE("sdpa at block-boundary lengths and odd head dims", "[attention]") {
  // Lengths around multiples of 4, 16 and 64 (vector lanes, key blocks and
  // query blocks of a flash-attention lowering) and head dims that are not
  // multiples of the vector width, in f32 and f64.
  struct Head {
    int64_t d, dv;
  };
  static const Head heads[] = {{1, 1},   {3, 5},  {4, 16},
                               {16, 33}, {17, 4}, {64, 64}};
  static const Fixture fx = [] {
    Random rng(1004);
    Weights w;
    std::string source = "model sdpa_tiles\ninput x: f32[batch, tq, 8]\n"
                         "input m: f32[batch, tk, 8]\n"
                         "input q64: f64[tq, 5]\ninput k64: f64[tk, 5]\n"
                         "input v64: f64[tk, 3]\n"
                         "y64 = sdpa(q64, k64, v64)\n";
    std::string outputs = "output y64";
    for (const Head &h : heads) {
      std::string n = std::to_string(h.d) + "_" + std::to_string(h.dv);
      w["Wq" + n] = rng.weight({h.d, 8});
      w["Wk" + n] = rng.weight({h.d, 8});
      w["Wv" + n] = rng.weight({h.dv, 8});
      source += "y" + n + " = sdpa(linear(x, weight = \"Wq" + n +
                "\"), linear(m, weight = \"Wk" + n +
                "\"), linear(m, weight = \"Wv" + n + "\"))\n";
      outputs += ", y" + n;
    }
    return makeFixture(source + outputs + "\n", w);
  }();
  struct Shape {
    int64_t batch, tq, tk;
  };
  const Shape shapes[] = {
      {1, 1, 1},   {2, 15, 16},   {1, 16, 15},   {1, 63, 64}, {2, 64, 65},
      {1, 65, 63}, {1, 127, 129}, {1, 128, 128}, {1, 200, 1}, {1, 1, 200}};
  for (Shape s : shapes) {
    DYNAMIC_SECTION("batch " << s.batch << " tq " << s.tq << " tk " << s.tk) {
      Random rng(static_cast<uint32_t>(s.batch * 1000003 + s.tq * 1009 + s.tk));
      HostTensor x = rng.f32({s.batch, s.tq, 8}, -2.0f, 2.0f),
                 m = rng.f32({s.batch, s.tk, 8}, -2.0f, 2.0f);
      auto f64 = [&](std::vector<int64_t> shape) {
        std::vector<float> v = rng.uniform(elementCount(shape), -3.0f, 3.0f);
        return HostTensor::f64(shape, std::vector<double>(v.begin(), v.end()));
      };
      HostTensor q64 = f64({s.tq, 5}), k64 = f64({s.tk, 5}),
                 v64 = f64({s.tk, 3});
      RunResult r = fx.model->runOk({x, m, q64, k64, v64});
      E2E_CHECK_CLOSE(r["y64"],
                      ref::sdpa(ref::fromTensor(q64), ref::fromTensor(k64),
                                ref::fromTensor(v64)),
                      1e-12, 1e-13);
      Array X = ref::fromTensor(x), M = ref::fromTensor(m);
      for (const Head &h : heads) {
        std::string n = std::to_string(h.d) + "_" + std::to_string(h.dv);
        INFO("d " << h.d << " dv " << h.dv);
        E2E_CHECK_CLOSE(r["y" + n], ref::sdpa(ref::linear(X, fx.w("Wq" + n)),
                                              ref::linear(M, fx.w("Wk" + n)),
                                              ref::linear(M, fx.w("Wv" + n))));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// The fused flash-attention path against the unfused chain
//===----------------------------------------------------------------------===//

TEST_CASE("fused attention matches the unfused chain and the reference",
          "[attention][both]") {
  // Compiled unfused and fused, for SSE, AVX2 and AVX-512 tilings (those
  // this machine runs). Lengths straddle multiples of 16, 32 and 64 (key and
  // query blocks); head dims are not multiples of the vector width.
  struct Variant {
    const char *name;
    bool fuse;
    const char *cpu;
  };
  static const Variant variants[] = {{"unfused x86-64-v2", false, "x86-64-v2"},
                                     {"fused x86-64-v2", true, "x86-64-v2"},
                                     {"fused x86-64-v3", true, "x86-64-v3"},
                                     {"fused x86-64-v4", true, "x86-64-v4"}};
  static const char *source = R"(
model fused
input x: f32[batch, seq, 16]
input mem: f32[batch, mseq, 16]
input q2: f32[seq, 4]
input k2: f32[mseq, 4]
input v2: f32[mseq, 3]
input qi: f32[seq, 4]
input ki: f32[mseq, 4]
input q64: f64[batch, seq, 5]
input k64: f64[batch, mseq, 5]
mha = multi_head_attention(x, x, x, heads = 4, weights = "mha")
mha1 = multi_head_attention(x, mem, mem, heads = 1, weights = "mha")
q = linear(x, weight = "Wq")
k = linear(mem, weight = "Wk")
v = linear(mem, weight = "Wv")
chain = softmax(q @ transpose(k, -2, -1) / sqrt(24), dim = -1) @ v
s = sdpa(q, k, v, scale = 0.1)
y2 = sdpa(q2, k2, v2)
y3 = softmax(q2 @ transpose(k2) * 0.5) @ v2
big = sdpa(qi, ki, v2)
y64 = sdpa(q64, k64, k64)
output mha, mha1, chain, s, y2, y3, big, y64
)";
  static const Weights weights = [] {
    Random rng(1005);
    Weights w;
    w["mha.in_proj_weight"] = rng.weight({48, 16});
    w["mha.in_proj_bias"] = rng.weight({48});
    w["mha.out_proj.weight"] = rng.weight({16, 16});
    w["mha.out_proj.bias"] = rng.weight({16});
    w["Wq"] = rng.weight({24, 16});
    w["Wk"] = rng.weight({24, 16});
    w["Wv"] = rng.weight({28, 16});
    return w;
  }();
  static std::vector<std::shared_ptr<Model>> models = [] {
    std::vector<std::shared_ptr<Model>> m;
    for (const Variant &v : variants) {
      if (!hostRuns(v.cpu)) {
        m.push_back(nullptr);
        continue;
      }
      BuildOptions options;
      options.fuseAttention = v.fuse;
      options.cpu = v.cpu;
      options.remarks = true;
      m.push_back(Model::build(source, weights, options));
    }
    return m;
  }();
  auto w = [&](const std::string &name) {
    return ref::fromWeight(weights.at(name));
  };

  for (size_t i = 0; i < std::size(variants); ++i) {
    if (!models[i])
      WARN("this machine cannot run " << variants[i].cpu << " code: "
                                      << variants[i].name << " not tested");
    else if (variants[i].fuse) {
      INFO(variants[i].name << " remarks:\n" << models[i]->diagnostics());
      // All eight attentions above reach the fused kernel: the six layers
      // lowered to it, the two hand-written chains fused into it.
      const std::string &d = models[i]->diagnostics();
      auto count = [&](const char *remark) {
        size_t n = 0;
        for (size_t at = d.find(remark); at != std::string::npos;
             at = d.find(remark, at + 1))
          ++n;
        return n;
      };
      CHECK(count("lowered to tfm.attention") == 6);
      CHECK(count("fused attention chain") == 2);
    }
  }

  struct Shape {
    int64_t batch, seq, mseq;
  };
  const Shape shapes[] = {{1, 1, 1},    {2, 3, 5},    {1, 15, 16},
                          {1, 16, 17},  {1, 33, 31},  {2, 63, 64},
                          {1, 64, 65},  {1, 65, 129}, {1, 129, 127},
                          {1, 257, 31}, {1, 1031, 40}};
  Array inB = w("mha.in_proj_bias"), outB = w("mha.out_proj.bias");
  ref::MhaWeights mw = ref::MhaWeights::packed(w("mha.in_proj_weight"), &inB,
                                               w("mha.out_proj.weight"), &outB);
  for (Shape sh : shapes) {
    DYNAMIC_SECTION("batch " << sh.batch << " seq " << sh.seq << " mseq "
                             << sh.mseq) {
      Random rng(
          static_cast<uint32_t>(sh.batch * 1000003 + sh.seq * 1009 + sh.mseq));
      HostTensor x = rng.f32({sh.batch, sh.seq, 16}),
                 mem = rng.f32({sh.batch, sh.mseq, 16}),
                 q2 = rng.f32({sh.seq, 4}, -2, 2),
                 k2 = rng.f32({sh.mseq, 4}, -2, 2), v2 = rng.f32({sh.mseq, 3});
      HostTensor qi =
          HostTensor::f32({sh.seq, 4}, rng.integers(sh.seq * 4, -31, 31));
      HostTensor ki =
          HostTensor::f32({sh.mseq, 4}, rng.integers(sh.mseq * 4, -31, 31));
      auto f64 = [&](std::vector<int64_t> shape) {
        std::vector<float> values = rng.uniform(elementCount(shape), -2, 2);
        return HostTensor::f64(
            shape, std::vector<double>(values.begin(), values.end()));
      };
      HostTensor q64 = f64({sh.batch, sh.seq, 5}),
                 k64 = f64({sh.batch, sh.mseq, 5});
      std::vector<HostTensor> inputs = {x, mem, q2, k2, v2, qi, ki, q64, k64};

      Array X = ref::fromTensor(x), M = ref::fromTensor(mem),
            Q2 = ref::fromTensor(q2), K2 = ref::fromTensor(k2),
            V2 = ref::fromTensor(v2), K64 = ref::fromTensor(k64);
      Array q = ref::linear(X, w("Wq")), k = ref::linear(M, w("Wk")),
            v = ref::linear(M, w("Wv"));
      std::map<std::string, Array> expected = {
          {"mha", ref::multiHeadAttention(X, X, X, 4, mw)},
          {"mha1", ref::multiHeadAttention(X, M, M, 1, mw)},
          {"chain", ref::sdpa(q, k, v)},
          {"s", ref::sdpa(q, k, v, 0.1)},
          {"y2", ref::sdpa(Q2, K2, V2)},
          {"y3", ref::sdpa(Q2, K2, V2, 0.5)},
          {"big", ref::sdpa(ref::fromTensor(qi), ref::fromTensor(ki), V2)},
          {"y64", ref::sdpa(ref::fromTensor(q64), K64, K64)}};

      std::optional<RunResult> unfused;
      for (size_t i = 0; i < std::size(variants); ++i) {
        if (!models[i])
          continue;
        INFO(variants[i].name);
        RunResult r = models[i]->runOk(inputs);
        for (const auto &[name, ref] : expected) {
          INFO("output " << name);
          CHECK(allFinite(r[name].toDoubles()));
          if (name == "y64")
            E2E_CHECK_CLOSE(r[name], ref, 1e-12, 1e-13);
          else
            E2E_CHECK_CLOSE(r[name], ref);
          if (unfused && name != "y64") {
            // Fused and unfused agree as closely as each agrees with f64.
            Comparison c = allClose(r[name].toDoubles(),
                                    (*unfused)[name].toDoubles(), 2e-4, 2e-5);
            INFO("fused vs unfused: " << c.message);
            CHECK(c.ok);
          }
        }
        if (!unfused)
          unfused = r;
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Masked attention: causal_mask and masked_fill
//===----------------------------------------------------------------------===//

namespace {
/// softmax(mask(q k^T * scale)) v in float64.
Array maskedAttention(const Array &q, const Array &k, const Array &v,
                      double scale,
                      const std::function<Array(const Array &)> &mask) {
  Array scores = ref::scale(ref::matmul(q, ref::transpose(k, -2, -1)), scale);
  return ref::matmul(ref::softmax(mask(scores), -1), v);
}
} // namespace

TEST_CASE("masked attention: causal_mask and masked_fill",
          "[attention][both]") {
  // Each chain spells its own scores, so that the fusion may take it.
  static const char *source = R"(
model masked
input x: f32[batch, seq, 8]
input mem: f32[batch, mseq, 8]
input pad: i64[batch, 1, mseq]
input keep: i32[seq, mseq]
q = linear(x, weight = "Wq")
k = linear(mem, weight = "Wk")
v = linear(mem, weight = "Wv")
causal = softmax(causal_mask(q @ transpose(k) / sqrt(8))) @ v
padded = softmax(masked_fill(q @ transpose(k) / sqrt(8), pad, -inf)) @ v
both = softmax(masked_fill(causal_mask(q @ transpose(k) * 0.25), keep, -inf), dim = -1) @ v
finite = softmax(masked_fill(q @ transpose(k) / sqrt(8), pad, -1e9)) @ v
self = softmax(causal_mask(x @ transpose(x) / sqrt(8))) @ x
output causal, padded, both, finite, self
)";
  static const Weights weights = [] {
    Random rng(1006);
    Weights w;
    w["Wq"] = rng.weight({8, 8});
    w["Wk"] = rng.weight({8, 8});
    w["Wv"] = rng.weight({5, 8});
    return w;
  }();
  auto build = [&](bool fuse) {
    BuildOptions options;
    options.fuseAttention = fuse;
    return Model::build(source, weights, options);
  };
  static const std::shared_ptr<Model> models[] = {build(true), build(false)};
  auto w = [&](const std::string &name) {
    return ref::fromWeight(weights.at(name));
  };
  struct Shape {
    int64_t batch, seq, mseq;
  };
  const Shape shapes[] = {{1, 1, 1},   {2, 3, 5},   {1, 5, 3},      {2, 17, 17},
                          {1, 64, 65}, {1, 70, 33}, {1, 1031, 1031}};
  for (Shape sh : shapes) {
    DYNAMIC_SECTION("batch " << sh.batch << " seq " << sh.seq << " mseq "
                             << sh.mseq) {
      Random rng(
          static_cast<uint32_t>(sh.batch * 1000003 + sh.seq * 1009 + sh.mseq));
      HostTensor x = rng.f32({sh.batch, sh.seq, 8}),
                 mem = rng.f32({sh.batch, sh.mseq, 8});
      // Masks that leave key 0 of every row visible, so no row is all -inf.
      std::vector<int64_t> pad = rng.ids(sh.batch * sh.mseq, 0, 1);
      for (int64_t b = 0; b < sh.batch; ++b)
        pad[size_t(b * sh.mseq)] = 0;
      std::vector<int64_t> keep64 = rng.ids(sh.seq * sh.mseq, 0, 1);
      for (int64_t i = 0; i < sh.seq; ++i)
        keep64[size_t(i * sh.mseq)] = 0;
      std::vector<int32_t> keep(keep64.begin(), keep64.end());
      std::vector<HostTensor> inputs = {
          x, mem, HostTensor::i64({sh.batch, 1, sh.mseq}, pad),
          HostTensor::i32({sh.seq, sh.mseq}, keep)};

      Array X = ref::fromTensor(x), M = ref::fromTensor(mem);
      Array q = ref::linear(X, w("Wq")), k = ref::linear(M, w("Wk")),
            v = ref::linear(M, w("Wv"));
      double s = 1 / std::sqrt(8.0);
      auto padMask = [&](double value) {
        return [&, value](const Array &a) {
          return ref::maskedFill(a, {sh.batch, 1, sh.mseq}, pad, value);
        };
      };
      std::map<std::string, Array> expected = {
          {"causal", maskedAttention(q, k, v, s, ref::causalMask)},
          {"padded", maskedAttention(q, k, v, s, padMask(-INFINITY))},
          {"both", maskedAttention(q, k, v, 0.25,
                                   [&](const Array &a) {
                                     return ref::maskedFill(ref::causalMask(a),
                                                            {sh.seq, sh.mseq},
                                                            keep64, -INFINITY);
                                   })},
          {"finite", maskedAttention(q, k, v, s, padMask(-1e9))},
          {"self", maskedAttention(X, X, X, s, ref::causalMask)}};
      for (size_t m = 0; m < std::size(models); ++m) {
        INFO((m ? "unfused" : "fused"));
        RunResult r = models[m]->runOk(inputs);
        for (const auto &[name, ref] : expected) {
          INFO("output " << name);
          CHECK(allFinite(r[name].toDoubles()));
          // The fused kernel is held to issue 3's 1e-5 relative to float64
          // (causal, masked, S = 1, odd S); the -1e9 fill stays unfused.
          bool fused = m == 0 && std::string(name) != "finite";
          E2E_CHECK_CLOSE(r[name], ref, fused ? 1e-5 : 1e-4,
                          fused ? 1e-6 : 1e-5);
        }
      }
    }
  }
}

TEST_CASE("rows where every key is masked agree fused and unfused", "[masks]") {
  // softmax over a row of -inf is 0/0: PyTorch's x.masked_fill(m, -inf)
  // .softmax(-1) @ v gives NaN. Whatever the answer, fusing the chain must
  // not change it (docs/compiler.md: fusion refuses where it would change
  // the result).
  static const char *source = R"(
model all_masked
input q: f32[seq, 4]
input k: f32[mseq, 4]
input pad: i64[mseq]
y = softmax(masked_fill(q @ transpose(k) / sqrt(4), pad, -inf)) @ k
output y
)";
  auto build = [&](bool fuse) {
    BuildOptions options;
    options.fuseAttention = fuse;
    return Model::build(source, {}, options);
  };
  static const std::shared_ptr<Model> fused = build(true),
                                      unfused = build(false);
  Random rng(1007);
  HostTensor q = rng.f32({3, 4}), k = rng.f32({5, 4});
  HostTensor pad = HostTensor::i64({5}, std::vector<int64_t>(5, 1));
  std::vector<double> f = fused->runOk({q, k, pad})["y"].toDoubles();
  std::vector<double> u = unfused->runOk({q, k, pad})["y"].toDoubles();
  size_t differ = 0;
  for (size_t i = 0; i < f.size(); ++i)
    differ += !((std::isnan(f[i]) && std::isnan(u[i])) || f[i] == u[i]);
  INFO("fused: " << f[0] << " ..., unfused: " << u[0] << " ... (PyTorch: nan); "
                 << differ << " of " << f.size() << " values differ");
  CHECK(differ == 0);
}

//===----------------------------------------------------------------------===//
// Ways to spell attention (what the fusion must recognize or leave alone)
//===----------------------------------------------------------------------===//

TEST_CASE("attention spelled in many ways", "[attention]") {
  // Scales on q or k, several scales, K given transposed, additive masks
  // (after and before the scale), softmax over the query dim, batch dims that
  // broadcast. Fused or not, each must compute what it says.
  static const std::shared_ptr<Model> model = Model::build(R"(
model spellings
input q: f32[seq, 4]
input k: f32[mseq, 4]
input kt: f32[4, mseq]
input v: f32[mseq, 3]
input bias: f32[seq, mseq]
a = softmax((q / sqrt(4)) @ transpose(k)) @ v
b = softmax(q @ transpose(k * 0.5)) @ v
c = softmax(q @ kt / 2) @ v
d = softmax(q @ transpose(k, 1, 0) * 0.5 * 2) @ v
e = softmax(2 * (q @ transpose(k)) / 4) @ v
f = softmax(q @ transpose(k) / 2 + bias) @ v
g = softmax(q @ transpose(k)) @ v
h = matmul(softmax(matmul(q, transpose(k, -1, -2)) / sqrt(4), dim = 1), v)
i = softmax(q @ transpose(k) / 2, dim = 0) @ v
j = softmax((q @ transpose(k) + bias) / 2) @ v
output a, b, c, d, e, f, g, h, i, j
)");
  const std::pair<int64_t, int64_t> shapes[] = {
      {1, 1}, {3, 5}, {17, 64}, {70, 33}, {1031, 20}};
  for (auto [seq, mseq] : shapes) {
    DYNAMIC_SECTION("seq " << seq << " mseq " << mseq) {
      Random rng(static_cast<uint32_t>(seq * 1009 + mseq));
      HostTensor q = rng.f32({seq, 4}, -2, 2), k = rng.f32({mseq, 4}, -2, 2),
                 v = rng.f32({mseq, 3}), bias = rng.f32({seq, mseq}, -3, 3);
      Array Q = ref::fromTensor(q), K = ref::fromTensor(k),
            V = ref::fromTensor(v), B = ref::fromTensor(bias);
      HostTensor kt = HostTensor::f32({4, mseq}, ref::transpose(K, 0, 1).data);
      RunResult r = model->runOk({q, k, kt, v, bias});
      Array s = ref::matmul(Q, ref::transpose(K, 0, 1));
      auto attend = [&](const Array &scores, int64_t dim = -1) {
        return ref::matmul(ref::softmax(scores, dim), V);
      };
      E2E_CHECK_CLOSE(r["a"], attend(ref::scale(s, 0.5)));
      E2E_CHECK_CLOSE(r["b"], attend(ref::scale(s, 0.5)));
      E2E_CHECK_CLOSE(r["c"], attend(ref::scale(s, 0.5)));
      E2E_CHECK_CLOSE(r["d"], attend(s));
      E2E_CHECK_CLOSE(r["e"], attend(ref::scale(s, 0.5)));
      E2E_CHECK_CLOSE(r["f"], attend(ref::add(ref::scale(s, 0.5), B)));
      E2E_CHECK_CLOSE(r["g"], attend(s));
      E2E_CHECK_CLOSE(r["h"], attend(ref::scale(s, 0.5), 1));
      E2E_CHECK_CLOSE(r["i"], attend(ref::scale(s, 0.5), 0));
      E2E_CHECK_CLOSE(r["j"], attend(ref::scale(ref::add(s, B), 0.5)));
    }
  }
}

TEST_CASE("attention chains whose batch dims broadcast", "[attention]") {
  // '@' broadcasts batch dims, so a hand-written chain may share K and V
  // across a batch (or across heads: multi-query attention). docs/compiler.md
  // says the fusion refuses batch dims that broadcast.
  static const std::shared_ptr<Model> model = Model::build(R"(
model broadcast_batch
input qb: f32[batch, seq, 4]
input k1: f32[1, mseq, 4]
input v1: f32[1, mseq, 3]
input q1: f32[1, seq, 4]
input kb: f32[batch, mseq, 4]
input vb: f32[batch, mseq, 3]
input q2: f32[2, seq, 4]
input q4: f32[batch, 2, seq, 4]
input k4: f32[batch, 1, mseq, 4]
input v4: f32[batch, 1, mseq, 3]
shared_kv = softmax(qb @ transpose(k1) / 2) @ v1
shared_q = softmax(q1 @ transpose(kb) / 2) @ vb
static_batch = softmax(q2 @ transpose(k1) / 2) @ v1
multi_query = softmax(q4 @ transpose(k4) / 2) @ v4
output shared_kv, shared_q, static_batch, multi_query
)");
  struct Shape {
    int64_t batch, seq, mseq;
  };
  const Shape shapes[] = {{1, 3, 5}, {2, 3, 5}, {3, 17, 70}, {2, 1031, 9}};
  for (Shape sh : shapes) {
    DYNAMIC_SECTION("batch " << sh.batch << " seq " << sh.seq << " mseq "
                             << sh.mseq) {
      Random rng(
          static_cast<uint32_t>(sh.batch * 100003 + sh.seq * 1009 + sh.mseq));
      std::vector<HostTensor> in = {rng.f32({sh.batch, sh.seq, 4}, -2, 2),
                                    rng.f32({1, sh.mseq, 4}, -2, 2),
                                    rng.f32({1, sh.mseq, 3}),
                                    rng.f32({1, sh.seq, 4}, -2, 2),
                                    rng.f32({sh.batch, sh.mseq, 4}, -2, 2),
                                    rng.f32({sh.batch, sh.mseq, 3}),
                                    rng.f32({2, sh.seq, 4}, -2, 2),
                                    rng.f32({sh.batch, 2, sh.seq, 4}, -2, 2),
                                    rng.f32({sh.batch, 1, sh.mseq, 4}, -2, 2),
                                    rng.f32({sh.batch, 1, sh.mseq, 3})};
      RunResult r = model->runOk(in);
      auto attend = [&](size_t q, size_t k, size_t v) {
        Array K = ref::fromTensor(in[k]);
        Array s =
            ref::matmul(ref::fromTensor(in[q]), ref::transpose(K, -2, -1));
        return ref::matmul(ref::softmax(ref::scale(s, 0.5), -1),
                           ref::fromTensor(in[v]));
      };
      E2E_CHECK_CLOSE(r["shared_kv"], attend(0, 1, 2));
      E2E_CHECK_CLOSE(r["shared_q"], attend(3, 4, 5));
      E2E_CHECK_CLOSE(r["static_batch"], attend(6, 1, 2));
      E2E_CHECK_CLOSE(r["multi_query"], attend(7, 8, 9));
    }
  }
}

TEST_CASE("masked attention: masks broadcast over some leading dims",
          "[attention][both]") {
  // A per-batch padding mask [B, 1, 1, Sk] or [B, 1, Sq, Sk] and a per-head
  // one [1, H, 1, Sk] against [B, H, Sq, Sk] scores: the fused kernel reads
  // them through a stride per leading dim (issue 8, D17: this compile
  // failed in the CPU lowering after fusion had accepted the chain).
  static const char *source = R"(
model partial
input q: f32[batch, 3, seq, 4]
input k: f32[batch, 3, mseq, 4]
input v: f32[batch, 3, mseq, 4]
input pad: i64[batch, 1, 1, mseq]
input rows: i64[batch, 1, seq, mseq]
input heads: i64[1, 3, 1, mseq]
a = softmax(masked_fill(q @ transpose(k) / sqrt(4), pad, -inf)) @ v
b = softmax(masked_fill(q @ transpose(k) / sqrt(4), rows, -inf)) @ v
c = softmax(masked_fill(q @ transpose(k) / sqrt(4), heads, -inf)) @ v
output a, b, c
)";
  auto build = [&](bool fuse) {
    BuildOptions options;
    options.fuseAttention = fuse;
    options.remarks = true;
    return Model::build(source, {}, options);
  };
  static const std::shared_ptr<Model> models[] = {build(true), build(false)};
  CHECK(models[0]->diagnostics().find("not fused") == std::string::npos);
  struct Shape {
    int64_t batch, seq, mseq;
  };
  for (Shape sh : {Shape{2, 3, 5}, Shape{3, 17, 33}, Shape{1, 1, 1}}) {
    DYNAMIC_SECTION("batch " << sh.batch << " seq " << sh.seq << " mseq "
                             << sh.mseq) {
      Random rng(
          static_cast<uint32_t>(sh.batch * 7919 + sh.seq * 31 + sh.mseq));
      HostTensor q = rng.f32({sh.batch, 3, sh.seq, 4}),
                 k = rng.f32({sh.batch, 3, sh.mseq, 4}),
                 v = rng.f32({sh.batch, 3, sh.mseq, 4});
      // Key 0 stays visible in every row, so no row is all -inf.
      auto maskIds = [&](std::vector<int64_t> shape) {
        std::vector<int64_t> ids = rng.ids(elementCount(shape), 0, 1);
        for (size_t i = 0; i < ids.size(); i += size_t(sh.mseq))
          ids[i] = 0;
        return ids;
      };
      std::vector<int64_t> padShape = {sh.batch, 1, 1, sh.mseq},
                           rowShape = {sh.batch, 1, sh.seq, sh.mseq},
                           headShape = {1, 3, 1, sh.mseq};
      std::vector<int64_t> pad = maskIds(padShape), rows = maskIds(rowShape),
                           heads = maskIds(headShape);
      Array Q = ref::fromTensor(q), K = ref::fromTensor(k),
            V = ref::fromTensor(v);
      auto fill = [&](const std::vector<int64_t> &shape,
                      const std::vector<int64_t> &ids) {
        return [&shape, &ids](const Array &a) {
          return ref::maskedFill(a, shape, ids, -INFINITY);
        };
      };
      for (size_t m = 0; m < std::size(models); ++m) {
        INFO((m ? "unfused" : "fused"));
        RunResult r = models[m]->runOk({q, k, v, HostTensor::i64(padShape, pad),
                                        HostTensor::i64(rowShape, rows),
                                        HostTensor::i64(headShape, heads)});
        E2E_CHECK_CLOSE(r["a"],
                        maskedAttention(Q, K, V, 0.5, fill(padShape, pad)),
                        1e-5, 1e-6);
        E2E_CHECK_CLOSE(r["b"],
                        maskedAttention(Q, K, V, 0.5, fill(rowShape, rows)),
                        1e-5, 1e-6);
        E2E_CHECK_CLOSE(r["c"],
                        maskedAttention(Q, K, V, 0.5, fill(headShape, heads)),
                        1e-5, 1e-6);
      }
    }
  }
}
