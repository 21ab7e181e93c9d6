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
#include "compiler/Conversion/LinearToCPU/GemmEmitter.h"

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
using namespace mlir::tfm::gemm;

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
