//===- GgufBlocks.h - GGUF block types as the typed GEMM keeps them -*- C++
//-*-===//
//
// The GGUF block types a linear layer's weight stays quantized in: each is
// read, bit for bit, into one form the typed GEMM's block-quantized i8 path
// runs (tfm.packed_linear): per block of 16 or 32 k and column, integers q
// (int8, or 4-bit u two per byte), a scale and, for the asymmetric types,
// an offset, W = scale * q + offset, kept as small as the file keeps them:
// the f16 d (and m) of a block of 32, or a K-quant's f16 d (and dmin) per
// super-block of 256 beside its 6- or 8-bit integer scale (and min) per
// sub-block, multiplied in registers. Every product is exact in f32, so the
// value is the one the file defines.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_TRANSFORMS_GGUFBLOCKS_H
#define TFM_COMPILER_TRANSFORMS_GGUFBLOCKS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm {

enum class GgufBlockType { Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K };

struct GgufBlockInfo {
  GgufBlockType type;
  const char *name;      ///< ggml's name, "Q4_K"
  const char *attribute; ///< on the bound constant, "tfm.q4_k_blocks"
  int64_t superBlock;    ///< k per stored block (32, or 256 for K-quants)
  int64_t bytes;         ///< bytes per stored block
  int64_t block;         ///< k per scale in the GEMM: 32, or 16 (Q6_K)
  bool nibbles;          ///< 4-bit values, two per byte in the panels
  bool offsets;          ///< W = scale * q + offset (asymmetric)
  /// Bits above the low nibble (5- and 6-bit values: 1 or 2), packed as
  /// nibbles plus bit planes in the GEMM's panels.
  int highBits;
  /// A K-quant: an f16 per super-block times an integer per block.
  bool superScales() const { return superBlock > block; }
};

/// Every type tfm-pack-linear keeps, and the one an attribute names.
llvm::ArrayRef<GgufBlockInfo> ggufBlockTypes();
const GgufBlockInfo *ggufBlockTypeOfAttribute(llvm::StringRef attribute);

/// A weight [N, K] of GGUF blocks in the GEMM's form: per row n and block b
/// of `info.block` k, scales[n * K / block + b], offsets likewise (empty
/// for a symmetric type), and q[n * K + k]: s8, or u (0..15) for nibbles
/// (Q4_0's u - 8 is the kernel's: W = scale * (u - 8)).
///
/// The same scales and offsets as the file stores them, which the GEMM's
/// panels keep: for a block of 32 (Q8_0 ... Q5_1), the f16 bits of d (and
/// m) per block in halfScales (halfOffsets); for a K-quant, the integer
/// sub-block scale (and min) per block in smallScales (smallMins) and per
/// super-block of 256 the f16 bits of d (and of -dmin, so that offset =
/// superMins * smallMins) in superScales (superMins), [N, K / 256].
struct DecodedBlocks {
  std::vector<float> scales, offsets;
  std::vector<int8_t> q;
  std::vector<uint16_t> halfScales, halfOffsets;
  std::vector<int8_t> smallScales, smallMins;
  std::vector<uint16_t> superScales, superMins;
};

/// Decodes `n` rows of `k` from `bytes` (the file's blocks, row after row).
/// Fails, saying where, on a scale or minimum that is not finite.
std::optional<DecodedBlocks> decodeGgufBlocks(const GgufBlockInfo &info,
                                              llvm::ArrayRef<char> bytes,
                                              int64_t n, int64_t k,
                                              std::string &error);

/// The stored bytes per weight of `info` in the GEMM's panels: q (1 byte,
/// or 1/2 plus 1/8 per high bit) plus an f16 scale (and offset) per block of
/// 32, or a K-quant's byte per sub-block scale (and min) and f16 d (and dmin)
/// per super-block.
double packedBytesPerWeight(const GgufBlockInfo &info);
/// The file's bytes per weight.
double fileBytesPerWeight(const GgufBlockInfo &info);

} // namespace mlir::tfm

#endif // TFM_COMPILER_TRANSFORMS_GGUFBLOCKS_H
