//===- LowPrecisionHarness.h - float64 bounds and CPU levels ---*- C++ -*-===//
//
// What the tests of the typed GEMM share (LowPrecisionGemmTests.cpp,
// KQuantTests.cpp): a float64 result with a bound per element on what f32
// arithmetic may add, the f32 epilogue's effect on both, and running a
// portable artifact at each CPU level the host has (TFM_CPU_LEVEL).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TESTS_E2E_LOWPRECISIONHARNESS_H
#define TFM_TESTS_E2E_LOWPRECISIONHARNESS_H

#include "Harness.h"
#include "Reference.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace e2e::lowp {

using ref::Array;

/// f32's unit roundoff: one rounding of a value v errs by at most u |v|.
constexpr double kUnit = 0x1p-24;

enum class Precision { F32, BF16, Int8 };

inline const char *nameOf(Precision p) {
  return p == Precision::F32 ? "f32" : p == Precision::BF16 ? "bf16" : "int8";
}

/// A GEMM's expected result [M, N] in float64 and, per element, how far
/// f32 arithmetic may take the compiled model from it.
struct Expected {
  Array value;
  std::vector<double> bound;
};

enum class Activation { None, Relu, Gelu, GeluTanh };

/// The kernel's erf and tanh are polynomials (MLIR's approximations) whose
/// error GELU's output carries: measured in the GEMM's epilogue at every
/// CPU level against float64, over [-8, 8] in steps of 5e-5, at most
/// 1.3e-7 (|x| + 1) for erf and 1.6e-7 (|x| + 1) for tanh; bf16 and int8
/// GEMMs compute GELU as one rational function, 2.1e-7 (|x| + 1)
/// (GeluEpilogueTests.cpp); allowed 5e-7 (|x| + 1). The two GELUs differ by up
/// to 1e-3 near |x| = 2, a missing activation by far more.
constexpr double kGeluRelative = 5e-7, kGeluAbsolute = 5e-7;
/// The steepest slope of either GELU (1.129 near x = 1.41): how an error in
/// its input grows.
constexpr double kGeluSlope = 1.13;

/// `residual + act(y + bias)` (each optional) over the GEMM `y` [M, N] with
/// the kernel's f32 epilogue: an add rounds once (u |sum|), ReLU is exact
/// and 1-Lipschitz, GELU as above.
inline Expected epilogue(const Expected &gemm, const std::vector<float> *bias,
                         Activation activation,
                         const std::vector<float> *residual) {
  Expected e = gemm;
  int64_t n = gemm.value.dim(1);
  for (size_t i = 0; i < e.value.data.size(); ++i) {
    double v = e.value.data[i], err = e.bound[i];
    if (bias) {
      v += double((*bias)[i % size_t(n)]);
      err += kUnit * std::fabs(v);
    }
    if (activation == Activation::Relu) {
      v = std::isnan(v) || v > 0 ? v : 0.0;
    } else if (activation != Activation::None) {
      double g = activation == Activation::Gelu
                     ? 0.5 * v * (1 + std::erf(v / M_SQRT2))
                     : 0.5 * v *
                           (1 + std::tanh(std::sqrt(2 / M_PI) *
                                          (v + 0.044715 * v * v * v)));
      err = kGeluSlope * err + kGeluRelative * std::fabs(v) + kGeluAbsolute;
      v = g;
    }
    if (residual) {
      v += double((*residual)[i]);
      err += kUnit * std::fabs(v);
    }
    e.value.data[i] = v;
    e.bound[i] = err;
  }
  return e;
}

/// `got` within `expected`'s per-element bounds (NaN and infinities must
/// match exactly), with the shape [batch, seq, N] of the model's output.
#define CHECK_WITHIN_BOUNDS(got, expected, shape)                              \
  do {                                                                         \
    ::e2e::Comparison cmp_ = ::e2e::allClose(                                  \
        (got), (shape), (expected).value.data, 0.0, 0.0, &(expected).bound);   \
    INFO(#got << ": " << cmp_.message);                                        \
    CHECK(cmp_.ok);                                                            \
  } while (0)

/// What __tfm_cpu_level() finds on this host: 5 AVX-512 with VNNI and BF16,
/// 4 with VNNI, 3 AVX-512 (F, DQ, BW, VL), 2 AVX2 + FMA, 1 SSE.
inline int hostCpuLevel() {
  __builtin_cpu_init();
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                __builtin_cpu_supports("avx512dq") &&
                __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vl");
  bool vnni = avx512 && __builtin_cpu_supports("avx512vnni");
  bool bf16 = vnni && __builtin_cpu_supports("avx512bf16");
  // AMX, with the tile data state granted (arch_prctl(ARCH_REQ_XCOMP_PERM,
  // XFEATURE_XTILEDATA), what the artifact asks for too).
  bool amx = bf16 && __builtin_cpu_supports("amx-tile") &&
             __builtin_cpu_supports("amx-bf16") &&
             __builtin_cpu_supports("amx-int8") &&
             syscall(SYS_arch_prctl, 0x1023, 18) == 0;
  return amx ? 6 : bf16 ? 5 : vnni ? 4 : avx512 ? 3 : avx2 ? 2 : 1;
}

/// A CPU level to run a portable artifact at, and the kernel it selects.
struct Level {
  int level;
  const char *kernel;
};

/// Every variant of a `precision` GEMM: AMX tiles (level 6), the native
/// dot product (level
/// 5 for bf16, 4 for int8, also what a level-5 CPU runs for int8), then the
/// widening forms on AVX-512, AVX2 and SSE.
inline std::vector<Level> levelsOf(Precision precision) {
  if (precision == Precision::BF16)
    return {{6, "AMX-BF16 tiles (tdpbf16ps)"},
            {5, "AVX512-BF16 (vdpbf16ps)"},
            {3, "AVX-512, widening"},
            {2, "AVX2+FMA, widening"},
            {1, "SSE, widening"}};
  return {{6, "AMX-INT8 tiles (tdpbusd)"},
          {5, "AVX512-VNNI (vpdpbusd), chosen at level 5"},
          {4, "AVX512-VNNI (vpdpbusd)"},
          {3, "AVX-512, widening"},
          {2, "AVX2+FMA, widening"},
          {1, "SSE, widening"}};
}

/// Sets TFM_CPU_LEVEL for a scope (level 6, which it cannot name, leaves it
/// unset: the host's own level), and restores what was there.
class CpuLevelScope {
public:
  explicit CpuLevelScope(int level) {
    if (const char *old = std::getenv("TFM_CPU_LEVEL"))
      previous = old;
    if (level >= 6)
      unsetenv("TFM_CPU_LEVEL");
    else
      setenv("TFM_CPU_LEVEL", std::to_string(level).c_str(), 1);
  }
  ~CpuLevelScope() {
    if (previous)
      setenv("TFM_CPU_LEVEL", previous->c_str(), 1);
    else
      unsetenv("TFM_CPU_LEVEL");
  }
  CpuLevelScope(const CpuLevelScope &) = delete;
  CpuLevelScope &operator=(const CpuLevelScope &) = delete;

private:
  std::optional<std::string> previous;
};

/// Calls `run` with a fresh copy of `model` at each level of `precision`
/// the host runs (the level is cached per loaded artifact); says which it
/// skips, and why.
inline void
forEachLevel(Precision precision, const Model &model,
             const std::function<void(const Model &, const Level &)> &run,
             int lowest = 1) {
  for (const Level &level : levelsOf(precision)) {
    if (level.level < lowest)
      continue;
    if (hostCpuLevel() < level.level) {
      WARN("skipped TFM_CPU_LEVEL=" << level.level << " (" << level.kernel
                                    << "): this host's CPU level is "
                                    << hostCpuLevel());
      continue;
    }
    CpuLevelScope scope(level.level);
    std::shared_ptr<Model> copy = model.reload();
    INFO(nameOf(precision) << " at CPU level " << level.level << ": "
                           << level.kernel);
    run(*copy, level);
  }
}

/// Rows of `k` values in ranges that move the int8 zero point: around zero,
/// all positive (zero point 0), all negative (255), lopsided.
inline std::vector<float> inputRows(Random &rng, int64_t m, int64_t k) {
  static const float ranges[][2] = {
      {-1.0f, 1.0f}, {0.0f, 2.0f}, {-3.0f, -0.5f}, {-0.2f, 1.5f}};
  std::vector<float> x;
  for (int64_t i = 0; i < m; ++i) {
    const float *range = ranges[i % 4];
    std::vector<float> row = rng.uniform(k, range[0], range[1]);
    x.insert(x.end(), row.begin(), row.end());
  }
  return x;
}

} // namespace e2e::lowp

#endif // TFM_TESTS_E2E_LOWPRECISIONHARNESS_H
