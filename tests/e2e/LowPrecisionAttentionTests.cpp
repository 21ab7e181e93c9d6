//===- LowPrecisionAttentionTests.cpp - bf16 flash attention vs float64 ---===//
//
// With `--dtype bf16`, the flash-attention kernel's AMX (level 6, tdpbf16ps)
// and AVX512-BF16 (level 5, vdpbf16ps) variants compute QK^T and PV on
// operands rounded to bf16 (round to nearest even), in f32:
//   - the scaled queries: bf16(f32(q * f32(scale))), rounded once per block;
//   - the keys and the values: bf16(k), bf16(v);
//   - the probabilities of the online softmax, per key block of 64 keys from
//     key 0: p = exp(s - m) with m the running max of the query's visible
//     scores up to the end of the block (f32), rounded bf16(p) for PV only;
//     the running sum l adds the f32 p, unrounded.
// The reference below does exactly that in float64 (the same blocks), so
// that what is left is f32 arithmetic: nearly every element lies within an
// f32 bound of it, and an element whose bf16(p) f32 rounded the other way
// (p within f32's error of a rounding boundary) moves by at most one bf16
// unit of that p. A missing or different rounding of any operand, a wrong
// tile or a lost mask misses the tight bound almost everywhere. Lower
// levels run the f32 kernel: checked against float64 on the unrounded
// operands. Shapes: odd sequence lengths, head dims 7, 24, 40, 64, 80, 128
// (Dv apart from Dk), causal, a sliding window, kv_length and query_offset
// (cache rows nobody may see hold NaN), grouped-query attention (K/V heads
// shared by two query heads), a decode step.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"
#include "LowPrecisionHarness.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

using namespace e2e;
using namespace e2e::lowp;

namespace {

double bf16(double x) {
  return tfm_bf16_to_f32(tfm_f32_to_bf16(static_cast<float>(x)));
}

/// q [batch, groups, repeat, sq, d], k [batch, groups, 1, sk, d], v [...,
/// dv]: each K/V head serves `repeat` query heads.
struct Case {
  int64_t batch, groups, repeat, sq, sk, d, dv;
  bool causal;
  bool cache; // kv_length (and query_offset when causal) per sequence
  std::optional<int64_t> window;
};

/// The key block the bf16 kernels round the probabilities in.
constexpr int64_t kBlockK = 64;

/// The expected output and, per element, sum_j P_ij |v_jc|: the scale of
/// both bounds.
struct AttentionExpected {
  std::vector<double> value, magnitude;
};

AttentionExpected reference(const Case &c, const std::vector<float> &q,
                            const std::vector<float> &k,
                            const std::vector<float> &v,
                            const std::vector<int64_t> &past,
                            const std::vector<int64_t> &length, bool rounded) {
  double scale = 1.0 / std::sqrt(double(c.d));
  float scale32 = static_cast<float>(scale);
  double negInf = -std::numeric_limits<double>::infinity();
  AttentionExpected e;
  e.value.assign(size_t(c.batch * c.groups * c.repeat * c.sq * c.dv), 0.0);
  e.magnitude = e.value;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t g = 0; g < c.groups; ++g)
      for (int64_t r = 0; r < c.repeat; ++r)
        for (int64_t i = 0; i < c.sq; ++i) {
          int64_t head = (b * c.groups + g) * c.repeat + r;
          int64_t kvHead = b * c.groups + g;
          int64_t pos = (c.cache ? past[size_t(b)] : 0) + i;
          int64_t limit = c.cache ? length[size_t(b)] : c.sk;
          auto visible = [&](int64_t j) {
            return j < limit && (!c.causal || j <= pos) &&
                   (!c.window || pos - j < *c.window);
          };
          std::vector<double> qs(size_t(c.d));
          for (int64_t x = 0; x < c.d; ++x) {
            float qx = q[size_t((head * c.sq + i) * c.d + x)];
            qs[size_t(x)] = rounded ? bf16(qx * scale32) : double(qx) * scale;
          }
          auto keyAt = [&](int64_t j, int64_t x) {
            double kx = k[size_t((kvHead * c.sk + j) * c.d + x)];
            return rounded ? bf16(kx) : kx;
          };
          auto valueAt = [&](int64_t j, int64_t x) {
            double vx = v[size_t((kvHead * c.sk + j) * c.dv + x)];
            return rounded ? bf16(vx) : vx;
          };
          std::vector<double> s(size_t(c.sk), negInf);
          for (int64_t j = 0; j < c.sk; ++j)
            if (visible(j)) {
              double dot = 0;
              for (int64_t x = 0; x < c.d; ++x)
                dot += qs[size_t(x)] * keyAt(j, x);
              s[size_t(j)] = dot;
            }
          double m = negInf, l = 0;
          std::vector<double> acc(size_t(c.dv), 0.0), mag(acc);
          for (int64_t j0 = 0; j0 < c.sk; j0 += kBlockK) {
            int64_t j1 = std::min(j0 + kBlockK, c.sk);
            double mNew = m;
            for (int64_t j = j0; j < j1; ++j)
              mNew = std::max(mNew, s[size_t(j)]);
            if (mNew == negInf)
              continue;
            double alpha = m == negInf ? 0.0 : std::exp(m - mNew);
            l *= alpha;
            for (int64_t x = 0; x < c.dv; ++x) {
              acc[size_t(x)] *= alpha;
              mag[size_t(x)] *= alpha;
            }
            for (int64_t j = j0; j < j1; ++j) {
              if (s[size_t(j)] == negInf)
                continue;
              double p = std::exp(s[size_t(j)] - mNew);
              double pr = rounded ? bf16(p) : p;
              l += p;
              for (int64_t x = 0; x < c.dv; ++x) {
                acc[size_t(x)] += pr * valueAt(j, x);
                mag[size_t(x)] += p * std::fabs(valueAt(j, x));
              }
            }
            m = mNew;
          }
          for (int64_t x = 0; x < c.dv; ++x) {
            size_t at = size_t((head * c.sq + i) * c.dv + x);
            e.value[at] = l > 0 ? acc[size_t(x)] / l : 0.0;
            e.magnitude[at] = l > 0 ? mag[size_t(x)] / l : 0.0;
          }
        }
  return e;
}

/// f32 arithmetic's share: scores summed over up to 128 head dims in f32
/// and the f32 exponential, relative to sum_j P_ij |v_jc|.
constexpr double kTight = 5e-5, kTightAbsolute = 1e-6;
/// At least this fraction of the elements within the tight bound.
constexpr double kTightShare = 0.95;

void check(const HostTensor &got, const AttentionExpected &want, bool rounded) {
  std::vector<double> values = got.toDoubles();
  REQUIRE(values.size() == want.value.size());
  int64_t tight = 0, worst = -1;
  double worstExcess = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    double err = std::fabs(values[i] - want.value[i]);
    double bound = kTight * want.magnitude[i] + kTightAbsolute;
    if (err <= bound) {
      ++tight;
      continue;
    }
    // One bf16 unit of any one p: 2^-8 p at most.
    double loose = bound + (rounded ? 0x1p-8 * want.magnitude[i] : 0.0);
    double excess = std::isnan(err) ? INFINITY : err / loose;
    if (excess > worstExcess) {
      worstExcess = excess;
      worst = int64_t(i);
    }
  }
  double share = double(tight) / double(values.size());
  std::ostringstream message;
  message << tight << " of " << values.size()
          << " elements within the f32 bound";
  if (worst >= 0)
    message << "; worst element " << worst << ": got " << values[size_t(worst)]
            << ", want " << want.value[size_t(worst)] << " (" << worstExcess
            << "x its bound)";
  INFO(message.str());
  CHECK(worstExcess <= 1.0);
  CHECK(share >= (rounded ? kTightShare : 1.0));
}

std::string modelFor(const Case &c) {
  auto n = [](int64_t x) { return std::to_string(x); };
  std::string s = "model lowp_attention\n"
                  "input q: f32[batch, " +
                  n(c.groups) + ", " + n(c.repeat) + ", seq, " + n(c.d) +
                  "]\ninput k: f32[batch, " + n(c.groups) + ", 1, keys, " +
                  n(c.d) + "]\ninput v: f32[batch, " + n(c.groups) +
                  ", 1, keys, " + n(c.dv) + "]\n";
  std::string call = "y = sdpa(q, k, v";
  if (c.cache) {
    s += "input len: i64[batch]\n";
    call += ", kv_length = len";
  }
  if (c.causal)
    call += ", is_causal = true";
  if (c.cache && c.causal) {
    s += "input past: i64[batch]\n";
    call += ", query_offset = past";
  }
  if (c.window)
    call += ", window = " + n(*c.window);
  return s + call + ")\noutput y\n";
}
} // namespace

TEST_CASE("bf16 flash attention (AMX and AVX512-BF16) matches float64 on "
          "the rounded operands",
          "[lowp]") {
  const Case cases[] = {
      {1, 2, 1, 77, 77, 64, 64, false, false, {}},  // odd S, BERT's head
      {1, 3, 1, 130, 130, 40, 40, true, false, {}}, // causal, D 40
      {2, 2, 1, 33, 200, 80, 80, false, true, {}},  // kv_length, D 80
      {2, 1, 2, 17, 150, 128, 128, true, true, {}}, // GQA in a cache
      {2, 2, 1, 1, 90, 64, 48, true, true, {}},     // decode steps, Dv 48
      {1, 1, 2, 70, 70, 24, 24, true, false, {20}}, // window, GQA
      {1, 1, 1, 5, 9, 7, 9, false, false, {}},      // tiny odd dims
      {1, 1, 1, 300, 300, 64, 64, true, false, {}}, // five key blocks
  };
  for (const Case &c : cases) {
    DYNAMIC_SECTION("B " << c.batch << " G " << c.groups << " R " << c.repeat
                         << " Sq " << c.sq << " Sk " << c.sk << " D " << c.d
                         << " Dv " << c.dv << (c.causal ? " causal" : "")
                         << (c.cache ? " cache" : "")
                         << (c.window ? " window" : "")) {
      BuildOptions options;
      options.cpu = "portable";
      options.dtype = "bf16";
      std::shared_ptr<Model> model = Model::build(modelFor(c), {}, options);
      Random rng(uint32_t(c.sq * 131 + c.sk * 7 + c.d));
      std::vector<int64_t> qShape = {c.batch, c.groups, c.repeat, c.sq, c.d},
                           kShape = {c.batch, c.groups, 1, c.sk, c.d},
                           vShape = {c.batch, c.groups, 1, c.sk, c.dv};
      std::vector<float> q = rng.uniform(elementCount(qShape), -2, 2);
      std::vector<float> k = rng.uniform(elementCount(kShape), -2, 2);
      std::vector<float> v = rng.uniform(elementCount(vShape));
      // Per sequence: queries at past[b] (causal), keys below length[b].
      std::vector<int64_t> past(size_t(c.batch)), length(size_t(c.batch));
      for (int64_t b = 0; b < c.batch; ++b) {
        past[size_t(b)] = c.causal ? (b == 0 ? c.sk - c.sq - 5 : 3 + b) : 0;
        length[size_t(b)] =
            c.causal ? past[size_t(b)] + c.sq : (b == 0 ? c.sk - 20 : 37);
      }
      // NaN in every cache row no query may see: never to be read.
      if (c.cache)
        for (int64_t b = 0; b < c.batch; ++b)
          for (int64_t g = 0; g < c.groups; ++g)
            for (int64_t j = length[size_t(b)]; j < c.sk; ++j) {
              for (int64_t x = 0; x < c.d; ++x)
                k[size_t(((b * c.groups + g) * c.sk + j) * c.d + x)] = NAN;
              for (int64_t x = 0; x < c.dv; ++x)
                v[size_t(((b * c.groups + g) * c.sk + j) * c.dv + x)] = NAN;
            }
      std::vector<HostTensor> inputs = {HostTensor::f32(qShape, q),
                                        HostTensor::f32(kShape, k),
                                        HostTensor::f32(vShape, v)};
      if (c.cache)
        inputs.push_back(HostTensor::i64({c.batch}, length));
      if (c.cache && c.causal)
        inputs.push_back(HostTensor::i64({c.batch}, past));
      AttentionExpected rounded = reference(c, q, k, v, past, length, true);
      AttentionExpected exact = reference(c, q, k, v, past, length, false);
      forEachLevel(Precision::BF16, *model,
                   [&](const Model &copy, const Level &level) {
                     RunResult r = copy.runOk(inputs);
                     bool bf16Kernel = level.level >= 5;
                     check(r["y"], bf16Kernel ? rounded : exact, bf16Kernel);
                   });
    }
  }
}

TEST_CASE("bf16 flash attention gives zeros for queries whose keys are all "
          "masked, and float64's values for the others",
          "[lowp]") {
  // The bf16 kernels' own exponential (SoftmaxExp.cpp) takes -inf (a
  // masked score, and every score while all keys so far are masked, whose
  // pivot is 0) to 0, never NaN, and is accurate to f32's bound elsewhere
  // (an error of 1e-3 in its linear coefficient fails here): even queries
  // see no key (a float mask of -inf), odd ones every key, over two key
  // blocks and a partial one (150 keys).
  const Case c{1, 2, 1, 37, 150, 64, 64, false, false, {}};
  std::shared_ptr<Model> model =
      Model::build("model lowp_masked_rows\n"
                   "input q: f32[1, 2, 37, 64]\ninput k: f32[1, 2, 150, 64]\n"
                   "input v: f32[1, 2, 150, 64]\ninput m: f32[1, 1, 37, 150]\n"
                   "y = sdpa(q, k, v, attn_mask = m)\noutput y\n",
                   {}, [] {
                     BuildOptions options;
                     options.cpu = "portable";
                     options.dtype = "bf16";
                     return options;
                   }());
  Random rng(4242);
  std::vector<float> q = rng.uniform(2 * 37 * 64, -2, 2);
  std::vector<float> k = rng.uniform(2 * 150 * 64, -2, 2);
  std::vector<float> v = rng.uniform(2 * 150 * 64);
  std::vector<float> mask(size_t(37 * 150));
  for (int64_t i = 0; i < 37; ++i)
    for (int64_t j = 0; j < 150; ++j)
      mask[size_t(i * 150 + j)] =
          i % 2 == 0 ? -std::numeric_limits<float>::infinity() : 0.0f;
  std::vector<HostTensor> inputs = {HostTensor::f32({1, 2, 37, 64}, q),
                                    HostTensor::f32({1, 2, 150, 64}, k),
                                    HostTensor::f32({1, 2, 150, 64}, v),
                                    HostTensor::f32({1, 1, 37, 150}, mask)};
  auto expected = [&](bool rounded) {
    AttentionExpected e = reference(c, q, k, v, {0}, {150}, rounded);
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 37; i += 2)
        for (int64_t x = 0; x < 64; ++x) {
          size_t at = size_t((h * 37 + i) * 64 + x);
          e.value[at] = 0.0;
          e.magnitude[at] = 0.0;
        }
    return e;
  };
  AttentionExpected rounded = expected(true), exact = expected(false);
  forEachLevel(Precision::BF16, *model,
               [&](const Model &copy, const Level &level) {
                 RunResult r = copy.runOk(inputs);
                 std::vector<double> y = r["y"].toDoubles();
                 for (int64_t h = 0; h < 2; ++h)
                   for (int64_t i = 0; i < 37; i += 2)
                     for (int64_t x = 0; x < 64; ++x)
                       CHECK(y[size_t((h * 37 + i) * 64 + x)] == 0.0);
                 bool bf16Kernel = level.level >= 5;
                 check(r["y"], bf16Kernel ? rounded : exact, bf16Kernel);
               });
}
