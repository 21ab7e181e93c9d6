//===- GgufBlocks.cpp - GGUF block types as the typed GEMM keeps them -----===//
//
// Written from ggml's block layouts (ggml-common.h) and the gguf package's
// numpy dequantization, as runtime/src/GgufQuants.cpp is (which the tests
// compare against the package bit for bit, and the GEMM tests compare this
// against).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/GgufBlocks.h"
#include "tfm/gguf.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir::tfm;

namespace {
constexpr GgufBlockInfo kTypes[] = {
    {GgufBlockType::Q8_0, "Q8_0", "tfm.q8_0_blocks", 32, 34, 32, false, false,
     0},
    {GgufBlockType::Q4_0, "Q4_0", "tfm.q4_0_blocks", 32, 18, 32, true, false,
     0},
    {GgufBlockType::Q4_1, "Q4_1", "tfm.q4_1_blocks", 32, 20, 32, true, true, 0},
    {GgufBlockType::Q5_0, "Q5_0", "tfm.q5_0_blocks", 32, 22, 32, false, false,
     1},
    {GgufBlockType::Q5_1, "Q5_1", "tfm.q5_1_blocks", 32, 24, 32, false, true,
     1},
    {GgufBlockType::Q4_K, "Q4_K", "tfm.q4_k_blocks", 256, 144, 32, true, true,
     0},
    {GgufBlockType::Q5_K, "Q5_K", "tfm.q5_k_blocks", 256, 176, 32, false, true,
     1},
    {GgufBlockType::Q6_K, "Q6_K", "tfm.q6_k_blocks", 256, 210, 16, false, false,
     2},
};

uint16_t halfBits(const unsigned char *p) { return uint16_t(p[0] | p[1] << 8); }

/// An f16 as f32, exactly; nullopt for an infinity or NaN.
std::optional<float> half(const unsigned char *p) {
  uint16_t bits = halfBits(p);
  if ((bits & 0x7c00) == 0x7c00)
    return std::nullopt;
  bool lostInfo = false;
  llvm::APFloat value(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
  value.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
                &lostInfo);
  return value.convertToFloat();
}
} // namespace

llvm::ArrayRef<GgufBlockInfo> mlir::tfm::ggufBlockTypes() { return kTypes; }

const GgufBlockInfo *
mlir::tfm::ggufBlockTypeOfAttribute(llvm::StringRef attribute) {
  for (const GgufBlockInfo &info : kTypes)
    if (attribute == info.attribute)
      return &info;
  return nullptr;
}

double mlir::tfm::packedBytesPerWeight(const GgufBlockInfo &info) {
  double values = info.nibbles    ? 0.5
                  : info.highBits ? 0.5 + info.highBits / 8.0
                                  : 1.0;
  double terms = info.offsets ? 2.0 : 1.0;
  if (!info.superScales())
    return values + 2.0 * terms / double(info.block);
  return values + terms / double(info.block) +
         2.0 * terms / double(info.superBlock);
}

double mlir::tfm::fileBytesPerWeight(const GgufBlockInfo &info) {
  return double(info.bytes) / double(info.superBlock);
}

std::optional<DecodedBlocks>
mlir::tfm::decodeGgufBlocks(const GgufBlockInfo &info,
                            llvm::ArrayRef<char> bytes, int64_t n, int64_t k,
                            std::string &error) {
  int64_t perRow = k / info.superBlock;
  if (k % info.superBlock != 0 ||
      int64_t(bytes.size()) != n * perRow * info.bytes) {
    error = std::string(info.name) + " blocks of " +
            std::to_string(bytes.size()) + " bytes do not hold [" +
            std::to_string(n) + ", " + std::to_string(k) + "]";
    return std::nullopt;
  }
  DecodedBlocks out;
  out.q.resize(size_t(n * k));
  out.scales.resize(size_t(n * (k / info.block)));
  if (info.offsets)
    out.offsets.resize(out.scales.size());
  if (info.superScales()) {
    out.smallScales.resize(out.scales.size());
    out.superScales.resize(size_t(n * perRow));
    if (info.offsets) {
      out.smallMins.resize(out.scales.size());
      out.superMins.resize(out.superScales.size());
    }
  } else {
    out.halfScales.resize(out.scales.size());
    if (info.offsets)
      out.halfOffsets.resize(out.scales.size());
  }
  const auto *p = reinterpret_cast<const unsigned char *>(bytes.data());
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t sb = 0; sb < perRow; ++sb, p += info.bytes) {
      // Where this stored block's values, scales and offsets go.
      int8_t *q = out.q.data() + row * k + sb * info.superBlock;
      int64_t first = (row * k + sb * info.superBlock) / info.block;
      float *scale = out.scales.data() + first;
      float *offset = info.offsets ? out.offsets.data() + first : nullptr;
      int64_t super = row * perRow + sb;
      auto fail = [&](const char *what) {
        error = "row " + std::to_string(row) + ", block " + std::to_string(sb) +
                " of its " + std::to_string(perRow) + " (" + info.name +
                ") has a " + what +
                " that is not finite (an f16 infinity or NaN)";
        return std::nullopt;
      };
      // Q4_0/Q4_1/Q5_0/Q5_1: an f16 scale d, then (the _1 types) an f16
      // minimum m, stored as the block's scale and offset.
      auto readScaleAndMin = [&](bool withMin) {
        std::optional<float> d = half(p);
        std::optional<float> m = withMin ? half(p + 2) : 0.0f;
        if (!d || !m) {
          fail(d ? "minimum" : "scale");
          return false;
        }
        scale[0] = *d;
        out.halfScales[size_t(first)] = halfBits(p);
        if (withMin) {
          offset[0] = *m;
          out.halfOffsets[size_t(first)] = halfBits(p + 2);
        }
        return true;
      };
      switch (info.type) {
      case GgufBlockType::Q8_0: {
        std::optional<float> d = half(p);
        if (!d)
          return fail("scale");
        scale[0] = *d;
        out.halfScales[size_t(first)] = halfBits(p);
        for (int j = 0; j < 32; ++j)
          q[j] = int8_t(p[2 + j]);
        break;
      }
      case GgufBlockType::Q4_0:
      case GgufBlockType::Q4_1: {
        // Element j < 16 is the low nibble of byte j, j + 16 the high one.
        bool withMin = info.type == GgufBlockType::Q4_1;
        if (!readScaleAndMin(withMin))
          return std::nullopt;
        const unsigned char *qs = p + (withMin ? 4 : 2);
        for (int j = 0; j < 16; ++j) {
          q[j] = int8_t(qs[j] & 0x0F);
          q[j + 16] = int8_t(qs[j] >> 4);
        }
        break;
      }
      case GgufBlockType::Q5_0:
      case GgufBlockType::Q5_1: {
        // Bit j of qh is the fifth bit of element j; Q5_0 is x - 16.
        bool withMin = info.type == GgufBlockType::Q5_1;
        if (!readScaleAndMin(withMin))
          return std::nullopt;
        const unsigned char *qhBytes = p + (withMin ? 4 : 2);
        uint32_t qh = uint32_t(qhBytes[0]) | uint32_t(qhBytes[1]) << 8 |
                      uint32_t(qhBytes[2]) << 16 | uint32_t(qhBytes[3]) << 24;
        const unsigned char *qs = qhBytes + 4;
        int bias = withMin ? 0 : 16;
        for (int j = 0; j < 16; ++j) {
          q[j] = int8_t(((qs[j] & 0x0F) | int((qh >> j) & 1) << 4) - bias);
          q[j + 16] =
              int8_t(((qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4) - bias);
        }
        break;
      }
      case GgufBlockType::Q4_K:
      case GgufBlockType::Q5_K: {
        // d, dmin (f16), 12 bytes of 6-bit scales and mins, (Q5_K: 32 bytes
        // of fifth bits), 128 bytes of nibbles: 4 groups of 32 bytes, the
        // low nibbles of 32 elements then their high nibbles. W = d sc q -
        // dmin m: both products exact in f32 (11 x 6 bits).
        bool fifthBit = info.type == GgufBlockType::Q5_K;
        std::optional<float> d = half(p), dmin = half(p + 2);
        if (!d)
          return fail("scale");
        if (!dmin)
          return fail("minimum");
        const unsigned char *scales = p + 4, *qh = p + 16;
        const unsigned char *qs = p + (fifthBit ? 48 : 16);
        out.superScales[size_t(super)] = halfBits(p);
        // -dmin: the sign bit flipped, so that offset = (-dmin) mn.
        out.superMins[size_t(super)] = halfBits(p + 2) ^ 0x8000;
        for (int sub = 0; sub < 8; ++sub) {
          int sc, mn;
          ::tfm::ggufKQuantScaleAndMin(scales, sub, sc, mn);
          scale[sub] = *d * float(sc);
          offset[sub] = -(*dmin * float(mn));
          out.smallScales[size_t(first + sub)] = int8_t(sc);
          out.smallMins[size_t(first + sub)] = int8_t(mn);
          const unsigned char *group = qs + (sub / 2) * 32;
          for (int l = 0; l < 32; ++l) {
            int value = sub % 2 ? group[l] >> 4 : group[l] & 0x0F;
            if (fifthBit)
              value |= ((qh[l] >> sub) & 1) << 4;
            q[sub * 32 + l] = int8_t(value);
          }
        }
        break;
      }
      case GgufBlockType::Q6_K: {
        // 128 bytes of low nibbles, 64 of 2-bit high parts, 16 int8 scales
        // (one per 16 elements), d (f16); W = d sc (x - 32), d sc exact.
        const unsigned char *ql = p, *qh = p + 128;
        const auto *scales = reinterpret_cast<const int8_t *>(p + 192);
        std::optional<float> d = half(p + 208);
        if (!d)
          return fail("scale");
        out.superScales[size_t(super)] = halfBits(p + 208);
        for (int sub = 0; sub < 16; ++sub) {
          scale[sub] = *d * float(scales[sub]);
          out.smallScales[size_t(first + sub)] = scales[sub];
        }
        for (int e = 0; e < 256; ++e) {
          int halfIndex = e / 128, within = e % 128, group = within / 32,
              l = within % 32;
          int low = within < 64 ? ql[halfIndex * 64 + within] & 0x0F
                                : ql[halfIndex * 64 + within - 64] >> 4;
          int high = (qh[halfIndex * 32 + l] >> (2 * group)) & 3;
          q[e] = int8_t((low | high << 4) - 32);
        }
        break;
      }
      }
    }
  }
  return out;
}
