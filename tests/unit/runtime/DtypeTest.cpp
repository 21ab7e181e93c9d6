//===- DtypeTest.cpp - Tests of the 16-bit float conversions ----*- C++ -*-===//
//
// tfm_f32_to_f16/bf16 against a reference that rounds in double with
// std::nearbyint (ties to even), over every 16-bit pattern and a spread of
// f32 inputs: ties, subnormals, overflow, NaNs.
//
//===----------------------------------------------------------------------===//

#include "tfm/runtime.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// A 16-bit float format: `mantissaBits` stored fraction bits, the smallest
/// normal exponent and the largest finite value.
struct Format {
  int mantissaBits;
  int minExponent;
  double maxFinite;
};
constexpr Format kF16 = {10, -14, 65504.0};
constexpr Format kBF16 = {7, -126, 3.3895313892515355e38};

/// `x` rounded to the format, to nearest with ties to even, in double (where
/// every step is exact): the value the conversion must produce.
double roundTo(const Format &format, float x) {
  if (std::isnan(x) || std::isinf(x) || x == 0)
    return x;
  int exponent = std::max(std::ilogb(x), format.minExponent);
  double ulp = std::ldexp(1.0, exponent - format.mantissaBits);
  double rounded = std::nearbyint(double(x) / ulp) * ulp;
  if (std::fabs(rounded) > format.maxFinite)
    return std::copysign(INFINITY, x);
  // A value rounded to zero keeps its sign.
  return rounded == 0 ? std::copysign(0.0, x) : rounded;
}

/// f16 bits decoded by the textbook formula, independently of the runtime.
double decodeF16(uint16_t bits) {
  int sign = bits >> 15, exponent = (bits >> 10) & 0x1f,
      mantissa = bits & 0x3ff;
  double magnitude = exponent == 0 ? std::ldexp(mantissa, -24)
                     : exponent == 31
                         ? (mantissa ? NAN : INFINITY)
                         : std::ldexp(1024 + mantissa, exponent - 25);
  return sign ? -magnitude : magnitude;
}

void checkConversion(const Format &format, float x, uint16_t (*narrow)(float),
                     float (*widen)(uint16_t)) {
  uint16_t bits = narrow(x);
  float back = widen(bits);
  double expected = roundTo(format, x);
  INFO("x = " << x << " (bits 0x" << std::hex <<
       [&] {
         uint32_t b;
         std::memcpy(&b, &x, 4);
         return b;
       }() << "), narrowed to 0x"
              << bits << std::dec << " = " << back << ", expected "
              << expected);
  if (std::isnan(x)) {
    CHECK(std::isnan(back));
    CHECK(std::signbit(back) == std::signbit(x));
    return;
  }
  CHECK(double(back) == expected);
  CHECK(std::signbit(back) == std::signbit(expected));
}

std::vector<float> testInputs() {
  std::vector<float> inputs = {0.0f,
                               -0.0f,
                               1.0f,
                               -1.0f,
                               INFINITY,
                               -INFINITY,
                               NAN,
                               -NAN,
                               fromBits(0x7f800001), // A signalling NaN.
                               fromBits(0x7fffffff),
                               3.14159265f,
                               65504.0f,
                               65519.99f,
                               65520.0f,
                               65536.0f,
                               1e10f,
                               3.4028235e38f,
                               0x1p-14f,
                               0x1p-24f,
                               0x1p-25f,
                               0x1.8p-25f,
                               0x1p-26f,
                               0x1p-126f,
                               0x1p-133f,
                               0x1p-134f,
                               0x1.8p-134f,
                               0x1p-149f};
  // Ties: exactly halfway between neighbours, with even and odd lower ones,
  // for both formats, and one unit of f32 either side of them.
  for (float base : {1.0f, 1.0078125f, 1000.0f, 0x1p-20f, 0x1p-130f}) {
    for (int shift : {10, 7}) {
      float half = std::ldexp(1.0f, std::ilogb(base) - shift - 1);
      float tie = base + half;
      inputs.insert(inputs.end(), {tie, -tie, std::nextafter(tie, 0.0f),
                                   std::nextafter(tie, INFINITY)});
    }
  }
  std::mt19937 gen(21);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i)
    inputs.push_back(fromBits(bits(gen)));
  // Around the f16 range, where random bit patterns rarely land.
  std::uniform_real_distribution<float> exponent(-30.0f, 17.0f);
  for (int i = 0; i < 100000; ++i)
    inputs.push_back(std::exp2(exponent(gen)) * (i % 2 ? 1.0f : -1.0f));
  return inputs;
}

} // namespace

TEST_CASE("f16 and bf16 widen exactly and narrow back to the same bits",
          "[npy]") {
  for (uint32_t i = 0; i < 65536; ++i) {
    auto bits = static_cast<uint16_t>(i);
    float f16 = tfm_f16_to_f32(bits);
    double decoded = decodeF16(bits);
    INFO("bits 0x" << std::hex << i);
    if (std::isnan(decoded)) {
      CHECK(std::isnan(f16));
      // A NaN stays a NaN of the same sign (quieted).
      uint16_t again = tfm_f32_to_f16(f16);
      CHECK((again & 0x7c00) == 0x7c00);
      CHECK((again & 0x3ff) != 0);
      CHECK((again & 0x8000) == (bits & 0x8000));
    } else {
      CHECK(double(f16) == decoded);
      CHECK(std::signbit(f16) == bool(bits & 0x8000));
      CHECK(tfm_f32_to_f16(f16) == bits);
    }
    float bf16 = tfm_bf16_to_f32(bits);
    uint32_t widened;
    std::memcpy(&widened, &bf16, 4);
    CHECK(widened == i << 16);
    if (std::isnan(bf16)) {
      uint16_t again = tfm_f32_to_bf16(bf16);
      CHECK((again & 0x7f80) == 0x7f80);
      CHECK((again & 0x7f) != 0);
      CHECK((again & 0x8000) == (bits & 0x8000));
    } else {
      CHECK(tfm_f32_to_bf16(bf16) == bits);
    }
  }
}

TEST_CASE("f32 narrows to f16 and bf16 to nearest, ties to even", "[npy]") {
  for (float x : testInputs()) {
    checkConversion(kF16, x, tfm_f32_to_f16, tfm_f16_to_f32);
    checkConversion(kBF16, x, tfm_f32_to_bf16, tfm_bf16_to_f32);
  }
  // The documented bits of some values.
  CHECK(tfm_f32_to_bf16(1.0f) == 0x3f80);
  CHECK(tfm_f32_to_bf16(NAN) == 0x7fc0);
  CHECK(tfm_f32_to_bf16(-INFINITY) == 0xff80);
  CHECK(tfm_f32_to_bf16(3.4028235e38f) == 0x7f80);
  CHECK(tfm_f32_to_f16(NAN) == 0x7e00);
  CHECK(tfm_f32_to_f16(65520.0f) == 0x7c00);
  CHECK(tfm_f32_to_f16(65519.0f) == 0x7bff);
  CHECK(tfm_f32_to_f16(0x1p-24f) == 0x0001);
  CHECK(tfm_f32_to_f16(0x1p-25f) == 0x0000);
  CHECK(tfm_f32_to_f16(0x1.8p-24f) == 0x0002);
  // 1 + 2^-11 is halfway between 1 and the next f16: even, 1.
  CHECK(tfm_f32_to_f16(1.0f + 0x1p-11f) == 0x3c00);
  CHECK(tfm_f32_to_f16(1.0f + 0x1p-10f + 0x1p-11f) == 0x3c02);
  CHECK(tfm_f32_to_bf16(1.0f + 0x1p-8f) == 0x3f80);
  CHECK(tfm_f32_to_bf16(1.0f + 0x1p-7f + 0x1p-8f) == 0x3f82);
}
