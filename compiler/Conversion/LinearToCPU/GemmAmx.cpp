//===- GemmAmx.cpp - The typed GEMM task on AMX tiles ---------------------===//
//
// GemmEmitter's AMX paths (level 6: bf16 and per-column i8): all of K at
// once or in chunks whose B stays in L1, the tiles' loads and products,
// and the next panel's prefetch (GemmKernel.cpp's header says how they fit
// the task).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/LinearToCPU/GemmEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::gemm;

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
