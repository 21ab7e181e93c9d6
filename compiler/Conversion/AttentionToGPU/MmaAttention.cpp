//===- MmaAttention.cpp - Flash attention on tensor cores -----------------===//
//
// tfm.attention with f16 or bf16 operands (rounded as they are staged) and
// f32 accumulation, in the FlashAttention-2 form: a warp owns 16 queries
// and keeps everything of them in registers.
//
//   block (bh, i0), W warps (W = 4, fewer for a static Sq < 64), Bq = 16 W:
//     Qs[Bq][Dp+8] = half(scale * Q[bh, i0 : i0+Bq, :])   (zeros outside)
//     acc = 0 (Dvp/8 n8 tiles), m = -inf, l = 0 (rows g and g+8 of the lane)
//     for j0 in key blocks of Bk keys (causal: up to the block's last query)
//       Ks[Bk][Dp+8], Vs[Bk][Dvp+8] = half(K, V[bh, j0 : j0+Bk, :])   sync
//       S = Qs[warp rows] · Ks^T        (ldmatrix A, ldmatrix B, mma.sync;
//                                        Bk/8 n8 tiles of f32 registers)
//       S = -inf where hidden (key limit, causal, mask)
//       per row: mNew = max(m, quad-max S); P = exp(S - mNew);
//                alpha = exp(m - mNew); l = l alpha + sum P (this lane's);
//                acc *= alpha
//       acc += P · Vs                   (P's accumulators are A's fragment
//                                        as they are; Vs by ldmatrix.trans)
//                                                                     sync
//     l = quad-sum l;  O[bh, i0 + row, c] = acc / l   (0 where all masked)
//
// Dp and Dvp are the head dimensions rounded up to 16 (the columns past
// them are zeros in shared memory, and output columns past Dv are not
// stored). Shared rows are padded by 8 halves, as the GEMM's, so that the
// 8 rows one ldmatrix matrix reads fall into different banks and stay
// 16-byte aligned. The lane maps are MmaLayout.h's.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/AttentionToGPU/AttentionToGPU.h"
#include "compiler/Conversion/Common/IndexArith.h"
#include "compiler/Conversion/LinalgToGPU/MmaLayout.h"
#include "compiler/Conversion/LinalgToGPU/MmaOps.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfm;
using mma::IndexBuilder;

namespace {

constexpr int64_t kMaxWarps = 4;
/// Halves of padding per shared row (see the file comment).
constexpr int64_t kPad = 8;
/// Output accumulators a lane may hold (Dvp <= 128): with the scores'
/// 32 this keeps a kernel far from the 255 registers where ptxas spills.
constexpr int64_t kMaxAccumulators = 64;

struct MmaAttentionTiles {
  int64_t warps = kMaxWarps;
  int64_t blockK = 64;
  int64_t headDim = 0, valueDim = 0;
  int64_t headPad = 0, valuePad = 0;

  int64_t blockQ() const { return warps * mma::kM; }
  int64_t sharedBytes() const {
    return 2 * (blockQ() * (headPad + kPad) + blockK * (headPad + kPad) +
                blockK * (valuePad + kPad));
  }
};

/// `queries` and `keys`: the static sequence lengths, 0 when dynamic.
FailureOr<MmaAttentionTiles> chooseTiles(int64_t headDim, int64_t valueDim,
                                         int64_t queries, int64_t keys,
                                         int64_t sharedBytes) {
  MmaAttentionTiles t;
  t.headDim = headDim;
  t.valueDim = valueDim;
  t.headPad = llvm::alignTo(headDim, mma::kK);
  t.valuePad = llvm::alignTo(valueDim, 2 * mma::kN);
  if (t.valuePad / mma::kN * 4 > kMaxAccumulators)
    return failure();
  // A decode step (a few queries) gets as many warps as it has 16-query
  // slices, not four of which three would idle.
  if (queries > 0)
    t.warps =
        std::clamp<int64_t>(llvm::divideCeil(queries, mma::kM), 1, kMaxWarps);
  // Likewise a short static key sequence gets a key block of its size:
  // score registers that can only hold -inf cost registers (and spills).
  if (keys > 0)
    t.blockK =
        std::clamp<int64_t>(llvm::alignTo(keys, mma::kK), mma::kK, t.blockK);
  while (t.sharedBytes() > sharedBytes && t.blockK > 2 * mma::kN)
    t.blockK /= 2;
  if (t.sharedBytes() > sharedBytes)
    return failure();
  return t;
}

class MmaAttentionEmitter : mlir::tfm::IndexArith<MmaAttentionEmitter> {
  friend class mlir::tfm::IndexArith<MmaAttentionEmitter>;

public:
  MmaAttentionEmitter(OpBuilder &b, AttentionOp op,
                      const MmaAttentionTiles &tiles, Type half)
      : b(b), op(op), t(tiles), loc(op.getLoc()), half(half),
        lane{&b, op.getLoc(), Value()} {}

  void emit();

private:
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value fconst(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v)));
  }
  Value fmax(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  IndexBuilder ix(Value v) { return {&b, loc, v}; }
  /// `x` combined with the other three lanes of its row's quad.
  template <typename Combine> Value quadReduce(Value x, Combine combine) {
    for (int32_t offset : {1, 2}) {
      auto shuffle = gpu::ShuffleOp::create(b, loc, x, offset, mma::kWarp,
                                            gpu::ShuffleMode::XOR);
      x = combine(x, shuffle.getShuffleResult());
    }
    return x;
  }
  /// Element (i, d) of the block's [S, D] matrix of `buffer` (a static
  /// unit batch dim read at 0: a shared K/V head).
  SmallVector<Value> at(Value buffer, Value i, Value d) {
    return sharedHeadIndices(b, loc, buffer, leading, i, d);
  }

  void emitBlock(Value i0);
  /// Stages rows [first, first + rows) of `source`'s [S, dim] matrix into
  /// `tile` ([rows][pad + kPad]) rounded to half, zeros at rows >= limit
  /// and columns >= dim; scaled first when `scale` is set.
  void emitLoadTile(Value source, Value tile, Value first, Value limit,
                    int64_t rows, int64_t dim, int64_t pad, Value scale);
  /// acc's n8 tiles `tile` and `tile` + 1 (four f32 registers each) +=
  /// a · the two B fragments of one ldmatrix.x4 (`regs`).
  void accumulateTilePair(ArrayRef<Value> a, ArrayRef<Value> regs,
                          SmallVectorImpl<Value> &acc, int64_t tile) {
    for (int64_t half8 = 0; half8 < 2; ++half8) {
      int64_t base = (tile + half8) * 4;
      SmallVector<Value> d =
          mma::emitMma(b, loc, a, regs.slice(2 * half8, 2),
                       ArrayRef<Value>(acc).slice(base, 4), half);
      std::copy(d.begin(), d.end(), acc.begin() + base);
    }
  }
  /// S = Q K^T of the warp's 16 queries and the Bk keys: Bk/8 n8 tiles of
  /// four f32 registers each.
  SmallVector<Value> emitScores();
  /// acc += P V, P the probabilities in `p` (the scores' registers).
  SmallVector<Value> emitProbabilitiesTimesValues(ArrayRef<Value> p,
                                                  ArrayRef<Value> acc);
  void emitStore(ArrayRef<Value> acc, ArrayRef<Value> sums, Value i0);

  OpBuilder &b;
  AttentionOp op;
  MmaAttentionTiles t;
  Location loc;
  Type half;
  Value sq, sk, threadId;
  IndexBuilder lane;
  Value warpRow; // the warp's first query row in the block
  SmallVector<Value> leading;
  AttentionKeyRange keys;
  Value qTile, kTile, vTile;
};

void MmaAttentionEmitter::emit() {
  AttentionGrid g = emitAttentionGrid(b, loc, op, t.blockQ());
  sq = g.sq;
  sk = g.sk;

  auto shared =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto tile = [&](int64_t rows, int64_t pad) {
    return MemRefType::get({rows, pad + kPad}, half,
                           MemRefLayoutAttrInterface{}, shared);
  };
  SmallVector<Type> tiles = {tile(t.blockQ(), t.headPad),
                             tile(t.blockK, t.headPad),
                             tile(t.blockK, t.valuePad)};
  Value one = idx(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, g.grid, one, one, idx(t.warps * mma::kWarp), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      ValueRange{}, tiles);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Operation *terminator = gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(terminator);
  qTile = launch.getWorkgroupAttributions()[0];
  kTile = launch.getWorkgroupAttributions()[1];
  vTile = launch.getWorkgroupAttributions()[2];
  threadId = launch.getThreadIds().x;
  lane = ix(threadId) % mma::kWarp;
  warpRow = (ix(threadId) / mma::kWarp * mma::kM).v;
  Value block = launch.getBlockIds().x;
  // The condition is the same for the whole block, so the barriers and
  // shuffles inside are reached by all of its threads or by none.
  auto inGrid = scf::IfOp::create(b, loc, lt(block, g.blocks),
                                  /*withElseRegion=*/false);
  b.setInsertionPoint(inGrid.thenBlock()->getTerminator());
  Value i0 = emitBlockStart(b, loc, g, block, t.blockQ(), leading);
  emitBlock(i0);
}

void MmaAttentionEmitter::emitLoadTile(Value source, Value tile, Value first,
                                       Value limit, int64_t rows, int64_t dim,
                                       int64_t pad, Value scale) {
  // Consecutive threads read consecutive elements of a row (coalesced).
  // Rows past `limit` are zeros, so that no garbage (a NaN) meets a zero
  // probability later; so are the padding columns, which add nothing to
  // a dot product.
  scf::ForOp::create(
      b, loc, threadId, idx(rows * pad), idx(t.warps * mma::kWarp),
      ValueRange{}, [&](OpBuilder &nested, Location, Value e, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(nested.getBlock());
        Value r = (ix(e) / pad).v, d = (ix(e) % pad).v;
        Value row = add(first, r);
        Value inside = lt(row, limit);
        if (dim != pad)
          inside = arith::AndIOp::create(b, loc, inside, lt(d, idx(dim)));
        auto ifOp = scf::IfOp::create(b, loc, TypeRange{half}, inside,
                                      /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          Value x = memref::LoadOp::create(b, loc, source, at(source, row, d));
          if (scale)
            x = arith::MulFOp::create(b, loc, x, scale);
          scf::YieldOp::create(
              b, loc, ValueRange{arith::TruncFOp::create(b, loc, half, x)});
          b.setInsertionPointToStart(ifOp.elseBlock());
          scf::YieldOp::create(b, loc,
                               ValueRange{arith::ConstantOp::create(
                                   b, loc, b.getZeroAttr(half))});
        }
        memref::StoreOp::create(b, loc, ifOp.getResult(0), tile,
                                ValueRange{r, d});
        scf::YieldOp::create(b, loc);
      });
}

SmallVector<Value> MmaAttentionEmitter::emitScores() {
  int64_t tilesK = t.blockK / mma::kN;
  SmallVector<Value> s(tilesK * 4, fconst(0.0));
  for (int64_t ks = 0; ks < t.headPad / mma::kK; ++ks) {
    Value aRow = add(warpRow, mma::ldmatrixARow(lane).v);
    Value aCol = (mma::ldmatrixACol(lane) + ks * mma::kK).v;
    SmallVector<Value> a =
        mma::loadFragment(b, loc, qTile, aRow, aCol, /*transpose=*/false, half);
    // Two n8 tiles of keys per ldmatrix.x4 of Ks[key][d] (K^T's columns).
    for (int64_t pair = 0; pair < tilesK / 2; ++pair) {
      Value bRow = (mma::ldmatrixBRow(lane) + pair * 2 * mma::kN).v;
      Value bCol = (mma::ldmatrixBCol(lane) + ks * mma::kK).v;
      accumulateTilePair(a,
                         mma::loadFragment(b, loc, kTile, bRow, bCol,
                                           /*transpose=*/false, half),
                         s, 2 * pair);
    }
  }
  return s;
}

SmallVector<Value>
MmaAttentionEmitter::emitProbabilitiesTimesValues(ArrayRef<Value> p,
                                                  ArrayRef<Value> acc) {
  SmallVector<Value> out(acc);
  for (int64_t kk = 0; kk < t.blockK / mma::kK; ++kk) {
    // Keys 16 kk .. 16 kk + 15 are the scores' n8 tiles 2 kk and 2 kk + 1.
    SmallVector<Value> a;
    for (int64_t reg = 0; reg < 4; ++reg) {
      int64_t base = (2 * kk + mma::accumulatorAsATile(reg)) * 4 +
                     mma::accumulatorAsAReg(reg);
      a.push_back(mma::packPair(b, loc, p[base], p[base + 1], half));
    }
    for (int64_t pair = 0; pair < t.valuePad / (2 * mma::kN); ++pair) {
      Value row = (mma::ldmatrixTransBRow(lane) + kk * mma::kK).v;
      Value col = (mma::ldmatrixTransBCol(lane) + pair * 2 * mma::kN).v;
      accumulateTilePair(
          a,
          mma::loadFragment(b, loc, vTile, row, col, /*transpose=*/true, half),
          out, 2 * pair);
    }
  }
  return out;
}

void MmaAttentionEmitter::emitBlock(Value i0) {
  Value rows = min(idx(t.blockQ()), sub(sq, i0));
  keys = emitKeyRange(b, loc, op, leading, sq, sk, i0, rows);
  emitLoadTile(op.getQuery(), qTile, i0, sq, t.blockQ(), t.headDim, t.headPad,
               fconst(op.getScale().convertToDouble()));

  // The two query rows of this lane's accumulators (registers 0, 1 and
  // 2, 3 of every n8 tile).
  std::array<Value, 2> queryRow;
  for (int64_t h = 0; h < 2; ++h)
    queryRow[h] = add(i0, add(warpRow, mma::accumulatorRow(lane, 2 * h).v));

  int64_t accCount = t.valuePad / mma::kN * 4;
  Value negInf = fconst(-std::numeric_limits<double>::infinity());
  // Carried: the accumulators, then each row's running max and this
  // lane's part of its running sum.
  SmallVector<Value> init(accCount, fconst(0.0));
  init.append({negInf, negInf, fconst(0.0), fconst(0.0)});
  auto keyLoop = scf::ForOp::create(
      b, loc, idx(0), keys.keyEnd, idx(t.blockK), init,
      [&](OpBuilder &nested, Location, Value j0, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(nested.getBlock());
        emitLoadTile(op.getKey(), kTile, j0, keys.keyLimit, t.blockK, t.headDim,
                     t.headPad, Value());
        emitLoadTile(op.getValue(), vTile, j0, keys.keyLimit, t.blockK,
                     t.valueDim, t.valuePad, Value());
        gpu::BarrierOp::create(b, loc);
        SmallVector<Value> s = emitScores();
        for (int64_t n = 0, e = s.size(); n < e; ++n) {
          int64_t tile = n / 4, reg = n % 4;
          Value key =
              add(j0, (mma::accumulatorCol(lane, reg) + tile * mma::kN).v);
          s[n] = emitMaskedScore(b, loc, op, s[n], queryRow[reg / 2], key, sq,
                                 keys, leading);
        }
        SmallVector<Value> acc(carried.take_front(accCount));
        SmallVector<Value> maxes, sums;
        for (int64_t h = 0; h < 2; ++h) {
          // This row's registers: 2h and 2h + 1 of every n8 tile.
          auto ofRow = [&](size_t n) { return int64_t(n) % 4 / 2 == h; };
          Value tileMax = negInf;
          for (size_t n = 0; n < s.size(); ++n)
            if (ofRow(n))
              tileMax = fmax(tileMax, s[n]);
          tileMax =
              quadReduce(tileMax, [&](Value x, Value y) { return fmax(x, y); });
          Value oldMax = carried[accCount + h];
          Value newMax = fmax(oldMax, tileMax);
          // A row with every key so far hidden keeps a -inf max:
          // subtracting 0 instead keeps exp(-inf - -inf) from making NaNs
          // (its probabilities are 0).
          Value allHidden = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OEQ, newMax, negInf);
          Value shift =
              arith::SelectOp::create(b, loc, allHidden, fconst(0.0), newMax);
          Value alpha = math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, oldMax, shift));
          Value sum = fconst(0.0);
          for (size_t n = 0; n < s.size(); ++n) {
            if (!ofRow(n))
              continue;
            s[n] = math::ExpOp::create(
                b, loc, arith::SubFOp::create(b, loc, s[n], shift));
            sum = arith::AddFOp::create(b, loc, sum, s[n]);
          }
          for (size_t n = 0; n < acc.size(); ++n)
            if (ofRow(n))
              acc[n] = arith::MulFOp::create(b, loc, acc[n], alpha);
          maxes.push_back(newMax);
          sums.push_back(arith::AddFOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, carried[accCount + 2 + h], alpha),
              sum));
        }
        SmallVector<Value> next = emitProbabilitiesTimesValues(s, acc);
        next.append(maxes);
        next.append(sums);
        // The tiles are read: the next key block may overwrite them.
        gpu::BarrierOp::create(b, loc);
        scf::YieldOp::create(b, loc, next);
      });
  SmallVector<Value> results(keyLoop.getResults());
  SmallVector<Value> sums;
  for (int64_t h = 0; h < 2; ++h)
    sums.push_back(quadReduce(results[accCount + 2 + h], [&](Value x, Value y) {
      return arith::AddFOp::create(b, loc, x, y).getResult();
    }));
  emitStore(ArrayRef<Value>(results).take_front(accCount), sums, i0);
}

void MmaAttentionEmitter::emitStore(ArrayRef<Value> acc, ArrayRef<Value> sums,
                                    Value i0) {
  for (auto [n, a] : llvm::enumerate(acc)) {
    int64_t tile = int64_t(n) / 4, reg = int64_t(n) % 4;
    // Columns past Dv are the padding's.
    if (tile * mma::kN >= t.valueDim)
      continue;
    Value row = add(i0, add(warpRow, mma::accumulatorRow(lane, reg).v));
    Value col = (mma::accumulatorCol(lane, reg) + tile * mma::kN).v;
    Value inside = lt(row, sq);
    if ((tile + 1) * mma::kN > t.valueDim)
      inside = arith::AndIOp::create(b, loc, inside, lt(col, idx(t.valueDim)));
    auto store = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(store.thenBlock()->getTerminator());
    Value l = sums[reg / 2];
    Value seen = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l,
                                       fconst(0.0));
    Value out = arith::SelectOp::create(
        b, loc, seen, arith::DivFOp::create(b, loc, a, l), fconst(0.0));
    memref::StoreOp::create(b, loc, out, op.getInit(),
                            at(op.getInit(), row, col));
  }
}

} // namespace

bool tfm::emitMmaFlashAttention(OpBuilder &b, AttentionOp op, Type half,
                                int64_t sharedBytes) {
  auto q = cast<MemRefType>(op.getQuery().getType());
  auto v = cast<MemRefType>(op.getValue().getType());
  int64_t headDim = q.getShape().back(), valueDim = v.getShape().back();
  if (ShapedType::isDynamic(headDim) || ShapedType::isDynamic(valueDim))
    return false;
  auto staticOrZero = [](int64_t size) {
    return ShapedType::isDynamic(size) ? 0 : size;
  };
  FailureOr<MmaAttentionTiles> tiles = chooseTiles(
      headDim, valueDim, staticOrZero(q.getShape()[q.getRank() - 2]),
      staticOrZero(v.getShape()[v.getRank() - 2]), sharedBytes);
  if (failed(tiles))
    return false;
  MmaAttentionEmitter(b, op, *tiles, half).emit();
  return true;
}
