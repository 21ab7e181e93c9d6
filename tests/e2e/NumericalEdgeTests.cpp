//===- NumericalEdgeTests.cpp - Numerical edges against the f64 reference -===//
//
// The inputs where numerics break first (issue 8): attention logits around
// +-1e4, rows whose keys are all masked, NaN and infinities in the inputs,
// sequence length 1, head dim 1, the head dims of real models that are not
// powers of two (24, 28, 80, 96, 112), and sequences exactly as long as a
// learned position table. Expected values come from the float64 reference;
// NaN and infinities must appear exactly where PyTorch puts them
// (allClose: a NaN in the reference needs a NaN, an infinity the same one).
//
// Tagged [edges]; ctest runs them fused and unfused (e2e.edges,
// e2e.unfused.edges).
//
//===----------------------------------------------------------------------===//
#include "Fixture.h"
#include "Harness.h"
#include "Reference.h"
#include "ReferenceLayers.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace e2e;
using ref::Array;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// A bool tensor from 0/1 values.
HostTensor boolTensor(std::vector<int64_t> shape,
                      const std::vector<int64_t> &values) {
  HostTensor t = HostTensor::zeros(TFM_DTYPE_BOOL, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i)
    t.bytes[i] = values[i] != 0;
  return t;
}

/// Values as float32, with `special` written over some of them.
HostTensor
withSpecials(const HostTensor &t,
             const std::vector<std::pair<int64_t, double>> &special) {
  std::vector<double> values = t.toDoubles();
  for (auto [index, value] : special)
    values[size_t(index)] = value;
  return HostTensor::f32(t.shape, values);
}

size_t countNaN(const std::vector<double> &values) {
  size_t n = 0;
  for (double v : values)
    n += std::isnan(v);
  return n;
}

} // namespace

//===----------------------------------------------------------------------===//
// Logits around +-1e4
//===----------------------------------------------------------------------===//

TEST_CASE("attention with logits around +-1e4 is stable and exact", "[edges]") {
  // Integer q and k (|q_i|, |k_i| <= 100, d = 4) make every logit and its
  // scale by 1/sqrt(4) exact in float32, up to 2e4 in magnitude, so float32
  // and the reference see the same logits. The HF-style mask adds -1e4.
  static const Fixture fx = makeFixture(R"(
model logits_1e4
input q: f32[batch, seq, 4]
input k: f32[batch, kseq, 4]
input v: f32[batch, kseq, 3]
input bias: f32[batch, 1, kseq]
y = sdpa(q, k, v)
chain = softmax(q @ transpose(k, 1, 2) / sqrt(4), dim = -1) @ v
masked = softmax(q @ transpose(k, 1, 2) / sqrt(4) + bias, dim = -1) @ v
p = softmax(q @ transpose(k, 1, 2) * 0.5, dim = -1)
output y, chain, masked, p
)",
                                        {});
  struct Shape {
    int64_t batch, seq, kseq;
  };
  const Shape shapes[] = {{1, 1, 1}, {2, 5, 7}, {1, 64, 65}, {1, 130, 129}};
  for (Shape s : shapes) {
    DYNAMIC_SECTION("batch " << s.batch << " seq " << s.seq << " kseq "
                             << s.kseq) {
      Random rng(static_cast<uint32_t>(s.seq * 131 + s.kseq));
      HostTensor q = HostTensor::f32(
          {s.batch, s.seq, 4}, rng.integers(s.batch * s.seq * 4, -100, 100));
      HostTensor k = HostTensor::f32(
          {s.batch, s.kseq, 4}, rng.integers(s.batch * s.kseq * 4, -100, 100));
      HostTensor v = rng.f32({s.batch, s.kseq, 3});
      // Key 0 always takes part; others get -1e4 about half the time.
      std::vector<float> bias = rng.integers(s.batch * s.kseq, 0, 1);
      for (int64_t i = 0; i < s.batch * s.kseq; ++i)
        bias[size_t(i)] = i % s.kseq == 0 ? 0.0f : bias[size_t(i)] * -1e4f;
      HostTensor biasT = HostTensor::f32({s.batch, 1, s.kseq}, bias);
      RunResult r = fx.model->runOk({q, k, v, biasT});

      Array Q = ref::fromTensor(q), K = ref::fromTensor(k),
            V = ref::fromTensor(v), B = ref::fromTensor(biasT);
      Array logits = ref::scale(ref::matmul(Q, ref::transpose(K, 1, 2)), 0.5);
      double maxLogit = 0;
      for (double l : logits.data)
        maxLogit = std::max(maxLogit, std::fabs(l));
      INFO("max |logit| " << maxLogit);
      if (s.seq * s.kseq > 30)
        CHECK(maxLogit > 5e3);
      Array p = ref::softmax(logits, -1);
      for (const char *name : {"y", "chain", "masked", "p"}) {
        INFO("output " << name);
        CHECK(allFinite(r[name].toDoubles()));
      }
      E2E_CHECK_CLOSE(r["p"], p, 1e-5, 1e-6);
      E2E_CHECK_CLOSE(r["y"], ref::matmul(p, V), 1e-5, 1e-6);
      E2E_CHECK_CLOSE(r["chain"], ref::matmul(p, V), 1e-5, 1e-6);
      E2E_CHECK_CLOSE(r["masked"],
                      ref::matmul(ref::softmax(ref::add(logits, B), -1), V),
                      1e-5, 1e-6);
    }
  }
}

TEST_CASE("softmax of rows around +-1e4", "[edges]") {
  static const Fixture fx = makeFixture(R"(
model softmax_1e4
input s: f32[rows, n]
p = softmax(s, dim = -1)
output p
)",
                                        {});
  for (int64_t n : {1, 2, 63, 64, 65, 1000}) {
    DYNAMIC_SECTION("row length " << n) {
      Random rng(static_cast<uint32_t>(n + 77));
      std::vector<float> noise = rng.integers(6 * n, -50, 50);
      std::vector<float> s;
      for (int64_t r = 0; r < 6; ++r)
        for (int64_t j = 0; j < n; ++j) {
          float e = noise[size_t(r * n + j)];
          const float rowValue[] = {
              1e4f + e, -1e4f + e, j % 2 ? -1e4f : 1e4f + e,
              1e4f,     -3e4f + e, j == n - 1 ? 1e4f : -1e4f};
          s.push_back(rowValue[r]);
        }
      HostTensor in = HostTensor::f32({6, n}, s);
      RunResult r = fx.model->runOk({in});
      CHECK(allFinite(r["p"].toDoubles()));
      E2E_CHECK_CLOSE(r["p"], ref::softmax(ref::fromTensor(in), -1), 1e-5,
                      1e-7);
    }
  }
}

//===----------------------------------------------------------------------===//
// Rows whose keys are all masked
//===----------------------------------------------------------------------===//

TEST_CASE("rows whose keys are all masked give zeros in sdpa and "
          "multi_head_attention",
          "[edges]") {
  // docs/layers.md: a row with every key masked yields zeros (never NaN),
  // with a bool mask, a float mask of -inf, a key padding mask or both.
  static const Weights weights = [] {
    Random rng(8101);
    Weights w;
    w["mha.in_proj_weight"] = rng.weight({24, 8});
    w["mha.in_proj_bias"] = rng.weight({24});
    w["mha.out_proj.weight"] = rng.weight({8, 8});
    w["mha.out_proj.bias"] = rng.weight({8});
    return w;
  }();
  static const Fixture fx = makeFixture(R"(
model all_masked_rows
input q: f32[batch, seq, 8]
input k: f32[batch, kseq, 8]
input v: f32[batch, kseq, 5]
input take: bool[batch, seq, kseq]
input addm: f32[batch, seq, kseq]
input pad: bool[batch, kseq]
yb = sdpa(q, k, v, attn_mask = take)
yf = sdpa(q, k, v, attn_mask = addm)
yc = sdpa(q, k, v, attn_mask = take, is_causal = true)
m = multi_head_attention(q, k, k, heads = 2, weights = "mha", key_padding_mask = pad)
output yb, yf, yc, m
)",
                                        weights);
  struct Shape {
    int64_t batch, seq, kseq;
  };
  const Shape shapes[] = {{1, 1, 1}, {2, 4, 6}, {2, 17, 65}, {1, 70, 33}};
  for (Shape s : shapes) {
    DYNAMIC_SECTION("batch " << s.batch << " seq " << s.seq << " kseq "
                             << s.kseq) {
      Random rng(static_cast<uint32_t>(s.seq * 7 + s.kseq));
      HostTensor q = rng.f32({s.batch, s.seq, 8}),
                 k = rng.f32({s.batch, s.kseq, 8}),
                 v = rng.f32({s.batch, s.kseq, 5});
      // Every other row takes no key; the others take key 0 and some more.
      std::vector<int64_t> take = rng.ids(s.batch * s.seq * s.kseq, 0, 1);
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t i = 0; i < s.seq; ++i)
          for (int64_t j = 0; j < s.kseq; ++j) {
            int64_t &t = take[size_t((b * s.seq + i) * s.kseq + j)];
            t = i % 2 == 0 ? 0 : (j == 0 ? 1 : t);
          }
      std::vector<double> addm(take.size());
      for (size_t i = 0; i < take.size(); ++i)
        addm[i] = take[i] ? 0.0 : -kInf;
      // The last batch pads every key; the others none but the last.
      std::vector<int64_t> pad(size_t(s.batch * s.kseq), 0);
      for (int64_t j = 0; j < s.kseq; ++j) {
        pad[size_t((s.batch - 1) * s.kseq + j)] = 1;
        if (s.batch > 1 && j == s.kseq - 1 && s.kseq > 1)
          pad[size_t(j)] = 1;
      }
      HostTensor takeT = boolTensor({s.batch, s.seq, s.kseq}, take);
      HostTensor addmT = HostTensor::f32({s.batch, s.seq, s.kseq}, addm);
      HostTensor padT = boolTensor({s.batch, s.kseq}, pad);
      RunResult r = fx.model->runOk({q, k, v, takeT, addmT, padT});

      Array Q = ref::fromTensor(q), K = ref::fromTensor(k),
            V = ref::fromTensor(v);
      int64_t sq = s.seq, sk = s.kseq;
      ref::AttentionMask takeMask{[&](int64_t b, int64_t i, int64_t j) {
                                    return !take[size_t((b * sq + i) * sk + j)];
                                  },
                                  nullptr};
      double scale = 1 / std::sqrt(8.0);
      Array expected = ref::maskedAttention(Q, K, V, scale, takeMask);
      for (const char *name : {"yb", "yf", "yc", "m"}) {
        INFO("output " << name);
        CHECK(countNaN(r[name].toDoubles()) == 0);
      }
      E2E_CHECK_CLOSE(r["yb"], expected);
      E2E_CHECK_CLOSE(r["yf"], expected);
      E2E_CHECK_CLOSE(r["yc"],
                      ref::maskedAttention(Q, K, V, scale, takeMask, true));
      // Rows with no key give exact zeros.
      std::vector<double> yb = r["yb"].toDoubles();
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t c = 0; c < 5; ++c)
          CHECK(yb[size_t((b * s.seq) * 5 + c)] == 0.0);

      Array inW = ref::fromWeight(weights.at("mha.in_proj_weight")),
            inB = ref::fromWeight(weights.at("mha.in_proj_bias")),
            outW = ref::fromWeight(weights.at("mha.out_proj.weight")),
            outB = ref::fromWeight(weights.at("mha.out_proj.bias"));
      ref::AttentionMask padMask{[&](int64_t n, int64_t, int64_t j) {
                                   return pad[size_t((n / 2) * sk + j)] != 0;
                                 },
                                 nullptr};
      E2E_CHECK_CLOSE(r["m"],
                      ref::maskedMultiHeadAttention(
                          Q, K, K, 2,
                          ref::MhaWeights::packed(inW, &inB, outW, &outB),
                          padMask));
    }
  }
}

//===----------------------------------------------------------------------===//
// NaN and infinities in the inputs
//===----------------------------------------------------------------------===//

TEST_CASE("NaN and infinities in inputs propagate as in PyTorch", "[edges]") {
  // PyTorch propagates NaN through every op here: relu(NaN) is NaN (not 0),
  // a softmax row holding NaN or +inf is NaN (exp(inf - inf)), a -inf logit
  // is a probability of 0, layer_norm of a row holding an infinity is NaN.
  static const Weights weights = [] {
    Random rng(8201);
    Weights w;
    // Non-zero weights, so that inf * w is never inf * 0.
    Weight w1 = rng.weight({16, 8}, 0.1f, 1.0f);
    for (size_t i = 0; i < w1.data.size(); i += 3)
      w1.data[i] = -w1.data[i];
    w["w1"] = w1;
    w["b1"] = rng.weight({16});
    w["ln.weight"] = rng.weight({8}, 0.5f, 1.5f);
    w["ln.bias"] = rng.weight({8});
    return w;
  }();
  static const Fixture fx = makeFixture(R"(
model specials
input x: f32[rows, 8]
h = linear(x, weight = "w1", bias = "b1")
r = relu(h)
g = gelu(x)
s = softmax(x, dim = -1)
n = layer_norm(x, weight = "ln.weight", bias = "ln.bias")
big = relu(linear(x, weight = "w1"))
output h, r, g, s, n, big
)",
                                        weights);
  for (int64_t rows : {5, 67}) {
    DYNAMIC_SECTION("rows " << rows) {
      Random rng(static_cast<uint32_t>(rows));
      // Row 0 plain, row 1 one NaN, row 2 one +inf, row 3 one -inf, row 4 a
      // NaN and a -inf; further rows (past a vector tile) the same again.
      std::vector<std::pair<int64_t, double>> specials = {{8 + 3, kNaN},
                                                          {16 + 5, kInf},
                                                          {24 + 0, -kInf},
                                                          {32 + 7, kNaN},
                                                          {32 + 1, -kInf}};
      if (rows > 64)
        specials.push_back({64 * 8 + 2, kNaN});
      HostTensor x = withSpecials(rng.f32({rows, 8}, -2.0f, 2.0f), specials);
      RunResult r = fx.model->runOk({x});
      Array X = ref::fromTensor(x);
      Array b1 = fx.w("b1"), lnw = fx.w("ln.weight"), lnb = fx.w("ln.bias");
      Array h = ref::linear(X, fx.w("w1"), &b1);
      E2E_CHECK_CLOSE(r["h"], h);
      E2E_CHECK_CLOSE(r["r"], ref::relu(h));
      E2E_CHECK_CLOSE(r["big"], ref::relu(ref::linear(X, fx.w("w1"))));
      E2E_CHECK_CLOSE(r["s"], ref::softmax(X, -1));
      E2E_CHECK_CLOSE(r["n"], ref::layerNorm(X, &lnw, &lnb, 1e-5));
      // gelu(-inf) is 0 * -inf in PyTorch's formula; only NaN is checked.
      std::vector<double> g = r["g"].toDoubles();
      CHECK(std::isnan(g[8 + 3]));
      CHECK(g[16 + 5] == kInf);
      // Whole rows: NaN exactly where PyTorch has it.
      std::vector<double> s = r["s"].toDoubles();
      for (int64_t c = 0; c < 8; ++c) {
        CHECK(std::isnan(s[size_t(8 + c)]));  // NaN
        CHECK(std::isnan(s[size_t(16 + c)])); // +inf
        CHECK(std::isnan(s[size_t(32 + c)])); // NaN with -inf
      }
      CHECK(s[24 + 0] == 0.0); // -inf: probability 0, the row is finite
    }
  }
}

TEST_CASE("NaN and infinities in attention inputs propagate", "[edges]") {
  // softmax(q kᵀ / sqrt(d)) v in PyTorch: a NaN in query row i makes output
  // row i NaN; a NaN in key row j makes every row NaN (each sees key j); a
  // NaN in value row j, column c makes column c NaN; an infinite query
  // component makes its row's logits +-inf, and the row NaN.
  static const Fixture fx = makeFixture(R"(
model attention_specials
input q: f32[seq, 8]
input k: f32[kseq, 8]
input v: f32[kseq, 4]
y = sdpa(q, k, v)
chain = softmax(q @ transpose(k) / sqrt(8), dim = -1) @ v
output y, chain
)",
                                        {});
  struct Case {
    const char *what;
    int which; // 0 q, 1 k, 2 v
    int64_t row, column;
    double value;
  };
  const Case cases[] = {
      {"NaN in a query", 0, 1, 2, kNaN}, {"NaN in a key", 1, 2, 0, kNaN},
      {"NaN in a value", 2, 0, 3, kNaN}, {"+inf in a query", 0, 2, 5, kInf},
      {"-inf in a key", 1, 0, 1, -kInf}, {"+inf in a value", 2, 1, 1, kInf}};
  for (int64_t seq : {3, 65}) {
    for (const Case &c : cases) {
      DYNAMIC_SECTION(c.what << ", seq " << seq) {
        Random rng(static_cast<uint32_t>(seq * 11 + c.which));
        int64_t kseq = seq + 2;
        HostTensor q = rng.f32({seq, 8}), k = rng.f32({kseq, 8}),
                   v = rng.f32({kseq, 4});
        HostTensor *target = c.which == 0 ? &q : c.which == 1 ? &k : &v;
        int64_t width = target->shape[1];
        *target = withSpecials(*target, {{c.row * width + c.column, c.value}});
        RunResult r = fx.model->runOk({q, k, v});
        Array expected = ref::sdpa(ref::fromTensor(q), ref::fromTensor(k),
                                   ref::fromTensor(v));
        INFO(countNaN(expected.data)
             << " NaN of " << expected.data.size() << " in the reference");
        CHECK_FALSE(allFinite(expected.data));
        E2E_CHECK_CLOSE(r["y"], expected);
        E2E_CHECK_CLOSE(r["chain"], expected);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Sequence length 1, head dim 1, odd head dims
//===----------------------------------------------------------------------===//

TEST_CASE("multi_head_attention with head dim 1 and sequence length 1",
          "[edges]") {
  // E = 4 with 4 heads: every head is one feature wide (scale 1/sqrt(1)).
  static const Weights weights = [] {
    Random rng(8301);
    Weights w;
    w["mha.in_proj_weight"] = rng.weight({12, 4});
    w["mha.in_proj_bias"] = rng.weight({12});
    w["mha.out_proj.weight"] = rng.weight({4, 4});
    w["mha.out_proj.bias"] = rng.weight({4});
    return w;
  }();
  static const Fixture fx = makeFixture(R"(
model head_dim_1
input x: f32[batch, seq, 4]
input mem: f32[batch, mseq, 4]
self = multi_head_attention(x, x, x, heads = 4, weights = "mha")
cross = multi_head_attention(x, mem, mem, heads = 4, weights = "mha")
output self, cross
)",
                                        weights);
  Array inW = fx.w("mha.in_proj_weight"), inB = fx.w("mha.in_proj_bias"),
        outW = fx.w("mha.out_proj.weight"), outB = fx.w("mha.out_proj.bias");
  ref::MhaWeights w = ref::MhaWeights::packed(inW, &inB, outW, &outB);
  struct Shape {
    int64_t batch, seq, mseq;
  };
  const Shape shapes[] = {
      {1, 1, 1}, {3, 1, 1}, {2, 1, 9}, {2, 9, 1}, {1, 65, 1}};
  for (Shape s : shapes) {
    DYNAMIC_SECTION("batch " << s.batch << " seq " << s.seq << " mseq "
                             << s.mseq) {
      Random rng(static_cast<uint32_t>(s.batch * 97 + s.seq * 13 + s.mseq));
      HostTensor x = rng.f32({s.batch, s.seq, 4}),
                 mem = rng.f32({s.batch, s.mseq, 4});
      RunResult r = fx.model->runOk({x, mem});
      Array X = ref::fromTensor(x), M = ref::fromTensor(mem);
      E2E_CHECK_CLOSE(r["self"], ref::multiHeadAttention(X, X, X, 4, w));
      E2E_CHECK_CLOSE(r["cross"], ref::multiHeadAttention(X, M, M, 4, w));
    }
  }
}

TEST_CASE("sdpa and multi_head_attention at head dims 24 28 80 96 112",
          "[edges]") {
  // Head dims of real models that are not powers of two (and not multiples
  // of 16 lanes: 24, 28, 80 = 5 x 16, 96, 112), with d_v unlike d_k.
  static const int64_t dims[] = {24, 28, 80, 96, 112};
  static const Fixture fx = [] {
    Random rng(8401);
    Weights w;
    std::string source = "model odd_heads\n";
    std::string outputs = "output ";
    for (int64_t d : dims) {
      std::string n = std::to_string(d);
      int64_t dv = d == 80 ? 28 : d;
      source += "input q" + n + ": f32[batch, 2, seq, " + n + "]\n";
      source += "input k" + n + ": f32[batch, 2, kseq, " + n + "]\n";
      source +=
          "input v" + n + ": f32[batch, 2, kseq, " + std::to_string(dv) + "]\n";
      source += "y" + n + " = sdpa(q" + n + ", k" + n + ", v" + n + ")\n";
      outputs += "y" + n + ", ";
    }
    // Two heads of 96 and of 28 through the projections.
    for (int64_t d : {28, 96}) {
      std::string n = "mha" + std::to_string(d);
      w[n + ".in_proj_weight"] = rng.weight({6 * d, 2 * d}, -0.2f, 0.2f);
      w[n + ".in_proj_bias"] = rng.weight({6 * d});
      w[n + ".out_proj.weight"] = rng.weight({2 * d, 2 * d}, -0.2f, 0.2f);
      w[n + ".out_proj.bias"] = rng.weight({2 * d});
      source += "input x" + std::to_string(d) + ": f32[batch, seq, " +
                std::to_string(2 * d) + "]\n";
      source += n + " = multi_head_attention(x" + std::to_string(d) + ", x" +
                std::to_string(d) + ", x" + std::to_string(d) +
                ", heads = 2, weights = \"" + n + "\")\n";
      outputs += n + (d == 96 ? "" : ", ");
    }
    return makeFixture(source + outputs + "\n", w);
  }();
  struct Shape {
    int64_t batch, seq, kseq;
  };
  const Shape shapes[] = {{1, 1, 1}, {2, 17, 5}, {1, 63, 65}, {1, 129, 128}};
  for (Shape s : shapes) {
    DYNAMIC_SECTION("batch " << s.batch << " seq " << s.seq << " kseq "
                             << s.kseq) {
      Random rng(static_cast<uint32_t>(s.seq * 1009 + s.kseq));
      std::vector<HostTensor> inputs;
      for (int64_t d : dims) {
        int64_t dv = d == 80 ? 28 : d;
        inputs.push_back(rng.f32({s.batch, 2, s.seq, d}));
        inputs.push_back(rng.f32({s.batch, 2, s.kseq, d}));
        inputs.push_back(rng.f32({s.batch, 2, s.kseq, dv}));
      }
      for (int64_t d : {28, 96})
        inputs.push_back(rng.f32({s.batch, s.seq, 2 * d}));
      RunResult r = fx.model->runOk(inputs);
      for (size_t i = 0; i < std::size(dims); ++i) {
        INFO("head dim " << dims[i]);
        E2E_CHECK_CLOSE(r["y" + std::to_string(dims[i])],
                        ref::sdpa(ref::fromTensor(inputs[3 * i]),
                                  ref::fromTensor(inputs[3 * i + 1]),
                                  ref::fromTensor(inputs[3 * i + 2])));
      }
      for (int64_t d : {28, 96}) {
        std::string n = "mha" + std::to_string(d);
        INFO(n);
        Array inW = fx.w(n + ".in_proj_weight"),
              inB = fx.w(n + ".in_proj_bias"),
              outW = fx.w(n + ".out_proj.weight"),
              outB = fx.w(n + ".out_proj.bias");
        Array X = ref::fromTensor(inputs[std::size(dims) * 3 + (d == 96)]);
        E2E_CHECK_CLOSE(
            r[n],
            ref::multiHeadAttention(
                X, X, X, 2, ref::MhaWeights::packed(inW, &inB, outW, &outB)));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Sequences as long as a learned position table
//===----------------------------------------------------------------------===//

TEST_CASE("sequences exactly as long as a learned position table", "[edges]") {
  // A 64-row table (a block size of the attention kernel): 63 and 64
  // positions run and match the reference, 65 is the documented run-time
  // error (status 2), and a run after it is right again.
  static const Weights weights = [] {
    Random rng(8501);
    Weights w;
    w["pos.weight"] = rng.weight({64, 8});
    return w;
  }();
  static const Fixture fx = makeFixture(R"(
model learned_bound
input x: f32[batch, seq, 8]
h = x + positional_encoding(x, kind = "learned", weight = "pos.weight")
y = sdpa(h, h, h, is_causal = true)
output h, y
)",
                                        weights);
  Array pos = fx.w("pos.weight");
  const int64_t seqs[] = {1, 63, 64, 65, 64};
  for (size_t run = 0; run < std::size(seqs); ++run) {
    int64_t seq = seqs[run];
    DYNAMIC_SECTION("run " << run << ": seq " << seq) {
      Random rng(static_cast<uint32_t>(seq));
      HostTensor x = rng.f32({2, seq, 8});
      RunResult r = fx.model->run({x});
      if (seq > 64) {
        CHECK(r.code == TFM_STATUS_RUNTIME_ERROR);
        CHECK_THAT(r.message, Catch::Contains("pos.weight") &&
                                  Catch::Contains("longer than"));
        continue;
      }
      REQUIRE(r.ok());
      Array h = ref::add(ref::fromTensor(x), ref::rows(pos, 0, seq));
      E2E_CHECK_CLOSE(r["h"], h);
      E2E_CHECK_CLOSE(r["y"], ref::maskedAttention(h, h, h, 1 / std::sqrt(8.0),
                                                   ref::AttentionMask{}, true));
    }
  }
}
