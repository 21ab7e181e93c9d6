//===- GemmEmitter.h - The typed GEMM task's emitter -------------*- C++
//-*-===//
//
// The class that emits one task of a bufferized tfm.packed_linear
// (GemmKernel.cpp says how the task computes). Its methods live in four
// files: GemmKernel.cpp (the task, the vector micro-kernel and its K steps,
// the epilogue), GemmInput.cpp (A's copy into the tile, converted or
// quantized per row), GemmAmx.cpp (the AMX tiles' paths) and
// GemmBlockQuant.cpp (the GGUF block types' input copy, K loop and scales).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CONVERSION_LINEARTOCPU_GEMMEMITTER_H
#define TFM_COMPILER_CONVERSION_LINEARTOCPU_GEMMEMITTER_H

#include "compiler/Conversion/Common/IndexArith.h"
#include "compiler/Conversion/KernelVariants/AmxTiles.h"
#include "compiler/Conversion/LinearToCPU/GemmKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <optional>

namespace mlir::tfm::gemm {

enum class GemmKind { F32, BF16, I8 };

/// The AMX variant's converted A (either layout) stays within this.
constexpr int64_t kAmxInputBytes = 256 << 10;
/// At most this many K tiles per chunk of the chunked AMX path: a panel's
/// chunk of B (2 KB a tile) stays in L1 while the row groups sweep it.
constexpr int64_t kAmxChunkTiles = 16;
/// The chunked AMX path runs where all of K fits fewer rows than this.
constexpr int64_t kAmxChunkedRows = 128;
/// K steps per iteration of the AMX K loops.
constexpr int64_t kAmxUnroll = 4;
/// Bytes of a tile row, and rows of a tile.
constexpr int64_t kTileBytes = kAmxTileBytes;
constexpr int64_t kTileRows = kAmxTileRows;

/// The packed weight's depth ceil(K / g) where static and AMX can run the
/// op: bf16 or per-column i8 in panels of 32 columns (a packed row is 128
/// bytes, two B tiles of 16 columns side by side).
inline std::optional<int64_t> amxDepth(PackedLinearOp op) {
  auto packedType = cast<MemRefType>(op.getPackedWeight().getType());
  Type element = packedType.getElementType();
  if (!(element.isBF16() || element.isInteger(8)) || op.getWeightBlock() ||
      op.getPanelWidth() != 32 || packedType.getRank() != 3 ||
      packedType.isDynamicDim(1) || packedType.getShape()[1] == 0)
    return std::nullopt;
  return packedType.getShape()[1];
}

/// Bytes of one converted row of A for AMX: whole tiles of 64 bytes.
inline int64_t amxRowBytes(int64_t depth) {
  return llvm::alignTo(depth, kTileRows) * 4;
}

/// Views a contiguous buffer as a matrix [rows, last dim].
inline Value viewAsMatrix(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t rank = type.getRank();
  if (rank == 2)
    return buffer;
  if (rank == 1)
    return memref::ExpandShapeOp::create(
        b, loc, MemRefType::get({1, type.getShape()[0]}, type.getElementType()),
        buffer, ArrayRef<ReassociationIndices>{{0, 1}});
  ReassociationIndices rows;
  for (int64_t i = 0; i < rank - 1; ++i)
    rows.push_back(i);
  return memref::CollapseShapeOp::create(
      b, loc, buffer, ArrayRef<ReassociationIndices>{rows, {rank - 1}});
}

/// `dim` of `buffer` as an index: a constant where it is static.
inline Value dimOf(OpBuilder &b, Location loc, Value buffer, int64_t dim) {
  int64_t size = cast<MemRefType>(buffer.getType()).getShape()[dim];
  if (!ShapedType::isDynamic(size))
    return arith::ConstantIndexOp::create(b, loc, size);
  return memref::DimOp::create(b, loc, buffer, dim);
}

class GemmEmitter : mlir::tfm::IndexArith<GemmEmitter> {
  friend class mlir::tfm::IndexArith<GemmEmitter>;

public:
  GemmEmitter(PackedLinearOp op, const GemmTiling &tiling,
              const KernelVariant &variant, int64_t maxTaskRows, OpBuilder &at)
      : op(op), tiling(tiling), variant(variant), maxTaskRows(maxTaskRows),
        b(at.getInsertionBlock(), at.getInsertionPoint()), loc(op.getLoc()) {}

  void emitTaskBody(ArrayRef<BlockArgument> args);

private:
  /// The row block [m0, mEnd) x panels [p0, pEnd) with vector registers.
  void emitVectorBlock(Value m0, Value mEnd, Value p0, Value pEnd);
  /// The same with AMX tiles.
  void emitAmxBlock(Value m0, Value mEnd, Value p0, Value pEnd);
  /// AMX over rows [s0, mEnd) of the row block from m0, all of K at once:
  /// rows of A converted whole into the row-major buffer.
  void emitAmxWholeK(Value m0, Value s0, Value mEnd, Value p0, Value pEnd);
  /// AMX over rows [m0, mEnd) (whole groups of 32) in K chunks whose B
  /// stays in L1, the partial sums kept in C between chunks.
  void emitAmxChunked(Value m0, Value mEnd, Value p0, Value pEnd);
  /// Converts A[s0:sEnd] over K tiles [t0, t0 + tiles) into the blocked
  /// buffer: tile (row tile, k tile) 1 KB, contiguous.
  void emitBlockedCopy(Value m0, Value s0, Value sEnd, Value t0, Value tiles);
  /// Copies panel p's last partial K tile into the zero-padded tail buffer.
  void emitWeightTailCopy(Value p);
  /// `rowTiles` x 2 C tiles over `tiles` K tiles and, with `tail`, the
  /// zero-padded last one: A tile (r, t) at `input(r, t)` (rows
  /// `inputStride` bytes apart), panel p's B tiles from `weights` (the
  /// panel's tile t0); the C tiles start from zeros, or from `partial`
  /// (rows `partialStride` bytes apart), and are stored to `result`.
  void emitAmxTiles(int64_t rowTiles,
                    llvm::function_ref<Value(int64_t, Value)> input,
                    Value inputStride, Value weights, Value tiles, bool tail,
                    Value partial, Value partialStride, Value result,
                    Value resultStride, int64_t unroll,
                    llvm::function_ref<void(Value)> each = nullptr);
  /// Prefetches into L2 this group's share of packed rows [row0, row0 +
  /// rows) of panel `next` at K step t of `steps`: group `g` of `groups`
  /// takes the (g * steps + t)-th of groups * steps even slices.
  void emitPanelPrefetch(Value next, Value row0, int64_t rows, Value g,
                         Value groups, int64_t steps, Value t);
  /// The address of `buffer`'s first element, as an index.
  Value addressOf(Value buffer);
  Value splat(double v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(f32Vector, b.getF32FloatAttr(v)));
  }
  Value splatInt(int64_t v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(i32Vector, b.getI32IntegerAttr(v)));
  }
  Value bitcast(Type type, Value v) {
    return vector::BitCastOp::create(b, loc, cast<VectorType>(type), v);
  }
  /// An LLVM intrinsic over vectors, which the LLVM dialect takes as they
  /// are.
  Value intrinsic(StringRef name, Type result, ValueRange args) {
    return LLVM::CallIntrinsicOp::create(b, loc, result, b.getStringAttr(name),
                                         args)
        .getResult(0);
  }

  /// Each row's quantization parameters over its K (i8): rows [m0, mEnd).
  void emitRowQuantization(Value m0, Value mEnd);
  /// Block-quantized i8: copies A's K chunk quantized per block of
  /// `weightBlock` as s8, with each block's scale and correction.
  void emitBlockChunkCopy(Value s0, Value sEnd, Value k0, Value kc);
  /// Block-quantized i8: the K loop of a micro-kernel over the chunk,
  /// block by block, from and to the f32 accumulators `acc`.
  SmallVector<Value> emitBlockLoop(ValueRange acc, ArrayRef<Value> chunkRows,
                                   ArrayRef<Value> columns, Value storedPanel,
                                   Value panelOffset, Value nextStoredPanel,
                                   Value nextPanelOffset, Value k0,
                                   Value nextK0, Value kc);
  /// The weight loads and dot products of K step `kk` (in lanes of g k of
  /// the chunk), onto `acc`.
  SmallVector<Value> emitKStep(ValueRange acc, ArrayRef<Value> chunkRows,
                               Value kk, Value storedPanel, Value panelOffset,
                               Value nextStoredPanel, Value nextPanelOffset,
                               Value packedK0, Value nextPackedK0);
  /// Copies A's K chunk [s0, sEnd) x [k0, k0 + kc) into `tile` (the A
  /// tile), converted to the packed weight's type (rows of the task from
  /// m0).
  void emitChunkCopy(Value m0, Value s0, Value sEnd, Value k0, Value kc,
                     Value tile);
  /// A vector of A as the A tile holds it: lanes / g lanes of g values.
  Value convertInput(Value x, Value taskRow);
  Value roundToBF16Bits(Value x);
  /// The f32 scales (part 0) or offsets (part 1) of block row `row` and the
  /// vector of columns from `column`, from `terms` as stored: f32; f16,
  /// widened (vcvtph2ps); or i8 integers times their super-block's f16
  /// (exact in f32: 11 by 8 bits).
  Value loadBlockTerm(Value terms, Value row, Value column, int64_t part);
  /// The stored panel and the offset in it of kernel-wide panel `p`.
  std::pair<Value, Value> storedPanelOf(Value p);
  void emitMicroKernel(int64_t rows, Value i, Value chunkRow, Value p,
                       Value nextP, Value nextK0, Value k0, Value kc,
                       Value first);
  /// A lane of the A tile broadcast, or the weights loaded, in the forms
  /// the dot product takes (several for the widening forms).
  SmallVector<Value> inputOperands(Value lane);
  SmallVector<Value> weightOperands(Value weights);
  Value dot(Value acc, ArrayRef<Value> input, ArrayRef<Value> weights);
  /// Dequantization (i8), bias, activation and residual over the tile
  /// [i, i + rows) x panel p, read from C or, with `source`, from rows of
  /// that buffer from `i` (its columns the panel's).
  void emitEpilogue(Value m0, Value i, Value rows, Value p, Value source = {});
  /// The lanes of vector `v` of panel `p` that hold real columns.
  Value columnMask(Value p, int64_t v);
  Value columnOf(Value p, int64_t v) {
    return add(mul(p, idx(tiling.kernelWidth)), idx(v * tiling.lanes));
  }
  Value loadTile(Value buffer, Value row, Value column, Value mask);
  void storeTile(Value value, Value buffer, Value row, Value column,
                 Value mask);
  Value applyEpilogue(Value x, Value row, Value column, Value mask);

  PackedLinearOp op;
  GemmTiling tiling;
  KernelVariant variant;
  int64_t maxTaskRows;
  OpBuilder b;
  Location loc;

  GemmKind kind = GemmKind::F32;
  int64_t group = 1; ///< k per 32-bit lane
  /// k per weight scale for block-quantized i8 (0: one scale per column).
  int64_t weightBlock = 0;
  /// Whether the i32 accumulator is dequantized in the epilogue (per-column
  /// i8), rather than the accumulators being f32 throughout.
  bool intAccumulator = false;
  bool nativeDot = false;
  VectorType f32Vector, i32Vector, accVector, packedVector;
  // Whether the last panel may be partial: N is dynamic or not a multiple.
  bool maskColumns = false;
  // Inside the task function: K, the packed weight's depth ceil(K / g), N
  // and the kernel-wide panel count, and the last row of the packed weight
  // a prefetch may name (0 when K is 0).
  Value k, packedK, n, columnPanels, lastPackedK;
  // Inside the task function: matrices [M, K], [panels, K / g, nr * g],
  // [M, N], and the i8 weight's per-column scales and sums.
  Value a, packed, scales, sums, offsets, superScales, bias, residual, c;
  /// Blocks per super-block of weight_super_scales (0: none).
  int64_t blocksPerSuper = 0;
  // Inside the task function: the stack tile [copyRows, blockK / g] holding
  // the current row group's K chunk of A, and for i8 each task row's scale,
  // its reciprocal and its zero point.
  Value aTile, rowScale, rowInverse, rowZero;
  // Block-quantized i8: [copyRows, blockK / weightBlock], each block's scale
  // and 128 x its sum of s8 values (what shifting the weights to u8 adds),
  // and with weight offsets its scale times that sum (f32).
  Value blockScale, blockCorrection, blockSum;
  /// Block-quantized 4-bit weights (Q4_0): two k per byte, a lane's low
  /// nibbles one quad of k and its high nibbles the next, as u8 (q + 8).
  bool nibbles = false;
  /// What the weights are shifted by to be u8 for vpdpbusd (128 for s8,
  /// 8 for 4-bit), so that this times each input block's sum of s8 values
  /// comes off the block's i32 sum; 0 when nothing is shifted.
  int64_t weightShift = 0;
  /// Bit planes after every 4 rows of nibbles (5- and 6-bit values: 1, 2):
  /// bit 8 b + t of a plane's lane is bit 4 (5) of byte b of nibble row t / 2
  /// of the 4, its low nibble for even t.
  int64_t planes = 0;
  /// k per packed row of the weight: g, or 2 g for nibbles.
  int64_t kPerPackedRow = 1;
  // The AMX variant: the packed weight's depth, its whole tiles of 16
  // packed rows, rows of A converted at a time; the converted rows (each
  // all of K in whole tiles, zeros past K), the last partial tile of a
  // panel's weights padded with zero rows, the C tiles; their addresses.
  int64_t amxPackedK = 0, amxKTiles = 0, amxInputRows = 0;
  Value amxInput, amxWeightTail, amxOutput;
  Value packedAddress, amxInputAddress, amxWeightTailAddress, amxOutputAddress;
  // The chunked AMX path (C tiles whole, so partial sums can live in C):
  // whole K tiles per chunk, chunks, rows of A converted at a time; the
  // blocked A buffer [rows / 16 * tiles per row tile * 16, 16] (sharing
  // bytes with amxInput) and its tiles per row tile; C's address.
  bool amxChunkedRows = false;
  int64_t amxChunkTiles = 0, amxChunks = 0, amxChunkRows = 0;
  int64_t amxBufferTiles = 0;
  Value amxBlocked, amxBlockedAddress, cAddress;
};

} // namespace mlir::tfm::gemm

#endif // TFM_COMPILER_CONVERSION_LINEARTOCPU_GEMMEMITTER_H
