//===- GemmKernel.cpp - The typed register-tiled GEMM task ----------------===//
//
// A task of a bufferized tfm.packed_linear, for one CPU variant:
//
//   for (row block rb, column block cb) in [begin, end):        (one task)
//     i8: each row's scale and zero point over its K            (row params)
//     for k0 in K by Kc:                                        (B chunk in L1)
//       for row group g in rb:                                  (copyRows rows)
//         At = convert(A[g, k0:k0+Kc])                          (stack tile)
//         for panel p in cb:                                    (nr columns)
//           for i in g by mr:                                   (micro-kernel)
//             acc[mr][nr] = k0 == 0 ? 0 : C[i:i+mr, p*nr:(p+1)*nr]
//             for q in [0, Kc / g): acc += At[i:i+mr, q] . Bp[p, k0/g+q, :]
//             C[...] = acc
//           last chunk: C = residual + act(dequant(C) + bias)   (epilogue)
//
// The packed weight `Bp [ceil(N/nr), ceil(K/g), nr*g]` was laid out at
// compile time (tfm-pack-linear): each step loads nr lanes of g consecutive
// k and broadcasts one lane of A per row, so a step is mr x nr/lanes dot
// products with every accumulator in a register:
//
//   element  g  A tile          dot product            accumulator
//   f32      1  copied          FMA                    f32
//   bf16     2  rounded (RNE)   vdpbf16ps, or 2 FMAs   f32
//   i8       4  quantized (u8)  vpdpbusd, or 4 muls    i32, dequantized
//
// Block-quantized i8 (GGUF Q8_0: one weight scale per 32 k and column) is
// the i8 kind with the scale's span as a parameter: the copy quantizes A
// symmetrically per block of 32 (s8, with its scale and 128 x its sum), the
// micro-kernel's K loop runs block by block, each block's i32 dot products
// scaled by both scales into f32 accumulators, and the epilogue has nothing
// left to dequantize. vpdpbusd multiplies u8 by s8, so the weights are
// shifted to u8 in registers (q + 128, an xor) and 128 x the input block's
// sum comes off each block's i32 sum. 4-bit blocks (GGUF Q4_0) are the
// same kind with two k per byte: a packed row of 4-byte lanes is 8 k, its
// low nibbles (u8 q + 8) one quad of k and its high nibbles the next, split
// in registers (a shift and an and), and 8 x the input block's sum comes
// off.
//
// The other GGUF block types are the same kind again (GgufBlocks.h):
// 5- and 6-bit values are nibbles like Q4_0's plus one or two bit planes
// per 32 k (packed rows after the 4 of nibbles) whose bits the K step
// shifts and masks into bit 4 (5) of each byte, u8 for vpdpbusd with
// 16 (32) x the input block's sum off; Q6_K's scales span 16 k instead of
// 32 (the input is then quantized per block of 16), and the asymmetric
// types (Q4_1, Q5_1, Q4_K, Q5_K: W = scale q + offset, their values
// unsigned) add each block's offset times d_x sum(q_x), which the copy
// keeps per input block beside its scale:
//
//   acc += f32(part - corr) * (w_scale * a_scale) + w_offset * a_sum
//
// The weights' scales and offsets stay as the file has them (f16, widened
// by vcvtph2ps, or a K-quant's byte per block times its super-block's f16,
// both exact in f32), so a block's w_scale is the file's, loaded per block
// beside the i32 sums (loadBlockTerm).
//
// The AMX variant (level 6: bf16 and per-column i8) keeps the packed
// layout and the epilogue but not the micro-kernel: a packed row of a
// 32-column panel is 128 bytes, two B tiles of 16 columns side by side
// (16 packed rows = 32 k in bf16 pairs, 64 in i8 quads, the layout
// tdpbf16ps / tdpbusd read). Where N is whole panels and K is deep (all of
// it leaves fewer than 128 rows to the buffer), groups of 32 rows run K in
// chunks: per chunk the task's rows of A are converted into a blocked
// stack buffer (each 16 x 64-byte tile contiguous), and each panel and
// group runs 2 x 2 C tiles over the chunk's K tiles while the panel's chunk
// of B stays in L1, the partial sums kept in C between chunks
// (emitAmxChunked). Other rows convert A over all of K into rows of 64-byte
// tile rows (emitAmxWholeK). Both store the last C tiles to a stack scratch
// that the epilogue reads, and both prefetch the next panel's weights into
// L2 during the current one (emitPanelPrefetch).
//
// The widening forms (no AVX512-BF16 / VNNI) compute the same products:
// bf16 pairs split into two f32 halves (odd k first, as vdpbf16ps adds
// them), i8 quads into four i32 lanes. The epilogue (dequantization, bias,
// activation, residual) runs once per tile, after its last K chunk.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/LinearToCPU/GemmKernel.h"
#include "compiler/Conversion/Common/IndexArith.h"
#include "compiler/Conversion/KernelVariants/AmxTiles.h"
#include "compiler/Conversion/LinearToCPU/GeluApproximation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

namespace {
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
std::optional<int64_t> amxDepth(PackedLinearOp op) {
  auto packedType = cast<MemRefType>(op.getPackedWeight().getType());
  Type element = packedType.getElementType();
  if (!(element.isBF16() || element.isInteger(8)) || op.getWeightBlock() ||
      op.getPanelWidth() != 32 || packedType.getRank() != 3 ||
      packedType.isDynamicDim(1) || packedType.getShape()[1] == 0)
    return std::nullopt;
  return packedType.getShape()[1];
}

/// Bytes of one converted row of A for AMX: whole tiles of 64 bytes.
int64_t amxRowBytes(int64_t depth) {
  return llvm::alignTo(depth, kTileRows) * 4;
}

/// Views a contiguous buffer as a matrix [rows, last dim].
Value viewAsMatrix(OpBuilder &b, Location loc, Value buffer) {
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
Value dimOf(OpBuilder &b, Location loc, Value buffer, int64_t dim) {
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

void GemmEmitter::emitTaskBody(ArrayRef<BlockArgument> args) {
  Type packedType =
      cast<MemRefType>(op.getPackedWeight().getType()).getElementType();
  kind = packedType.isF32()    ? GemmKind::F32
         : packedType.isBF16() ? GemmKind::BF16
                               : GemmKind::I8;
  group = op.getPackGroup();
  weightBlock = op.getWeightBlock();
  intAccumulator = kind == GemmKind::I8 && weightBlock == 0;
  nativeDot = (kind == GemmKind::BF16 && variant.bf16Dot) ||
              (kind == GemmKind::I8 && variant.int8Dot);
  f32Vector = VectorType::get({tiling.lanes}, b.getF32Type());
  i32Vector = VectorType::get({tiling.lanes}, b.getI32Type());
  accVector = intAccumulator ? i32Vector : f32Vector;
  packedVector = VectorType::get({tiling.lanes * group}, packedType);
  if (weightBlock) {
    // K is static for block scales (the verifier says so).
    int64_t staticK =
        cast<MemRefType>(op.getInput().getType()).getShape().back();
    int64_t depth =
        cast<MemRefType>(op.getPackedWeight().getType()).getShape()[1];
    // Packed rows per 32 k: 4 of nibbles, and a bit plane per high bit.
    if (staticK != 0 && staticK % 32 == 0 && depth * 32 % staticK == 0) {
      int64_t rowsPer32 = depth * 32 / staticK;
      nibbles = rowsPer32 >= 4 && rowsPer32 <= 6;
      planes = nibbles ? rowsPer32 - 4 : 0;
    }
    // Nibbles are u - 8 (5 bits: u - 16, 6: u - 32) without offsets, u
    // with them.
    weightShift = nibbles     ? (op.getWeightOffsets() ? 0 : 8 << planes)
                  : nativeDot ? 128
                              : 0;
  }
  kPerPackedRow = nibbles ? 2 * group : group;

  unsigned next = 0;
  a = viewAsMatrix(b, loc, args[next++]);
  packed = args[next++];
  if (op.getWeightScales())
    scales = args[next++];
  if (op.getWeightSums())
    sums = args[next++];
  if (op.getWeightOffsets())
    offsets = args[next++];
  if (op.getWeightSuperScales()) {
    superScales = args[next++];
    int64_t supers =
        cast<MemRefType>(op.getWeightSuperScales().getType()).getShape()[1];
    int64_t staticK =
        cast<MemRefType>(op.getInput().getType()).getShape().back();
    blocksPerSuper = staticK / supers / weightBlock;
  }
  bias = op.getBias() ? Value(args[next++]) : Value();
  residual = op.getResidual() ? viewAsMatrix(b, loc, args[next++]) : Value();
  c = viewAsMatrix(b, loc, args[next++]);
  // Tasks split the columns in whole stored panels, the same for every
  // variant; a narrower variant's micro-kernel covers part of one.
  Value panelsPerTask = mul(args[next++], idx(tiling.subPanels));
  Value blockRows = args[next++];
  Value begin = args[next++], end = args[next++];
  int64_t staticN = cast<MemRefType>(op.getInit().getType()).getShape().back();
  maskColumns =
      ShapedType::isDynamic(staticN) || staticN % tiling.kernelWidth != 0;
  Type tileElement =
      kind == GemmKind::F32 ? Type(b.getF32Type()) : Type(b.getI32Type());
  aTile = memref::AllocaOp::create(
      b, loc,
      MemRefType::get({tiling.copyRows, tiling.blockK / group}, tileElement),
      b.getI64IntegerAttr(64));
  if (weightBlock) {
    auto blocksType = [&](Type element) {
      return MemRefType::get(
          {tiling.copyRows, std::max<int64_t>(tiling.blockK / weightBlock, 1)},
          element);
    };
    blockScale = memref::AllocaOp::create(b, loc, blocksType(b.getF32Type()));
    blockCorrection =
        memref::AllocaOp::create(b, loc, blocksType(b.getI32Type()));
    if (offsets)
      blockSum = memref::AllocaOp::create(b, loc, blocksType(b.getF32Type()));
  } else if (kind == GemmKind::I8) {
    auto rowType = MemRefType::get({maxTaskRows}, b.getF32Type());
    rowScale = memref::AllocaOp::create(b, loc, rowType);
    rowInverse = memref::AllocaOp::create(b, loc, rowType);
    rowZero = memref::AllocaOp::create(b, loc, rowType);
  }

  if (variant.amx) {
    amxPackedK = *amxDepth(op);
    amxKTiles = amxPackedK / kTileRows;
    int64_t rowBytes = amxRowBytes(amxPackedK);
    amxInputRows = std::clamp<int64_t>(
        kAmxInputBytes / rowBytes / (2 * kTileRows) * (2 * kTileRows),
        2 * kTileRows, llvm::alignTo(maxTaskRows, 2 * kTileRows));
    int64_t scratchBytes = amxInputRows * rowBytes;
    // K chunks where all of K leaves fewer than kAmxChunkedRows rows to a
    // buffer (K = 3072 in bf16: 32), each of which would stream all of the
    // weights; at K = 768 (160 rows) the all-of-K path measured as fast or
    // faster. Partial sums go to C as whole tiles between K chunks: every
    // column of a panel must be C's (row groups are whole, emitAmxBlock).
    amxChunkedRows = !maskColumns && amxInputRows < kAmxChunkedRows;
    if (amxChunkedRows) {
      amxChunks =
          std::max<int64_t>(llvm::divideCeil(amxKTiles, kAmxChunkTiles), 1);
      amxChunkTiles = llvm::divideCeil(amxKTiles, amxChunks);
      amxBufferTiles = amxChunkTiles + (amxPackedK % kTileRows ? 1 : 0);
      int64_t groupBytes = 2 * amxBufferTiles * kTileRows * kTileBytes;
      amxChunkRows = std::clamp<int64_t>(
          kAmxInputBytes / groupBytes * (2 * kTileRows), 2 * kTileRows,
          llvm::alignTo(maxTaskRows, 2 * kTileRows));
      scratchBytes =
          std::max(scratchBytes, amxChunkRows / (2 * kTileRows) * groupBytes);
    }
    // One buffer for both layouts of A: a task runs the chunked rows, then
    // the rest (fewer than 32) from the row-major one.
    Value scratch = memref::AllocaOp::create(
        b, loc, MemRefType::get({scratchBytes}, b.getI8Type()),
        b.getI64IntegerAttr(64));
    amxInput = memref::ViewOp::create(
        b, loc, MemRefType::get({amxInputRows, rowBytes / 4}, b.getI32Type()),
        scratch, idx(0), ValueRange{});
    if (amxChunkedRows) {
      amxBlocked = memref::ViewOp::create(
          b, loc,
          MemRefType::get(
              {amxChunkRows / kTileRows * amxBufferTiles * kTileRows,
               kTileBytes / 4},
              b.getI32Type()),
          scratch, idx(0), ValueRange{});
      amxBlockedAddress = addressOf(amxBlocked);
      cAddress = addressOf(c);
    }
    amxOutput = memref::AllocaOp::create(
        b, loc, MemRefType::get({2 * kTileRows, 32}, b.getF32Type()),
        b.getI64IntegerAttr(64));
    if (amxPackedK % kTileRows) {
      auto rowType = VectorType::get({32 * group}, packedType);
      amxWeightTail = memref::AllocaOp::create(
          b, loc, MemRefType::get({kTileRows, 32 * group}, packedType),
          b.getI64IntegerAttr(64));
      Value zeros = arith::ConstantOp::create(
          b, loc, cast<TypedAttr>(b.getZeroAttr(rowType)));
      forLoop(idx(0), idx(kTileRows), idx(1), [&](Value row) {
        vector::StoreOp::create(b, loc, zeros, amxWeightTail,
                                ValueRange{row, idx(0)});
      });
      amxWeightTailAddress = addressOf(amxWeightTail);
    }
    packedAddress = addressOf(packed);
    amxInputAddress = addressOf(amxInput);
    amxOutputAddress = addressOf(amxOutput);
  }

  Value m = memref::DimOp::create(b, loc, a, 0);
  packedK = dimOf(b, loc, packed, 1);
  k = group == 1 ? packedK : dimOf(b, loc, a, 1);
  lastPackedK = sub(max(packedK, idx(1)), idx(1));
  n = dimOf(b, loc, c, 1);
  columnPanels = ceilDiv(n, idx(tiling.kernelWidth));
  Value columnBlocks = ceilDiv(columnPanels, panelsPerTask);
  forLoop(begin, end, idx(1), [&](Value t) {
    Value rowBlock = arith::DivUIOp::create(b, loc, t, columnBlocks);
    Value columnBlock = arith::RemUIOp::create(b, loc, t, columnBlocks);
    Value m0 = mul(rowBlock, blockRows);
    Value mEnd = min(add(m0, blockRows), m);
    Value p0 = mul(columnBlock, panelsPerTask);
    Value pEnd = min(add(p0, panelsPerTask), columnPanels);
    if (intAccumulator)
      emitRowQuantization(m0, mEnd);
    // AMX tiles for every row block, even of one row: measured faster
    // than (or as fast as, where the weights' bandwidth bounds both) the
    // AVX-512 loops at every M (docs/compiler.md).
    if (variant.amx)
      emitAmxBlock(m0, mEnd, p0, pEnd);
    else
      emitVectorBlock(m0, mEnd, p0, pEnd);
  });
}

void GemmEmitter::emitVectorBlock(Value m0, Value mEnd, Value p0, Value pEnd) {
  // At least one chunk, so that K = 0 still writes its zeros (and the
  // epilogue).
  std::optional<int64_t> staticK = getConstantIntValue(k);
  Value chunksEnd =
      staticK ? idx(std::max<int64_t>(*staticK, 1)) : max(k, idx(1));
  forLoop(idx(0), chunksEnd, idx(tiling.blockK), [&](Value k0) {
    Value kc = min(idx(tiling.blockK), sub(k, k0));
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, k0, idx(0));
    Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                       add(k0, kc), k);
    forLoop(m0, mEnd, idx(tiling.copyRows), [&](Value s0) {
      Value sEnd = min(add(s0, idx(tiling.copyRows)), mEnd);
      if (weightBlock)
        emitBlockChunkCopy(s0, sEnd, k0, kc);
      else
        emitChunkCopy(m0, s0, sEnd, k0, kc, aTile);
      forLoop(p0, pEnd, idx(1), [&](Value p) {
        // The B chunk the next panel's first micro-kernel reads, the next
        // chunk's first panel after the last: prefetched while this panel
        // runs, as the packed weight streams from memory once per row
        // block and the hardware prefetchers stop at each 4 KB page.
        Value nextP = add(p, idx(1));
        Value lastPanel = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sge, nextP, pEnd);
        nextP = arith::SelectOp::create(b, loc, lastPanel, p0, nextP);
        Value nextK0 = arith::SelectOp::create(b, loc, lastPanel,
                                               add(k0, idx(tiling.blockK)), k0);
        forLoop(s0, sEnd, idx(tiling.microRows), [&](Value i) {
          Value rows = min(idx(tiling.microRows), sub(sEnd, i));
          // One micro-kernel per row count, so every accumulator of every
          // variant stays in a register.
          SmallVector<int64_t> cases;
          for (int64_t r = 1; r < tiling.microRows; ++r)
            cases.push_back(r);
          auto dispatch = scf::IndexSwitchOp::create(b, loc, TypeRange{}, rows,
                                                     cases, cases.size());
          auto fill = [&](Region &region, int64_t r) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(&region.emplaceBlock());
            emitMicroKernel(r, i, sub(i, s0), p, nextP, nextK0, k0, kc, first);
            scf::YieldOp::create(b, loc);
          };
          for (auto [caseIndex, r] : llvm::enumerate(cases))
            fill(dispatch.getCaseRegions()[caseIndex], r);
          fill(dispatch.getDefaultRegion(), tiling.microRows);
          if (op.getBias() || op.getResidual() ||
              op.getActivation() != Activation::none || intAccumulator) {
            auto ifLast = scf::IfOp::create(b, loc, last, false);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(ifLast.thenBlock()->getTerminator());
            emitEpilogue(m0, i, rows, p);
          }
        });
      });
    });
  });
}

Value GemmEmitter::addressOf(Value buffer) {
  return AmxTiles(b, loc, AmxDot::BF16).addressOf(buffer);
}

void GemmEmitter::emitAmxBlock(Value m0, Value mEnd, Value p0, Value pEnd) {
  if (!amxChunkedRows)
    return emitAmxWholeK(m0, m0, mEnd, p0, pEnd);
  // Whole groups of 32 rows in K chunks, the rest (fewer than 32 rows,
  // whose second C tile would reach past the block) all of K at once.
  Value groups =
      arith::DivUIOp::create(b, loc, sub(mEnd, m0), idx(2 * kTileRows));
  Value whole = add(m0, mul(groups, idx(2 * kTileRows)));
  emitAmxChunked(m0, whole, p0, pEnd);
  emitAmxWholeK(m0, whole, mEnd, p0, pEnd);
}

void GemmEmitter::emitWeightTailCopy(Value p) {
  auto rowType = VectorType::get(
      {32 * group}, cast<MemRefType>(packed.getType()).getElementType());
  for (int64_t r = 0; r < amxPackedK % kTileRows; ++r)
    vector::StoreOp::create(
        b, loc,
        vector::LoadOp::create(
            b, loc, rowType, packed,
            ValueRange{p, idx(amxKTiles * kTileRows + r), idx(0)}),
        amxWeightTail, ValueRange{idx(r), idx(0)});
}

void GemmEmitter::emitAmxWholeK(Value m0, Value from, Value mEnd, Value p0,
                                Value pEnd) {
  // for s0 in rows by amxInputRows:    (A converted once, all of K)
  //   for panel p:                     (its weights stay in L2 meanwhile)
  //     for g0 in s0's rows by 32:     (2 x 2 C tiles, or 1 x 2)
  //       C tiles = A[g0:g0+32, :] . Bp[p]; the epilogue from them
  //       (and g0's share of Bp[p + 1] prefetched into L2)
  int64_t rowBytes = amxRowBytes(amxPackedK);
  int64_t staticK = cast<MemRefType>(op.getInput().getType()).getShape().back();
  int64_t copied = ShapedType::isDynamic(staticK)
                       ? 0
                       : llvm::alignTo(staticK, tiling.lanes) / group;
  auto i32Zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
  Value inputStride =
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(rowBytes));
  Value outputStride =
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32 * 4));
  forLoop(from, mEnd, idx(amxInputRows), [&](Value s0) {
    Value sEnd = min(add(s0, idx(amxInputRows)), mEnd);
    // Zeros past K (the copy writes whole vectors of A, zeros past K): a
    // bf16 weight of zero times garbage could be NaN. Here, as the chunked
    // rows share the buffer.
    if (copied < rowBytes / 4)
      forLoop(idx(0), sub(sEnd, s0), idx(1), [&](Value row) {
        forLoop(idx(copied), idx(rowBytes / 4), idx(1), [&](Value col) {
          memref::StoreOp::create(b, loc, i32Zero, amxInput,
                                  ValueRange{row, col});
        });
      });
    emitChunkCopy(m0, s0, sEnd, idx(0), k, amxInput);
    forLoop(p0, pEnd, idx(1), [&](Value p) {
      if (amxWeightTail)
        emitWeightTailCopy(p);
      Value weights = add(packedAddress, mul(p, idx(amxPackedK * 128)));
      forLoop(s0, sEnd, idx(2 * kTileRows), [&](Value g0) {
        Value rows = min(idx(2 * kTileRows), sub(sEnd, g0));
        Value two = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                          rows, idx(kTileRows));
        Value groupBase = add(amxInputAddress, mul(sub(g0, s0), idx(rowBytes)));
        auto input = [&](int64_t r, Value t) {
          return add(groupBase, add(idx(r * kTileRows * rowBytes),
                                    mul(t, idx(kTileBytes))));
        };
        // The next panel's weights, spread over the row groups' K steps
        // (emitPanelPrefetch).
        Value group =
            arith::DivUIOp::create(b, loc, sub(g0, s0), idx(2 * kTileRows));
        Value groups = ceilDiv(sub(sEnd, s0), idx(2 * kTileRows));
        Value next = min(add(p, idx(1)), sub(columnPanels, idx(1)));
        auto prefetch = [&](Value t) {
          emitPanelPrefetch(next, idx(0), amxPackedK, group, groups, amxKTiles,
                            t);
        };
        auto ifTwo = scf::IfOp::create(b, loc, two, /*withElse=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(ifTwo.thenBlock()->getTerminator());
          emitAmxTiles(2, input, inputStride, weights, idx(amxKTiles),
                       bool(amxWeightTail), Value(), Value(), amxOutputAddress,
                       outputStride, 1, prefetch);
          b.setInsertionPoint(ifTwo.elseBlock()->getTerminator());
          emitAmxTiles(1, input, inputStride, weights, idx(amxKTiles),
                       bool(amxWeightTail), Value(), Value(), amxOutputAddress,
                       outputStride, 1, prefetch);
        }
        emitEpilogue(m0, g0, rows, p, amxOutput);
      });
    });
  });
}

void GemmEmitter::emitAmxChunked(Value m0, Value mEnd, Value p0, Value pEnd) {
  // for s0 in rows by amxChunkRows:
  //   for chunk of K tiles:              (A's chunk converted, blocked)
  //     for panel p:                     (its chunk of B stays in L1)
  //       for g0 in s0's rows by 32:     (2 x 2 C tiles)
  //         C tiles = (first ? 0 : C) + A[g0:g0+32, chunk] . Bp[p, chunk]
  //         to C, or on the last chunk to the scratch and the epilogue
  // A blocked (each 16 x 64-byte tile contiguous, a row tile's K tiles in
  // a row) streams as whole lines; B's chunk is read from L1 by every row
  // group; C's partial sums cost a tile load and store per chunk.
  bool tail = amxWeightTail != nullptr;
  int64_t tileBytes = kTileRows * kTileBytes;
  int64_t weightTileBytes = kTileRows * 128;
  Value compact =
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(kTileBytes));
  Value outputStride =
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32 * 4));
  Value rowStride =
      arith::IndexCastOp::create(b, loc, b.getI64Type(), mul(n, idx(4)));
  forLoop(m0, mEnd, idx(amxChunkRows), [&](Value s0) {
    Value sEnd = min(add(s0, idx(amxChunkRows)), mEnd);
    forLoop(idx(0), idx(amxChunks), idx(1), [&](Value chunk) {
      Value t0 = mul(chunk, idx(amxChunkTiles));
      Value tiles = min(idx(amxChunkTiles), sub(idx(amxKTiles), t0));
      Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         chunk, idx(amxChunks - 1));
      // The last chunk also converts the partial K tile.
      Value converted =
          tail ? add(tiles,
                     arith::SelectOp::create(b, loc, last, idx(1), idx(0)))
               : tiles;
      emitBlockedCopy(m0, s0, sEnd, t0, converted);
      forLoop(p0, pEnd, idx(1), [&](Value p) {
        if (tail) {
          auto ifLast = scf::IfOp::create(b, loc, last, false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(ifLast.thenBlock()->getTerminator());
          emitWeightTailCopy(p);
        }
        Value weights = add(packedAddress, add(mul(p, idx(amxPackedK * 128)),
                                               mul(t0, idx(weightTileBytes))));
        forLoop(s0, sEnd, idx(2 * kTileRows), [&](Value g0) {
          Value rowTile =
              arith::DivUIOp::create(b, loc, sub(g0, s0), idx(kTileRows));
          auto input = [&](int64_t r, Value t) {
            Value tile = add(mul(add(rowTile, idx(r)), idx(amxBufferTiles)), t);
            return add(amxBlockedAddress, mul(tile, idx(tileBytes)));
          };
          Value partial =
              add(cAddress, mul(add(mul(g0, n), mul(p, idx(32))), idx(4)));
          // The next panel's chunk of B, spread over the row groups.
          Value group = arith::DivUIOp::create(b, loc, rowTile, idx(2));
          Value groups = ceilDiv(sub(sEnd, s0), idx(2 * kTileRows));
          Value next = min(add(p, idx(1)), sub(columnPanels, idx(1)));
          auto prefetch = [&](Value t) {
            emitPanelPrefetch(next, mul(t0, idx(kTileRows)),
                              amxChunkTiles * kTileRows, group, groups,
                              amxChunkTiles, t);
          };
          if (amxChunks == 1) {
            emitAmxTiles(2, input, compact, weights, tiles, tail, Value(),
                         Value(), amxOutputAddress, outputStride, kAmxUnroll,
                         prefetch);
            emitEpilogue(m0, g0, idx(2 * kTileRows), p, amxOutput);
            return;
          }
          // The first chunk from zeros to C, the middle ones from C to C,
          // the last from C to the scratch, then the epilogue.
          Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              chunk, idx(0));
          auto ifFirst = scf::IfOp::create(b, loc, first, /*withElse=*/true);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
          emitAmxTiles(2, input, compact, weights, tiles, false, Value(),
                       Value(), partial, rowStride, kAmxUnroll, prefetch);
          b.setInsertionPoint(ifFirst.elseBlock()->getTerminator());
          auto ifLast = scf::IfOp::create(b, loc, last, /*withElse=*/true);
          b.setInsertionPoint(ifLast.thenBlock()->getTerminator());
          emitAmxTiles(2, input, compact, weights, tiles, tail, partial,
                       rowStride, amxOutputAddress, outputStride, kAmxUnroll,
                       prefetch);
          emitEpilogue(m0, g0, idx(2 * kTileRows), p, amxOutput);
          b.setInsertionPoint(ifLast.elseBlock()->getTerminator());
          emitAmxTiles(2, input, compact, weights, tiles, false, partial,
                       rowStride, partial, rowStride, kAmxUnroll, prefetch);
        });
      });
    });
  });
}

void GemmEmitter::emitBlockedCopy(Value m0, Value s0, Value sEnd, Value t0,
                                  Value tiles) {
  // k per tile row: 16 lanes of g. Vectors of A never straddle tiles.
  int64_t tileK = kTileBytes / 4 * group;
  std::optional<int64_t> staticK = getConstantIntValue(k);
  bool wholeVectors = staticK && *staticK % tileK == 0;
  auto maskType = VectorType::get({tiling.lanes}, b.getI1Type());
  forLoop(s0, sEnd, idx(1), [&](Value row) {
    Value r = sub(row, s0);
    Value rowTile = arith::DivUIOp::create(b, loc, r, idx(kTileRows));
    Value first = add(mul(rowTile, idx(amxBufferTiles * kTileRows)),
                      arith::RemUIOp::create(b, loc, r, idx(kTileRows)));
    Value k0 = mul(t0, idx(tileK));
    forLoop(idx(0), mul(tiles, idx(tileK)), idx(tiling.lanes), [&](Value kk) {
      SmallVector<Value> from{row, add(k0, kk)};
      Value x;
      if (wholeVectors) {
        x = vector::LoadOp::create(b, loc, f32Vector, a, from);
      } else {
        // Zeros past K, to the end of the last tile.
        Value valid = max(idx(0), min(idx(tiling.lanes), sub(k, add(k0, kk))));
        Value mask =
            vector::CreateMaskOp::create(b, loc, maskType, ValueRange{valid});
        x = vector::MaskedLoadOp::create(b, loc, f32Vector, a, from, mask,
                                         splat(0.0));
      }
      Value tile = arith::DivUIOp::create(b, loc, kk, idx(tileK));
      Value lane = arith::DivUIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, kk, idx(tileK)), idx(group));
      vector::StoreOp::create(
          b, loc, convertInput(x, sub(row, m0)), amxBlocked,
          ValueRange{add(first, mul(tile, idx(kTileRows))), lane});
    });
  });
}

void GemmEmitter::emitAmxTiles(int64_t rowTiles,
                               llvm::function_ref<Value(int64_t, Value)> input,
                               Value inputStride, Value weights, Value tiles,
                               bool tail, Value partial, Value partialStride,
                               Value result, Value resultStride, int64_t unroll,
                               llvm::function_ref<void(Value)> each) {
  AmxTiles amx(b, loc, kind == GemmKind::BF16 ? AmxDot::BF16 : AmxDot::Int8);
  // A packed row of a panel: 32 columns of g values (128 bytes); B tiles
  // of 16 packed rows x 16 columns, the panel's halves.
  constexpr int64_t weightStride = 128;
  Value weightStrideValue = amx.stride(weightStride);
  auto panelTile = [&](Value base) {
    return [this, base](int64_t c, Value t) {
      return add(base, add(mul(t, idx(kTileRows * weightStride)),
                           idx(c * kTileBytes)));
    };
  };
  // C tile (r, c) of a buffer whose rows are `stride` bytes apart.
  auto cTile = [&](Value base, Value stride, int64_t r, int64_t c) {
    Value rowBytes =
        arith::IndexCastOp::create(b, loc, b.getIndexType(), stride);
    return add(base,
               add(mul(idx(r * kTileRows), rowBytes), idx(c * kTileBytes)));
  };
  SmallVector<Value> acc;
  for (int64_t r = 0; r < rowTiles; ++r)
    for (int64_t c = 0; c < 2; ++c)
      acc.push_back(
          partial ? amx.load(cTile(partial, partialStride, r, c), partialStride)
                  : amx.zero());
  acc = amx.steps(acc, rowTiles, 2, idx(0), tiles, unroll, input, inputStride,
                  panelTile(weights), weightStrideValue, each);
  // The last partial K tile: its weights copied into 16 zeroed rows.
  if (tail)
    acc = amx.step(
        acc, rowTiles, 2, tiles, input, inputStride,
        [&](int64_t c, Value) {
          return add(amxWeightTailAddress, idx(c * kTileBytes));
        },
        weightStrideValue);
  for (int64_t r = 0; r < rowTiles; ++r)
    for (int64_t c = 0; c < 2; ++c)
      amx.store(acc[r * 2 + c], cTile(result, resultStride, r, c),
                resultStride);
}

void GemmEmitter::emitPanelPrefetch(Value next, Value row0, int64_t rows,
                                    Value g, Value groups, int64_t steps,
                                    Value t) {
  // In a model each weight comes from memory once per forward: without
  // this, the first row group of each panel waited on it (the hardware
  // prefetchers stop at each 4 KB page) and the others ran from L2, so the
  // stream and the tile products did not overlap. Spread evenly over every
  // group's K steps (a few lines per K step of four tile products), it keeps
  // the next panel's weights arriving in L2 while this one computes.
  Value slices = mul(groups, idx(steps));
  Value slice = add(mul(g, idx(steps)), t);
  Value from = arith::DivUIOp::create(b, loc, mul(slice, idx(rows)), slices);
  Value to = arith::DivUIOp::create(b, loc, mul(add(slice, idx(1)), idx(rows)),
                                    slices);
  // A packed row is 128 bytes: two lines. A last chunk shorter than the
  // others stops at the panel's end.
  Value end = min(add(row0, to), idx(amxPackedK));
  forLoop(add(row0, from), end, idx(1), [&](Value row) {
    for (int64_t line = 0; line < 2; ++line)
      memref::PrefetchOp::create(b, loc, packed,
                                 ValueRange{next, row, idx(line * 16 * group)},
                                 /*isWrite=*/false, /*localityHint=*/2,
                                 /*isDataCache=*/true);
  });
}

void GemmEmitter::emitRowQuantization(Value m0, Value mEnd) {
  // Asymmetric, per row: [min, max] (with 0 in it, so that zeros stay
  // exact) mapped onto [0, 255]. The scale's reciprocal is what the copy
  // multiplies by; tests compute the same f32 expressions.
  auto maskType = VectorType::get({tiling.lanes}, b.getI1Type());
  auto f32Const = [&](float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  forLoop(m0, mEnd, idx(1), [&](Value row) {
    auto range = scf::ForOp::create(
        b, loc, idx(0), k, idx(tiling.lanes), ValueRange{splat(0), splat(0)},
        [&](OpBuilder &nested, Location, Value kk, ValueRange minMax) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(nested.getBlock());
          Value mask = vector::CreateMaskOp::create(
              b, loc, maskType, ValueRange{min(idx(tiling.lanes), sub(k, kk))});
          Value x = vector::MaskedLoadOp::create(
              b, loc, f32Vector, a, ValueRange{row, kk}, mask, splat(0));
          scf::YieldOp::create(
              b, loc,
              ValueRange{arith::MinNumFOp::create(b, loc, minMax[0], x),
                         arith::MaxNumFOp::create(b, loc, minMax[1], x)});
        });
    Value low = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::MINNUMF, range.getResult(0));
    Value high = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::MAXNUMF, range.getResult(1));
    Value scale = arith::DivFOp::create(
        b, loc, arith::SubFOp::create(b, loc, high, low), f32Const(255.0f));
    Value zeroScale = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            scale, f32Const(0.0f));
    scale = arith::SelectOp::create(b, loc, zeroScale, f32Const(1.0f), scale);
    Value inverse = arith::DivFOp::create(b, loc, f32Const(1.0f), scale);
    Value zero = math::RoundEvenOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, arith::NegFOp::create(b, loc, low),
                              inverse));
    zero = arith::MinNumFOp::create(
        b, loc, arith::MaxNumFOp::create(b, loc, zero, f32Const(0.0f)),
        f32Const(255.0f));
    Value taskRow = sub(row, m0);
    memref::StoreOp::create(b, loc, scale, rowScale, ValueRange{taskRow});
    memref::StoreOp::create(b, loc, inverse, rowInverse, ValueRange{taskRow});
    memref::StoreOp::create(b, loc, zero, rowZero, ValueRange{taskRow});
  });
}

Value GemmEmitter::roundToBF16Bits(Value x) {
  // Round to nearest even on the bits, as vcvtneps2bf16 does: NaN stays a
  // (quiet) NaN, zeros and denormals become signed zeros.
  Value bits = bitcast(i32Vector, x);
  auto shr = [&](Value v, int64_t s) {
    return arith::ShRUIOp::create(b, loc, v, splatInt(s));
  };
  auto andi = [&](Value v, int64_t m) {
    return arith::AndIOp::create(b, loc, v, splatInt(m));
  };
  Value high = shr(bits, 16);
  Value bias = arith::AddIOp::create(b, loc, andi(high, 1), splatInt(0x7fff));
  Value rounded = shr(arith::AddIOp::create(b, loc, bits, bias), 16);
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  Value quiet = arith::OrIOp::create(b, loc, high, splatInt(0x40));
  Value tiny = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     andi(bits, 0x7f800000), splatInt(0));
  Value sign = andi(high, 0x8000);
  return arith::SelectOp::create(
      b, loc, isNan, quiet,
      arith::SelectOp::create(b, loc, tiny, sign, rounded));
}

Value GemmEmitter::convertInput(Value x, Value taskRow) {
  auto packedLanes = VectorType::get({tiling.lanes / group}, b.getI32Type());
  if (kind == GemmKind::BF16) {
    auto bf16Vector = VectorType::get({tiling.lanes}, b.getBF16Type());
    Value rounded =
        nativeDot ? arith::TruncFOp::create(b, loc, bf16Vector, x).getResult()
                  : bitcast(bf16Vector,
                            arith::TruncIOp::create(
                                b, loc,
                                VectorType::get({tiling.lanes}, b.getI16Type()),
                                roundToBF16Bits(x)));
    return bitcast(packedLanes, rounded);
  }
  // u8 = clamp(round(x / scale) + zero point, 0, 255).
  auto scalar = [&](Value buffer) {
    return vector::BroadcastOp::create(
        b, loc, f32Vector,
        memref::LoadOp::create(b, loc, buffer, ValueRange{taskRow}));
  };
  Value q = arith::AddFOp::create(
      b, loc,
      math::RoundEvenOp::create(
          b, loc, arith::MulFOp::create(b, loc, x, scalar(rowInverse))),
      scalar(rowZero));
  q = arith::MinNumFOp::create(
      b, loc, arith::MaxNumFOp::create(b, loc, q, splat(0)), splat(255));
  Value bytes = arith::TruncIOp::create(
      b, loc, VectorType::get({tiling.lanes}, b.getI8Type()),
      arith::FPToUIOp::create(b, loc, i32Vector, q));
  return bitcast(packedLanes, bytes);
}

void GemmEmitter::emitChunkCopy(Value m0, Value s0, Value sEnd, Value k0,
                                Value kc, Value tile) {
  // Chunks are whole vectors unless K is not (blockK is a multiple of the
  // lanes).
  std::optional<int64_t> staticK = getConstantIntValue(k);
  bool wholeVectors = staticK && *staticK % tiling.lanes == 0;
  auto maskType = VectorType::get({tiling.lanes}, b.getI1Type());
  forLoop(s0, sEnd, idx(1), [&](Value row) {
    Value chunkRow = sub(row, s0);
    forLoop(idx(0), kc, idx(tiling.lanes), [&](Value kk) {
      SmallVector<Value> from{row, add(k0, kk)};
      Value mask;
      Value x;
      if (wholeVectors) {
        x = vector::LoadOp::create(b, loc, f32Vector, a, from);
      } else {
        mask = vector::CreateMaskOp::create(
            b, loc, maskType, ValueRange{min(idx(tiling.lanes), sub(kc, kk))});
        x = vector::MaskedLoadOp::create(b, loc, f32Vector, a, from, mask,
                                         splat(0.0));
      }
      if (kind == GemmKind::F32) {
        SmallVector<Value> to{chunkRow, kk};
        if (mask)
          vector::MaskedStoreOp::create(b, loc, tile, to, mask, x);
        else
          vector::StoreOp::create(b, loc, x, tile, to);
        return;
      }
      // Whole lanes of g values (past K, weights are zero: what A holds
      // there does not count).
      Value lanes = convertInput(x, sub(row, m0));
      vector::StoreOp::create(
          b, loc, lanes, tile,
          ValueRange{chunkRow, arith::DivUIOp::create(b, loc, kk, idx(group))});
    });
  });
}

std::pair<Value, Value> GemmEmitter::storedPanelOf(Value p) {
  if (tiling.subPanels == 1)
    return {p, idx(0)};
  return {arith::DivUIOp::create(b, loc, p, idx(tiling.subPanels)),
          mul(arith::RemUIOp::create(b, loc, p, idx(tiling.subPanels)),
              idx(tiling.kernelWidth))};
}

SmallVector<Value> GemmEmitter::inputOperands(Value lane) {
  if (kind == GemmKind::F32)
    return {vector::BroadcastOp::create(b, loc, f32Vector, lane)};
  if (nativeDot)
    return {bitcast(packedVector,
                    vector::BroadcastOp::create(b, loc, i32Vector, lane))};
  auto constant = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  auto broadcastF32 = [&](Value bits) {
    return vector::BroadcastOp::create(
        b, loc, f32Vector,
        arith::BitcastOp::create(b, loc, b.getF32Type(), bits));
  };
  if (kind == GemmKind::BF16)
    return {broadcastF32(arith::ShLIOp::create(b, loc, lane, constant(16))),
            broadcastF32(
                arith::AndIOp::create(b, loc, lane, constant(0xffff0000)))};
  // u8 bytes (per-column i8), or s8 (block-quantized), widened to i32.
  SmallVector<Value> bytes;
  for (int64_t t = 0; t < 4; ++t) {
    Value byte =
        weightBlock
            ? (Value)arith::ShRSIOp::create(
                  b, loc,
                  arith::ShLIOp::create(b, loc, lane, constant(24 - 8 * t)),
                  constant(24))
            : (Value)arith::AndIOp::create(
                  b, loc, arith::ShRUIOp::create(b, loc, lane, constant(8 * t)),
                  constant(0xff));
    bytes.push_back(vector::BroadcastOp::create(b, loc, i32Vector, byte));
  }
  return bytes;
}

SmallVector<Value> GemmEmitter::weightOperands(Value weights) {
  // Block-quantized s8 weights become vpdpbusd's u8 operand: q + 128.
  if (weightBlock && nativeDot && !nibbles)
    return {bitcast(packedVector,
                    arith::XOrIOp::create(b, loc, bitcast(i32Vector, weights),
                                          splatInt(0x80808080)))};
  if (kind == GemmKind::F32 || nativeDot)
    return {weights};
  Value lanes = bitcast(i32Vector, weights);
  if (kind == GemmKind::BF16)
    return {
        bitcast(f32Vector, arith::ShLIOp::create(b, loc, lanes, splatInt(16))),
        bitcast(f32Vector,
                arith::AndIOp::create(b, loc, lanes, splatInt(0xffff0000)))};
  SmallVector<Value> bytes;
  for (int64_t t = 0; t < 4; ++t)
    bytes.push_back(arith::ShRSIOp::create(
        b, loc, arith::ShLIOp::create(b, loc, lanes, splatInt(24 - 8 * t)),
        splatInt(24)));
  return bytes;
}

Value GemmEmitter::dot(Value acc, ArrayRef<Value> input,
                       ArrayRef<Value> weights) {
  std::string bits = std::to_string(tiling.lanes * 32);
  switch (kind) {
  case GemmKind::F32:
    return vector::FMAOp::create(b, loc, input[0], weights[0], acc);
  case GemmKind::BF16:
    if (nativeDot)
      return intrinsic("llvm.x86.avx512bf16.dpbf16ps." + bits, accVector,
                       {acc, input[0], weights[0]});
    // vdpbf16ps adds the odd (high) products first.
    return vector::FMAOp::create(
        b, loc, input[0], weights[0],
        vector::FMAOp::create(b, loc, input[1], weights[1], acc));
  case GemmKind::I8:
    // u8 x s8: the input is the u8 operand, or the (shifted) weights for
    // block-quantized i8.
    if (nativeDot)
      return intrinsic("llvm.x86.avx512.vpdpbusd." + bits, i32Vector,
                       weightBlock ? ValueRange{acc, weights[0], input[0]}
                                   : ValueRange{acc, input[0], weights[0]});
    for (int64_t t = 0; t < 4; ++t)
      acc = arith::AddIOp::create(
          b, loc, acc, arith::MulIOp::create(b, loc, input[t], weights[t]));
    return acc;
  }
  llvm_unreachable("unknown GEMM kind");
}

void GemmEmitter::emitMicroKernel(int64_t rows, Value i, Value chunkRow,
                                  Value p, Value nextP, Value nextK0, Value k0,
                                  Value kc, Value first) {
  int64_t vectors = tiling.panelVectors;
  SmallVector<Value> masks, columns, rowIndex, chunkRows;
  for (int64_t v = 0; v < vectors; ++v) {
    masks.push_back(columnMask(p, v));
    columns.push_back(columnOf(p, v));
  }
  for (int64_t r = 0; r < rows; ++r) {
    rowIndex.push_back(add(i, idx(r)));
    chunkRows.push_back(add(chunkRow, idx(r)));
  }
  Value storedPanel, panelOffset, nextStoredPanel, nextPanelOffset;
  std::tie(storedPanel, panelOffset) = storedPanelOf(p);
  std::tie(nextStoredPanel, nextPanelOffset) = storedPanelOf(nextP);
  Value packedK0 = arith::DivUIOp::create(b, loc, k0, idx(group));
  Value nextPackedK0 = arith::DivUIOp::create(b, loc, nextK0, idx(group));
  Value steps = ceilDiv(kc, idx(group));
  auto loadAcc = [&](int64_t r, int64_t v) {
    Value partial = loadTile(c, rowIndex[r], columns[v], masks[v]);
    return intAccumulator ? bitcast(i32Vector, partial) : partial;
  };

  // Start from zero on the first K chunk, from the partial sums after (an
  // i32 accumulator's bits, in C until the epilogue dequantizes them).
  SmallVector<Type> accTypes(rows * vectors, accVector);
  auto init = scf::IfOp::create(b, loc, accTypes, first, true, true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(init.thenBlock());
    Value zero = intAccumulator ? splatInt(0) : splat(0.0);
    scf::YieldOp::create(b, loc, SmallVector<Value>(rows * vectors, zero));
    b.setInsertionPointToStart(init.elseBlock());
    SmallVector<Value> partial;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < vectors; ++v)
        partial.push_back(loadAcc(r, v));
    scf::YieldOp::create(b, loc, partial);
  }

  SmallVector<Value> results;
  if (weightBlock) {
    results = emitBlockLoop(init.getResults(), chunkRows, columns, storedPanel,
                            panelOffset, nextStoredPanel, nextPanelOffset, k0,
                            nextK0, kc);
  } else {
    auto loop = scf::ForOp::create(
        b, loc, idx(0), steps, idx(1), init.getResults(),
        [&](OpBuilder &nested, Location, Value kk, ValueRange acc) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(nested.getBlock());
          scf::YieldOp::create(b, loc,
                               emitKStep(acc, chunkRows, kk, storedPanel,
                                         panelOffset, nextStoredPanel,
                                         nextPanelOffset, packedK0,
                                         nextPackedK0));
        });
    results.assign(loop.getResults().begin(), loop.getResults().end());
  }

  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < vectors; ++v) {
      Value result = results[r * vectors + v];
      if (intAccumulator)
        result = bitcast(f32Vector, result);
      storeTile(result, c, rowIndex[r], columns[v], masks[v]);
    }
}

SmallVector<Value> GemmEmitter::emitKStep(ValueRange acc,
                                          ArrayRef<Value> chunkRows, Value kk,
                                          Value storedPanel, Value panelOffset,
                                          Value nextStoredPanel,
                                          Value nextPanelOffset, Value packedK0,
                                          Value nextPackedK0) {
  int64_t vectors = tiling.panelVectors;
  // With bit planes, step g (a row of nibbles) is row g % 4 of its group of
  // 4 + planes packed rows; the group's plane p follows its nibbles.
  int64_t groupRows = 4 + planes;
  auto rowOf = [&](Value step) {
    if (!planes)
      return step;
    return add(
        mul(arith::DivUIOp::create(b, loc, step, idx(4)), idx(groupRows)),
        arith::RemUIOp::create(b, loc, step, idx(4)));
  };
  auto planeRowOf = [&](Value step, int64_t plane) {
    return add(
        mul(arith::DivUIOp::create(b, loc, step, idx(4)), idx(groupRows)),
        idx(4 + plane));
  };
  // One prefetch per cache line (16 lanes of 32 bits) of a K step of the
  // panel (and of its group's planes).
  Value nextStep = add(nextPackedK0, kk);
  SmallVector<Value> nextRows = {rowOf(nextStep)};
  for (int64_t plane = 0; plane < planes; ++plane)
    nextRows.push_back(planeRowOf(nextStep, plane));
  for (Value nextRow : nextRows)
    for (int64_t col = 0; col < tiling.kernelWidth; col += 16)
      memref::PrefetchOp::create(
          b, loc, packed,
          ValueRange{nextStoredPanel, min(nextRow, lastPackedK),
                     add(mul(nextPanelOffset, idx(group)), idx(col * group))},
          /*isWrite=*/false, /*localityHint=*/2,
          /*isDataCache=*/true);
  Value step = add(packedK0, kk);
  auto loadRow = [&](Value row, int64_t v) -> Value {
    return vector::LoadOp::create(
        b, loc, packedVector, packed,
        ValueRange{storedPanel, row,
                   mul(add(panelOffset, idx(v * tiling.lanes)), idx(group))});
  };
  SmallVector<Value> raw;
  // planeLanes[p * vectors + v]: plane p's lanes for vector v.
  SmallVector<Value> planeLanes;
  Value row = rowOf(step);
  for (int64_t v = 0; v < vectors; ++v)
    raw.push_back(loadRow(row, v));
  if (planes) {
    for (int64_t plane = 0; plane < planes; ++plane) {
      Value planeRow = planeRowOf(step, plane);
      for (int64_t v = 0; v < vectors; ++v)
        planeLanes.push_back(bitcast(i32Vector, loadRow(planeRow, v)));
    }
    // Both halves' bits (t = 2 (row % 4) and t + 1) from one shift right
    // of each plane by 2 (row % 4).
    Value pairShift = vector::BroadcastOp::create(
        b, loc, i32Vector,
        arith::IndexCastOp::create(
            b, loc, b.getI32Type(),
            mul(arith::RemUIOp::create(b, loc, step, idx(4)), idx(2))));
    for (Value &lanes : planeLanes)
      lanes = arith::ShRUIOp::create(b, loc, lanes, pairShift);
  }
  // A packed row is one K step of the A tile, or two for nibbles: the low
  // nibbles of lane (row kk) pair with A's lane 2 kk, the high ones with
  // 2 kk + 1.
  int64_t halves = nibbles ? 2 : 1;
  SmallVector<Value> next(acc.begin(), acc.end());
  for (int64_t h = 0; h < halves; ++h) {
    SmallVector<SmallVector<Value>> weights;
    for (int64_t v = 0; v < vectors; ++v) {
      Value part = raw[v];
      if (nibbles) {
        Value lanes = bitcast(i32Vector, part);
        if (h == 1)
          lanes = arith::ShRUIOp::create(b, loc, lanes, splatInt(4));
        Value values =
            arith::AndIOp::create(b, loc, lanes, splatInt(0x0f0f0f0f));
        if (planes) {
          // Bit h of each byte of a plane (shifted above) moved to bit 4
          // (+ plane) of the byte: a shift left and a masked or.
          for (int64_t plane = 0; plane < planes; ++plane) {
            Value bits =
                arith::ShLIOp::create(b, loc, planeLanes[plane * vectors + v],
                                      splatInt(4 + plane - h));
            bits = arith::AndIOp::create(b, loc, bits,
                                         splatInt(0x10101010u << plane));
            values = arith::OrIOp::create(b, loc, values, bits);
          }
        }
        part = bitcast(packedVector, values);
      }
      weights.push_back(weightOperands(part));
    }
    Value aLane = nibbles ? add(mul(kk, idx(2)), idx(h)) : kk;
    for (size_t r = 0; r < chunkRows.size(); ++r) {
      SmallVector<Value> input = inputOperands(memref::LoadOp::create(
          b, loc, aTile, ValueRange{chunkRows[r], aLane}));
      for (int64_t v = 0; v < vectors; ++v)
        next[r * vectors + v] = dot(next[r * vectors + v], input, weights[v]);
    }
  }
  return next;
}

SmallVector<Value> GemmEmitter::emitBlockLoop(
    ValueRange acc, ArrayRef<Value> chunkRows, ArrayRef<Value> columns,
    Value storedPanel, Value panelOffset, Value nextStoredPanel,
    Value nextPanelOffset, Value k0, Value nextK0, Value kc) {
  // for each block of the chunk:
  //   part = sum over its k of A . B              (i32, exact)
  //   acc += f32(part - corr[row]) * (w_scale[col] * a_scale[row])
  int64_t vectors = tiling.panelVectors;
  int64_t rows = chunkRows.size();
  int64_t stepsPerBlock = weightBlock / kPerPackedRow;
  Value packedK0 = arith::DivUIOp::create(b, loc, k0, idx(kPerPackedRow));
  Value nextPackedK0 =
      arith::DivUIOp::create(b, loc, nextK0, idx(kPerPackedRow));
  Value scaleRow0 = arith::DivUIOp::create(b, loc, k0, idx(weightBlock));
  Value blocks = arith::DivUIOp::create(b, loc, kc, idx(weightBlock));
  auto loop = scf::ForOp::create(
      b, loc, idx(0), blocks, idx(1), acc,
      [&](OpBuilder &nested, Location, Value block, ValueRange sums) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(nested.getBlock());
        Value firstStep = mul(block, idx(stepsPerBlock));
        SmallVector<Value> zeros(rows * vectors, splatInt(0));
        auto steps = scf::ForOp::create(
            b, loc, idx(0), idx(stepsPerBlock), idx(1), zeros,
            [&](OpBuilder &inner, Location, Value step, ValueRange part) {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(inner.getBlock());
              scf::YieldOp::create(
                  b, loc,
                  emitKStep(part, chunkRows, add(firstStep, step), storedPanel,
                            panelOffset, nextStoredPanel, nextPanelOffset,
                            packedK0, nextPackedK0));
            });
        Value scaleRow = add(scaleRow0, block);
        SmallVector<Value> weightScales, weightOffsets;
        for (int64_t v = 0; v < vectors; ++v) {
          weightScales.push_back(
              loadBlockTerm(scales, scaleRow, columns[v], /*part=*/0));
          if (offsets)
            weightOffsets.push_back(
                loadBlockTerm(offsets, scaleRow, columns[v], /*part=*/1));
        }
        SmallVector<Value> next;
        for (int64_t r = 0; r < rows; ++r) {
          Value inputScale = vector::BroadcastOp::create(
              b, loc, f32Vector,
              memref::LoadOp::create(b, loc, blockScale,
                                     ValueRange{chunkRows[r], block}));
          Value correction, inputSum;
          if (offsets)
            inputSum = vector::BroadcastOp::create(
                b, loc, f32Vector,
                memref::LoadOp::create(b, loc, blockSum,
                                       ValueRange{chunkRows[r], block}));
          if (weightShift)
            correction = vector::BroadcastOp::create(
                b, loc, i32Vector,
                memref::LoadOp::create(b, loc, blockCorrection,
                                       ValueRange{chunkRows[r], block}));
          for (int64_t v = 0; v < vectors; ++v) {
            Value exact = steps.getResult(r * vectors + v);
            if (correction)
              exact = arith::SubIOp::create(b, loc, exact, correction);
            Value sum = vector::FMAOp::create(
                b, loc, arith::SIToFPOp::create(b, loc, f32Vector, exact),
                arith::MulFOp::create(b, loc, weightScales[v], inputScale),
                sums[r * vectors + v]);
            if (offsets)
              sum = vector::FMAOp::create(b, loc, weightOffsets[v], inputSum,
                                          sum);
            next.push_back(sum);
          }
        }
        scf::YieldOp::create(b, loc, next);
      });
  return SmallVector<Value>(loop.getResults());
}

Value GemmEmitter::loadBlockTerm(Value terms, Value row, Value column,
                                 int64_t part) {
  Type element = cast<MemRefType>(terms.getType()).getElementType();
  Value stored =
      vector::LoadOp::create(b, loc, VectorType::get({tiling.lanes}, element),
                             terms, ValueRange{row, column});
  if (element.isF32())
    return stored;
  if (element.isF16())
    return arith::ExtFOp::create(b, loc, f32Vector, stored);
  Value small = arith::SIToFPOp::create(b, loc, f32Vector, stored);
  Value superRow = arith::DivUIOp::create(b, loc, row, idx(blocksPerSuper));
  Value super = vector::LoadOp::create(
      b, loc, VectorType::get({tiling.lanes}, b.getF16Type()), superScales,
      ValueRange{idx(part), superRow, column});
  return arith::MulFOp::create(
      b, loc, arith::ExtFOp::create(b, loc, f32Vector, super), small);
}

void GemmEmitter::emitBlockChunkCopy(Value s0, Value sEnd, Value k0, Value kc) {
  // llama.cpp's quantize_row_q8_0, block by block: d = max|x| / 127,
  // q = round(x / d) (to nearest even, as its AVX code rounds; 0 for an
  // all-zero block), d kept in f32. Vectors of 16, whatever the variant's
  // width: the copy is a small part of the work.
  constexpr int64_t copyLanes = 16;
  auto vector = VectorType::get({copyLanes}, b.getF32Type());
  auto ints = VectorType::get({copyLanes}, b.getI32Type());
  auto quads = VectorType::get({copyLanes / 4}, b.getI32Type());
  auto f32Const = [&](float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  auto vectorConst = [&](float v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vector, b.getF32FloatAttr(v)));
  };
  forLoop(s0, sEnd, idx(1), [&](Value row) {
    Value chunkRow = sub(row, s0);
    forLoop(idx(0), kc, idx(weightBlock), [&](Value kb) {
      SmallVector<Value> xs;
      Value largest;
      for (int64_t j = 0; j < weightBlock; j += copyLanes) {
        Value x = vector::LoadOp::create(
            b, loc, vector, a, ValueRange{row, add(k0, add(kb, idx(j)))});
        xs.push_back(x);
        Value magnitude = math::AbsFOp::create(b, loc, x);
        largest = largest ? arith::MaxNumFOp::create(b, loc, largest, magnitude)
                          : magnitude;
      }
      Value amax = vector::ReductionOp::create(
          b, loc, vector::CombiningKind::MAXNUMF, largest);
      Value scale = arith::DivFOp::create(b, loc, amax, f32Const(127.0f));
      Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           scale, f32Const(0.0f));
      Value inverse = arith::SelectOp::create(
          b, loc, isZero, f32Const(0.0f),
          arith::DivFOp::create(b, loc, f32Const(1.0f), scale));
      Value inverseVector =
          vector::BroadcastOp::create(b, loc, vector, inverse);
      Value total;
      for (auto [j, x] : llvm::enumerate(xs)) {
        Value q = math::RoundEvenOp::create(
            b, loc, arith::MulFOp::create(b, loc, x, inverseVector));
        q = arith::MinNumFOp::create(
            b, loc, arith::MaxNumFOp::create(b, loc, q, vectorConst(-127.0f)),
            vectorConst(127.0f));
        Value qi = arith::FPToSIOp::create(b, loc, ints, q);
        total = total ? arith::AddIOp::create(b, loc, total, qi) : qi;
        Value bytes = arith::TruncIOp::create(
            b, loc, VectorType::get({copyLanes}, b.getI8Type()), qi);
        Value kk = arith::DivUIOp::create(
            b, loc, add(kb, idx(int64_t(j) * copyLanes)), idx(group));
        vector::StoreOp::create(b, loc, bitcast(quads, bytes), aTile,
                                ValueRange{chunkRow, kk});
      }
      Value sum = vector::ReductionOp::create(
          b, loc, vector::CombiningKind::ADD, total);
      Value block = arith::DivUIOp::create(b, loc, kb, idx(weightBlock));
      memref::StoreOp::create(b, loc, scale, blockScale,
                              ValueRange{chunkRow, block});
      if (offsets)
        memref::StoreOp::create(
            b, loc,
            arith::MulFOp::create(
                b, loc, scale,
                arith::SIToFPOp::create(b, loc, b.getF32Type(), sum)),
            blockSum, ValueRange{chunkRow, block});
      if (weightShift)
        memref::StoreOp::create(
            b, loc,
            arith::MulIOp::create(
                b, loc, sum,
                arith::ConstantOp::create(b, loc,
                                          b.getI32IntegerAttr(weightShift))),
            blockCorrection, ValueRange{chunkRow, block});
    });
  });
}

void GemmEmitter::emitEpilogue(Value m0, Value i, Value rows, Value p,
                               Value source) {
  // Once per tile, after its last K chunk, over the tile just stored (still
  // in L1): one copy of the epilogue per task function instead of one per
  // micro-kernel variant keeps compile time low (erf is a long polynomial).
  SmallVector<Value> masks;
  for (int64_t v = 0; v < tiling.panelVectors; ++v)
    masks.push_back(columnMask(p, v));
  forLoop(i, add(i, rows), idx(1), [&](Value row) {
    Value rowScaleValue, rowZeroValue;
    if (intAccumulator) {
      Value taskRow = sub(row, m0);
      rowScaleValue = vector::BroadcastOp::create(
          b, loc, f32Vector,
          memref::LoadOp::create(b, loc, rowScale, ValueRange{taskRow}));
      rowZeroValue = vector::BroadcastOp::create(
          b, loc, i32Vector,
          arith::FPToSIOp::create(
              b, loc, b.getI32Type(),
              memref::LoadOp::create(b, loc, rowZero, ValueRange{taskRow})));
    }
    for (int64_t v = 0; v < tiling.panelVectors; ++v) {
      Value column = columnOf(p, v);
      Value x = source ? vector::LoadOp::create(
                             b, loc, f32Vector, source,
                             ValueRange{sub(row, i), idx(v * tiling.lanes)})
                       : loadTile(c, row, column, masks[v]);
      if (intAccumulator) {
        // y = row scale * column scale * (sum(q_a q_w) - zero * sum(q_w)):
        // the zero point's share removed in i32, exactly.
        Value columnSums =
            vector::LoadOp::create(b, loc, i32Vector, sums, ValueRange{column});
        Value exact = arith::SubIOp::create(
            b, loc, bitcast(i32Vector, x),
            arith::MulIOp::create(b, loc, rowZeroValue, columnSums));
        Value columnScales = vector::LoadOp::create(b, loc, f32Vector, scales,
                                                    ValueRange{column});
        x = arith::MulFOp::create(
            b, loc, arith::SIToFPOp::create(b, loc, f32Vector, exact),
            arith::MulFOp::create(b, loc, columnScales, rowScaleValue));
      }
      storeTile(applyEpilogue(x, row, column, masks[v]), c, row, column,
                masks[v]);
    }
  });
}

Value GemmEmitter::columnMask(Value p, int64_t v) {
  if (!maskColumns)
    return {};
  Value valid = max(idx(0), min(idx(tiling.lanes), sub(n, columnOf(p, v))));
  auto maskType = VectorType::get({tiling.lanes}, b.getI1Type());
  return vector::CreateMaskOp::create(b, loc, maskType, ValueRange{valid});
}

Value GemmEmitter::loadTile(Value buffer, Value row, Value column, Value mask) {
  if (!mask)
    return vector::LoadOp::create(b, loc, f32Vector, buffer,
                                  ValueRange{row, column});
  return vector::MaskedLoadOp::create(
      b, loc, f32Vector, buffer, ValueRange{row, column}, mask, splat(0.0));
}

void GemmEmitter::storeTile(Value value, Value buffer, Value row, Value column,
                            Value mask) {
  if (!mask)
    vector::StoreOp::create(b, loc, value, buffer, ValueRange{row, column});
  else
    vector::MaskedStoreOp::create(b, loc, buffer, ValueRange{row, column}, mask,
                                  value);
}

Value GemmEmitter::applyEpilogue(Value x, Value row, Value column, Value mask) {
  if (bias)
    x = arith::AddFOp::create(
        b, loc, x,
        vector::LoadOp::create(b, loc, f32Vector, bias, ValueRange{column}));
  switch (op.getActivation()) {
  case Activation::none:
    break;
  case Activation::relu:
    x = arith::MaximumFOp::create(b, loc, x, splat(0.0));
    break;
  case Activation::gelu: {
    // A bf16 or int8 GEMM's output goes to a GEMM that rounds it to bf16
    // (or quantizes it): the rational GELU's 1.6e-7 (|x| + 1) against
    // MLIR's 1.1e-7 is lost in that rounding, and it costs a third as
    // much. f32 keeps MLIR's erf.
    if (kind != GemmKind::F32) {
      x = emitRationalGelu(b, loc, x);
      break;
    }
    // 0.5 x (1 + erf(x / sqrt(2)))
    Value erf = math::ErfOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, splat(M_SQRT1_2)));
    Value half = arith::MulFOp::create(b, loc, x, splat(0.5));
    x = arith::MulFOp::create(b, loc, half,
                              arith::AddFOp::create(b, loc, erf, splat(1.0)));
    break;
  }
  case Activation::gelu_tanh: {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Value cube =
        arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value inner = arith::AddFOp::create(
        b, loc, x, arith::MulFOp::create(b, loc, cube, splat(0.044715)));
    Value tanh = math::TanhOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, inner, splat(std::sqrt(2.0 / M_PI))));
    Value half = arith::MulFOp::create(b, loc, x, splat(0.5));
    x = arith::MulFOp::create(b, loc, half,
                              arith::AddFOp::create(b, loc, tanh, splat(1.0)));
    break;
  }
  }
  if (residual)
    x = arith::AddFOp::create(b, loc, x, loadTile(residual, row, column, mask));
  return x;
}
} // namespace

GemmTiling mlir::tfm::getGemmTiling(int64_t vectorBits, int64_t panelWidth,
                                    int64_t packedBytes, int64_t microRows,
                                    int64_t blockK) {
  GemmTiling t;
  t.lanes = std::max<int64_t>(vectorBits / 32, 1);
  t.panelVectors = 2;
  // Accumulators mr x 2 vectors plus the two weight vectors fit the
  // register file: 12 x 2 of AVX-512's 32, 6 x 2 of AVX2's and SSE's 16.
  t.microRows = microRows > 0 ? microRows : vectorBits >= 512 ? 12 : 6;
  t.blockRows = llvm::alignTo(24 * (vectorBits >= 512 ? 12 : 6), t.microRows);
  // A chunk of one panel (Kc x nr weights) is 16 KB: it stays in L1 while
  // the row block's micro-kernels sweep over it.
  t.blockK = blockK > 0 ? blockK
                        : std::max<int64_t>(4096 / (2 * t.lanes), 64) * 4 /
                              packedBytes;
  // The A tile covers whole micro-kernels and stays within 48 KB of stack.
  int64_t micros =
      std::max<int64_t>(49152 / (t.blockK * packedBytes * t.microRows), 1);
  t.copyRows = std::min(micros * t.microRows, t.blockRows);
  // Two vectors per micro-kernel, narrower where the packing is narrower
  // than the variant's vectors.
  while (t.lanes > 1 && panelWidth % (2 * t.lanes) != 0)
    t.lanes /= 2;
  t.kernelWidth = 2 * t.lanes;
  if (panelWidth % t.kernelWidth != 0) {
    t.lanes = panelWidth;
    t.panelVectors = 1;
    t.kernelWidth = panelWidth;
  }
  t.subPanels = panelWidth / t.kernelWidth;
  return t;
}

bool mlir::tfm::gemmSupportsAmx(PackedLinearOp op) {
  std::optional<int64_t> depth = amxDepth(op);
  return depth && amxRowBytes(*depth) * 2 * kTileRows <= kAmxInputBytes;
}

void mlir::tfm::emitGemmTaskBody(PackedLinearOp op, const GemmTiling &tiling,
                                 const KernelVariant &variant,
                                 int64_t maxTaskRows, func::FuncOp task) {
  OpBuilder at = OpBuilder::atBlockBegin(&task.getBody().front());
  GemmEmitter(op, tiling, variant, maxTaskRows, at)
      .emitTaskBody(task.getArguments());
  func::ReturnOp::create(at, op.getLoc());
}
