//===- AmxAttention.cpp - QK^T and PV of flash attention on AMX -----------===//
//
// See AmxAttention.h. Every product is 2 x 2 C tiles (32 x 32 f32; one row
// of C tiles where a value dim has an odd number of 16-row tiles) with two
// A and two B tiles: the eight tile registers.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/AttentionToCPU/AmxAttention.h"
#include "compiler/Conversion/Common/IndexArith.h"
#include "compiler/Conversion/KernelVariants/AmxTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tfm;

int64_t mlir::tfm::amxAttentionHeadDim(int64_t headDim) {
  return llvm::alignTo(headDim, kAmxTileBytes / 2);
}

int64_t mlir::tfm::amxAttentionValueDim(int64_t valueDim) {
  return llvm::alignTo(valueDim, kAmxTileRows);
}

namespace {
/// 16 lanes of f32: a tile row of C, a row of a 16 x 16 transposed block.
constexpr int64_t kLanes = 16;

class Emitter : public IndexArith<Emitter> {
  friend class IndexArith<Emitter>;

public:
  Emitter(OpBuilder &b, Location loc, const AmxAttentionTiles &t)
      : b(b), loc(loc), t(t), amx(b, loc, AmxDot::BF16) {}

  void scores(Value validKeys, Value rows);
  void packValues(Value v, int64_t valueDim, Value j0, Value validKeys);
  void accumulate(Value rowScale, Value validKeys, Value rows);
  void storeOutput(Value rowSum, Value o, int64_t valueDim, Value i0,
                   Value rows);

private:
  VectorType f32Vector() { return VectorType::get({kLanes}, b.getF32Type()); }
  Value zeros() {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(f32Vector(), b.getF32FloatAttr(0.0f)));
  }
  void skipPast(int64_t first, Value rows) {
    emitSkipPastRows(b, loc, idx(first), rows);
  }
  Value laneMask(int64_t lanes) {
    return vector::CreateMaskOp::create(
        b, loc, VectorType::get({kLanes}, b.getI1Type()),
        ValueRange{idx(lanes)});
  }
  /// `rows` (16 vectors of 16 f32) transposed through registers
  /// (convert-attention-to-cpu lowers the transpose to shuffles).
  SmallVector<Value> transposed(ArrayRef<Value> rows) {
    auto blockType = VectorType::get({kLanes, kLanes}, b.getF32Type());
    Value block = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(blockType, b.getF32FloatAttr(0.0f)));
    for (auto [r, row] : llvm::enumerate(rows))
      block = vector::InsertOp::create(b, loc, row, block, int64_t(r));
    Value flipped =
        vector::TransposeOp::create(b, loc, block, ArrayRef<int64_t>{1, 0});
    SmallVector<Value> columns;
    for (int64_t c = 0; c < kLanes; ++c)
      columns.push_back(vector::ExtractOp::create(b, loc, flipped, c));
    return columns;
  }

  OpBuilder &b;
  Location loc;
  const AmxAttentionTiles &t;
  AmxTiles amx;
};

void Emitter::scores(Value validKeys, Value rows) {
  // Per 32 keys and 32 queries: 2 x 2 C tiles over the head dims' K tiles.
  int64_t keyRow = t.headDim * 2, queryRow = t.blockQ * 4;
  Value keyStride = amx.stride(keyRow), queryStride = amx.stride(queryRow);
  Value keys = amx.addressOf(t.keys), queries = amx.addressOf(t.queries);
  Value scores = amx.addressOf(t.scores);
  int64_t dimTiles = t.headDim / (kAmxTileBytes / 2);
  forLoop(idx(0), ceilDiv(validKeys, idx(2 * kAmxTileRows)), idx(1),
          [&](Value group) {
            Value firstKey = mul(group, idx(2 * kAmxTileRows));
            int64_t queryTiles = t.blockQ / kLanes;
            for (int64_t q0 = 0; q0 < queryTiles; q0 += 2) {
              int64_t nc = std::min<int64_t>(2, queryTiles - q0);
              OpBuilder::InsertionGuard guard(b);
              skipPast(q0 * kLanes, rows);
              auto a = [&](int64_t r, Value dt) {
                return add(keys, add(mul(add(firstKey, idx(r * kAmxTileRows)),
                                         idx(keyRow)),
                                     mul(dt, idx(kAmxTileBytes))));
              };
              auto bt = [&](int64_t c, Value dt) {
                return add(queries, add(mul(dt, idx(kAmxTileRows * queryRow)),
                                        idx((q0 + c) * kAmxTileBytes)));
              };
              SmallVector<Value> c;
              for (int64_t i = 0; i < 2 * nc; ++i)
                c.push_back(amx.zero());
              c = amx.steps(c, 2, nc, idx(0), idx(dimTiles), dimTiles, a,
                            keyStride, bt, queryStride);
              for (int64_t r = 0; r < 2; ++r)
                for (int64_t col = 0; col < nc; ++col)
                  amx.store(
                      c[r * nc + col],
                      add(scores, add(mul(add(firstKey, idx(r * kAmxTileRows)),
                                          idx(queryRow)),
                                      idx((q0 + col) * kAmxTileBytes))),
                      queryStride);
            }
          });
}

void Emitter::packValues(Value v, int64_t valueDim, Value j0, Value validKeys) {
  // 16 keys x 16 dims at a time: 16 rows of V loaded (zeros past the
  // block's keys, whose probabilities are 0, and past Dv), transposed, each row
  // (one dim of 16 keys) rounded and stored.
  auto bf16Vector = VectorType::get({kLanes}, b.getBF16Type());
  // A bf16/f16 cache's rows are loaded as they are and widened (the
  // transpose runs on f32 lanes).
  auto loadType =
      VectorType::get({kLanes}, cast<MemRefType>(v.getType()).getElementType());
  Value loadZeros = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(loadType,
                             b.getFloatAttr(loadType.getElementType(), 0.0)));
  Value lastKey = sub(validKeys, idx(1));
  // The whole tiles of 32 keys the products read.
  Value keys =
      mul(ceilDiv(validKeys, idx(kAmxTileBytes / 2)), idx(kAmxTileBytes / 2));
  forLoop(idx(0), keys, idx(kLanes), [&](Value k0) {
    for (int64_t c0 = 0; c0 < t.valueDim; c0 += kLanes) {
      SmallVector<Value> rows;
      for (int64_t r = 0; r < kLanes; ++r) {
        Value key = add(k0, idx(r));
        Value row = add(j0, min(key, lastKey));
        Value x = c0 + kLanes <= valueDim
                      ? vector::LoadOp::create(b, loc, loadType, v,
                                               ValueRange{row, idx(c0)})
                            .getResult()
                      : vector::MaskedLoadOp::create(
                            b, loc, loadType, v, ValueRange{row, idx(c0)},
                            laneMask(valueDim - c0), loadZeros)
                            .getResult();
        if (loadType != f32Vector())
          x = arith::ExtFOp::create(b, loc, f32Vector(), x);
        Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                             key, validKeys);
        rows.push_back(arith::SelectOp::create(b, loc, inside, x, zeros()));
      }
      SmallVector<Value> columns = transposed(rows);
      for (int64_t c = 0; c < kLanes; ++c)
        vector::StoreOp::create(
            b, loc, arith::TruncFOp::create(b, loc, bf16Vector, columns[c]),
            t.valuesT, ValueRange{idx(c0 + c), k0});
    }
  });
}

void Emitter::accumulate(Value rowScale, Value validKeys, Value rows) {
  // The correction of the running max, per query (lanes) for every row.
  SmallVector<Value> scale;
  for (int64_t n = 0; n < t.blockQ / kLanes; ++n)
    scale.push_back(vector::LoadOp::create(b, loc, f32Vector(), rowScale,
                                           ValueRange{idx(n * kLanes)}));
  forLoop(idx(0), idx(t.valueDim), idx(1), [&](Value c) {
    for (int64_t n = 0; n < t.blockQ / kLanes; ++n) {
      SmallVector<Value> at{c, idx(n * kLanes)};
      Value x = vector::LoadOp::create(b, loc, f32Vector(), t.accT, at);
      vector::StoreOp::create(
          b, loc, arith::MulFOp::create(b, loc, x, scale[n]), t.accT, at);
    }
  });
  // accT[16 dims, 16 queries] += V^T[16 dims, 32 keys] . Pt pairs[16, 16].
  int64_t valueRow = t.blockK * 2, queryRow = t.blockQ * 4;
  Value valueStride = amx.stride(valueRow), queryStride = amx.stride(queryRow);
  Value values = amx.addressOf(t.valuesT);
  Value probabilities = amx.addressOf(t.probabilities);
  Value accT = amx.addressOf(t.accT);
  Value keyTiles = ceilDiv(validKeys, idx(kAmxTileBytes / 2));
  int64_t rowTiles = t.valueDim / kAmxTileRows;
  int64_t unroll = t.blockK / (kAmxTileBytes / 2);
  for (int64_t r0 = 0; r0 < rowTiles; r0 += 2) {
    int64_t nr = std::min<int64_t>(2, rowTiles - r0);
    int64_t queryTiles = t.blockQ / kLanes;
    for (int64_t q0 = 0; q0 < queryTiles; q0 += 2) {
      int64_t nc = std::min<int64_t>(2, queryTiles - q0);
      OpBuilder::InsertionGuard guard(b);
      skipPast(q0 * kLanes, rows);
      auto cAt = [&](int64_t r, int64_t col) {
        return add(accT, idx((r0 + r) * kAmxTileRows * queryRow +
                             (q0 + col) * kAmxTileBytes));
      };
      auto a = [&](int64_t r, Value kt) {
        return add(values, add(idx((r0 + r) * kAmxTileRows * valueRow),
                               mul(kt, idx(kAmxTileBytes))));
      };
      auto bt = [&](int64_t col, Value kt) {
        return add(probabilities, add(mul(kt, idx(kAmxTileRows * queryRow)),
                                      idx((q0 + col) * kAmxTileBytes)));
      };
      SmallVector<Value> c;
      for (int64_t r = 0; r < nr; ++r)
        for (int64_t col = 0; col < nc; ++col)
          c.push_back(amx.load(cAt(r, col), queryStride));
      c = amx.steps(c, nr, nc, idx(0), keyTiles, unroll, a, valueStride, bt,
                    queryStride);
      for (int64_t r = 0; r < nr; ++r)
        for (int64_t col = 0; col < nc; ++col)
          amx.store(c[r * nc + col], cAt(r, col), queryStride);
    }
  }
}

void Emitter::storeOutput(Value rowSum, Value o, int64_t valueDim, Value i0,
                          Value rows) {
  forLoop(
      idx(0), mul(ceilDiv(rows, idx(kLanes)), idx(kLanes)), idx(kLanes),
      [&](Value q0) {
        Value sum =
            vector::LoadOp::create(b, loc, f32Vector(), rowSum, ValueRange{q0});
        Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE,
                                            sum, zeros());
        Value one = arith::ConstantOp::create(
            b, loc,
            DenseElementsAttr::get(f32Vector(), b.getF32FloatAttr(1.0f)));
        Value inverse = arith::SelectOp::create(
            b, loc, empty, zeros(), arith::DivFOp::create(b, loc, one, sum));
        for (int64_t c0 = 0; c0 < t.valueDim; c0 += kLanes) {
          SmallVector<Value> dims;
          for (int64_t c = 0; c < kLanes; ++c)
            dims.push_back(arith::MulFOp::create(
                b, loc,
                vector::LoadOp::create(b, loc, f32Vector(), t.accT,
                                       ValueRange{idx(c0 + c), q0}),
                inverse));
          SmallVector<Value> queries = transposed(dims);
          for (int64_t r = 0; r < kLanes; ++r) {
            Value query = add(q0, idx(r));
            Value inside = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::slt, query, rows);
            auto ifInside = scf::IfOp::create(b, loc, inside, false);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(ifInside.thenBlock()->getTerminator());
            SmallVector<Value> at{add(i0, query), idx(c0)};
            if (c0 + kLanes <= valueDim)
              vector::StoreOp::create(b, loc, queries[r], o, at);
            else
              vector::MaskedStoreOp::create(
                  b, loc, o, at, laneMask(valueDim - c0), queries[r]);
          }
        }
      });
}
} // namespace

void mlir::tfm::emitAmxScores(OpBuilder &b, Location loc,
                              const AmxAttentionTiles &t, Value validKeys,
                              Value rows) {
  Emitter(b, loc, t).scores(validKeys, rows);
}

void mlir::tfm::emitSkipPastRows(OpBuilder &b, Location loc, Value first,
                                 Value rows) {
  auto active = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, first, rows),
      /*withElseRegion=*/false);
  b.setInsertionPoint(active.thenBlock()->getTerminator());
}

void mlir::tfm::emitAmxPackValues(OpBuilder &b, Location loc,
                                  const AmxAttentionTiles &t, Value v,
                                  int64_t valueDim, Value j0, Value validKeys) {
  Emitter(b, loc, t).packValues(v, valueDim, j0, validKeys);
}

void mlir::tfm::emitAmxAccumulate(OpBuilder &b, Location loc,
                                  const AmxAttentionTiles &t, Value rowScale,
                                  Value validKeys, Value rows) {
  Emitter(b, loc, t).accumulate(rowScale, validKeys, rows);
}

void mlir::tfm::emitAmxStoreOutput(OpBuilder &b, Location loc,
                                   const AmxAttentionTiles &t, Value rowSum,
                                   Value o, int64_t valueDim, Value i0,
                                   Value rows) {
  Emitter(b, loc, t).storeOutput(rowSum, o, valueDim, i0, rows);
}
