//===- LowPrecisionGemmTests.cpp - bf16 and int8 GEMMs against float64 ----===//
//
// `--dtype bf16` and `--quantize int8` run linear layers (and `x @ W` with a
// constant W) as the typed GEMM of convert-linear-to-cpu. These tests round
// and quantize the operands here, with code of their own written from the
// documented semantics, and compare the compiled models with float64 on
// those operands. What is left is the error of f32 arithmetic, bounded per
// element (see gemmReference), so that a wrong rounding, a wrong scale or zero
// point, a lost epilogue or a kernel variant that computes something else
// fails. Covered: K odd and past a K chunk, N off the 32-column panel, rows
// past a micro-kernel and a row block, dynamic batch and sequence, every
// epilogue, `x @ W`, every CPU level the host runs, threads; NaN, infinity,
// denormal and tie inputs (bf16), all-zero rows and columns and ties
// (int8), and --keep-fp32. Then GGUF Q8_0 weights, which stay in their
// blocks: the same comparison on the file's int8 values and scales and the
// input quantized per block of 32, and the artifact's size.
//
//===----------------------------------------------------------------------===//

#include "GgufWriter.h"
#include "Harness.h"
#include "LowPrecisionHarness.h"
#include "Reference.h"
#include "ReferenceLayers.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sys/syscall.h>
#include <unistd.h>

using namespace e2e;
using namespace e2e::lowp;
using ref::Array;

namespace {

//===----------------------------------------------------------------------===//
// Rounding and quantization, as documented (tfm-pack-linear in
// compiler/Transforms/Passes.td, tfm.packed_linear, CompileOptions)
//===----------------------------------------------------------------------===//

uint32_t bitsOf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

float fromBits(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

/// `x` rounded to bf16 (returned as the float it is): to nearest even on
/// the bits; a NaN stays a NaN (quieted: a signalling NaN whose payload is
/// in the low half must not become an infinity); zeros and denormals become
/// zeros of their sign.
float roundToBF16(float x) {
  uint32_t bits = bitsOf(x);
  if (std::isnan(x))
    return fromBits(((bits >> 16) | 0x40u) << 16);
  if ((bits & 0x7f800000u) == 0)
    return fromBits(bits & 0x80000000u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return fromBits(bits & 0xffff0000u);
}

/// A weight [N, K] quantized per output column: W[n, k] ~ scale[n] q[n, k].
struct QuantizedWeight {
  std::vector<float> scale;
  std::vector<int32_t> q;
};

QuantizedWeight quantizeWeight(const std::vector<float> &w, int64_t n,
                               int64_t k) {
  QuantizedWeight out;
  out.scale.resize(size_t(n));
  out.q.resize(size_t(n * k));
  for (int64_t col = 0; col < n; ++col) {
    float largest = 0.0f;
    for (int64_t d = 0; d < k; ++d)
      largest = std::max(largest, std::fabs(w[size_t(col * k + d)]));
    float scale = largest > 0.0f ? largest / 127.0f : 1.0f;
    out.scale[size_t(col)] = scale;
    for (int64_t d = 0; d < k; ++d) {
      float ratio = w[size_t(col * k + d)] / scale; // f32 division
      float q = std::nearbyint(ratio);              // to nearest even
      out.q[size_t(col * k + d)] = int32_t(std::clamp(q, -127.0f, 127.0f));
    }
  }
  return out;
}

/// One input row quantized to u8 over all of its K: x ~ scale (q - zero).
struct QuantizedRow {
  float scale, zero;
  std::vector<int32_t> q;
};

QuantizedRow quantizeRow(const float *x, int64_t k) {
  // Every step in f32, one operation per statement (no contraction).
  float lo = 0.0f, hi = 0.0f;
  for (int64_t d = 0; d < k; ++d) {
    lo = std::min(lo, x[d]);
    hi = std::max(hi, x[d]);
  }
  float range = hi - lo;
  float scale = range / 255.0f;
  if (scale == 0.0f)
    scale = 1.0f;
  float inverse = 1.0f / scale;
  float negLo = -lo;
  float zeroProduct = negLo * inverse;
  float zero = std::clamp(std::nearbyint(zeroProduct), 0.0f, 255.0f);
  QuantizedRow row{scale, zero, std::vector<int32_t>(size_t(k))};
  for (int64_t d = 0; d < k; ++d) {
    float product = x[d] * inverse;
    float shifted = std::nearbyint(product) + zero;
    row.q[size_t(d)] = int32_t(std::clamp(shifted, 0.0f, 255.0f));
  }
  return row;
}

//===----------------------------------------------------------------------===//
// The float64 reference and its error bounds
//===----------------------------------------------------------------------===//

/// y = x W^T for x [M, K] and W [N, K] (row-major floats) after the
/// rounding or quantization of `precision`.
///
/// Bounds. bf16 and f32: the kernel adds the K products into an f32
/// accumulator one at a time (bf16 products are exact in f32: 8-bit
/// significands; the f32 kernel fuses each product into its add), in pairs
/// whose order may be swapped (vdpbf16ps adds the odd k first). Each add
/// rounds once, by at most u times the partial sum it yields, and a partial
/// sum of either order is at most |S_j| + |t_j| (S_j the exact partial sum
/// in k order, t_j the j-th product): the error is at most
/// u sum_j (|S_j| + |t_j|), to first order; twice that covers the computed
/// partial sums' own drift (K u <= 1.3e-4 here). For random signs this is
/// about u K^1.5 E|t|, far below what a wrong bf16 rounding of either
/// operand costs (2^-9 relative per product, about 2^-9 K^0.5 E|t| in all).
///
/// int8: the integer sum is exact (i32), then converted to f32, multiplied
/// by the product of the row's and the column's f32 scales: three
/// roundings, at most 3u |y|; we allow 4u |y|. A zero point off by one
/// moves y by scale_x scale_w sum_k q_w, about 1% of |y|.
Expected gemmReference(Precision precision, const std::vector<float> &x,
                       int64_t m, int64_t k, const std::vector<float> &w,
                       int64_t n) {
  Expected e{Array({m, n}), std::vector<double>(size_t(m * n))};
  if (precision == Precision::Int8) {
    QuantizedWeight qw = quantizeWeight(w, n, k);
    for (int64_t i = 0; i < m; ++i) {
      QuantizedRow row = quantizeRow(x.data() + i * k, k);
      auto zero = int64_t(row.zero);
      for (int64_t j = 0; j < n; ++j) {
        int64_t sum = 0;
        for (int64_t d = 0; d < k; ++d)
          sum += (row.q[size_t(d)] - zero) * qw.q[size_t(j * k + d)];
        double y =
            double(row.scale) * double(qw.scale[size_t(j)]) * double(sum);
        e.value.data[size_t(i * n + j)] = y;
        e.bound[size_t(i * n + j)] = 4 * kUnit * std::fabs(y);
      }
    }
    return e;
  }
  std::vector<float> xr = x, wr = w;
  if (precision == Precision::BF16) {
    for (float &v : xr)
      v = roundToBF16(v);
    for (float &v : wr)
      v = roundToBF16(v);
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, partials = 0;
      for (int64_t d = 0; d < k; ++d) {
        double t =
            double(xr[size_t(i * k + d)]) * double(wr[size_t(j * k + d)]);
        sum += t;
        partials += std::fabs(sum) + std::fabs(t);
      }
      e.value.data[size_t(i * n + j)] = sum;
      e.bound[size_t(i * n + j)] = 2 * kUnit * partials;
    }
  return e;
}

//===----------------------------------------------------------------------===//
// CPU levels and threads
//===----------------------------------------------------------------------===//

/// Runs every task on the calling thread, last first, while telling the
/// model it has `threads` threads: the GEMM sizes its tasks by that count.
struct ClaimedThreadsExec {
  explicit ClaimedThreadsExec(uint32_t threads) { exec.num_threads = threads; }
  tfm_exec exec{TFM_EXEC_ABI_VERSION, 1, &ClaimedThreadsExec::parallelFor,
                nullptr};
  static void parallelFor(void *, int64_t count, tfm_task_fn task, void *args) {
    for (int64_t i = count; i-- > 0;)
      task(args, i, i + 1);
  }
};

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

/// A weight [N, K] whose columns have different scales (int8 scales are per
/// column), one of them all zeros where N > 2.
std::vector<float> weightColumns(Random &rng, int64_t n, int64_t k) {
  static const float scales[] = {1.0f, 0.01f, 3.0f, 0.25f, 10.0f};
  std::vector<float> w = rng.uniform(n * k);
  for (int64_t col = 0; col < n; ++col)
    for (int64_t d = 0; d < k; ++d)
      w[size_t(col * k + d)] *= n > 2 && col == n / 2 ? 0.0f : scales[col % 5];
  return w;
}

/// W [N, K] stored as [K, N] (`x @ W`'s operand).
std::vector<float> transposed(const std::vector<float> &w, int64_t n,
                              int64_t k) {
  std::vector<float> t(w.size());
  for (int64_t col = 0; col < n; ++col)
    for (int64_t d = 0; d < k; ++d)
      t[size_t(d * n + col)] = w[size_t(col * k + d)];
  return t;
}

BuildOptions optionsFor(Precision precision, const char *cpu = "portable") {
  BuildOptions options;
  options.cpu = cpu;
  if (precision == Precision::BF16)
    options.dtype = "bf16";
  else if (precision == Precision::Int8)
    options.quantize = "int8";
  return options;
}

//===----------------------------------------------------------------------===//
// Shapes and epilogues
//===----------------------------------------------------------------------===//

std::string lowpModel(int64_t k, int64_t n) {
  std::string ks = std::to_string(k), ns = std::to_string(n);
  return "model lowp\n"
         "input x: f32[batch, seq, " +
         ks + "]\ninput r: f32[batch, seq, " + ns +
         "]\n"
         "plain = linear(x, weight = \"W\", bias = \"b\")\n"
         "nobias = linear(x, weight = \"W\")\n"
         "relu_out = relu(linear(x, \"W\", \"b\"))\n"
         "gelu_out = gelu(linear(x, \"W\", \"b\"))\n"
         "tanh_out = gelu(linear(x, \"W\", \"b\"), approximate = \"tanh\")\n"
         "residual = r + gelu(linear(x, \"W\", \"b\"))\n"
         "mm = x @ weight(\"Wt\")\n"
         "mm_res = r + relu(x @ weight(\"Wt\") + weight(\"b\"))\n"
         "output plain, nobias, relu_out, gelu_out, tanh_out, residual, mm, "
         "mm_res\n";
}

/// Compiles the model of `lowpModel(k, n)` once for `cpu` and runs it (a
/// portable artifact at every CPU level) on each (batch, seq) of `shapes`
/// and each way of running tasks.
void checkShapes(Precision precision, int64_t k, int64_t n,
                 const std::vector<std::pair<int64_t, int64_t>> &shapes,
                 const char *cpu = "portable", int lowestLevel = 1) {
  if (!hostRuns(cpu)) {
    WARN("skipped " << nameOf(precision) << " K " << k << " N " << n << " for "
                    << cpu << ": this host cannot run it");
    return;
  }
  Random rng(static_cast<uint32_t>(k * 977 + n * 7 + int(precision)));
  std::vector<float> w = weightColumns(rng, n, k), b = rng.uniform(n);
  Weights weights;
  weights["W"] = Weight{{n, k}, w, {}};
  weights["Wt"] = Weight{{k, n}, transposed(w, n, k), {}};
  weights["b"] = Weight{{n}, b, {}};
  std::shared_ptr<Model> model =
      Model::build(lowpModel(k, n), weights, optionsFor(precision, cpu));

  struct Case {
    int64_t batch, seq;
    HostTensor x, r;
    Expected plain, nobias, relu, gelu, tanh, residual, mm, mmRes;
  };
  std::vector<Case> cases;
  for (auto [batch, seq] : shapes) {
    int64_t m = batch * seq;
    std::vector<float> x = inputRows(rng, m, k), r = rng.uniform(m * n);
    Expected y = gemmReference(precision, x, m, k, w, n);
    cases.push_back({batch, seq, HostTensor::f32({batch, seq, k}, x),
                     HostTensor::f32({batch, seq, n}, r),
                     epilogue(y, &b, Activation::None, nullptr),
                     epilogue(y, nullptr, Activation::None, nullptr),
                     epilogue(y, &b, Activation::Relu, nullptr),
                     epilogue(y, &b, Activation::Gelu, nullptr),
                     epilogue(y, &b, Activation::GeluTanh, nullptr),
                     epilogue(y, &b, Activation::Gelu, &r), y,
                     epilogue(y, &b, Activation::Relu, &r)});
  }

  auto runAll = [&](const Model &copy) {
    Pool pool(2);
    // Thread counts change how rows and columns split into tasks (int8
    // rows are quantized per task): none (0 counts as 1), odd ones, and
    // far more than there is work.
    ClaimedThreadsExec none(0), three(3), seven(7), many(1000);
    for (const Case &c : cases)
      for (const tfm_exec *exec :
           {(const tfm_exec *)nullptr, pool.exec(),
            (const tfm_exec *)&none.exec, (const tfm_exec *)&three.exec,
            (const tfm_exec *)&seven.exec, (const tfm_exec *)&many.exec}) {
        INFO(nameOf(precision)
             << " K " << k << " N " << n << " batch " << c.batch << " seq "
             << c.seq << (exec == pool.exec() ? " on a pool of 2" : "")
             << " exec claiming " << (exec ? exec->num_threads : 0)
             << " threads");
        RunResult out = copy.runOk({c.x, c.r}, exec);
        std::vector<int64_t> shape = {c.batch, c.seq, n};
        CHECK_WITHIN_BOUNDS(out["plain"], c.plain, shape);
        CHECK_WITHIN_BOUNDS(out["nobias"], c.nobias, shape);
        CHECK_WITHIN_BOUNDS(out["relu_out"], c.relu, shape);
        CHECK_WITHIN_BOUNDS(out["gelu_out"], c.gelu, shape);
        CHECK_WITHIN_BOUNDS(out["tanh_out"], c.tanh, shape);
        CHECK_WITHIN_BOUNDS(out["residual"], c.residual, shape);
        CHECK_WITHIN_BOUNDS(out["mm"], c.mm, shape);
        CHECK_WITHIN_BOUNDS(out["mm_res"], c.mmRes, shape);
      }
  };
  if (std::string(cpu) != "portable") {
    INFO(nameOf(precision) << " built for " << cpu);
    runAll(*model);
    return;
  }
  forEachLevel(
      precision, *model,
      [&](const Model &copy, const Level &) { runAll(copy); }, lowestLevel);
}

// Rows: 1, a micro-kernel's tail (11 of 12), one past it (13), and past a
// 288-row block (300), as (batch, seq) pairs that flatten into them.
const std::vector<std::pair<int64_t, int64_t>> kAllRows = {
    {1, 1}, {1, 11}, {13, 1}, {3, 100}};
const std::vector<std::pair<int64_t, int64_t>> kFewRows = {{1, 13}, {3, 100}};

} // namespace

TEST_CASE("bf16 GEMM matches float64 on bf16-rounded operands at every CPU "
          "level",
          "[lowp]") {
  // K of 1, odd and past a K chunk (bf16: 256 deep with AVX-512, 512 with
  // AVX2, 1024 with SSE); N of 1, off the 32-column panel and past it.
  checkShapes(Precision::BF16, 1, 1, kAllRows);
  checkShapes(Precision::BF16, 3, 13, kAllRows);
  checkShapes(Precision::BF16, 5, 45, kAllRows);
  checkShapes(Precision::BF16, 70, 100, kAllRows);
  checkShapes(Precision::BF16, 600, 13, kFewRows);
  checkShapes(Precision::BF16, 1030, 45, kFewRows);
}

TEST_CASE("int8 GEMM matches float64 on the quantized operands at every CPU "
          "level",
          "[lowp]") {
  // K of 1, not a multiple of 4, and past a K chunk (int8: 512 deep with
  // AVX-512, 1024 with AVX2, 2048 with SSE).
  checkShapes(Precision::Int8, 1, 1, kAllRows);
  checkShapes(Precision::Int8, 3, 13, kAllRows);
  checkShapes(Precision::Int8, 5, 45, kAllRows);
  checkShapes(Precision::Int8, 70, 100, kAllRows);
  checkShapes(Precision::Int8, 600, 13, kFewRows);
  checkShapes(Precision::Int8, 1030, 45, kFewRows);
  checkShapes(Precision::Int8, 2100, 13, {{1, 13}});
}

TEST_CASE("AMX tiles (level 6) match float64 at odd shapes, beside level 5",
          "[lowp]") {
  // Rows 1 and 5 (one tile of padded rows), 17 (two 16-row tiles, the
  // second of one row), 33 (past a pair of tiles) and 130; K of whole
  // tiles (64), a partial tile (96: 48 bf16 pairs, 24 int8 quads) and odd
  // (770: a partial last K tile, the weights' tail padded); N off a panel,
  // whole panels, past them. Level 6 needs AMX: skipped, with a warning,
  // elsewhere.
  if (hostCpuLevel() < 6)
    WARN("this host has no AMX (or Linux refused the tile state): level 6 "
         "skipped, level 5 runs");
  const std::vector<std::pair<int64_t, int64_t>> rows = {
      {1, 1}, {1, 5}, {1, 17}, {3, 11}, {2, 65}};
  for (Precision precision : {Precision::BF16, Precision::Int8})
    for (int64_t k : {64, 96, 770})
      for (int64_t n : {31, 64, 100})
        checkShapes(precision, k, n, rows, "portable", /*lowestLevel=*/5);
  // The chunked path (N in whole panels, 32-row groups): K in two chunks
  // of 16 K tiles and a partial one (bf16 1034, int8 2066: 517 packed
  // rows), the partial sums kept in C between them; 250 rows in one task,
  // more than the 224 whose chunk of A the buffer holds; 33 rows, one
  // group and one row all of K at once.
  checkShapes(Precision::BF16, 1034, 64, {{2, 125}, {1, 33}}, "portable",
              /*lowestLevel=*/5);
  checkShapes(Precision::Int8, 2066, 64, {{2, 125}, {1, 33}}, "portable",
              /*lowestLevel=*/5);
  // More panels than the vector kernels' column block (32 panels of bf16
  // at K chunks of 256, 32 of int8): at level 6 one task takes them all
  // (up to 6 MB of packed weights), the last panel partial (N = 1100) or,
  // in K chunks, whole (N = 1088).
  checkShapes(Precision::BF16, 96, 1100, {{1, 33}, {2, 65}}, "portable",
              /*lowestLevel=*/5);
  checkShapes(Precision::Int8, 96, 1100, {{1, 33}, {2, 65}}, "portable",
              /*lowestLevel=*/5);
  checkShapes(Precision::BF16, 1034, 1088, {{2, 125}}, "portable",
              /*lowestLevel=*/5);
}

TEST_CASE("bf16 and int8 GEMMs built for one CPU match float64", "[lowp]") {
  // Without multiversioning the one kernel is the target's: vdpbf16ps and
  // vpdpbusd where the CPU has them (host on an AVX512-BF16 machine), the
  // widening forms otherwise.
  for (const char *cpu : {"host", "x86-64-v4", "x86-64-v3"}) {
    checkShapes(Precision::BF16, 70, 45, kFewRows, cpu);
    checkShapes(Precision::Int8, 70, 45, kFewRows, cpu);
  }
}

namespace {
/// Rows [begin, end) of a [M, N] output and of its expected values.
Comparison compareRows(const HostTensor &got, const Expected &expected,
                       int64_t begin, int64_t end) {
  int64_t n = expected.value.dim(1);
  std::vector<double> all = got.toDoubles();
  auto slice = [&](const std::vector<double> &v) {
    return std::vector<double>(v.begin() + begin * n, v.begin() + end * n);
  };
  std::vector<double> bound = slice(expected.bound);
  Comparison c =
      allClose(slice(all), slice(expected.value.data), 0.0, 0.0, &bound);
  c.message = "rows " + std::to_string(begin) + " to " +
              std::to_string(end - 1) + ": " + c.message;
  return c;
}

#define CHECK_ROWS(got, expected, begin, end)                                  \
  do {                                                                         \
    ::e2e::Comparison cmp_ = compareRows((got), (expected), (begin), (end));   \
    INFO(#got << " " << cmp_.message);                                         \
    CHECK(cmp_.ok);                                                            \
  } while (0)

std::string edgeModel(int64_t k) {
  return "model edges\ninput x: f32[seq, " + std::to_string(k) +
         "]\n"
         "y = linear(x, weight = \"W\")\n"
         "big = linear(x, weight = \"Wbig\")\n"
         "biased = linear(x, weight = \"W\", bias = \"b\")\n"
         "output y, big, biased\n";
}
} // namespace

TEST_CASE("bf16 rounds NaN, infinities, denormals and ties as documented",
          "[lowp]") {
  // K = 37: odd, and a masked tail after two AVX-512 vectors.
  const int64_t k = 37, n = 13;
  Random rng(2113);
  std::vector<float> w = rng.uniform(n * k), b = rng.uniform(n);
  // The same weight times 2^100: the products of the smallest normal
  // inputs stay normal (vdpbf16ps flushes denormal results).
  std::vector<float> wbig = w;
  for (float &v : wbig)
    v = std::ldexp(v, 100);
  std::vector<std::vector<float>> rows;
  auto rowWith = [&](std::vector<std::pair<int64_t, uint32_t>> bits) {
    std::vector<float> row = rng.uniform(k);
    for (auto [d, v] : bits)
      row[size_t(d)] = fromBits(v);
    rows.push_back(row);
  };
  rowWith({});                     // 0: plain values
  rowWith({{3, 0x7fc00000u}});     // 1: a quiet NaN
  rowWith({{7, 0x7f800001u}});     // 2: a NaN with its payload in the low
                                   //    bits: an infinity if not quieted
  rowWith({{0, 0x7fffffffu}});     // 3: a NaN that rounding would carry
                                   //    into the sign: -0 if not kept
  rowWith({{10, 0x7f800000u}});    // 4: +inf
  rowWith({{36, 0xff800000u}});    // 5: -inf, in the masked tail
  rowWith({{2, bitsOf(FLT_MAX)}}); // 6: rounds up to +inf
  rowWith({{30, 0xff7f8000u}});    // 7: a tie at an odd significand:
                                   //    rounds up to -inf
  rowWith({{5, 0x7f7f7fffu}});     // 8: the largest value that stays
                                   //    finite (3.39e38)
  {
    // 9: every kind of low half: ties (even and odd high halves), just
    // below and above them, all ones (carrying into the exponent), one.
    static const uint32_t lows[] = {0x8000u, 0x7fffu, 0x8001u, 0xffffu,
                                    0x0001u, 0x8000u, 0x0000u};
    std::vector<float> row(static_cast<size_t>(k));
    std::vector<float> highs = rng.uniform(k, -2.0f, 2.0f);
    for (int64_t d = 0; d < k; ++d)
      row[size_t(d)] =
          fromBits((bitsOf(highs[size_t(d)]) & 0xffff0000u) | lows[d % 7]);
    rows.push_back(row);
  }
  {
    // 10: denormals of both signs, which become zeros: y is exactly 0.
    static const uint32_t denormals[] = {0x00000001u, 0x807fffffu, 0x00400000u,
                                         0x80000010u, 0x000ae398u};
    std::vector<float> row(static_cast<size_t>(k));
    for (int64_t d = 0; d < k; ++d)
      row[size_t(d)] = fromBits(denormals[d % 5]);
    rows.push_back(row);
  }
  // 11: zeros of both signs.
  rows.push_back(std::vector<float>(size_t(k), 0.0f));
  for (int64_t d = 0; d < k; d += 2)
    rows.back()[size_t(d)] = -0.0f;
  {
    // 12: the smallest normals (2^-126 times 1..8), which stay.
    std::vector<float> row(static_cast<size_t>(k));
    for (int64_t d = 0; d < k; ++d)
      row[size_t(d)] = std::ldexp(float(1 + d % 8), -126) * (d % 3 ? 1 : -1);
    rows.push_back(row);
  }
  auto m = int64_t(rows.size());
  std::vector<float> x;
  for (const std::vector<float> &row : rows)
    x.insert(x.end(), row.begin(), row.end());
  Expected y = gemmReference(Precision::BF16, x, m, k, w, n);
  Expected big = gemmReference(Precision::BF16, x, m, k, wbig, n);
  Expected biased = epilogue(y, &b, Activation::None, nullptr);
  HostTensor input = HostTensor::f32({m, k}, x);

  Weights weights;
  weights["W"] = Weight{{n, k}, w, {}};
  weights["Wbig"] = Weight{{n, k}, wbig, {}};
  weights["b"] = Weight{{n}, b, {}};
  std::shared_ptr<Model> model =
      Model::build(edgeModel(k), weights, optionsFor(Precision::BF16));
  forEachLevel(Precision::BF16, *model, [&](const Model &copy, const Level &) {
    Pool pool(2);
    for (const tfm_exec *exec : {(const tfm_exec *)nullptr, pool.exec()}) {
      INFO((exec ? "on a pool of 2" : "serial"));
      RunResult out = copy.runOk({input}, exec);
      // Rows 0-11 through W: NaN rows are NaN everywhere, infinite ones
      // +-inf by the weight's sign, the rest within f32's bound; rows
      // 10-11 exactly 0. Rows 10-12 through W * 2^100 (the others
      // overflow there): 12 keeps its smallest normals.
      for (int64_t row = 0; row < 12; ++row) {
        INFO("row " << row);
        CHECK_ROWS(out["y"], y, row, row + 1);
        CHECK_ROWS(out["biased"], biased, row, row + 1);
      }
      for (int64_t row = 10; row < 13; ++row) {
        INFO("row " << row << " times 2^100");
        CHECK_ROWS(out["big"], big, row, row + 1);
      }
    }
  });
}

TEST_CASE("int8 quantizes zero rows, zero columns, constant rows and ties "
          "as documented",
          "[lowp]") {
  const int64_t k = 37, n = 13;
  Random rng(7411);
  std::vector<float> w = rng.uniform(n * k, -2.0f, 2.0f), b = rng.uniform(n);
  auto column = [&](int64_t col) { return w.data() + col * k; };
  // Column 0 all zeros (scale 1, every q 0: y is exactly 0).
  std::fill(column(0), column(0) + k, 0.0f);
  // Column 1 of scale exactly 1 (max 127) with ties: q rounds to even.
  static const float ties[] = {127.0f, 2.5f,  -3.5f,  0.5f,   -0.5f,
                               1.5f,   -1.5f, 126.5f, -126.5f};
  for (int64_t d = 0; d < k; ++d)
    column(1)[d] = d < 9 ? ties[d] : float(int(d * 37 % 253) - 126) + 0.5f;
  // Column 2 tiny (1e-10), column 3 one outlier.
  for (int64_t d = 0; d < k; ++d)
    column(2)[d] *= 1e-10f;
  column(3)[17] = 1000.0f;

  std::vector<std::vector<float>> rows;
  rows.push_back(std::vector<float>(size_t(k), 0.0f));  // 0: zeros (scale 1)
  rows.push_back(std::vector<float>(size_t(k), 0.75f)); // 1: zero point 0
  rows.push_back(std::vector<float>(size_t(k), -2.0f)); // 2: zero point 255
  {
    // 3: [-127, 128] has scale 1 and zero point 127: the halves in it are
    // ties that round to even.
    static const float halves[] = {2.5f, 3.5f,  -2.5f,  -0.5f, 0.5f,
                                   1.5f, -1.5f, 100.5f, -99.5f};
    std::vector<float> row = {-127.0f, 128.0f};
    for (int64_t d = 2; d < k; ++d)
      row.push_back(halves[d % 9]);
    rows.push_back(row);
  }
  {
    // 4: [-126.5, 128.5] has scale 1 and a zero point of 126.5: 126.
    std::vector<float> row = rng.uniform(k, -126.0f, 128.0f);
    row[0] = -126.5f;
    row[20] = 128.5f;
    rows.push_back(row);
  }
  {
    // 5: one outlier: every other value lands on few levels.
    std::vector<float> row = rng.uniform(k);
    row[36] = 1000.0f;
    rows.push_back(row);
  }
  rows.push_back(rng.uniform(k)); // 6: plain values
  {
    // 7: a tiny range (1e-20): the scale's reciprocal is 1e22 (times the
    // tiny column 2, y stays a normal f32).
    std::vector<float> row = rng.uniform(k);
    for (float &v : row)
      v *= 1e-20f;
    rows.push_back(row);
  }
  auto m = int64_t(rows.size());
  std::vector<float> x;
  for (const std::vector<float> &row : rows)
    x.insert(x.end(), row.begin(), row.end());
  Expected y = gemmReference(Precision::Int8, x, m, k, w, n);
  Expected biased = epilogue(y, &b, Activation::None, nullptr);
  HostTensor input = HostTensor::f32({m, k}, x);
  // The ties must be ties: the row and column scales are exactly 1.
  REQUIRE(quantizeRow(rows[3].data(), k).scale == 1.0f);
  REQUIRE(quantizeRow(rows[3].data(), k).zero == 127.0f);
  REQUIRE(quantizeRow(rows[4].data(), k).zero == 126.0f);
  REQUIRE(quantizeWeight(w, n, k).scale[1] == 1.0f);

  Weights weights;
  weights["W"] = Weight{{n, k}, w, {}};
  weights["Wbig"] = Weight{{n, k}, w, {}};
  weights["b"] = Weight{{n}, b, {}};
  std::shared_ptr<Model> model =
      Model::build(edgeModel(k), weights, optionsFor(Precision::Int8));
  forEachLevel(Precision::Int8, *model, [&](const Model &copy, const Level &) {
    Pool pool(2);
    for (const tfm_exec *exec : {(const tfm_exec *)nullptr, pool.exec()}) {
      INFO((exec ? "on a pool of 2" : "serial"));
      RunResult out = copy.runOk({input}, exec);
      for (int64_t row = 0; row < m; ++row) {
        INFO("row " << row);
        CHECK_ROWS(out["y"], y, row, row + 1);
        CHECK_ROWS(out["biased"], biased, row, row + 1);
      }
    }
  });
}

TEST_CASE("each CPU level runs its own bf16 kernel", "[lowp]") {
  // vdpbf16ps flushes denormal results to zero whatever MXCSR says (Intel
  // SDM), the widening FMAs do not: 2^-70 * 2^-70 (both exact in bf16) is
  // 0 at level 5 and 2^-140 below it. So the two outputs tell which kernel
  // TFM_CPU_LEVEL selected, and that the portable artifact has both.
  const int64_t k = 4, n = 2;
  Weights weights;
  weights["W"] =
      Weight{{n, k}, std::vector<float>(size_t(n * k), 0x1p-70f), {}};
  HostTensor x =
      HostTensor::f32({1, k}, std::vector<float>(size_t(k), 0x1p-70f));
  std::shared_ptr<Model> model =
      Model::build("model tiny\ninput x: f32[seq, 4]\n"
                   "y = linear(x, weight = \"W\")\noutput y\n",
                   weights, optionsFor(Precision::BF16));
  forEachLevel(Precision::BF16, *model,
               [&](const Model &copy, const Level &level) {
                 std::vector<double> y = copy.runOk({x})["y"].toDoubles();
                 double expected = level.level >= 5 ? 0.0 : 0x1p-138;
                 INFO("got " << std::hexfloat << y[0] << " and " << y[1]
                             << ", expected " << expected);
                 CHECK(y == std::vector<double>(size_t(n), expected));
               });
}

namespace {
void checkKeepFp32(Precision precision) {
  const int64_t k = 70, n = 13;
  Random rng(919 + int(precision));
  std::vector<float> wKeep = rng.uniform(n * k), wLow = rng.uniform(n * k),
                     wHead = rng.uniform(n * k), b = rng.uniform(n);
  Weights weights;
  weights["pooler.dense.weight"] = Weight{{n, k}, wKeep, {}};
  weights["pooler.dense.bias"] = Weight{{n}, b, {}};
  weights["encoder.weight"] = Weight{{n, k}, wLow, {}};
  weights["head"] = Weight{{k, n}, transposed(wHead, n, k), {}};
  BuildOptions options = optionsFor(precision);
  options.keepFp32 = {"pooler.*", "head"};
  options.remarks = true;
  std::shared_ptr<Model> model =
      Model::build("model keep\ninput x: f32[seq, 70]\n"
                   "kept = linear(x, weight = \"pooler.dense.weight\", "
                   "bias = \"pooler.dense.bias\")\n"
                   "low = linear(x, weight = \"encoder.weight\", "
                   "bias = \"pooler.dense.bias\")\n"
                   "head = x @ weight(\"head\")\n"
                   "output kept, low, head\n",
                   weights, options);
  // --remarks names each layer's type ([N, K] of a linear layer's weight,
  // the stored [K, N] of `x @ W`'s).
  const std::string &remarks = model->diagnostics();
  INFO(remarks);
  std::string low = precision == Precision::BF16 ? "bf16" : "int8";
  CHECK(remarks.find("remark: linear layer 'pooler.dense.weight' [13, 70] "
                     "runs in f32 (--keep-fp32)") != std::string::npos);
  CHECK(remarks.find("remark: linear layer 'encoder.weight' [13, 70] runs in " +
                     low) != std::string::npos);
  CHECK(remarks.find("remark: linear layer 'head' [70, 13] runs in f32 "
                     "(--keep-fp32)") != std::string::npos);

  const int64_t m = 11;
  std::vector<float> x = inputRows(rng, m, k);
  Expected kept = epilogue(gemmReference(Precision::F32, x, m, k, wKeep, n), &b,
                           Activation::None, nullptr);
  Expected lowp = epilogue(gemmReference(precision, x, m, k, wLow, n), &b,
                           Activation::None, nullptr);
  Expected head = gemmReference(Precision::F32, x, m, k, wHead, n);
  // The f32 bounds are tight enough that the low-precision result of the
  // kept layer would fail them.
  Expected keptLow = epilogue(gemmReference(precision, x, m, k, wKeep, n), &b,
                              Activation::None, nullptr);
  CHECK_FALSE(
      allClose(keptLow.value.data, kept.value.data, 0.0, 0.0, &kept.bound).ok);
  RunResult out = model->runOk({HostTensor::f32({m, k}, x)});
  CHECK_WITHIN_BOUNDS(out["kept"], kept, kept.value.shape);
  CHECK_WITHIN_BOUNDS(out["low"], lowp, lowp.value.shape);
  CHECK_WITHIN_BOUNDS(out["head"], head, head.value.shape);
}
} // namespace

TEST_CASE("--keep-fp32 keeps the matching layers in f32", "[lowp]") {
  checkKeepFp32(Precision::BF16);
  checkKeepFp32(Precision::Int8);
}

// Two small weights (inline constants, under 4 KiB) with the same values
// are two weights: tfm-pack-linear's greedy driver once merged the
// identical constants, the merged one lost both names, and --keep-fp32 no
// longer matched either.
TEST_CASE("--keep-fp32 keeps a weight whose values another weight shares",
          "[lowp]") {
  const int64_t k = 3, n = 2;
  std::vector<float> w = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
  Weights weights;
  weights["a.weight"] = Weight{{n, k}, w, {}};
  weights["pooler.weight"] = Weight{{n, k}, w, {}};
  BuildOptions options = optionsFor(Precision::BF16);
  options.keepFp32 = {"pooler.*"};
  options.remarks = true;
  std::shared_ptr<Model> model =
      Model::build("model dup\ninput x: f32[seq, 3]\n"
                   "a = linear(x, weight = \"a.weight\")\n"
                   "p = linear(x, weight = \"pooler.weight\")\n"
                   "output a, p\n",
                   weights, options);
  INFO(model->diagnostics());
  CHECK(model->diagnostics().find("linear layer 'pooler.weight' [2, 3] runs "
                                  "in f32 (--keep-fp32)") != std::string::npos);
  std::vector<float> x = {0.123456f, -0.654321f, 0.999f};
  RunResult out = model->runOk({HostTensor::f32({1, k}, x)});
  Expected kept = gemmReference(Precision::F32, x, 1, k, w, n);
  CHECK_WITHIN_BOUNDS(out["p"], kept, kept.value.shape);
}

//===----------------------------------------------------------------------===//
// GGUF Q8_0 blocks, kept as they are (tfm-pack-linear)
//===----------------------------------------------------------------------===//

namespace {
/// A weight [N, K] in GGUF's Q8_0 or Q4_0 blocks: per row of K, K / 32
/// blocks of an f16 scale d and 32 int8 q (Q8_0, W = d q) or 32 4-bit u,
/// two per byte (Q4_0: element t < 16 the low nibble of byte t, t + 16 the
/// high one; W = d (u - 8)), made as the gguf package's quantizers make
/// them; and its scales and values q (u - 8 for Q4_0) for the reference.
struct Q8Weight {
  std::vector<unsigned char> bytes;
  std::vector<float> scale; ///< [N, K / 32]
  std::vector<int32_t> q;   ///< [N, K]
};

Q8Weight makeQ8Weight(Random &rng, int64_t n, int64_t k, bool q4 = false) {
  // Blocks of very different magnitudes (so a scale applied to the wrong
  // block or column shows), one all-zero block (d = 0) in every few.
  static const float magnitudes[] = {1.0f, 0.001f, 7.0f, 0.0f, 0.3f, 40.0f};
  Q8Weight w;
  int64_t blocks = k / 32;
  for (int64_t col = 0; col < n; ++col)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      float magnitude = magnitudes[(col * 5 + blk * 3) % 6];
      std::vector<float> v = rng.uniform(32);
      float amax = 0.0f;
      for (float &x : v) {
        x *= magnitude;
        amax = std::max(amax, std::fabs(x));
      }
      uint16_t half = tfm_f32_to_f16(amax / (q4 ? 8.0f : 127.0f));
      float d = tfm_f16_to_f32(half);
      float inverse = d != 0.0f ? 1.0f / d : 0.0f;
      w.scale.push_back(d);
      w.bytes.push_back(uint8_t(half & 0xff));
      w.bytes.push_back(uint8_t(half >> 8));
      std::vector<int32_t> q;
      for (float x : v)
        q.push_back(
            int32_t(std::clamp(std::nearbyint(x * inverse),
                               q4 ? -8.0f : -127.0f, q4 ? 7.0f : 127.0f)));
      w.q.insert(w.q.end(), q.begin(), q.end());
      if (q4) {
        for (int t = 0; t < 16; ++t)
          w.bytes.push_back(uint8_t((q[t] + 8) | (q[t + 16] + 8) << 4));
      } else {
        for (int32_t value : q)
          w.bytes.push_back(uint8_t(int8_t(value)));
      }
    }
  return w;
}

std::vector<unsigned char> f32Bytes(const std::vector<float> &v) {
  std::vector<unsigned char> bytes(v.size() * 4);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

constexpr uint32_t kGgufF32 = 0, kGgufQ4_0 = 2, kGgufQ8_0 = 8;

/// y = x W^T on the Q8_0 (or Q4_0) operands: each row of x quantized per
/// block of 32
/// as documented (tfm.packed_linear: d = max|x| / 127 in f32, q =
/// round(x / d) to nearest even, computed as x * (1 / d); 0 for a zero
/// block), W = d_w q_w from the blocks.
///
/// Bound: per block the kernel's i32 sum S_b is exact and exactly an f32
/// (|S_b| <= 32 * 127 * 127 < 2^24); it multiplies S_b by the f32 product
/// of the two scales (one rounding: u |t_b|, t_b = S_b d_w d_x) and adds it
/// into the f32 accumulator (one rounding of the partial sum P_b): at most
/// u sum_b (|t_b| + |P_b|) to first order; twice that is allowed. A scale
/// of the wrong block or column, or an input rounded another way (one step
/// of q is 1/127 of the block's largest value), is far outside it.
Expected q8Reference(const std::vector<float> &x, int64_t m, int64_t k,
                     const Q8Weight &w, int64_t n) {
  Expected e{Array({m, n}), std::vector<double>(size_t(m * n))};
  int64_t blocks = k / 32;
  for (int64_t i = 0; i < m; ++i) {
    std::vector<float> xScale(static_cast<size_t>(blocks));
    std::vector<int32_t> xq(static_cast<size_t>(k));
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const float *row = x.data() + i * k + blk * 32;
      float amax = 0.0f;
      for (int t = 0; t < 32; ++t)
        amax = std::max(amax, std::fabs(row[t]));
      float d = amax / 127.0f;
      float inverse = d != 0.0f ? 1.0f / d : 0.0f;
      xScale[size_t(blk)] = d;
      for (int t = 0; t < 32; ++t) {
        float product = row[t] * inverse;
        xq[size_t(blk * 32 + t)] =
            int32_t(std::clamp(std::nearbyint(product), -127.0f, 127.0f));
      }
    }
    for (int64_t j = 0; j < n; ++j) {
      double y = 0, bound = 0;
      for (int64_t blk = 0; blk < blocks; ++blk) {
        int64_t s = 0;
        for (int64_t t = blk * 32; t < blk * 32 + 32; ++t)
          s += int64_t(xq[size_t(t)]) * w.q[size_t(j * k + t)];
        double term = double(s) * double(w.scale[size_t(j * blocks + blk)]) *
                      double(xScale[size_t(blk)]);
        y += term;
        bound += std::fabs(term) + std::fabs(y);
      }
      e.value.data[size_t(i * n + j)] = y;
      e.bound[size_t(i * n + j)] = 2 * kUnit * bound;
    }
  }
  return e;
}

/// Writes W (Q8_0) and b (F32) into a GGUF file and compiles a model of a
/// plain and a fused linear layer over them, K and N as given.
std::shared_ptr<Model> buildQ8Model(const std::string &dir, const Q8Weight &w,
                                    const std::vector<float> &b, int64_t k,
                                    int64_t n, const BuildOptions &options,
                                    bool q4 = false) {
  writeGguf(
      dir + "/w.gguf",
      {{"W", q4 ? kGgufQ4_0 : kGgufQ8_0, {uint64_t(k), uint64_t(n)}, w.bytes},
       {"b", kGgufF32, {uint64_t(n)}, f32Bytes(b)}});
  std::string ks = std::to_string(k), ns = std::to_string(n);
  std::ofstream(dir + "/m.tfm")
      << "model q8\ninput x: f32[batch, seq, " << ks
      << "]\ninput r: f32[batch, seq, " << ns
      << "]\nplain = linear(x, weight = \"W\")\n"
         "fused = r + gelu(linear(x, weight = \"W\", bias = \"b\"))\n"
         "output plain, fused\n";
  return Model::buildFiles(dir + "/m.tfm", dir + "/w.gguf", options);
}

void checkQ8Shape(int64_t k, int64_t n, bool q4 = false) {
  const char *format = q4 ? "Q4_0" : "Q8_0";
  Random rng(static_cast<uint32_t>(k * 131 + n));
  Q8Weight w = makeQ8Weight(rng, n, k, q4);
  std::vector<float> b = rng.uniform(n);
  std::string dir = makeTempDir();
  TempDirGuard guard(dir);
  BuildOptions options;
  options.cpu = "portable";
  options.remarks = true;
  std::shared_ptr<Model> model = buildQ8Model(dir, w, b, k, n, options, q4);
  INFO(model->diagnostics());
  CHECK(model->diagnostics().find("linear layer 'W' [" + std::to_string(n) +
                                  ", " + std::to_string(k) + "] runs in " +
                                  format) != std::string::npos);
  // Rows: decode (1), fewer than a 6-row micro-kernel (5), one past two
  // (13), and 18 as two sequences.
  for (auto shape : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {5, 1}, {1, 13}, {2, 9}}) {
    int64_t batch = shape.first, seq = shape.second, m = batch * seq;
    std::vector<float> x = inputRows(rng, m, k), r = rng.uniform(m * n);
    // A zero block in the first row: its scale is 0, its q all 0.
    std::fill(x.begin(), x.begin() + 32, 0.0f);
    Expected y = q8Reference(x, m, k, w, n);
    Expected fused = epilogue(y, &b, Activation::Gelu, &r);
    HostTensor xt = HostTensor::f32({batch, seq, k}, x),
               rt = HostTensor::f32({batch, seq, n}, r);
    forEachLevel(
        Precision::Int8, *model, [&](const Model &copy, const Level &) {
          Pool pool(2);
          for (const tfm_exec *exec :
               {(const tfm_exec *)nullptr, pool.exec()}) {
            INFO(format << " K " << k << " N " << n << " batch " << batch
                        << " seq " << seq << (exec ? " on a pool of 2" : ""));
            RunResult out = copy.runOk({xt, rt}, exec);
            std::vector<int64_t> outShape = {batch, seq, n};
            CHECK_WITHIN_BOUNDS(out["plain"], y, outShape);
            CHECK_WITHIN_BOUNDS(out["fused"], fused, outShape);
          }
        });
  }
}
} // namespace

TEST_CASE("GGUF Q8_0 weights run as Q8_0 blocks and match float64 on the "
          "quantized operands at every CPU level",
          "[gguf]") {
  // K a multiple of 32 (GGUF's blocks) but not of a 64-k vector step or
  // the 512-deep K chunk of AVX-512 (544: 17 blocks, past one chunk); N of
  // 1, odd, and past the 32-column panel.
  checkQ8Shape(32, 1);
  checkQ8Shape(96, 37);
  checkQ8Shape(544, 5);
  // Past AVX2's 1024-deep chunk and two of AVX-512's.
  checkQ8Shape(1056, 3);
}

TEST_CASE("a GGUF Q8_0 weight keeps its size in the artifact: about 1.1 "
          "bytes per weight instead of 4",
          "[gguf]") {
  const int64_t k = 1024, n = 256;
  Random rng(4242);
  Q8Weight w = makeQ8Weight(rng, n, k);
  std::vector<float> b = rng.uniform(n);
  std::string dir = makeTempDir(), keptDir = makeTempDir();
  TempDirGuard guard(dir), keptGuard(keptDir);
  BuildOptions options;
  options.cpu = "portable";
  std::shared_ptr<Model> q8 = buildQ8Model(dir, w, b, k, n, options);
  options.keepFp32 = {"W"};
  std::shared_ptr<Model> f32 = buildQ8Model(keptDir, w, b, k, n, options);
  auto sizeOf = [](const std::string &path) {
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    return double(file.tellg());
  };
  double q8Bytes = sizeOf(q8->libraryPath()),
         f32Bytes = sizeOf(f32->libraryPath());
  // f32: 4 bytes a weight; Q8_0: 1 + 2 / 32 (the file's f16 scale per
  // block); KQuantTests measures the weight's bytes closer.
  double saved = f32Bytes - q8Bytes, expected = (4.0 - 1.0625) * double(n * k);
  INFO("artifact with Q8_0 blocks "
       << q8Bytes << " bytes, with f32 weights " << f32Bytes << " bytes: "
       << saved << " saved, " << expected << " expected for the weight");
  CHECK(saved > 0.95 * expected);
  CHECK(saved < 1.05 * expected);
  // And the kept one is f32: it matches the dequantized weight to f32
  // rounding, which the Q8_0 one (its input quantized) does not.
  std::vector<float> x = rng.uniform(k);
  std::vector<float> dequantized(size_t(n * k));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t d = 0; d < k; ++d)
      dequantized[size_t(j * k + d)] = w.scale[size_t(j * (k / 32) + d / 32)] *
                                       float(w.q[size_t(j * k + d)]);
  Expected exact = gemmReference(Precision::F32, x, 1, k, dequantized, n);
  std::vector<float> r(size_t(n), 0.0f);
  RunResult kept = f32->runOk(
      {HostTensor::f32({1, 1, k}, x), HostTensor::f32({1, 1, n}, r)});
  CHECK_WITHIN_BOUNDS(kept["plain"], exact, (std::vector<int64_t>{1, 1, n}));
  RunResult quantized =
      q8->runOk({HostTensor::f32({1, 1, k}, x), HostTensor::f32({1, 1, n}, r)});
  Expected onBlocks = q8Reference(x, 1, k, w, n);
  CHECK_WITHIN_BOUNDS(quantized["plain"], onBlocks,
                      (std::vector<int64_t>{1, 1, n}));
}

TEST_CASE("GGUF Q4_0 weights run as Q4_0 blocks and match float64 on the "
          "quantized operands at every CPU level",
          "[gguf]") {
  // As for Q8_0: K of one block, off the vector steps and past the K
  // chunks of AVX-512 and AVX2; N of 1, odd and past a panel.
  checkQ8Shape(32, 1, /*q4=*/true);
  checkQ8Shape(96, 37, /*q4=*/true);
  checkQ8Shape(544, 5, /*q4=*/true);
  checkQ8Shape(1056, 3, /*q4=*/true);
}
