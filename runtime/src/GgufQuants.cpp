//===- GgufQuants.cpp - ggml's block types and their dequantization ------===//
//
// Written from the block layouts of ggml's types (ggml-common.h) and the
// gguf package's numpy dequantization (gguf/quants.py), which the tests
// compare against bit for bit. This file is compiled with
// -ffp-contract=off: d * q - m must round twice, as numpy computes it, not
// once as a fused multiply-add.
//
//===----------------------------------------------------------------------===//

#include "tfm/gguf.h"

#include <cstring>

namespace tfm {

namespace {

constexpr int64_t kQK = 256; // Elements of a K-quant super-block.

constexpr GgufTypeInfo kTypes[] = {
    {"F32", 1, 4, true},         // 0
    {"F16", 1, 2, true},         // 1
    {"Q4_0", 32, 18, true},      // 2
    {"Q4_1", 32, 20, true},      // 3
    {nullptr, 0, 0, false},      // 4 (removed Q4_2)
    {nullptr, 0, 0, false},      // 5 (removed Q4_3)
    {"Q5_0", 32, 22, true},      // 6
    {"Q5_1", 32, 24, true},      // 7
    {"Q8_0", 32, 34, true},      // 8
    {"Q8_1", 32, 40, false},     // 9
    {"Q2_K", kQK, 84, false},    // 10
    {"Q3_K", kQK, 110, false},   // 11
    {"Q4_K", kQK, 144, true},    // 12
    {"Q5_K", kQK, 176, true},    // 13
    {"Q6_K", kQK, 210, true},    // 14
    {"Q8_K", kQK, 292, false},   // 15
    {"IQ2_XXS", kQK, 66, false}, // 16
    {"IQ2_XS", kQK, 74, false},  // 17
    {"IQ3_XXS", kQK, 98, false}, // 18
    {"IQ1_S", kQK, 50, false},   // 19
    {"IQ4_NL", 32, 18, false},   // 20
    {"IQ3_S", kQK, 110, false},  // 21
    {"IQ2_S", kQK, 82, false},   // 22
    {"IQ4_XS", kQK, 136, false}, // 23
    {"I8", 1, 1, false},         // 24
    {"I16", 1, 2, false},        // 25
    {"I32", 1, 4, false},        // 26
    {"I64", 1, 8, false},        // 27
    {"F64", 1, 8, false},        // 28
    {"IQ1_M", kQK, 56, false},   // 29
    {"BF16", 1, 2, true},        // 30
};

float fromHalf(const unsigned char *p) {
  uint16_t h = uint16_t(p[0] | (p[1] << 8));
  uint32_t sign = uint32_t(h >> 15) << 31, exponent = (h >> 10) & 0x1F,
           mantissa = h & 0x3FF, bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // A subnormal half is a normal float: shift the mantissa up.
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(113 - shift) << 23) | ((mantissa & 0x3FF) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float fromBfloat(const unsigned char *p) {
  uint32_t bits = uint32_t(p[0] | (p[1] << 8)) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

} // namespace

// The 6-bit scale and min of sub-block j of a Q4_K/Q5_K super-block.
void ggufKQuantScaleAndMin(const unsigned char *scales, int j, int &scale,
                           int &min) {
  if (j < 4) {
    scale = scales[j] & 63;
    min = scales[j + 4] & 63;
  } else {
    scale = (scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4);
    min = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

const GgufTypeInfo *ggufTypeInfo(uint32_t type) {
  if (type >= std::size(kTypes) || !kTypes[type].name)
    return nullptr;
  return &kTypes[type];
}

bool ggufDequantize(uint32_t type, const void *data, int64_t count,
                    float *out) {
  const GgufTypeInfo *info = ggufTypeInfo(type);
  if (!info || !info->dequantizes || count % info->blockElements != 0)
    return false;
  // An empty tensor: nothing to convert, and its data and out may be null.
  if (count == 0)
    return true;
  const auto *p = static_cast<const unsigned char *>(data);
  int64_t blocks = count / info->blockElements;
  switch (GgufType(type)) {
  case GgufType::F32:
    std::memcpy(out, p, size_t(count) * 4);
    return true;
  case GgufType::F16:
    for (int64_t i = 0; i < count; ++i)
      out[i] = fromHalf(p + 2 * i);
    return true;
  case GgufType::BF16:
    for (int64_t i = 0; i < count; ++i)
      out[i] = fromBfloat(p + 2 * i);
    return true;
  case GgufType::Q8_0:
    for (int64_t b = 0; b < blocks; ++b, p += 34, out += 32) {
      float d = fromHalf(p);
      for (int j = 0; j < 32; ++j)
        out[j] = d * float(int8_t(p[2 + j]));
    }
    return true;
  case GgufType::Q4_0:
    // Element j of a block is the low nibble of byte j, element j + 16 the
    // high nibble, each minus 8.
    for (int64_t b = 0; b < blocks; ++b, p += 18, out += 32) {
      float d = fromHalf(p);
      for (int j = 0; j < 16; ++j) {
        out[j] = d * float((p[2 + j] & 0x0F) - 8);
        out[j + 16] = d * float((p[2 + j] >> 4) - 8);
      }
    }
    return true;
  case GgufType::Q4_1:
    for (int64_t b = 0; b < blocks; ++b, p += 20, out += 32) {
      float d = fromHalf(p), m = fromHalf(p + 2);
      for (int j = 0; j < 16; ++j) {
        out[j] = d * float(p[4 + j] & 0x0F) + m;
        out[j + 16] = d * float(p[4 + j] >> 4) + m;
      }
    }
    return true;
  case GgufType::Q5_0:
  case GgufType::Q5_1: {
    bool offsetForm = GgufType(type) == GgufType::Q5_1;
    int64_t size = offsetForm ? 24 : 22;
    for (int64_t b = 0; b < blocks; ++b, p += size, out += 32) {
      float d = fromHalf(p), m = offsetForm ? fromHalf(p + 2) : 0.0f;
      const unsigned char *qhBytes = p + (offsetForm ? 4 : 2);
      uint32_t qh = uint32_t(qhBytes[0]) | uint32_t(qhBytes[1]) << 8 |
                    uint32_t(qhBytes[2]) << 16 | uint32_t(qhBytes[3]) << 24;
      const unsigned char *qs = qhBytes + 4;
      // Bit j of qh is the fifth bit of element j.
      for (int j = 0; j < 16; ++j) {
        int low = (qs[j] & 0x0F) | int((qh >> j) & 1) << 4;
        int high = (qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
        if (offsetForm) {
          out[j] = d * float(low) + m;
          out[j + 16] = d * float(high) + m;
        } else {
          out[j] = d * float(low - 16);
          out[j + 16] = d * float(high - 16);
        }
      }
    }
    return true;
  }
  case GgufType::Q4_K:
  case GgufType::Q5_K: {
    // d, dmin (f16), 12 bytes of 6-bit scales and mins, (Q5_K: 32 bytes of
    // fifth bits), then 128 bytes of nibbles: 4 groups of 32 bytes, each the
    // low nibbles of 32 elements then their high nibbles.
    bool fifthBit = GgufType(type) == GgufType::Q5_K;
    int64_t size = fifthBit ? 176 : 144;
    for (int64_t b = 0; b < blocks; ++b, p += size, out += kQK) {
      float d = fromHalf(p), dmin = fromHalf(p + 2);
      const unsigned char *scales = p + 4;
      const unsigned char *qh = p + 16;
      const unsigned char *qs = p + (fifthBit ? 48 : 16);
      for (int sub = 0; sub < 8; ++sub) {
        int scale, min;
        ggufKQuantScaleAndMin(scales, sub, scale, min);
        float ds = d * float(scale), dm = dmin * float(min);
        const unsigned char *group = qs + (sub / 2) * 32;
        for (int l = 0; l < 32; ++l) {
          int q = sub % 2 ? group[l] >> 4 : group[l] & 0x0F;
          if (fifthBit)
            q |= ((qh[l] >> sub) & 1) << 4;
          out[sub * 32 + l] = ds * float(q) - dm;
        }
      }
    }
    return true;
  }
  case GgufType::Q6_K:
    // 128 bytes of low nibbles, 64 of 2-bit high parts, 16 signed scales
    // (one per 16 elements), d (f16). Each half of 128 elements takes 64
    // low-nibble bytes (32 elements from the low nibbles of the first 32,
    // 32 from the next 32, then the high nibbles of both) and 32 bytes of
    // high parts (bits 0-1, 2-3, 4-5, 6-7 for its four groups of 32).
    for (int64_t b = 0; b < blocks; ++b, p += 210, out += kQK) {
      const unsigned char *ql = p, *qh = p + 128;
      const auto *scales = reinterpret_cast<const int8_t *>(p + 192);
      float d = fromHalf(p + 208);
      for (int e = 0; e < kQK; ++e) {
        int half = e / 128, within = e % 128, group = within / 32,
            l = within % 32;
        int low = within < 64 ? ql[half * 64 + within] & 0x0F
                              : ql[half * 64 + within - 64] >> 4;
        int high = (qh[half * 32 + l] >> (2 * group)) & 3;
        float scale = d * float(scales[e / 16]);
        out[e] = scale * float((low | high << 4) - 32);
      }
    }
    return true;
  default:
    return false;
  }
}

} // namespace tfm
