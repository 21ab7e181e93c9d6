//===- GeluEpilogueTests.cpp - The GEMM epilogue's GELU against float64 ---===//
//
// A linear layer with K = 1 and a weight of ones computes x + b, one f32
// add, so `gelu(linear(x, W, b))` evaluates the kernel's GELU at every
// x_i + b_j: rows x_i that bf16 holds exactly (steps of 1/8 over [-12, 12],
// tiny and huge values, signed zeros, infinities, NaN) and 1000 biases
// spread over [0, 1/8), ~200 000 points. f32 GEMMs keep MLIR's erf
// polynomial; bf16 (and int8, whose tasks share the epilogue's code) use the
// rational GELU of GeluApproximation.h. Both are checked against float64 erf
// at every CPU level the host runs, as an error relative to |v| + 1: GELU's
// output is about |v| for large v, and its absolute error where it tends to
// 0 (v < -5) is what matters to the next layer.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"
#include "LowPrecisionHarness.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace e2e;
using namespace e2e::lowp;

namespace {

/// The largest |got - gelu(v)| / (|v| + 1) over the finite points, after
/// checking that NaN and infinities come out as float64's formula has them
/// (gelu(-inf) = -inf * 0 is NaN).
void checkSweep(Precision precision, double bound) {
  const int64_t n = 1000;
  std::vector<float> rows;
  for (int i = -96; i <= 96; ++i)
    rows.push_back(float(i) / 8);
  for (int e : {-120, -60, -20, -8}) {
    rows.push_back(std::ldexp(1.0f, e));
    rows.push_back(-std::ldexp(1.0f, e));
  }
  for (float v : {16.0f, 48.0f, 1024.0f, 0x1p100f}) {
    rows.push_back(v);
    rows.push_back(-v);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {-0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN()})
    rows.push_back(v);
  auto m = int64_t(rows.size());
  std::vector<float> bias(size_t(n), 0.0f), ones(size_t(n), 1.0f);
  for (int64_t j = 0; j < n; ++j)
    bias[size_t(j)] = float(j) / float(n) / 8;

  Weights weights;
  weights["W"] = Weight{{n, 1}, ones, {}};
  weights["b"] = Weight{{n}, bias, {}};
  BuildOptions options;
  options.cpu = "portable";
  if (precision == Precision::BF16)
    options.dtype = "bf16";
  std::shared_ptr<Model> model =
      Model::build("model gelu_sweep\ninput x: f32[seq, 1]\n"
                   "y = gelu(linear(x, weight = \"W\", bias = \"b\"))\n"
                   "output y\n",
                   weights, options);
  HostTensor input = HostTensor::f32({m, 1}, rows);

  // f32 has no level of its own past AVX-512 (3).
  int top = precision == Precision::F32 ? 3 : 6;
  for (int level = top; level >= 1; --level) {
    if (level == 4 || hostCpuLevel() < level) {
      if (level != 4)
        WARN("skipped TFM_CPU_LEVEL=" << level << " for " << nameOf(precision)
                                      << ": this host's CPU level is "
                                      << hostCpuLevel());
      continue;
    }
    CpuLevelScope scope(level);
    std::shared_ptr<Model> copy = model->reload();
    RunResult out = copy->runOk({input});
    std::vector<double> got = out["y"].toDoubles();
    REQUIRE(got.size() == size_t(m * n));
    double worst = 0, worstAt = 0, worstGot = 0;
    int64_t mismatches = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        // The kernel's f32 add of the bias to x_i * 1.
        double v = double(rows[size_t(i)] + bias[size_t(j)]);
        double expected = 0.5 * v * (1 + std::erf(v / M_SQRT2));
        double g = got[size_t(i * n + j)];
        if (!std::isfinite(expected)) {
          bool same = std::isnan(expected) ? std::isnan(g) : g == expected;
          mismatches += same ? 0 : 1;
          continue;
        }
        double err = std::fabs(g - expected) / (std::fabs(v) + 1);
        if (!(err <= worst)) {
          worst = std::isnan(err) ? INFINITY : err;
          worstAt = v;
          worstGot = g;
        }
      }
    INFO(nameOf(precision) << " at CPU level " << level << ": worst error "
                           << worst << " (|v| + 1) at v = " << worstAt
                           << ", got " << worstGot);
    CHECK(mismatches == 0);
    CHECK(worst <= bound);
  }
}

} // namespace

// Measured on a Sapphire Rapids host: 1.14e-7 at every level for f32;
// 1.58e-7 for bf16 with FMA (levels 2-6), 2.09e-7 with SSE (level 1).
TEST_CASE("the f32 GEMM's GELU keeps MLIR's erf: within 1.5e-7 (|v| + 1) of "
          "float64",
          "[lowp][gelu]") {
  checkSweep(Precision::F32, 1.5e-7);
}

TEST_CASE("the bf16 GEMM's rational GELU is within 2.5e-7 (|v| + 1) of "
          "float64 over the whole range",
          "[lowp][gelu]") {
  checkSweep(Precision::BF16, 2.5e-7);
}
