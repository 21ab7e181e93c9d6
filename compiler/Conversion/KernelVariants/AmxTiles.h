//===- AmxTiles.h - AMX tile products for the CPU kernels -------*- C++ -*-===//
//
// The AMX building block of the level-6 kernels (the typed GEMM's bf16 and
// i8 products, flash attention's QK^T and PV in bf16): 16 x 64-byte tiles
// loaded from memory, multiplied with tdpbf16ps or tdpbusd into 16 x 16 f32
// or i32 C tiles, and stored. The tiles are LLVM's llvm.x86.*.internal
// intrinsics on !llvm.x86_amx values, emitted directly (LLVM writes the
// ldtilecfg from their shapes), so that C tiles carried by an scf.for are
// plain LLVM values and no AMX type conversion joins the pipeline's. The
// variant's target features must include amx-tile and amx-bf16 / amx-int8
// (KernelVariant::amx), and the runtime grants the tile data state
// (__tfm_cpu_level()).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CONVERSION_KERNELVARIANTS_AMXTILES_H
#define TFM_COMPILER_CONVERSION_KERNELVARIANTS_AMXTILES_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::tfm {

/// Rows of a tile, and bytes of a tile row: every tile is the largest,
/// 16 rows of 64 bytes (32 bf16 or 64 i8 of A; 16 VNNI columns of B; 16
/// f32 or i32 of C).
constexpr int64_t kAmxTileRows = 16;
constexpr int64_t kAmxTileBytes = 64;

/// C += A . B over bf16 pairs (tdpbf16ps, f32 C) or u8 x s8 quads
/// (tdpbusd, i32 C).
enum class AmxDot { BF16, Int8 };

/// Emits AMX tile operations at `b`'s insertion point (it follows the
/// caller's builder). Addresses are index values in bytes; strides, the
/// bytes between a tile's rows, are i64 values.
class AmxTiles {
public:
  AmxTiles(OpBuilder &b, Location loc, AmxDot dot) : b(b), loc(loc), dot(dot) {}

  /// The address of `buffer`'s first element (aligned pointer + offset).
  Value addressOf(Value buffer);
  /// A stride of `bytes`.
  Value stride(int64_t bytes);
  Value load(Value address, Value stride);
  Value zero();
  /// c + a . b.
  Value multiply(Value c, Value a, Value bTile);
  void store(Value tile, Value address, Value stride);

  /// The A tile of row tile r and the B tile of column tile c at K step t.
  using TileAddress = llvm::function_ref<Value(int64_t, Value)>;
  /// One K step `t` of `rowTiles` x `colTiles` C tiles (`c`, row-major):
  /// every A and B tile loaded first (live together, each gets a tile
  /// register; interleaved, both A tiles shared one, each load waiting for
  /// the products before it), then the products.
  SmallVector<Value> step(ValueRange c, int64_t rowTiles, int64_t colTiles,
                          Value t, TileAddress a, Value aStride, TileAddress bt,
                          Value bStride);
  /// K steps [begin, end): an scf.for unrolled by `unroll` (LLVM leaves
  /// such loops rolled), then the remaining steps one by one. `each`, if
  /// given, emits more work after each step's products (step `t`).
  SmallVector<Value> steps(ValueRange c, int64_t rowTiles, int64_t colTiles,
                           Value begin, Value end, int64_t unroll,
                           TileAddress a, Value aStride, TileAddress bt,
                           Value bStride,
                           llvm::function_ref<void(Value t)> each = nullptr);

private:
  Value pointerAt(Value address);

  OpBuilder &b;
  Location loc;
  AmxDot dot;
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_KERNELVARIANTS_AMXTILES_H
