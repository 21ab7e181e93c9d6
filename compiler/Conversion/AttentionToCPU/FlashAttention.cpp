//===- FlashAttention.cpp - Flash attention loops for x86 CPUs ------------===//
//
// The loop nest a bufferized tfm.attention becomes on x86 CPUs:
//
//   for bh in batch*heads, for i0 in query blocks of blockQ rows:   (one task)
//     Qt = scale * Q[i0 : i0+Bq, :]^T               (packed once per task)
//     m = -inf, l = 0, acc = 0                      (per query, as vectors)
//     for j0 in key blocks of keyVectors*W keys (causal: up to the diagonal)
//       St = K[j0 : j0+Bk, :] Qt                    (micro-keys x query vectors
//       FMA tile) St = masks, causal -> -inf                  (queries run
//       along the lanes) mNew = max(m, colmax St); Pt = exp(St - mNew); alpha =
//       exp(m - mNew) l = l*alpha + colsum Pt; acc = acc*alpha + Pt^T V[j0 :
//       j0+Bk, :]
//     O[i0 : i0+Bq, :] = acc / l                    (0 where every key was
//     masked)
//
// Over a key/value cache (`kv_length`, `query_offset`), the key loop of
// sequence b stops at its valid keys: kv_length[b], and with causal masking
// query_offset[b] plus the block's last query. A decode step thus reads the
// keys in the cache, not its capacity.
//
// K and V may be a bf16 or f16 cache of f32 attention: they are loaded in
// their own type and widened by vector conversions (the values in
// registers, each key block into an f32 stack tile for the scores), so a
// decode step reads half the cache's bytes and the cache is never copied;
// the arithmetic stays f32.
//
// Operands are read through their strides: any order of the batch and
// sequence dims (the op's indexing maps, such as heads read straight from
// [B, S, H, D] projections) as long as the head dim is contiguous. Each task
// views its (batch..., head) slice of Q, K, V and O as a [seq, dim] matrix.
//
// Scores are kept transposed (keys x queries) so that K is read straight from
// memory, only the query block is packed (once per task, not per key block),
// and the online softmax runs across lanes with no horizontal reductions.
// Everything lives in stack tiles sized by the options, so extra memory does
// not grow with the sequence length. Exponentials are vector math.exp ops,
// which convert-attention-to-cpu turns into polynomials so that LLVM never
// scalarizes them into expf calls.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/AttentionToCPU/FlashAttention.h"
#include "compiler/Conversion/AttentionToCPU/AmxAttention.h"
#include "compiler/Conversion/AttentionToCPU/SoftmaxExp.h"
#include "compiler/Conversion/Common/IndexArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfm;

Value mlir::tfm::queryLength(OpBuilder &b, Location loc, AttentionOp op) {
  int64_t position = op.getCanonicalDimPositions(0)[op.getNumBatchDims()];
  return memref::DimOp::create(b, loc, op.getQuery(), position);
}

namespace {
/// An operand's base buffer, offset, and sizes and strides in the
/// operand's canonical order (see AttentionOp::getCanonicalDimPositions);
/// a dim the operand broadcasts over has size 1 and stride 0.
struct StridedOperand {
  Value base, offset;
  SmallVector<Value> sizes, strides;
};

/// Emits the loop nest for one attention op. Builder helpers keep the
/// arithmetic readable; every value is an index unless named otherwise.
class FlashAttentionEmitter : mlir::tfm::IndexArith<FlashAttentionEmitter> {
  friend class mlir::tfm::IndexArith<FlashAttentionEmitter>;

public:
  /// With `bf16`, QK^T and PV run on vdpbf16ps over operands rounded to
  /// bf16 (16 lanes of f32 only); the softmax stays f32. With `amx` too,
  /// on AMX tiles (AmxAttention.h) over the same rounded operands.
  FlashAttentionEmitter(AttentionOp op, const FlashAttentionTiling &tiling,
                        OpBuilder &at, bool bf16 = false, bool amx = false)
      : op(op), tiling(tiling),
        b(at.getInsertionBlock(), at.getInsertionPoint()), loc(op.getLoc()),
        bf16(bf16 || amx), amx(amx) {}

  /// Whether the op's shapes and layouts are ones the kernel takes.
  LogicalResult check();
  /// How many tasks the op is cut into, at the builder's insertion point.
  Value countTasks();
  /// Fills the entry block of `task`, whose arguments are the op's operands
  /// then a [begin, end) task range.
  LogicalResult emitTaskBody(func::FuncOp task);

private:
  Value fconst(double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(elementType, v));
  }
  Value splat(Value scalar) {
    return vector::BroadcastOp::create(b, loc, vectorType, scalar);
  }
  Value laneMask(Value validLanes) {
    auto maskType = VectorType::get({tiling.lanes}, b.getI1Type());
    return vector::CreateMaskOp::create(b, loc, maskType,
                                        ValueRange{validLanes});
  }
  /// max for the online softmax. Scores are never NaN for finite inputs and
  /// the sign of a zero max does not matter, so nnan+nsz lets it be a single
  /// vmaxps instead of max, compare-unordered and blend.
  Value runningMax(Value x, Value y) {
    return arith::MaximumFOp::create(
        b, loc, x, y, arith::FastMathFlags::nnan | arith::FastMathFlags::nsz);
  }
  Value loadVector(Value memref, ValueRange indices) {
    return vector::LoadOp::create(b, loc, vectorType, memref, indices);
  }
  void storeVector(Value value, Value memref, ValueRange indices) {
    vector::StoreOp::create(b, loc, value, memref, indices);
  }
  /// `lanes` elements of K or V in their own element type (a bf16/f16 cache
  /// stays narrow in memory); with `validLanes`, those past it are 0.
  Value loadRow(Value memref, ValueRange indices, Value validLanes = Value()) {
    Type element = cast<MemRefType>(memref.getType()).getElementType();
    auto type = VectorType::get({tiling.lanes}, element);
    if (!validLanes)
      return vector::LoadOp::create(b, loc, type, memref, indices);
    return vector::MaskedLoadOp::create(b, loc, type, memref, indices,
                                        laneMask(validLanes), zeroLike(type));
  }
  Value zeroLike(Type type) {
    auto vector = cast<VectorType>(type);
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(vector, b.getZeroAttr(vector.getElementType())));
  }
  /// `x` (a scalar or vector of K or V) in the kernel's element type: a
  /// bf16/f16 cache is widened in registers as it is read, never copied.
  Value widen(Value x) {
    Type element = getElementTypeOrSelf(x.getType());
    if (element == elementType)
      return x;
    Type wide = elementType;
    if (auto vector = dyn_cast<VectorType>(x.getType()))
      wide = vector.clone(elementType);
    return arith::ExtFOp::create(b, loc, wide, x);
  }

  StridedOperand describe(Value buffer, unsigned mapIndex);
  /// The [seq, dim] matrix of `x` at the current task's batch indices.
  Value rowsOf(const StridedOperand &x, int64_t dim, Type element);
  LogicalResult analyzeMask();
  void allocateTiles();
  void emitQueryBlock(Value i0);
  void emitPackQueries(Value i0);
  void emitScores(Value j0, Value validKeys);
  void emitOnlineSoftmax(Value i0, Value j0, Value validKeys);
  Value gatherMask(Value queries, Value validQueries, Value j);
  void emitAccumulate(Value i0, Value j0, Value rows, Value validKeys);
  /// The keys of the block [j0, j0 + validKeys) that queries up to
  /// `lastQuery` may see: all of them, or with causal masking those up to
  /// the last query's position (none when the count is <= 0).
  Value visibleKeys(Value j0, Value validKeys, Value lastQuery) {
    if (!op.getCausal())
      return validKeys;
    return min(validKeys, sub(add(add(lastQuery, queryOffset), idx(1)), j0));
  }
  /// Loads the current sequence's value of a per-sequence i64 operand,
  /// clamped into [0, sk].
  Value perSequence(Value buffer);
  void emitStoreOutput(Value i0, Value rows);

  AttentionOp op;
  FlashAttentionTiling tiling;
  OpBuilder b;
  Location loc;
  bool bf16;
  bool amx;
  /// The AMX variant's tiles (keyPairs, queryPairs, scores and
  /// probabilityPairs among them, padded to whole tiles).
  AmxAttentionTiles amxTiles;
  /// The AMX variant's blocks are 128 queries: it skips the vectors of
  /// queries past the block's `activeRows` (a short sequence), moving the
  /// builder into an scf.if until the caller's InsertionGuard restores it.
  Value activeRows;
  void skipPastQueries(int64_t lane0) {
    if (amx)
      emitSkipPastRows(b, loc, idx(lane0), activeRows);
  }

  /// bf16 operands: `x` (vector<lanes x f32>, or a cache's bf16/f16)
  /// rounded, as vector<lanes x bf16> (a bf16 cache's rows as they are);
  /// `interleave(a, b)` pairs lanes (a0, b0, a1, b1, ...).
  Value roundToBF16(Value x) {
    if (getElementTypeOrSelf(x.getType()).isBF16())
      return x;
    return arith::TruncFOp::create(
        b, loc, VectorType::get({tiling.lanes}, b.getBF16Type()), widen(x));
  }
  Value pairs(Value low, Value high) {
    return vector::InterleaveOp::create(b, loc, roundToBF16(low),
                                        roundToBF16(high));
  }
  /// One lane (two bf16) of `tile`, broadcast to every lane.
  Value broadcastPair(Value tile, ValueRange indices) {
    Value lane = memref::LoadOp::create(b, loc, tile, indices);
    return vector::BitCastOp::create(
        b, loc, VectorType::get({2 * tiling.lanes}, b.getBF16Type()),
        vector::BroadcastOp::create(
            b, loc, VectorType::get({tiling.lanes}, b.getI32Type()), lane));
  }
  Value dotBF16(Value acc, Value x, Value y) {
    return LLVM::CallIntrinsicOp::create(
               b, loc, vectorType,
               b.getStringAttr("llvm.x86.avx512bf16.dpbf16ps.512"),
               ValueRange{acc, x, y})
        .getResult(0);
  }
  /// The queries' transposed tile as bf16 pairs of head dims, the key
  /// block's rows as bf16 pairs of head dims, the probabilities and the
  /// value block as bf16 pairs of keys.
  void emitPackQueryPairs();
  void emitPackKeyPairs(Value j0, Value validKeys);
  /// A bf16/f16 key block widened to f32 rows of `wideKeys`, a vector at a
  /// time, for the f32 scores micro-kernel (which reads one key element
  /// at a time: widening each there would cost a conversion per element
  /// and query vector).
  void emitWidenKeys(Value j0, Value validKeys);
  /// Whether the f32 scores read the keys from `wideKeys`.
  bool widensKeys() const { return !bf16 && keyType != elementType; }
  Value wideKeys;
  /// The probabilities exp(S - pivot) of the vector of queries at lane0 as
  /// bf16 pairs of keys; returns their f32 sum.
  Value emitProbabilityPairs(Value lane0, Value keys, Value pivot);
  void emitPackValuePairs(Value j0, Value validKeys);
  Value queryPairs, keyPairs, probabilityPairs, valuePairs;

  Type elementType;        // Q's, O's and the arithmetic's
  Type keyType, valueType; // K's and V's: elementType, or a cache's bf16/f16
  VectorType vectorType;
  StridedOperand qLayout, kLayout, vLayout, oLayout, maskLayout;
  int64_t batchDims = 0;
  SmallVector<Value> batchIndex; // the current task's batch indices
  Value q, k, v, o;              // the current task's [S, D] matrices
  Value sq, sk;                  // sequence lengths
  // Over a cache: the buffers of kv_length and query_offset (null when
  // absent), and for the query block being emitted the keys it may read and
  // its queries' position offset.
  Value kvLengthArg, queryOffsetArg;
  Value keyLimit, queryOffset;
  int64_t headDim = 0;      // Dk
  int64_t valueDim = 0;     // Dv
  int64_t valueVectors = 0; // ceil(Dv / lanes)

  // Mask addressing: element (batch..., i, j) of the mask is element
  // sum(batch * stride) + i*maskRowStride + j*maskColumnStride of the 1-D
  // `mask` (strides are 0 where the mask broadcasts).
  Value mask, maskRowStride, maskColumnStride;
  /// Offset of the current task's mask in `mask`.
  Value maskBatchOffset();
  bool maskIsBoolean = false;

  func::FuncOp task;
  Value maskArg; // the mask buffer as the task function receives it

  // Stack tiles: the scaled query block transposed [Dk][Bq], the scores
  // transposed [Bk][Bq], the accumulator [Bq][Dv rounded up to vectors],
  // and per-query running max, sum and correction [Bq].
  Value queriesT, scores, acc, rowMax, rowSum, rowScale;
};

LogicalResult FlashAttentionEmitter::analyzeMask() {
  if (!op.getMask())
    return success();
  auto maskType = cast<MemRefType>(op.getMask().getType());
  maskIsBoolean = maskType.getElementType().isInteger(1);
  maskLayout = describe(maskArg, 3);
  maskRowStride = maskLayout.strides[batchDims];
  maskColumnStride = maskLayout.strides[batchDims + 1];
  // Gathers address the mask as one run of elements from its offset: the
  // run ends past its last element, 1 + sum((size - 1) * stride).
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, maskArg);
  Value extent = idx(1);
  for (int64_t d = 0; d < maskType.getRank(); ++d)
    extent = add(extent, mul(sub(metadata.getSizes()[d], idx(1)),
                             metadata.getStrides()[d]));
  auto flatType = MemRefType::get(
      {ShapedType::kDynamic}, maskType.getElementType(),
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, {1}));
  mask = memref::ReinterpretCastOp::create(
      b, loc, flatType, maskLayout.base, OpFoldResult(maskLayout.offset),
      ArrayRef<OpFoldResult>{extent},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return success();
}

StridedOperand FlashAttentionEmitter::describe(Value buffer,
                                               unsigned mapIndex) {
  auto type = cast<MemRefType>(buffer.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  StridedOperand x;
  x.base = metadata.getBaseBuffer();
  x.offset = metadata.getOffset();
  for (int64_t position : op.getCanonicalDimPositions(mapIndex)) {
    // A mask broadcasts over the dims it lacks and those of static size 1.
    if (position < 0 || type.getDimSize(position) == 1) {
      x.sizes.push_back(idx(1));
      x.strides.push_back(idx(0));
      continue;
    }
    x.sizes.push_back(metadata.getSizes()[position]);
    x.strides.push_back(metadata.getStrides()[position]);
  }
  return x;
}

Value FlashAttentionEmitter::rowsOf(const StridedOperand &x, int64_t dim,
                                    Type element) {
  Value offset = x.offset;
  for (int64_t d = 0; d < batchDims; ++d)
    offset = add(offset, mul(batchIndex[d], x.strides[d]));
  auto type = MemRefType::get(
      {ShapedType::kDynamic, dim}, element,
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                             {ShapedType::kDynamic, 1}));
  return memref::ReinterpretCastOp::create(
      b, loc, type, x.base, OpFoldResult(offset),
      ArrayRef<OpFoldResult>{x.sizes[batchDims], b.getIndexAttr(dim)},
      ArrayRef<OpFoldResult>{x.strides[batchDims], b.getIndexAttr(1)});
}

void FlashAttentionEmitter::allocateTiles() {
  // Tiles go at the task's entry so that no loop grows the stack, and each
  // thread running tasks has its own.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&task.getBody().front());
  int64_t bq = tiling.blockQ, bk = tiling.blockK();
  auto tile = [&](ArrayRef<int64_t> shape) {
    return memref::AllocaOp::create(b, loc, MemRefType::get(shape, elementType),
                                    b.getI64IntegerAttr(64));
  };
  queriesT = tile({headDim, bq});
  // The scores micro-kernel writes whole groups of micro-rows keys, so the
  // last group of a block may run past the block's keys.
  scores = tile({int64_t(llvm::alignTo(bk, tiling.microRows)), bq});
  if (!amx)
    acc = tile({bq, valueVectors * tiling.lanes});
  rowMax = tile({bq});
  rowSum = tile({bq});
  rowScale = tile({bq});
  if (widensKeys())
    wideKeys = tile({int64_t(llvm::alignTo(bk, tiling.microRows)),
                     int64_t(llvm::alignTo(headDim, tiling.lanes))});
  if (!bf16)
    return;
  auto typedTile = [&](ArrayRef<int64_t> shape, Type type) {
    return memref::AllocaOp::create(b, loc, MemRefType::get(shape, type),
                                    b.getI64IntegerAttr(64));
  };
  Type bf16Type = b.getBF16Type(), i32 = b.getI32Type();
  if (amx) {
    // Head dims padded to whole K tiles, value dims to whole C tiles; the
    // padding of the keys' rows and the query pairs is zero for good (the
    // packs never write it), so padded dims add exact zeros.
    AmxAttentionTiles &t = amxTiles;
    t.blockQ = bq;
    t.blockK = bk;
    t.headDim = amxAttentionHeadDim(headDim);
    t.valueDim = amxAttentionValueDim(valueDim);
    t.scores = scores;
    t.keys = keyPairs = typedTile({bk, t.headDim / 2}, i32);
    t.queries = queryPairs = typedTile({t.headDim / 2, 2 * bq}, bf16Type);
    t.probabilities = probabilityPairs = typedTile({bk / 2, bq}, i32);
    t.valuesT = typedTile({t.valueDim, bk}, bf16Type);
    t.accT = acc = tile({t.valueDim, bq});
    // Only the padding: the packs write the rest (the keys' rows up to
    // whole vectors of head dims, the query pairs up to the head dim).
    auto zero = [&](Value buffer, int64_t row0, int64_t rows, int64_t column0,
                    int64_t columns, int64_t width) {
      auto type = VectorType::get(
          {width}, cast<MemRefType>(buffer.getType()).getElementType());
      Value zeros = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
      if (column0 >= columns || row0 >= rows)
        return;
      forLoop(idx(row0), idx(rows), idx(1), [&](Value r) {
        for (int64_t c = column0; c < columns; c += width)
          vector::StoreOp::create(b, loc, zeros, buffer, ValueRange{r, idx(c)});
      });
    };
    zero(keyPairs, 0, bk, llvm::alignTo(headDim, tiling.lanes) / 2,
         t.headDim / 2, tiling.lanes / 2);
    zero(queryPairs, llvm::divideCeil(headDim, 2), t.headDim / 2, 0, 2 * bq,
         tiling.lanes);
    return;
  }
  int64_t headPairs = llvm::divideCeil(headDim, 2);
  int64_t keyPairsCount = llvm::divideCeil(bk, 2);
  queryPairs = typedTile({headPairs, 2 * bq}, bf16Type);
  keyPairs = typedTile({int64_t(llvm::alignTo(bk, tiling.microRows)),
                        int64_t(llvm::alignTo(headDim, tiling.lanes)) / 2},
                       i32);
  probabilityPairs = typedTile({keyPairsCount, bq}, i32);
  valuePairs =
      typedTile({keyPairsCount, 2 * valueVectors * tiling.lanes}, bf16Type);
}

void FlashAttentionEmitter::emitPackQueryPairs() {
  // Qt2[d'][2q + t] = bf16(Qt[2d' + t][q]): the scaled queries, two head
  // dims per 32-bit lane (zero past an odd head dim).
  Value zero = splat(fconst(0.0));
  int64_t headPairs = llvm::divideCeil(headDim, 2);
  for (int64_t n = 0; n < tiling.blockQ / tiling.lanes; ++n) {
    OpBuilder::InsertionGuard guard(b);
    skipPastQueries(n * tiling.lanes);
    Value lane0 = idx(n * tiling.lanes);
    forLoop(idx(0), idx(headPairs), idx(1), [&](Value d) {
      Value low = loadVector(queriesT, {mul(d, idx(2)), lane0});
      Value highDim = add(mul(d, idx(2)), idx(1));
      Value high = zero;
      if (headDim % 2 == 0) {
        high = loadVector(queriesT, {highDim, lane0});
      } else {
        Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                             highDim, idx(headDim));
        high = arith::SelectOp::create(
            b, loc, inside,
            loadVector(queriesT, {min(highDim, idx(headDim - 1)), lane0}),
            zero);
      }
      vector::StoreOp::create(b, loc, pairs(low, high), queryPairs,
                              ValueRange{d, mul(lane0, idx(2))});
    });
  }
}

void FlashAttentionEmitter::emitPackKeyPairs(Value j0, Value validKeys) {
  // Kb[jj][d'] = the bf16 pair (K[j0 + jj, 2d'], K[j0 + jj, 2d' + 1]): a key
  // row rounded is already its pairs. Rows past the keys repeat the last
  // one, as the scores micro-kernel reads whole groups of rows.
  Value lastKey = sub(sk, idx(1));
  Value rows =
      mul(ceilDiv(validKeys, idx(tiling.microRows)), idx(tiling.microRows));
  auto packedType = VectorType::get({tiling.lanes / 2}, b.getI32Type());
  forLoop(idx(0), rows, idx(1), [&](Value jj) {
    Value row = min(add(j0, jj), lastKey);
    for (int64_t d0 = 0; d0 < headDim; d0 += tiling.lanes) {
      Value x =
          loadRow(k, {row, idx(d0)},
                  d0 + tiling.lanes <= headDim ? Value() : idx(headDim - d0));
      vector::StoreOp::create(
          b, loc, vector::BitCastOp::create(b, loc, packedType, roundToBF16(x)),
          keyPairs, ValueRange{jj, idx(d0 / 2)});
    }
  });
}

void FlashAttentionEmitter::emitWidenKeys(Value j0, Value validKeys) {
  // Wk[jj][d] = K[j0 + jj][d] in f32; rows past the keys repeat the last
  // one, as the scores micro-kernel reads whole groups of rows.
  Value lastKey = sub(sk, idx(1));
  Value rows =
      mul(ceilDiv(validKeys, idx(tiling.microRows)), idx(tiling.microRows));
  forLoop(idx(0), rows, idx(1), [&](Value jj) {
    Value row = min(add(j0, jj), lastKey);
    for (int64_t d0 = 0; d0 < headDim; d0 += tiling.lanes)
      storeVector(
          widen(loadRow(k, {row, idx(d0)},
                        d0 + tiling.lanes <= headDim ? Value()
                                                     : idx(headDim - d0))),
          wideKeys, {jj, idx(d0)});
  });
}

Value FlashAttentionEmitter::emitProbabilityPairs(Value lane0, Value keys,
                                                  Value pivot) {
  // Pb[j'][q] = the bf16 pair (P[2j'][q], P[2j' + 1][q]) of the vector of
  // queries at lane0, P = exp(S - pivot) computed here from the scores (one
  // pass: the f32 P is never stored); a pair's second key past the visible
  // ones is 0. Returns the f32 sum of P over the visible keys.
  auto packedType = VectorType::get({tiling.lanes}, b.getI32Type());
  Value zero = splat(fconst(0.0));
  Value visiblePairs =
      arith::DivUIOp::create(b, loc, add(max(keys, idx(0)), idx(1)), idx(2));
  auto loop = scf::ForOp::create(
      b, loc, idx(0), visiblePairs, idx(1), ValueRange{zero},
      [&](OpBuilder &nested, Location, Value j, ValueRange iter) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(nested.getBlock());
        auto probability = [&](Value row) {
          return emitSoftmaxExp(
              b, loc,
              arith::SubFOp::create(b, loc, loadVector(scores, {row, lane0}),
                                    pivot));
        };
        Value lowRow = mul(j, idx(2)), highRow = add(lowRow, idx(1));
        Value low = probability(lowRow);
        Value high = arith::SelectOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, highRow,
                                  keys),
            probability(highRow), zero);
        vector::StoreOp::create(
            b, loc,
            vector::BitCastOp::create(b, loc, packedType, pairs(low, high)),
            probabilityPairs, ValueRange{j, lane0});
        scf::YieldOp::create(
            b, loc,
            arith::AddFOp::create(b, loc, iter[0],
                                  arith::AddFOp::create(b, loc, low, high))
                .getResult());
      });
  // AMX multiplies whole tiles of 32 keys: the block's other pairs are
  // zeros (a stale probability would weigh a key these queries do not see).
  if (amx) {
    Value zeroPairs =
        vector::BitCastOp::create(b, loc, packedType, pairs(zero, zero));
    forLoop(visiblePairs, idx(tiling.blockK() / 2), idx(1), [&](Value j) {
      vector::StoreOp::create(b, loc, zeroPairs, probabilityPairs,
                              ValueRange{j, lane0});
    });
  }
  return loop.getResult(0);
}

void FlashAttentionEmitter::emitPackValuePairs(Value j0, Value validKeys) {
  // Vb[j'][2c + t] = bf16(V[j0 + 2j' + t][c]), zero past the block's keys
  // and past Dv.
  Value count = arith::DivUIOp::create(b, loc, add(validKeys, idx(1)), idx(2));
  Value zero = zeroLike(VectorType::get({tiling.lanes}, valueType));
  forLoop(idx(0), count, idx(1), [&](Value j) {
    Value first = add(j0, mul(j, idx(2)));
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                              add(mul(j, idx(2)), idx(1)), validKeys);
    Value second =
        arith::SelectOp::create(b, loc, inside, add(first, idx(1)), first);
    for (int64_t n = 0; n < valueVectors; ++n) {
      int64_t column = n * tiling.lanes;
      auto load = [&](Value row) -> Value {
        return loadRow(v, {row, idx(column)},
                       column + tiling.lanes <= valueDim
                           ? Value()
                           : idx(valueDim - column));
      };
      Value high = arith::SelectOp::create(b, loc, inside, load(second), zero);
      vector::StoreOp::create(b, loc, pairs(load(first), high), valuePairs,
                              ValueRange{j, idx(2 * column)});
    }
  });
}

LogicalResult FlashAttentionEmitter::check() {
  auto qType = cast<MemRefType>(op.getQuery().getType());
  auto vType = cast<MemRefType>(op.getValue().getType());
  elementType = qType.getElementType();
  keyType = cast<MemRefType>(op.getKey().getType()).getElementType();
  valueType = vType.getElementType();
  // The verifier allows K and V narrower than Q only as a bf16/f16 cache
  // of f32 attention, which the loads widen.
  for (Type type : {keyType, valueType})
    if (type != elementType &&
        !(elementType.isF32() && (type.isBF16() || type.isF16())))
      return op.emitOpError("has no CPU kernel for ")
             << type << " keys or values with " << elementType << " queries";
  headDim = qType.getShape().back();
  valueDim = vType.getShape().back();
  if (ShapedType::isDynamic(headDim) || ShapedType::isDynamic(valueDim))
    return op.emitOpError("needs static head dimensions to lower to CPU");
  for (Value operand :
       {op.getQuery(), op.getKey(), op.getValue(), op.getInit()})
    if (!hasContiguousRows(cast<MemRefType>(operand.getType())))
      return op.emitOpError("needs a contiguous head dim to lower to CPU");
  if (Value maskValue = op.getMask())
    if (!cast<MemRefType>(maskValue.getType()).isStrided())
      return op.emitOpError("needs a strided mask to lower to CPU");
  batchDims = op.getNumBatchDims();
  vectorType = VectorType::get({tiling.lanes}, elementType);
  valueVectors = llvm::divideCeil(valueDim, tiling.lanes);
  return success();
}

// The work is split into tasks, one per (batch*head, taskBlockQ queries),
// run by an outlined function over a range of tasks. tfm-dispatch-tasks
// later hands that range to the caller's thread pool, or runs it inline.
Value FlashAttentionEmitter::countTasks() {
  SmallVector<int64_t> positions = op.getCanonicalDimPositions(0);
  Value tasks = arith::CeilDivSIOp::create(b, loc, queryLength(b, loc, op),
                                           idx(tiling.taskBlockQ));
  for (int64_t d = 0; d < op.getNumBatchDims(); ++d)
    tasks =
        mul(tasks, memref::DimOp::create(b, loc, op.getQuery(), positions[d]));
  return tasks;
}

LogicalResult FlashAttentionEmitter::emitTaskBody(func::FuncOp taskFn) {
  if (failed(check()))
    return failure();
  task = taskFn;
  SmallVector<Value> operands(op->getOperands());
  Block *entry = &task.getBody().front();
  b.setInsertionPointToStart(entry);
  ArrayRef<BlockArgument> args = entry->getArguments();
  size_t numOperands = operands.size();
  bool hasMask = bool(op.getMask());
  auto argOf = [&](Value operand) -> Value {
    if (!operand)
      return Value();
    return args[llvm::find(operands, operand) - operands.begin()];
  };
  qLayout = describe(args[0], 0);
  kLayout = describe(args[1], 1);
  vLayout = describe(args[2], 2);
  maskArg = hasMask ? Value(args[3]) : Value();
  kvLengthArg = argOf(op.getKvLength());
  queryOffsetArg = argOf(op.getQueryOffset());
  oLayout = describe(args[numOperands - 1], hasMask ? 4 : 3);
  sq = qLayout.sizes[batchDims];
  sk = kLayout.sizes[batchDims];
  if (failed(analyzeMask()))
    return failure();
  allocateTiles();
  Value blocks = arith::CeilDivSIOp::create(b, loc, sq, idx(tiling.taskBlockQ));
  forLoop(args[numOperands], args[numOperands + 1], idx(1), [&](Value t) {
    // Tasks enumerate the batch dims row-major, then the query blocks.
    Value rest = arith::DivUIOp::create(b, loc, t, blocks);
    batchIndex.assign(batchDims, Value());
    for (int64_t d = batchDims - 1; d >= 0; --d) {
      batchIndex[d] = arith::RemUIOp::create(b, loc, rest, qLayout.sizes[d]);
      rest = arith::DivUIOp::create(b, loc, rest, qLayout.sizes[d]);
    }
    q = rowsOf(qLayout, headDim, elementType);
    k = rowsOf(kLayout, headDim, keyType);
    v = rowsOf(vLayout, valueDim, valueType);
    o = rowsOf(oLayout, valueDim, elementType);
    Value first =
        mul(arith::RemUIOp::create(b, loc, t, blocks), idx(tiling.taskBlockQ));
    if (tiling.taskBlockQ == tiling.blockQ)
      return emitQueryBlock(first);
    // A task's queries are the same for every variant; a variant with
    // narrower vectors may cover them in several blocks.
    Value last = min(add(first, idx(tiling.taskBlockQ)), sq);
    forLoop(first, last, idx(tiling.blockQ),
            [&](Value i0) { emitQueryBlock(i0); });
  });
  func::ReturnOp::create(b, loc);
  return success();
}

Value FlashAttentionEmitter::perSequence(Value buffer) {
  Value value =
      memref::LoadOp::create(b, loc, buffer, ValueRange{batchIndex[0]});
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
  return arith::MaxSIOp::create(b, loc, min(index, sk), idx(0));
}

void FlashAttentionEmitter::emitQueryBlock(Value i0) {
  Value rows = min(idx(tiling.blockQ), sub(sq, i0));
  activeRows = rows;
  keyLimit = kvLengthArg ? perSequence(kvLengthArg) : sk;
  queryOffset = queryOffsetArg ? perSequence(queryOffsetArg) : idx(0);
  // Causal: no query sees past the last one's position, and the keys there
  // may not exist yet (a cache's unwritten rows): never read them, even
  // with a zero weight.
  if (op.getCausal())
    keyLimit = min(keyLimit, add(queryOffset, sq));
  Value negInf = fconst(-std::numeric_limits<double>::infinity());
  Value zero = fconst(0.0), one = fconst(1.0);
  if (amx) {
    forLoop(idx(0), idx(amxTiles.valueDim), idx(1), [&](Value c) {
      for (int64_t n = 0; n < tiling.blockQ / tiling.lanes; ++n)
        storeVector(splat(zero), acc, {c, idx(n * tiling.lanes)});
    });
  } else {
    forLoop(idx(0), idx(tiling.blockQ), idx(1), [&](Value r) {
      for (int64_t n = 0; n < valueVectors; ++n)
        storeVector(splat(zero), acc, {r, idx(n * tiling.lanes)});
    });
  }
  for (int64_t n = 0; n < tiling.blockQ / tiling.lanes; ++n) {
    Value at = idx(n * tiling.lanes);
    storeVector(splat(negInf), rowMax, {at});
    storeVector(splat(zero), rowSum, {at});
    storeVector(splat(one), rowScale, {at});
  }
  emitPackQueries(i0);
  if (bf16)
    emitPackQueryPairs();

  // Causal: keys past the block's last query row are masked for every row.
  Value keyEnd = op.getCausal() ? min(keyLimit, add(queryOffset, add(i0, rows)))
                                : keyLimit;
  // A sliding window: keys before the block's first query's window are
  // hidden from every row; start at the key block holding the first one
  // that is not.
  Value keyBegin = idx(0);
  if (std::optional<int64_t> window = op.getWindow()) {
    Value first = arith::MaxSIOp::create(
        b, loc, sub(add(queryOffset, add(i0, idx(1))), idx(*window)), idx(0));
    keyBegin = mul(arith::DivUIOp::create(b, loc, first, idx(tiling.blockK())),
                   idx(tiling.blockK()));
  }
  forLoop(keyBegin, keyEnd, idx(tiling.blockK()), [&](Value j0) {
    Value validKeys = min(idx(tiling.blockK()), sub(keyLimit, j0));
    if (amx) {
      emitPackKeyPairs(j0, validKeys);
      emitAmxPackValues(b, loc, amxTiles, v, valueDim, j0, validKeys);
      emitAmxScores(b, loc, amxTiles, validKeys, rows);
      emitOnlineSoftmax(i0, j0, validKeys);
      emitAmxAccumulate(b, loc, amxTiles, rowScale, validKeys, rows);
      return;
    }
    if (widensKeys())
      emitWidenKeys(j0, validKeys);
    if (bf16) {
      emitPackKeyPairs(j0, validKeys);
      emitPackValuePairs(j0, validKeys);
    }
    emitScores(j0, validKeys);
    emitOnlineSoftmax(i0, j0, validKeys);
    emitAccumulate(i0, j0, rows, validKeys);
  });
  if (amx)
    return emitAmxStoreOutput(b, loc, amxTiles, rowSum, o, valueDim, i0, rows);
  emitStoreOutput(i0, rows);
}

void FlashAttentionEmitter::emitPackQueries(Value i0) {
  // Queries past the end repeat the last one: finite scores in lanes that
  // are never stored.
  Value lastQuery = sub(sq, idx(1));
  Value scale = fconst(op.getScale().convertToDouble());
  // Whole lanes x lanes blocks go through registers: `lanes` rows of Q
  // loaded as vectors, transposed by shuffles, stored as `lanes` rows of
  // Qt (a scalar loop here became scatters, 8% of a task at S = 512); the
  // head dims past the last whole block are copied one by one.
  int64_t lanes = tiling.lanes;
  int64_t wholeDims = headDim / lanes * lanes;
  auto blockType = VectorType::get({lanes, lanes}, elementType);
  Value scaleVector = splat(scale);
  Value packed = amx ? mul(ceilDiv(activeRows, idx(lanes)), idx(lanes))
                     : idx(tiling.blockQ);
  forLoop(idx(0), packed, idx(lanes), [&](Value i) {
    SmallVector<Value> rows;
    for (int64_t r = 0; r < lanes; ++r)
      rows.push_back(min(add(i0, add(i, idx(r))), lastQuery));
    forLoop(idx(0), idx(wholeDims), idx(lanes), [&](Value d0) {
      Value block = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(blockType, b.getZeroAttr(elementType)));
      for (int64_t r = 0; r < lanes; ++r) {
        Value row = arith::MulFOp::create(b, loc, loadVector(q, {rows[r], d0}),
                                          scaleVector);
        block = vector::InsertOp::create(b, loc, row, block, r);
      }
      Value transposed =
          vector::TransposeOp::create(b, loc, block, ArrayRef<int64_t>{1, 0});
      for (int64_t c = 0; c < lanes; ++c)
        storeVector(vector::ExtractOp::create(b, loc, transposed, c), queriesT,
                    {add(d0, idx(c)), i});
    });
    for (int64_t r = 0; r < lanes && wholeDims < headDim; ++r)
      forLoop(idx(wholeDims), idx(headDim), idx(1), [&](Value d) {
        Value x = memref::LoadOp::create(b, loc, q, ValueRange{rows[r], d});
        memref::StoreOp::create(b, loc, arith::MulFOp::create(b, loc, x, scale),
                                queriesT, ValueRange{d, add(i, idx(r))});
      });
  });
}

void FlashAttentionEmitter::emitScores(Value j0, Value validKeys) {
  int64_t mk = tiling.microRows;
  int64_t queryBlocks = tiling.blockQ / tiling.lanes;
  Value lastKey = sub(sk, idx(1));
  forLoop(idx(0), validKeys, idx(mk), [&](Value jj0) {
    // Key rows past the end repeat the last key; their scores are never read.
    SmallVector<Value> keyRows;
    for (int64_t r = 0; r < mk; ++r)
      keyRows.push_back(min(add(j0, add(jj0, idx(r))), lastKey));
    for (int64_t v0 = 0; v0 < queryBlocks; v0 += tiling.queryVectors) {
      int64_t nq = std::min(tiling.queryVectors, queryBlocks - v0);
      SmallVector<Value> init(mk * nq, splat(fconst(0.0)));
      int64_t steps = bf16 ? llvm::divideCeil(headDim, 2) : headDim;
      auto loop = scf::ForOp::create(
          b, loc, idx(0), idx(steps), idx(1), init,
          [&](OpBuilder &nested, Location, Value d, ValueRange c) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(nested.getBlock());
            if (bf16) {
              // Pairs of head dims per lane: 2 products per vdpbf16ps lane.
              auto pairType =
                  VectorType::get({2 * tiling.lanes}, b.getBF16Type());
              SmallVector<Value> queries;
              for (int64_t n = 0; n < nq; ++n)
                queries.push_back(vector::LoadOp::create(
                    b, loc, pairType, queryPairs,
                    ValueRange{d, idx(2 * (v0 + n) * tiling.lanes)}));
              SmallVector<Value> next;
              for (int64_t r = 0; r < mk; ++r) {
                Value key = broadcastPair(keyPairs, {add(jj0, idx(r)), d});
                for (int64_t n = 0; n < nq; ++n)
                  next.push_back(dotBF16(c[r * nq + n], key, queries[n]));
              }
              scf::YieldOp::create(b, loc, next);
              return;
            }
            SmallVector<Value> queries;
            for (int64_t n = 0; n < nq; ++n)
              queries.push_back(
                  loadVector(queriesT, {d, idx((v0 + n) * tiling.lanes)}));
            SmallVector<Value> next;
            for (int64_t r = 0; r < mk; ++r) {
              Value key = splat(
                  widensKeys()
                      ? memref::LoadOp::create(b, loc, wideKeys,
                                               ValueRange{add(jj0, idx(r)), d})
                            .getResult()
                      : memref::LoadOp::create(b, loc, k,
                                               ValueRange{keyRows[r], d})
                            .getResult());
              for (int64_t n = 0; n < nq; ++n)
                next.push_back(vector::FMAOp::create(b, loc, key, queries[n],
                                                     c[r * nq + n]));
            }
            scf::YieldOp::create(b, loc, next);
          });
      for (int64_t r = 0; r < mk; ++r)
        for (int64_t n = 0; n < nq; ++n)
          storeVector(loop.getResult(r * nq + n), scores,
                      {add(jj0, idx(r)), idx((v0 + n) * tiling.lanes)});
    }
  });
}

Value FlashAttentionEmitter::maskBatchOffset() {
  Value offset = idx(0);
  for (int64_t d = 0; d < batchDims; ++d)
    offset = add(offset, mul(batchIndex[d], maskLayout.strides[d]));
  return offset;
}

Value FlashAttentionEmitter::gatherMask(Value queries, Value validQueries,
                                        Value j) {
  // Lanes are queries: consecutive lanes are a mask row apart.
  Type maskElement = cast<MemRefType>(mask.getType()).getElementType();
  auto indexVector = VectorType::get({tiling.lanes}, b.getIndexType());
  Value base = add(maskBatchOffset(), mul(j, maskColumnStride));
  auto resultType = VectorType::get({tiling.lanes}, maskElement);
  // A mask that broadcasts over the queries (a padding mask [batch, 1, 1,
  // Sk]) has one value per key: one load, broadcast to the lanes. A gather
  // of 16 equal addresses cost as much as 16 loads, per key and query
  // vector. Lanes past the valid queries take the same value; their
  // results are never stored.
  if (std::optional<int64_t> rowStride = getConstantIntValue(maskRowStride);
      rowStride && *rowStride == 0)
    return vector::BroadcastOp::create(
        b, loc, resultType,
        memref::LoadOp::create(b, loc, mask, ValueRange{base}));
  Value offsets = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc, queries,
          vector::BroadcastOp::create(b, loc, indexVector, maskRowStride)),
      vector::BroadcastOp::create(b, loc, indexVector, base));
  Value passthru = maskIsBoolean
                       ? arith::ConstantOp::create(
                             b, loc, DenseElementsAttr::get(resultType, false))
                             .getResult()
                       : splat(fconst(0.0));
  return vector::GatherOp::create(b, loc, resultType, mask, ValueRange{idx(0)},
                                  offsets, laneMask(validQueries), passthru);
}

void FlashAttentionEmitter::emitOnlineSoftmax(Value i0, Value j0,
                                              Value validKeys) {
  Value negInfVector = splat(fconst(-std::numeric_limits<double>::infinity()));
  auto indexVector = VectorType::get({tiling.lanes}, b.getIndexType());
  for (int64_t n = 0; n < tiling.blockQ / tiling.lanes; ++n) {
    OpBuilder::InsertionGuard guard(b);
    skipPastQueries(n * tiling.lanes);
    Value lane0 = idx(n * tiling.lanes);
    Value firstQuery = add(i0, lane0);
    Value queries = arith::AddIOp::create(
        b, loc, vector::StepOp::create(b, loc, indexVector),
        vector::BroadcastOp::create(b, loc, indexVector, firstQuery));
    // The queries' positions among the keys (causal visibility).
    Value positions = arith::AddIOp::create(
        b, loc, queries,
        vector::BroadcastOp::create(b, loc, indexVector, queryOffset));
    Value validQueries = sub(sq, firstQuery);
    bool needsMasking = mask || op.getCausal();
    // Causal: keys past the vector's last query are masked for all its
    // lanes. The P V kernel reads keys up to the last query of its micro-row
    // group, which may reach into the next vector: cover those too.
    Value keys = visibleKeys(
        j0, validKeys,
        add(firstQuery, idx(tiling.lanes - 1 + tiling.microRows - 1)));

    // Column max over the block's keys, applying masks on the way.
    auto maxLoop = scf::ForOp::create(
        b, loc, idx(0), keys, idx(1), ValueRange{negInfVector},
        [&](OpBuilder &nested, Location, Value jj, ValueRange iter) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(nested.getBlock());
          Value s = loadVector(scores, {jj, lane0});
          if (needsMasking) {
            Value key = add(j0, jj);
            if (mask) {
              Value m = gatherMask(queries, validQueries, key);
              s = maskIsBoolean
                      ? arith::SelectOp::create(b, loc, m, negInfVector, s)
                            .getResult()
                      : arith::AddFOp::create(b, loc, s, m).getResult();
            }
            if (op.getCausal()) {
              Value keyVector =
                  vector::BroadcastOp::create(b, loc, indexVector, key);
              Value visible = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ule, keyVector, positions);
              // Sliding window: position - key < window.
              if (std::optional<int64_t> window = op.getWindow())
                visible = arith::AndIOp::create(
                    b, loc, visible,
                    arith::CmpIOp::create(
                        b, loc, arith::CmpIPredicate::ult, positions,
                        vector::BroadcastOp::create(b, loc, indexVector,
                                                    add(key, idx(*window)))));
              s = arith::SelectOp::create(b, loc, visible, s, negInfVector);
            }
            storeVector(s, scores, {jj, lane0});
          }
          scf::YieldOp::create(b, loc, runningMax(iter[0], s));
        });
    Value maxOld = loadVector(rowMax, {lane0});
    Value maxNew = runningMax(maxOld, maxLoop.getResult(0));
    // While every key so far is masked, subtract 0 instead of -inf so that
    // exp gives 0 rather than NaN.
    Value allMasked = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            maxNew, negInfVector);
    Value pivot =
        arith::SelectOp::create(b, loc, allMasked, splat(fconst(0.0)), maxNew);
    Value correction = math::ExpOp::create(
        b, loc, arith::SubFOp::create(b, loc, maxOld, pivot));
    Value blockSum;
    if (bf16) {
      blockSum = emitProbabilityPairs(lane0, keys, pivot);
    } else {
      auto sumLoop = scf::ForOp::create(
          b, loc, idx(0), keys, idx(1), ValueRange{splat(fconst(0.0))},
          [&](OpBuilder &nested, Location, Value jj, ValueRange iter) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(nested.getBlock());
            Value p = math::ExpOp::create(
                b, loc,
                arith::SubFOp::create(b, loc, loadVector(scores, {jj, lane0}),
                                      pivot));
            storeVector(p, scores, {jj, lane0});
            scf::YieldOp::create(
                b, loc, arith::AddFOp::create(b, loc, iter[0], p).getResult());
          });
      blockSum = sumLoop.getResult(0);
    }
    Value sumOld = loadVector(rowSum, {lane0});
    storeVector(arith::AddFOp::create(
                    b, loc, arith::MulFOp::create(b, loc, sumOld, correction),
                    blockSum),
                rowSum, {lane0});
    storeVector(maxNew, rowMax, {lane0});
    storeVector(correction, rowScale, {lane0});
  }
}

void FlashAttentionEmitter::emitAccumulate(Value i0, Value j0, Value rows,
                                           Value validKeys) {
  int64_t mr = tiling.microRows;
  forLoop(idx(0), rows, idx(mr), [&](Value r0) {
    // Causal: keys past the group's last query contribute exp(-inf) = 0.
    Value keys = visibleKeys(j0, validKeys, add(i0, add(r0, idx(mr - 1))));
    for (int64_t c0 = 0; c0 < valueVectors; c0 += tiling.valueVectors) {
      int64_t nv = std::min(tiling.valueVectors, valueVectors - c0);
      SmallVector<Value> init;
      for (int64_t r = 0; r < mr; ++r) {
        Value row = add(r0, idx(r));
        Value correction =
            splat(memref::LoadOp::create(b, loc, rowScale, ValueRange{row}));
        for (int64_t n = 0; n < nv; ++n)
          init.push_back(arith::MulFOp::create(
              b, loc, loadVector(acc, {row, idx((c0 + n) * tiling.lanes)}),
              correction));
      }
      // bf16: pairs of keys per lane (the second past the visible keys has
      // probability 0 in every row of the group).
      Value steps = bf16 ? arith::DivUIOp::create(
                               b, loc, add(max(keys, idx(0)), idx(1)), idx(2))
                               .getResult()
                         : keys;
      auto loop = scf::ForOp::create(
          b, loc, idx(0), steps, idx(1), init,
          [&](OpBuilder &nested, Location, Value j, ValueRange c) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(nested.getBlock());
            if (bf16) {
              auto pairType =
                  VectorType::get({2 * tiling.lanes}, b.getBF16Type());
              SmallVector<Value> values;
              for (int64_t n = 0; n < nv; ++n)
                values.push_back(vector::LoadOp::create(
                    b, loc, pairType, valuePairs,
                    ValueRange{j, idx(2 * (c0 + n) * tiling.lanes)}));
              SmallVector<Value> next;
              for (int64_t r = 0; r < mr; ++r) {
                Value p = broadcastPair(probabilityPairs, {j, add(r0, idx(r))});
                for (int64_t n = 0; n < nv; ++n)
                  next.push_back(dotBF16(c[r * nv + n], p, values[n]));
              }
              scf::YieldOp::create(b, loc, next);
              return;
            }
            Value key = add(j0, j);
            SmallVector<Value> values;
            for (int64_t n = 0; n < nv; ++n) {
              int64_t column = (c0 + n) * tiling.lanes;
              values.push_back(widen(loadRow(v, {key, idx(column)},
                                             column + tiling.lanes <= valueDim
                                                 ? Value()
                                                 : idx(valueDim - column))));
            }
            SmallVector<Value> next;
            for (int64_t r = 0; r < mr; ++r) {
              Value p = splat(memref::LoadOp::create(
                  b, loc, scores, ValueRange{j, add(r0, idx(r))}));
              for (int64_t n = 0; n < nv; ++n)
                next.push_back(
                    vector::FMAOp::create(b, loc, p, values[n], c[r * nv + n]));
            }
            scf::YieldOp::create(b, loc, next);
          });
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t n = 0; n < nv; ++n)
          storeVector(loop.getResult(r * nv + n), acc,
                      {add(r0, idx(r)), idx((c0 + n) * tiling.lanes)});
    }
  });
}

void FlashAttentionEmitter::emitStoreOutput(Value i0, Value rows) {
  forLoop(idx(0), rows, idx(1), [&](Value r) {
    Value sum = memref::LoadOp::create(b, loc, rowSum, ValueRange{r});
    Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, sum,
                                        fconst(0.0));
    Value inverse = arith::SelectOp::create(
        b, loc, empty, fconst(0.0),
        arith::DivFOp::create(b, loc, fconst(1.0), sum));
    Value inverseVector = splat(inverse);
    Value i = add(i0, r);
    for (int64_t n = 0; n < valueVectors; ++n) {
      int64_t column = n * tiling.lanes;
      Value out = arith::MulFOp::create(
          b, loc, loadVector(acc, {r, idx(column)}), inverseVector);
      if (column + tiling.lanes <= valueDim)
        storeVector(out, o, {i, idx(column)});
      else
        vector::MaskedStoreOp::create(b, loc, o, ValueRange{i, idx(column)},
                                      laneMask(idx(valueDim - column)), out);
    }
  });
}
} // namespace

/// Register-resident micro-kernels: AVX-512 has 32 vector registers, so
/// 4 rows x 4 vectors of accumulators plus operands fit; AVX2 and SSE have
/// 16, so 4 x 2. Query blocks of 64 rows amortize packing the key tile.
FlashAttentionTiling
mlir::tfm::defaultFlashAttentionTiling(int64_t vectorBits,
                                       unsigned elementBits) {
  FlashAttentionTiling t;
  t.lanes = vectorBits / elementBits;
  t.microRows = 4;
  t.keyVectors = vectorBits == 512 ? 4 : 2;
  t.valueVectors = vectorBits == 512 ? 4 : 2;
  t.queryVectors = vectorBits == 512 ? 4 : 2;
  t.blockQ = 64;
  t.taskBlockQ = t.blockQ;
  return t;
}

LogicalResult mlir::tfm::emitFlashAttention(
    AttentionOp op, ArrayRef<KernelVariant> variants,
    function_ref<FlashAttentionTiling(const KernelVariant &)> tilingOf,
    OpBuilder &at, bool roundToBF16) {
  FlashAttentionTiling partition = tilingOf(variants.back());
  FlashAttentionEmitter call(op, partition, at);
  if (failed(call.check()))
    return failure();
  SmallVector<Type> types(op->getOperandTypes());
  types.append(2, at.getIndexType());
  OpBuilder before(op->getParentOfType<func::FuncOp>());
  FailureOr<func::FuncOp> task = createMultiversionTask(
      before, op.getLoc(), "__tfm_task_attention_", types, variants,
      [&](const KernelVariant &variant, func::FuncOp body) {
        FlashAttentionTiling tiling = tilingOf(variant);
        assert(tiling.taskBlockQ == partition.taskBlockQ &&
               "every variant's tasks must be the same");
        OpBuilder inside = OpBuilder::atBlockBegin(&body.front());
        bool bf16 =
            roundToBF16 && variant.bf16Dot && tiling.lanes == 16 &&
            cast<ShapedType>(op.getQuery().getType()).getElementType().isF32();
        bool amx = bf16 && variant.amx;
        return FlashAttentionEmitter(op, tiling, inside, bf16 && !amx, amx)
            .emitTaskBody(body);
      });
  if (failed(task))
    return failure();
  SmallVector<Value> args(op->getOperands());
  args.push_back(arith::ConstantIndexOp::create(at, op.getLoc(), 0));
  args.push_back(call.countTasks());
  func::CallOp::create(at, op.getLoc(), *task, args);
  return success();
}
