//===- PackedWeights.h - Weights packed for the GEMM, shared by its users -===//
//
// What tfm-pack-linear makes of a constant weight (compiler/Transforms/
// PackLinear.cpp), and the packed tables the token embedding's gather
// reads instead of a copy of its own (PackEmbedding.cpp): the same panels
// for an LM head tied to the embedding, the same block encoding otherwise.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_TRANSFORMS_PACKEDWEIGHTS_H
#define TFM_COMPILER_TRANSFORMS_PACKEDWEIGHTS_H

#include "compiler/Transforms/GgufBlocks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <vector>

namespace mlir::tfm::packing {

/// A constant f32 matrix or vector, seen through static unit-stride slices
/// (a packed `in_proj_weight` is sliced into its q, k and v rows).
struct ConstantView {
  SmallVector<int64_t> full;    ///< the shape of the whole constant
  std::optional<float> splat;   ///< every element, for a splat
  SmallVector<int64_t> offsets; ///< of the view within the constant
  SmallVector<int64_t> shape;   ///< of the view

  float at(ArrayRef<int64_t> index) const {
    if (splat)
      return *splat;
    int64_t linear = 0;
    for (size_t d = 0; d < full.size(); ++d)
      linear = linear * full[d] + offsets[d] + index[d];
    return raw[linear];
  }
  ArrayRef<float> raw;
  /// The weight's name (from the NameLoc tfm-bind-weights gives it), if any.
  StringAttr name;
  /// The GGUF blocks the whole constant was dequantized from, if any (the
  /// file's bytes, row after row of the stored [N, K]), and their type.
  ArrayRef<char> blocks;
  const GgufBlockInfo *blockType = nullptr;

  bool isWhole() const {
    return shape == full &&
           llvm::all_of(offsets, [](int64_t o) { return o == 0; });
  }
};

/// `loc` under the name of `view`'s weight with `suffix`, which names the
/// derived constant in a sidecar of external weights.
Location derivedLoc(Location loc, const ConstantView &view, StringRef suffix);

/// The constant (or static slice of one) `value` is, if any.
std::optional<ConstantView> getConstantView(Value value);

/// The constant weight of a GEMM as the micro-kernel reads it: element
/// (n, k) for output column n at depth k. `tfm.linear` stores it `[N, K]`
/// (PyTorch's `nn.Linear`), `x @ W` reads a `[K, N]` matrix (GPT-2's Conv1D).
struct GemmWeight {
  ConstantView view;
  bool kMajor; ///< stored [K, N]
  int64_t n() const { return view.shape[kMajor ? 1 : 0]; }
  int64_t k() const { return view.shape[kMajor ? 0 : 1]; }
  float at(int64_t col, int64_t depth) const {
    return kMajor ? view.at({depth, col}) : view.at({col, depth});
  }
};

/// The element type packed weights are stored in: f32, bf16, i8 with a
/// scale per column, or a GGUF file's blocks: i8 (4-bit: two per byte) with
/// a scale (and offset) per block of 32 or 16 k.
enum class PackedType { F32, BF16, I8, Blocks };

/// A weight packed into panels of `width` columns, `group` consecutive k per
/// 32-bit lane: `[panels, ceil(K / group), width * group]`, and for i8 the
/// per-column scales and sums of the quantized values.
struct PackedWeight {
  RankedTensorType type;
  std::vector<char> data;
  std::vector<float> scales, offsets;
  std::vector<int32_t> sums;
  /// GGUF blocks' scales and offsets as the file keeps them, `[K / block,
  /// panels * width]`: f16 bits (a block of 32), or a K-quant's integer
  /// sub-block scales and mins beside the f16 bits of its super-block
  /// values, `[1 or 2, K / 256, panels * width]` (d, then -dmin).
  std::vector<uint16_t> halfScales, halfOffsets, superScales;
  std::vector<int8_t> smallScales, smallMins;
};

/// Whether `weight` can be packed from its blocks: the whole constant,
/// stored [N, K] (blocks run along K), K whole blocks, the bytes whole.
bool hasUsableBlocks(const GemmWeight &weight);

/// Packs a weight decoded from GGUF blocks into panels of `width` columns
/// (PackLinear.cpp says how).
PackedWeight packBlocks(const GemmWeight &weight, const DecodedBlocks &decoded,
                        int64_t width, MLIRContext *ctx);

/// The constants of a weight packed from its blocks: the i8 panels and
/// the block scales (and offsets, and a K-quant's super-block scales), as
/// `tfm.packed_linear` and the quantized `tfm.embedding` read them.
struct BlockConstants {
  Value values, scales, offsets, superScales;
};

/// The constants of `packed` (a weight packed from its blocks into panels
/// of `columns` columns in all), named after the weight.
BlockConstants createBlockConstants(OpBuilder &b, Location loc,
                                    const GemmWeight &weight,
                                    const PackedWeight &packed,
                                    int64_t columns);

/// `[N, K]` weights packed whole in f32 or from their GGUF blocks, by the
/// address of their data (the f32 values, or the file's blocks): an
/// embedding table that is one of them (an LM head tied to the token
/// embedding: GPT-2, Llama 3.2 1B, Gemma 3) reads the packed panels instead
/// of keeping a second copy.
struct PackedTables {
  struct Entry {
    SmallVector<int64_t> shape;
    BlockConstants packed;
    const GgufBlockInfo *blockType; ///< null for f32 panels
  };
  DenseMap<const void *, Entry> byData;

  void record(const ConstantView &weight, bool kMajor, PackedType type,
              BlockConstants packed);

  /// Points every `tfm.embedding` over a recorded table at its packed
  /// panels (`packed_rows`, and the block scales of quantized ones); the
  /// unpacked constant then has no user left.
  void redirectEmbeddings(func::FuncOp func, bool remarks);
};

/// Points every `tfm.embedding` over a whole table of GGUF blocks at the
/// blocks kept quantized, in the encoding of the GEMM's panels with one
/// row a panel (compact, a row's values contiguous), which the gather
/// dequantizes row by row; the f32 table then has no user left. Fails on
/// blocks that do not decode.
LogicalResult quantizeEmbeddings(func::FuncOp func, bool remarks);

} // namespace mlir::tfm::packing

#endif // TFM_COMPILER_TRANSFORMS_PACKEDWEIGHTS_H
