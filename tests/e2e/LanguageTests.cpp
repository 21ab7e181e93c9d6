//===- LanguageTests.cpp - Tensor arithmetic of the language vs float64 ---===//
//
// Broadcasting binary ops, unary math, comparisons, where, casts,
// reductions, reshapes and permutations, each compiled once with named
// dimensions and run at odd sizes (including 1, which must not be taken for
// a broadcast) against ReferenceMath.
//
//===----------------------------------------------------------------------===//
#include "Fixture.h"
#include "Harness.h"
#include "Reference.h"
#include "ReferenceMath.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace e2e;
using ref::Array;

namespace {
/// Random integers in [lo, hi] as an i64 tensor.
HostTensor randomIds(Random &rng, std::vector<int64_t> shape, int64_t lo,
                     int64_t hi) {
  return HostTensor::i64(shape, rng.ids(elementCount(shape), lo, hi));
}

Array plus(const Array &x, double c) {
  return ref::map(x, [c](double v) { return v + c; });
}
} // namespace

TEST_CASE("broadcasting arithmetic and unary math", "[language]") {
  static const std::shared_ptr<Model> model = Model::build(R"(
model arithmetic
input x: f32[batch, seq, 5]
input y: f32[seq, 5]
input g: f32[batch, 1, 1]
a = x - y
b = x * g / (y * y + 1)
c = 1 - x
d = 2 / (abs(x) + 0.5)
e = maximum(x, y) + minimum(x, 0.25)
f = pow(abs(x) + 0.1, 1.5) + pow(2, x)
u = exp(x) + log(abs(y) + 1) + sqrt(abs(x)) + rsqrt(abs(y) + 1)
v = tanh(x) + erf(x) + sin(x) + cos(y) - x + -y
w = x + 3 - g
output a, b, c, d, e, f, u, v, w
)");
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {2, 7}, {3, 13}};
  for (auto [batch, seq] : sizes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(uint32_t(batch * 100 + seq));
      HostTensor x = rng.f32({batch, seq, 5}, -2.0f, 2.0f);
      HostTensor y = rng.f32({seq, 5}, -2.0f, 2.0f);
      HostTensor g = rng.f32({batch, 1, 1}, 0.5f, 1.5f);
      RunResult r = model->runOk({x, y, g});
      Array X = ref::fromTensor(x), Y = ref::fromTensor(y),
            G = ref::fromTensor(g);
      auto sub = [](double p, double q) { return p - q; };
      auto mul = [](double p, double q) { return p * q; };
      auto div = [](double p, double q) { return p / q; };
      E2E_CHECK_CLOSE(r["a"], ref::map2(X, Y, sub));
      Array yy1 = plus(ref::map2(Y, Y, mul), 1.0);
      E2E_CHECK_CLOSE(r["b"], ref::map2(ref::map2(X, G, mul), yy1, div));
      E2E_CHECK_CLOSE(r["c"], ref::map(X, [](double v) { return 1 - v; }));
      E2E_CHECK_CLOSE(r["d"], ref::map(X, [](double v) {
                        return 2 / (std::fabs(v) + 0.5);
                      }));
      Array mx =
          ref::map2(X, Y, [](double p, double q) { return std::max(p, q); });
      E2E_CHECK_CLOSE(r["e"], ref::add(mx, ref::map(X, [](double v) {
                                         return std::min(v, 0.25);
                                       })));
      E2E_CHECK_CLOSE(r["f"], ref::map(X, [](double v) {
                        return std::pow(std::fabs(v) + 0.1, 1.5) +
                               std::pow(2.0, v);
                      }));
      Array u = ref::add(
          ref::map(
              X,
              [](double v) { return std::exp(v) + std::sqrt(std::fabs(v)); }),
          ref::map(Y, [](double v) {
            return std::log(std::fabs(v) + 1) + 1 / std::sqrt(std::fabs(v) + 1);
          }));
      E2E_CHECK_CLOSE(r["u"], u);
      Array v = ref::add(ref::map(X,
                                  [](double t) {
                                    return std::tanh(t) + std::erf(t) +
                                           std::sin(t) - t;
                                  }),
                         ref::map(Y, [](double t) { return std::cos(t) - t; }));
      E2E_CHECK_CLOSE(r["v"], v);
      E2E_CHECK_CLOSE(r["w"], ref::map2(plus(X, 3), G, sub));
    }
  }
}

TEST_CASE("comparisons, logical ops, where and casts build attention masks",
          "[language]") {
  // HF attention masks are i64 with 1 = attend; both idioms of issue 10.
  static const std::shared_ptr<Model> model = Model::build(R"(
model masks
input mask: i64[batch, seq]
input x: f32[batch, seq]
ext = (1 - cast(mask, f32)) * -10000
bias = where(mask == 0, -inf, 0)
m = (x > 0) & (mask != 0) | (x <= -0.5)
sel = where(m, x, -x)
k = cast(x >= 0.25, i32) - cast(lt(x, -0.25), i32)
n = cast(not(x == x), f64) + cast(eq(mask, 1), f64)
i = maximum(mask, 1) * 3 - minimum(mask * 2, 1) + -mask
wb = where(x > 0, true, false) | (x <= -0.5)
output ext, bias, m, sel, k, n, i, wb
)");
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {2, 9}, {3, 17}};
  for (auto [batch, seq] : sizes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(uint32_t(batch * 31 + seq));
      HostTensor mask = randomIds(rng, {batch, seq}, 0, 1);
      HostTensor x = rng.f32({batch, seq});
      RunResult r = model->runOk({mask, x});
      Array M = ref::fromTensor(mask), X = ref::fromTensor(x);
      E2E_CHECK_CLOSE(r["ext"],
                      ref::map(M, [](double v) { return (1 - v) * -10000; }),
                      0.0, 0.0);
      E2E_CHECK_CLOSE(
          r["bias"],
          ref::map(M, [](double v) { return v == 0 ? -INFINITY : 0.0; }), 0.0,
          0.0);
      Array m = ref::map2(X, M, [](double v, double k) {
        return double((v > 0 && k != 0) || v <= -0.5);
      });
      CHECK(r["m"].dtype == TFM_DTYPE_BOOL);
      E2E_CHECK_CLOSE(r["m"], m, 0.0, 0.0);
      E2E_CHECK_CLOSE(
          r["sel"],
          ref::map2(m, X, [](double c, double v) { return c != 0 ? v : -v; }),
          0.0, 0.0);
      CHECK(r["k"].dtype == TFM_DTYPE_I32);
      E2E_CHECK_CLOSE(r["k"],
                      ref::map(X,
                               [](double v) {
                                 return double(v >= 0.25) - double(v < -0.25);
                               }),
                      0.0, 0.0);
      CHECK(r["n"].dtype == TFM_DTYPE_F64);
      E2E_CHECK_CLOSE(r["n"],
                      ref::map(M, [](double v) { return double(v == 1); }), 0.0,
                      0.0);
      CHECK(r["wb"].dtype == TFM_DTYPE_BOOL);
      E2E_CHECK_CLOSE(
          r["wb"],
          ref::map(X, [](double v) { return double(v > 0 || v <= -0.5); }), 0.0,
          0.0);
      CHECK(r["i"].dtype == TFM_DTYPE_I64);
      E2E_CHECK_CLOSE(r["i"],
                      ref::map(M,
                               [](double v) {
                                 return std::max(v, 1.0) * 3 -
                                        std::min(v * 2, 1.0) - v;
                               }),
                      0.0, 0.0);
    }
  }
}

TEST_CASE("reductions over one or several dims, with and without keepdim",
          "[language]") {
  static const std::shared_ptr<Model> model = Model::build(R"(
model reductions
input x: f32[batch, seq, 6]
input ids: i64[batch, seq]
s = sum(x, dim = -1)
m = mean(x, dim = [0, 2], keepdim = true)
mx = max(x, 1, true)
mn = min(x, dim = [0, 1])
all = sum(x)
t = sum(ids, dim = 1)
centered = x - mean(x, dim = -1, keepdim = true)
output s, m, mx, mn, all, t, centered
)");
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {2, 5}, {3, 11}};
  for (auto [batch, seq] : sizes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(uint32_t(batch * 7 + seq));
      HostTensor x = rng.f32({batch, seq, 6});
      HostTensor ids = randomIds(rng, {batch, seq}, -50, 50);
      RunResult r = model->runOk({x, ids});
      Array X = ref::fromTensor(x), I = ref::fromTensor(ids);
      using ref::Reduction;
      E2E_CHECK_CLOSE(r["s"], ref::reduce(X, Reduction::sum, {-1}, false));
      E2E_CHECK_CLOSE(r["m"], ref::reduce(X, Reduction::mean, {0, 2}, true));
      E2E_CHECK_CLOSE(r["mx"], ref::reduce(X, Reduction::max, {1}, true), 0.0,
                      0.0);
      E2E_CHECK_CLOSE(r["mn"], ref::reduce(X, Reduction::min, {0, 1}, false),
                      0.0, 0.0);
      E2E_CHECK_CLOSE(r["all"], ref::reduce(X, Reduction::sum, {}, false));
      E2E_CHECK_CLOSE(r["t"], ref::reduce(I, Reduction::sum, {1}, false), 0.0,
                      0.0);
      Array mean = ref::reduce(X, Reduction::mean, {-1}, true);
      E2E_CHECK_CLOSE(r["centered"], ref::map2(X, mean, [](double a, double b) {
                        return a - b;
                      }));
    }
  }
}

TEST_CASE("reshape, permute, squeeze and unsqueeze keep named dims",
          "[language]") {
  // Heads split and merged the way HF attention does it by hand, with
  // reshape inferring -1 and the named dims passing through.
  static const std::shared_ptr<Model> model = Model::build(R"(
model shapes
input x: f32[batch, seq, 12]
h = reshape(x, [batch, seq, 3, -1])
t = permute(h, [0, 2, 1, 3])
f = reshape(t, [batch, 3, -1])
back = reshape(f, [batch, 3, seq, 4])
merged = reshape(permute(back, [0, 2, 1, 3]), [batch, seq, 12])
flat = reshape(x, [-1])
u = unsqueeze(sum(x, dim = -1), 1)
q = squeeze(u, 1)
w = squeeze(mean(x, dim = 2, keepdim = true))
output h, t, back, merged, u, q, w
)");
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {2, 3}, {3, 7}};
  for (auto [batch, seq] : sizes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(uint32_t(batch * 11 + seq));
      HostTensor x = rng.f32({batch, seq, 12});
      RunResult r = model->runOk({x});
      Array X = ref::fromTensor(x);
      Array h = ref::reshape(X, {batch, seq, 3, 4});
      Array t = ref::permute(h, {0, 2, 1, 3});
      E2E_CHECK_CLOSE(r["h"], h, 0.0, 0.0);
      E2E_CHECK_CLOSE(r["t"], t, 0.0, 0.0);
      E2E_CHECK_CLOSE(r["back"], t, 0.0, 0.0);
      E2E_CHECK_CLOSE(r["merged"], X, 0.0, 0.0);
      Array s = ref::reduce(X, ref::Reduction::sum, {-1}, false);
      E2E_CHECK_CLOSE(r["u"], ref::reshape(s, {batch, 1, seq}));
      E2E_CHECK_CLOSE(r["q"], s);
      E2E_CHECK_CLOSE(r["w"], ref::reduce(X, ref::Reduction::mean, {2}, false));
    }
  }
}

TEST_CASE("indexing, slicing, split and arange", "[language]") {
  // x[:, 0] indexes the named dim seq: checked at run time (code 3 here).
  static const std::shared_ptr<Model> model = Model::build(R"(
model slicing
input x: f32[batch, seq, 12]
input w: f32[4, 6]
cls = x[:, 0]
last = x[:, -1, 2:5]
tail = x[..., 8:]
mid = w[1:-1, -2]
q, k, v = split(x, 4)
a, b = split(w, [2, 4], dim = 1)
pos = arange(seq)
r = arange(2, 11, 3)
rest = sum(x[:, 1:], dim = 1)
output cls, last, tail, mid, q, k, v, a, b, pos, r, rest
)");
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {2, 3}, {3, 6}};
  for (auto [batch, seq] : sizes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(uint32_t(batch * 13 + seq));
      HostTensor x = rng.f32({batch, seq, 12}), w = rng.f32({4, 6});
      RunResult r = model->runOk({x, w});
      Array X = ref::fromTensor(x), W = ref::fromTensor(w);
      E2E_CHECK_CLOSE(r["cls"], ref::select(X, 1, 0), 0.0, 0.0);
      E2E_CHECK_CLOSE(
          r["last"], ref::slice(ref::select(X, 1, seq - 1), 1, 2, 5), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["tail"], ref::slice(X, 2, 8, 12), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["mid"], ref::select(ref::slice(W, 0, 1, 3), 1, 4), 0.0,
                      0.0);
      E2E_CHECK_CLOSE(r["q"], ref::slice(X, 2, 0, 4), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["k"], ref::slice(X, 2, 4, 8), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["v"], ref::slice(X, 2, 8, 12), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["a"], ref::slice(W, 1, 0, 2), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["b"], ref::slice(W, 1, 2, 6), 0.0, 0.0);
      std::vector<double> positions;
      for (int64_t i = 0; i < seq; ++i)
        positions.push_back(double(i));
      CHECK(r["pos"].dtype == TFM_DTYPE_I64);
      E2E_CHECK_CLOSE(r["pos"], Array({seq}, positions), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["r"], Array({3}, {2, 5, 8}), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["rest"], ref::reduce(ref::slice(X, 1, 1, seq),
                                             ref::Reduction::sum, {1}, false));
    }
  }
  SECTION("an empty seq makes x[:, 0] a run-time error, not a bad read") {
    RunResult r = model->run({HostTensor::zeros(TFM_DTYPE_F32, {2, 0, 12}),
                              HostTensor::zeros(TFM_DTYPE_F32, {4, 6})});
    CHECK(r.code == TFM_STATUS_RUNTIME_ERROR);
    CHECK_THAT(r.message, Catch::Contains("3"));
  }
}

TEST_CASE("attention written as Hugging Face writes it, with an i64 mask",
          "[language]") {
  // Heads split with reshape/permute, both mask idioms of issue 10 added to
  // the scaled scores; tfm-fuse-attention takes both chains.
  static const std::shared_ptr<Model> model = Model::build(R"(
model hf_attention
input x: f32[batch, seq, 16]
input mask: i64[batch, seq]
q = permute(reshape(x, [batch, seq, 2, 8]), [0, 2, 1, 3])
k = permute(reshape(x * 0.5, [batch, seq, 2, 8]), [0, 2, 1, 3])
v = permute(reshape(x - 1, [batch, seq, 2, 8]), [0, 2, 1, 3])
bias = reshape(where(mask == 0, -inf, 0), [batch, 1, 1, seq])
ext = reshape((1 - cast(mask, f32)) * -10000, [batch, 1, 1, seq])
p = softmax(q @ transpose(k, -2, -1) / sqrt(8) + bias, dim = -1)
o = reshape(permute(p @ v, [0, 2, 1, 3]), [batch, seq, 16])
p2 = softmax(q @ transpose(k, -2, -1) / sqrt(8) + ext, dim = -1)
o2 = reshape(permute(p2 @ v, [0, 2, 1, 3]), [batch, seq, 16])
output o, o2
)");
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {2, 5}, {3, 19}};
  for (auto [batch, seq] : sizes) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(uint32_t(batch * 17 + seq));
      HostTensor x = rng.f32({batch, seq, 16});
      std::vector<int64_t> keep = rng.ids(batch * seq, 0, 1);
      for (int64_t b = 0; b < batch; ++b)
        keep[size_t(b * seq)] = 1; // No row is fully masked.
      RunResult r = model->runOk({x, HostTensor::i64({batch, seq}, keep)});
      Array X = ref::fromTensor(x);
      const int64_t n = seq; // Lambdas cannot capture structured bindings.
      for (bool additive : {false, true}) {
        Array out({batch, n, 16});
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t h = 0; h < 2; ++h)
            for (int64_t i = 0; i < seq; ++i) {
              auto at = [&](int64_t t, int64_t d) {
                return X.data[size_t((b * n + t) * 16 + h * 8 + d)];
              };
              std::vector<double> s(static_cast<size_t>(n), 0.0);
              double top = -INFINITY;
              for (int64_t j = 0; j < seq; ++j) {
                double dot = 0;
                for (int64_t d = 0; d < 8; ++d)
                  dot += at(i, d) * at(j, d) * 0.5;
                bool on = keep[size_t(b * seq + j)] != 0;
                s[size_t(j)] =
                    dot / std::sqrt(8.0) +
                    (additive ? (on ? 0.0 : -10000.0) : (on ? 0.0 : -INFINITY));
                top = std::max(top, s[size_t(j)]);
              }
              double sum = 0;
              for (double &e : s)
                sum += (e = std::exp(e - top));
              for (int64_t d = 0; d < 8; ++d) {
                double acc = 0;
                for (int64_t j = 0; j < seq; ++j)
                  acc += s[size_t(j)] / sum * (at(j, d) - 1);
                out.data[size_t((b * seq + i) * 16 + h * 8 + d)] = acc;
              }
            }
        E2E_CHECK_CLOSE(r[additive ? "o2" : "o"], out, 1e-4, 1e-5);
      }
    }
  }
}
