//===- LowPrecisionTests.cpp - bf16, f16 and i8 tensors vs float64 --------===//
//
// Models with bf16, f16 and i8 inputs, outputs and casts, compiled with named
// dimensions and run at odd sizes. Casts are compared bit for bit with the
// runtime's conversions (DtypeTest checks those against a float64
// rounding), but for what AVX512-BF16's own rounding does differently when
// TFM_E2E_CPU names such a CPU. Arithmetic is compared with a float64 reference
// that rounds where the language says each op rounds: once per op, or once per
// layer; computing in f32 instead of float64 may move a result across a
// rounding boundary, so a result may be one unit in the last place away, but
// almost all must be equal (a missing or extra rounding, or arithmetic in the
// narrow type, breaks that at once).
//
//===----------------------------------------------------------------------===//
#include "Fixture.h"
#include "Harness.h"
#include "Reference.h"
#include "ReferenceDecoder.h"
#include "ReferenceLayers.h"
#include "ReferenceMath.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace e2e;
using ref::Array;

namespace {
float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

const char *dtypeName(tfm_dtype dtype) { return tfm_dtype_name(dtype); }

/// `v` rounded to bf16 or f16 as the compiled code rounds a value it has in
/// f32 (and PyTorch a double): through f32.
double roundTo(tfm_dtype dtype, double v) {
  float f = static_cast<float>(v);
  return dtype == TFM_DTYPE_BF16 ? tfm_bf16_to_f32(tfm_f32_to_bf16(f))
                                 : tfm_f16_to_f32(tfm_f32_to_f16(f));
}

Array rounded(tfm_dtype dtype, const Array &x) {
  return ref::map(x, [dtype](double v) { return roundTo(dtype, v); });
}

/// The spacing of the format's values around `v`.
double ulp(tfm_dtype dtype, double v) {
  int mantissa = dtype == TFM_DTYPE_BF16 ? 7 : 10;
  int minExponent = dtype == TFM_DTYPE_BF16 ? -126 : -14;
  int exponent = v == 0 ? minExponent : std::max(std::ilogb(v), minExponent);
  return std::ldexp(1.0, exponent - mantissa);
}

/// `got` (bf16 or f16) against `ref`, already rounded to its type: every
/// element within one unit in the last place, and all but `slack` of them
/// (at least one) equal.
void checkRounded(const HostTensor &got, const Array &ref,
                  double slack = 0.02) {
  REQUIRE(got.shape == ref.shape);
  std::vector<double> values = got.toDoubles();
  int64_t unequal = 0, far = 0, worst = -1;
  double worstUlps = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    double g = values[i], r = ref.data[i];
    if (g == r || (std::isnan(g) && std::isnan(r)))
      continue;
    ++unequal;
    double ulps =
        std::fabs(g - r) / ulp(got.dtype, std::max(std::fabs(g), std::fabs(r)));
    if (!(ulps <= 1))
      ++far;
    if (!(ulps <= worstUlps)) {
      worstUlps = ulps;
      worst = int64_t(i);
    }
  }
  int64_t allowed =
      std::max<int64_t>(1, int64_t(slack * double(values.size())));
  INFO(got.describe() << ": " << unequal << " of " << values.size()
                      << " differ from the rounded reference, " << far
                      << " by more than one unit in the last place; worst "
                      << worstUlps << " ulps at " << worst << " (got "
                      << (worst >= 0 ? values[size_t(worst)] : 0.0)
                      << ", expected "
                      << (worst >= 0 ? ref.data[size_t(worst)] : 0.0) << ")");
  CHECK(far == 0);
  CHECK(unequal <= allowed);
}

/// Decoded bf16/f16 inputs, as the reference reads them.
Array decoded(const HostTensor &t) { return ref::fromTensor(t); }

/// A bf16 or f16 tensor of `values`, rounded.
HostTensor makeHalf(tfm_dtype dtype, std::vector<int64_t> shape,
                    const std::vector<float> &values) {
  return dtype == TFM_DTYPE_BF16 ? HostTensor::bf16(std::move(shape), values)
                                 : HostTensor::f16(std::move(shape), values);
}

/// `source` with every "DT" spelled as `dtype`.
std::string withDtype(std::string source, tfm_dtype dtype) {
  for (size_t at = source.find("DT"); at != std::string::npos;
       at = source.find("DT", at))
    source.replace(at, 2, tfm_dtype_name(dtype));
  return source;
}

/// Whether the model may be compiled for a CPU with AVX512-BF16
/// (TFM_E2E_CPU=host, znver4, ...), whose vcvtneps2bf16 reads f32
/// subnormals as zeros and keeps a NaN's payload; portable artifacts and the
/// x86-64 levels round with the runtime's bits.
bool nativeBF16Rounding() {
  const char *cpu = std::getenv("TFM_E2E_CPU");
  if (!cpu)
    return false;
  std::string name = cpu;
  return name != "portable" && name != "x86-64" && name != "x86-64-v2" &&
         name != "x86-64-v3" && name != "x86-64-v4";
}

/// `got` is `x` rounded to bf16: the runtime's bits, or with
/// vcvtneps2bf16 a zero for an f32 subnormal and any NaN of x's sign.
bool isBF16Of(uint16_t got, float x, bool native) {
  if (got == tfm_f32_to_bf16(x))
    return true;
  if (!native)
    return false;
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x))
    return (got & 0x8000) == sign && (got & 0x7f80) == 0x7f80 &&
           (got & 0x7f) != 0;
  return std::fpclassify(x) == FP_SUBNORMAL && got == sign;
}

/// f32 inputs for the casts: zeros, infinities, NaNs, halfway cases of both
/// formats, f32 subnormals, values past each format's range and random bit
/// patterns and magnitudes.
std::vector<float> castInputs(int64_t n, uint32_t seed) {
  std::vector<float> v = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN,
                          fromBits(0x7f800001),       // A signalling NaN.
                          1.0f + 0x1p-8f,             // bf16 tie, to even: 1
                          1.0f + 0x1p-7f + 0x1p-8f,   // bf16 tie: up
                          1.0f + 0x1p-11f,            // f16 tie: 1
                          1.0f + 0x1p-10f + 0x1p-11f, // f16 tie: up
                          65504.0f, 65519.0f, 65520.0f, 3.4028235e38f,
                          fromBits(0x7f7f8000), // A tie past the largest
                                                // bf16: to infinity.
                          0x1p-14f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-126f,
                          0x1p-133f, 0x1.8p-134f, 0x1p-149f, -3.140625f, 1e-3f};
  std::mt19937 gen(seed);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_real_distribution<float> exponent(-30.0f, 20.0f);
  for (int64_t i = int64_t(v.size()); i < n; ++i) {
    if (i % 2)
      v.push_back(fromBits(bits(gen)));
    else
      v.push_back(std::exp2(exponent(gen)) * (i % 4 ? 1.0f : -1.0f));
  }
  v.resize(size_t(n));
  return v;
}
} // namespace

TEST_CASE("casts round to bf16 and f16 to nearest even, bit for bit",
          "[language]") {
  static const std::shared_ptr<Model> model = Model::build(R"(
model casts
input x: f32[n]
input d: f64[n]
b = cast(x, bf16)
h = cast(x, f16)
bw = cast(b, f32)
hw = cast(h, f64)
db = cast(d, bf16)
dh = cast(d, f16)
hb = cast(h, bf16)
bh = cast(b, f16)
output b, h, bw, hw, db, dh, hb, bh
)");
  // Odd sizes: vector loops and their remainders; the special values sit at
  // the start, where the smallest size cuts them off.
  for (int64_t n : {1, 29, 4099}) {
    DYNAMIC_SECTION("n " << n) {
      std::vector<float> x = castInputs(n, uint32_t(n));
      // Doubles that round twice: 1 + 2^-8 + 2^-30 is 1 + 2^-8 in f32, a
      // bf16 tie that goes to even (1), as PyTorch's double -> float ->
      // bfloat16 gives; rounded once it would be 1 + 2^-7.
      std::vector<double> d(x.begin(), x.end());
      for (int64_t i = 0; i < n; i += 3)
        d[size_t(i)] = i % 2 ? 1 + 0x1p-8 + 0x1p-30 : -(1 + 0x1p-11 + 0x1p-40);
      RunResult r =
          model->runOk({HostTensor::f32({n}, x), HostTensor::f64({n}, d)});
      REQUIRE(r["b"].dtype == TFM_DTYPE_BF16);
      REQUIRE(r["h"].dtype == TFM_DTYPE_F16);
      CHECK(r["bw"].dtype == TFM_DTYPE_F32);
      CHECK(r["hw"].dtype == TFM_DTYPE_F64);
      std::vector<uint16_t> b = r["b"].halfBits(), h = r["h"].halfBits(),
                            db = r["db"].halfBits(), dh = r["dh"].halfBits(),
                            hb = r["hb"].halfBits(), bh = r["bh"].halfBits();
      std::vector<double> bw = r["bw"].toDoubles(), hw = r["hw"].toDoubles();
      int64_t mismatches = 0;
      bool native = nativeBF16Rounding();
      for (int64_t i = 0; i < n; ++i) {
        size_t k = size_t(i);
        float dx = static_cast<float>(d[k]);
        // NaNs included: the compiled code makes the runtime's NaNs.
        bool ok = isBF16Of(b[k], x[k], native) &&
                  h[k] == tfm_f32_to_f16(x[k]) && isBF16Of(db[k], dx, native) &&
                  dh[k] == tfm_f32_to_f16(dx) &&
                  isBF16Of(hb[k], tfm_f16_to_f32(h[k]), native) &&
                  bh[k] == tfm_f32_to_f16(tfm_bf16_to_f32(b[k])) &&
                  bitsOf(float(bw[k])) == bitsOf(tfm_bf16_to_f32(b[k]));
        double hwRef = tfm_f16_to_f32(h[k]);
        ok = ok && (hw[k] == hwRef || (std::isnan(hw[k]) && std::isnan(hwRef)));
        if (!ok && mismatches++ < 5) {
          UNSCOPED_INFO("element "
                        << i << ": x " << x[k] << " (0x" << std::hex
                        << bitsOf(x[k]) << "), d " << d[k] << ": bf16 0x"
                        << b[k] << " vs 0x" << tfm_f32_to_bf16(x[k])
                        << ", f16 0x" << h[k] << " vs 0x"
                        << tfm_f32_to_f16(x[k]) << ", db 0x" << db[k]
                        << " vs 0x" << tfm_f32_to_bf16(dx) << ", dh 0x" << dh[k]
                        << " vs 0x" << tfm_f32_to_f16(dx) << std::dec);
        }
      }
      CHECK(mismatches == 0);
      if (n > 10) {
        // The documented roundings of the halfway cases, spelled out.
        CHECK(b[7] == 0x3f80);
        CHECK(b[8] == 0x3f82);
        CHECK(h[9] == 0x3c00);
        CHECK(h[10] == 0x3c02);
        CHECK(h[13] == 0x7c00); // 65520
        CHECK(b[15] == 0x7f80); // Past the largest bf16.
        CHECK(db[0] == 0xbf80); // -(1 + 2^-11 + 2^-40): f32 keeps 2^-11.
        CHECK(db[3] == 0x3f80); // Double rounding, as PyTorch.
      }
    }
  }
}

TEST_CASE("bf16 and f16 arithmetic computes in f32 and rounds each op",
          "[language]") {
  for (tfm_dtype dtype : {TFM_DTYPE_BF16, TFM_DTYPE_F16}) {
    DYNAMIC_SECTION(dtypeName(dtype)) {
      std::shared_ptr<Model> model = Model::build(withDtype(R"(
model arith
input x: DT[batch, seq, 5]
input y: DT[seq, 5]
input z: DT[batch, 300]
a = x + y
b = x * y - 1
c = exp(x) / (y * y + 1)
d = tanh(x) + x * 0.1
s = sum(z, dim = -1)
mn = mean(x, dim = [0, 2])
mx = max(x, dim = -1)
sm = softmax(x, dim = -1)
g = gelu(x)
r = relu(x)
k = x > y
wh = where(k, x, y)
si = silu(x)
ln = layer_norm(x, eps = 1e-5)
output a, b, c, d, s, mn, mx, sm, g, r, k, wh, si, ln
)",
                                                            dtype));
      const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {2, 7}, {3, 13}};
      for (auto [batch, seq] : sizes) {
        DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
          Random rng(uint32_t(batch * 17 + seq));
          HostTensor x = makeHalf(dtype, {batch, seq, 5},
                                  rng.uniform(batch * seq * 5, -3.0f, 3.0f));
          HostTensor y =
              makeHalf(dtype, {seq, 5}, rng.uniform(seq * 5, -3.0f, 3.0f));
          // Sums of 300 positive values: accumulated in the narrow type they
          // would stall far from the f32 sum.
          HostTensor z = makeHalf(dtype, {batch, 300},
                                  rng.uniform(batch * 300, 0.5f, 1.5f));
          RunResult r = model->runOk({x, y, z});
          for (const char *name : {"a", "b", "c", "d", "s", "mn", "mx", "sm",
                                   "g", "r", "wh", "si", "ln"})
            CHECK(r[name].dtype == dtype);
          CHECK(r["k"].dtype == TFM_DTYPE_BOOL);
          Array X = decoded(x), Y = decoded(y), Z = decoded(z);
          auto R = [&](const Array &v) { return rounded(dtype, v); };
          auto map2 = [](const Array &p, const Array &q,
                         double (*f)(double, double)) {
            return ref::map2(p, q, f);
          };
          auto sum = [](double p, double q) { return p + q; };
          auto mul = [](double p, double q) { return p * q; };
          auto div = [](double p, double q) { return p / q; };
          auto plus = [](const Array &p, double c) {
            return ref::map(p, [c](double v) { return v + c; });
          };
          checkRounded(r["a"], R(map2(X, Y, sum)));
          checkRounded(r["b"], R(plus(R(map2(X, Y, mul)), -1)));
          Array e = R(ref::map(X, [](double v) { return std::exp(v); }));
          Array yy1 = R(plus(R(map2(Y, Y, mul)), 1));
          checkRounded(r["c"], R(map2(e, yy1, div)));
          Array t = R(ref::map(X, [](double v) { return std::tanh(v); }));
          Array tenth = R(ref::map(X, [](double v) { return v * 0.1; }));
          checkRounded(r["d"], R(map2(t, tenth, sum)));
          checkRounded(r["s"],
                       R(ref::reduce(Z, ref::Reduction::sum, {-1}, false)));
          checkRounded(r["mn"],
                       R(ref::reduce(X, ref::Reduction::mean, {0, 2}, false)));
          checkRounded(r["mx"],
                       ref::reduce(X, ref::Reduction::max, {-1}, false), 0);
          checkRounded(r["sm"], R(ref::softmax(X, -1)));
          checkRounded(r["g"], R(ref::gelu(X)));
          checkRounded(r["r"], ref::relu(X), 0);
          Array k =
              map2(X, Y, [](double p, double q) { return double(p > q); });
          E2E_CHECK_CLOSE(r["k"], k, 0.0, 0.0);
          checkRounded(r["wh"],
                       ref::broadcastMap({&k, &X, &Y},
                                         [](const std::vector<double> &v) {
                                           return v[0] != 0 ? v[1] : v[2];
                                         }),
                       0);
          // One rounding for the whole function, as PyTorch's kernel.
          checkRounded(r["si"], R(ref::map(X, [](double v) {
                         return v / (1 + std::exp(-v));
                       })));
          checkRounded(r["ln"], R(ref::layerNorm(X, nullptr, nullptr, 1e-5)));
        }
      }
    }
  }
}

TEST_CASE("i8 tensors wrap like PyTorch's int8 and sum to i64", "[language]") {
  static const std::shared_ptr<Model> model = Model::build(R"(
model bytes
input q: i8[n]
input x: f32[n]
a = q + q
m = q * q - 1
ng = -q
ab = abs(q)
s = sum(q)
mx = max(q)
c = cast(q, f32) * 0.5
t = cast(x, i8)
bq = cast(q, bf16)
e = q == 3
w = where(q > 0, q, 0)
output a, m, ng, ab, s, mx, c, t, bq, e, w
)");
  for (int64_t n : {1, 37, 300}) {
    DYNAMIC_SECTION("n " << n) {
      std::vector<int8_t> q(static_cast<size_t>(n));
      std::vector<float> x(static_cast<size_t>(n));
      Random rng(static_cast<uint32_t>(n));
      std::vector<int64_t> ids = rng.ids(n, -128, 127);
      std::vector<float> floats = rng.uniform(n, -300.0f, 300.0f);
      for (int64_t i = 0; i < n; ++i) {
        q[size_t(i)] = static_cast<int8_t>(ids[size_t(i)]);
        x[size_t(i)] = floats[size_t(i)];
      }
      const int8_t edges[] = {-128, 127, 3, -1, 0};
      for (size_t i = 0; i < 5 && i < q.size(); ++i)
        q[i] = edges[i];
      RunResult r =
          model->runOk({HostTensor::i8({n}, q), HostTensor::f32({n}, x)});
      for (const char *name : {"a", "m", "ng", "ab", "mx", "t", "w"})
        CHECK(r[name].dtype == TFM_DTYPE_I8);
      CHECK(r["s"].dtype == TFM_DTYPE_I64);
      CHECK(r["bq"].dtype == TFM_DTYPE_BF16);
      Array Q = ref::fromTensor(HostTensor::i8({n}, q));
      auto wrap = [](double v) { return double(int8_t(int64_t(v))); };
      E2E_CHECK_CLOSE(
          r["a"], ref::map(Q, [&](double v) { return wrap(v + v); }), 0.0, 0.0);
      E2E_CHECK_CLOSE(r["m"],
                      ref::map(Q, [&](double v) { return wrap(v * v - 1); }),
                      0.0, 0.0);
      E2E_CHECK_CLOSE(r["ng"], ref::map(Q, [&](double v) { return wrap(-v); }),
                      0.0, 0.0);
      E2E_CHECK_CLOSE(r["ab"],
                      ref::map(Q, [&](double v) { return wrap(std::fabs(v)); }),
                      0.0, 0.0);
      E2E_CHECK_CLOSE(r["s"], ref::reduce(Q, ref::Reduction::sum, {}, false),
                      0.0, 0.0);
      E2E_CHECK_CLOSE(r["mx"], ref::reduce(Q, ref::Reduction::max, {}, false),
                      0.0, 0.0);
      E2E_CHECK_CLOSE(r["c"], ref::map(Q, [](double v) { return v * 0.5; }),
                      0.0, 0.0);
      // Floats to i8 truncate toward zero and wrap, through i32.
      E2E_CHECK_CLOSE(r["t"],
                      ref::map(ref::fromFloats({n}, x),
                               [&](double v) { return wrap(std::trunc(v)); }),
                      0.0, 0.0);
      E2E_CHECK_CLOSE(r["bq"], Q, 0.0, 0.0);
      E2E_CHECK_CLOSE(r["e"],
                      ref::map(Q, [](double v) { return double(v == 3); }), 0.0,
                      0.0);
      E2E_CHECK_CLOSE(r["w"],
                      ref::map(Q, [](double v) { return v > 0 ? v : 0.0; }),
                      0.0, 0.0);
    }
  }
}

TEST_CASE("layers on bf16 and f16 inputs compute with the f32 weights and "
          "round once",
          "[layers]") {
  for (tfm_dtype dtype : {TFM_DTYPE_BF16, TFM_DTYPE_F16}) {
    DYNAMIC_SECTION(dtypeName(dtype)) {
      Random rng(2100);
      Weights w;
      w["w1"] = rng.weight({12, 16}, -0.5f, 0.5f);
      w["b1"] = rng.weight({12});
      w["g"] = rng.weight({16}, 0.5f, 1.5f);
      w["beta"] = rng.weight({16});
      w["mha.in_proj_weight"] = rng.weight({48, 16}, -0.5f, 0.5f);
      w["mha.in_proj_bias"] = rng.weight({48});
      w["mha.out_proj.weight"] = rng.weight({16, 16}, -0.5f, 0.5f);
      w["mha.out_proj.bias"] = rng.weight({16});
      Fixture fx = makeFixture(withDtype(R"(
model layers
input x: DT[batch, seq, 16]
h = linear(x, weight = "w1", bias = "b1")
n = layer_norm(x, weight = "g", bias = "beta", eps = 1e-5)
a = multi_head_attention(x, x, x, heads = 2, weights = "mha")
s = sdpa(x, x, x, is_causal = true)
rn = rms_norm(x, weight = "g")
output h, n, a, s, rn
)",
                                         dtype),
                               w);
      const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {2, 5}, {3, 11}};
      for (auto [batch, seq] : sizes) {
        DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
          Random data(uint32_t(batch * 7 + seq));
          HostTensor x = makeHalf(dtype, {batch, seq, 16},
                                  data.uniform(batch * seq * 16, -2.0f, 2.0f));
          RunResult r = fx.model->runOk({x});
          for (const char *name : {"h", "n", "a", "s", "rn"})
            CHECK(r[name].dtype == dtype);
          Array X = decoded(x), b1 = fx.w("b1"), g = fx.w("g"),
                beta = fx.w("beta"), inB = fx.w("mha.in_proj_bias"),
                outB = fx.w("mha.out_proj.bias");
          auto R = [&](const Array &v) { return rounded(dtype, v); };
          checkRounded(r["h"], R(ref::linear(X, fx.w("w1"), &b1)));
          checkRounded(r["n"], R(ref::layerNorm(X, &g, &beta, 1e-5)));
          ref::MhaWeights mha =
              ref::MhaWeights::packed(fx.w("mha.in_proj_weight"), &inB,
                                      fx.w("mha.out_proj.weight"), &outB);
          checkRounded(r["a"], R(ref::multiHeadAttention(X, X, X, 2, mha)));
          checkRounded(r["s"], R(ref::maskedAttention(
                                   X, X, X, 0.25, ref::AttentionMask{}, true)));
          checkRounded(r["rn"], R(ref::rmsNorm(X, &g, 1e-6)));
        }
      }
    }
  }
}
