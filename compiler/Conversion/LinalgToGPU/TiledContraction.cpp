//===- TiledContraction.cpp - Contractions as shared-memory tiled GEMMs ---===//
//
// A contraction (matmul, batch_matmul, a linear layer's generic with its
// weight [N, K]) with one M, one N and one K loop becomes a tiled GEMM:
//
//   grid (ceil(N / BN), ceil(M / BM), batch), block (tn, tm) threads,
//   BM = 4*tm, BN = 4*tn, each thread a 4 x 4 patch of C in registers:
//   acc = C[patch]                                  (linalg: C += A B)
//   for k0 < K step BK:
//     As[BK][BM] = A[m0 : m0+BM, k0 : k0+BK]^T       (strided over the
//     Bs[BK][BN] = B[k0 : k0+BK, n0 : n0+BN]          threads; zeros
//                                          sync        outside)
//     for kk < BK: acc[i][j] = body(As[kk][4ty+i], Bs[kk][4tx+j], acc[i][j])
//                                          sync
//   C[patch] = acc
//
// Each element loaded into shared memory is used BM (or BN) times, against
// once per output for the one-thread-per-output kernel. The op's own body
// is applied (mulf + addf for f32), so any contraction region works.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/LinalgToGPU/TiledContraction.h"
#include "compiler/Conversion/Common/IndexArith.h"
#include "compiler/Conversion/LinalgToGPU/ContractionFusion.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace {
constexpr int64_t kPatch = 4; ///< each thread's outputs along M and along N
constexpr int64_t kBlockK = 16;

class TiledContractionEmitter : mlir::tfm::IndexArith<TiledContractionEmitter> {
  friend class mlir::tfm::IndexArith<TiledContractionEmitter>;

public:
  TiledContractionEmitter(RewriterBase &b, linalg::LinalgOp op,
                          const linalg::ContractionDimensions &dims,
                          int64_t threadsM, int64_t threadsN,
                          const tfm::ContractionFusion &fusion)
      : b(b), op(op), dims(dims), loc(op.getLoc()), tm(threadsM), tn(threadsN),
        fusion(fusion) {}

  void emit();

private:
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  /// Operand `operand`'s indices at the loop indices `ivs`.
  SmallVector<Value> indicesOf(OpOperand &operand, ArrayRef<Value> ivs) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<Value> indices;
    for (AffineExpr e : map.getResults())
      indices.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
    return indices;
  }
  Value ifLoad(Value cond, OpOperand &operand, ArrayRef<Value> ivs, Type type) {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, cond, true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value v =
        memref::LoadOp::create(b, loc, operand.get(), indicesOf(operand, ivs));
    scf::YieldOp::create(b, loc, v);
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(
        b, loc,
        ValueRange{arith::ConstantOp::create(b, loc, b.getZeroAttr(type))});
    return ifOp.getResult(0);
  }
  /// The op's body on (a, b, acc).
  Value body(Value a, Value bv, Value acc) {
    Block *block = op.getBlock();
    IRMapping map;
    map.map(block->getArgument(0), a);
    map.map(block->getArgument(1), bv);
    map.map(block->getArgument(2), acc);
    for (Operation &o : block->without_terminator())
      b.clone(o, map);
    return map.lookup(block->getTerminator()->getOperand(0));
  }
  /// Sets the M loops of `ivs` to row `row` of the flattened M loops.
  void setRow(SmallVectorImpl<Value> &ivs, Value row) {
    if (dims.m.size() == 1) {
      ivs[dims.m.front()] = row;
      return;
    }
    auto split = affine::AffineDelinearizeIndexOp::create(b, loc, row, mSizes);
    for (auto [d, v] : llvm::zip(dims.m, split.getResults()))
      ivs[d] = v;
  }
  template <typename Fn> void stridedLoop(Value tid, int64_t count, Fn fn) {
    scf::ForOp::create(b, loc, tid, idx(count), idx(tm * tn), ValueRange{},
                       [&](OpBuilder &nested, Location, Value iv, ValueRange) {
                         OpBuilder::InsertionGuard guard(b);
                         b.setInsertionPointToStart(nested.getBlock());
                         fn(iv);
                         scf::YieldOp::create(b, loc);
                       });
  }

  RewriterBase &b;
  linalg::LinalgOp op;
  linalg::ContractionDimensions dims;
  Location loc;
  int64_t tm, tn;
  const tfm::ContractionFusion &fusion;
  SmallVector<OpFoldResult> mSizes;
};

void TiledContractionEmitter::emit() {
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  auto size = [&](unsigned loop) {
    return getValueOrCreateConstantIndexOp(b, loc, ranges[loop].size);
  };
  unsigned nLoop = dims.n.front(), kLoop = dims.k.front();
  Value n = size(nLoop), k = size(kLoop);
  // Several M loops (a linear layer over [batch, seq, K]) are one row
  // index, delinearized where an operand is addressed.
  Value m = idx(1);
  for (unsigned d : dims.m) {
    mSizes.push_back(ranges[d].size);
    m = mul(m, size(d));
  }
  SmallVector<OpFoldResult> batchSizes;
  Value batch = idx(1);
  for (unsigned d : dims.batch) {
    batchSizes.push_back(ranges[d].size);
    batch = mul(batch, size(d));
  }
  int64_t bm = kPatch * tm, bn = kPatch * tn;
  Value gridX = arith::CeilDivUIOp::create(b, loc, n, idx(bn));
  Value gridY = arith::CeilDivUIOp::create(b, loc, m, idx(bm));
  // An empty problem still launches one idle block: a zero grid is invalid.
  auto atLeastOne = [&](Value v) {
    return arith::MaxUIOp::create(b, loc, v, idx(1)).getResult();
  };
  Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  auto shared =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  SmallVector<Type> tiles = {
      MemRefType::get({kBlockK * bm}, element, MemRefLayoutAttrInterface{},
                      shared),
      MemRefType::get({kBlockK * bn}, element, MemRefLayoutAttrInterface{},
                      shared)};
  auto launch = gpu::LaunchOp::create(
      b, loc, atLeastOne(gridX), atLeastOne(gridY), atLeastOne(batch), idx(tn),
      idx(tm), idx(1), nullptr, nullptr, ValueRange{}, tiles);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Operation *terminator = gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(terminator);
  Value aTile = launch.getWorkgroupAttributions()[0];
  Value bTile = launch.getWorkgroupAttributions()[1];
  Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
  Value tid = add(mul(ty, idx(tn)), tx);
  Value m0 = mul(launch.getBlockIds().y, idx(bm));
  Value n0 = mul(launch.getBlockIds().x, idx(bn));
  Value bz = launch.getBlockIds().z;
  // The whole block agrees on the condition: its barriers are reached by
  // all threads or none.
  Value inside = arith::AndIOp::create(
      b, loc, arith::AndIOp::create(b, loc, lt(m0, m), lt(n0, n)),
      lt(bz, batch));
  auto guardIf = scf::IfOp::create(b, loc, inside, false);
  b.setInsertionPoint(guardIf.thenBlock()->getTerminator());

  unsigned numLoops = op.getNumLoops();
  SmallVector<Value> ivs(numLoops, idx(0));
  if (!dims.batch.empty()) {
    auto split =
        affine::AffineDelinearizeIndexOp::create(b, loc, bz, batchSizes);
    for (auto [d, v] : llvm::zip(dims.batch, split.getResults()))
      ivs[d] = v;
  }
  OpOperand &aOperand = *op.getDpsInputOperand(0);
  OpOperand &bOperand = *op.getDpsInputOperand(1);
  OpOperand &cOperand = *op.getDpsInitOperand(0);

  SmallVector<Value> rows, cols, rowOk, colOk;
  for (int64_t i = 0; i < kPatch; ++i) {
    rows.push_back(add(m0, add(mul(ty, idx(kPatch)), idx(i))));
    cols.push_back(add(n0, add(mul(tx, idx(kPatch)), idx(i))));
    rowOk.push_back(lt(rows.back(), m));
    colOk.push_back(lt(cols.back(), n));
  }
  SmallVector<Value> acc;
  for (int64_t i = 0; i < kPatch; ++i)
    for (int64_t j = 0; j < kPatch; ++j) {
      setRow(ivs, rows[i]);
      ivs[nLoop] = cols[j];
      acc.push_back(fusion.emitInitial(
          b, loc, arith::AndIOp::create(b, loc, rowOk[i], colOk[j]),
          indicesOf(cOperand, ivs), element));
    }

  auto kLoopOp = scf::ForOp::create(
      b, loc, idx(0), k, idx(kBlockK), acc,
      [&](OpBuilder &nested, Location, Value k0, ValueRange carried) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(nested.getBlock());
        // A's tile transposed (As[kk][r]) so that the inner loop reads a
        // thread's 4 rows contiguously; consecutive threads read
        // consecutive k of a row of A.
        stridedLoop(tid, bm * kBlockK, [&](Value e) {
          Value r = arith::DivUIOp::create(b, loc, e, idx(kBlockK));
          Value kk = arith::RemUIOp::create(b, loc, e, idx(kBlockK));
          SmallVector<Value> at(ivs);
          Value row = add(m0, r);
          Value ok =
              arith::AndIOp::create(b, loc, lt(row, m), lt(add(k0, kk), k));
          // A row past M is not loaded: any in-range index will do.
          setRow(at,
                 arith::MinUIOp::create(
                     b, loc, row, arith::SubIOp::create(b, loc, m, idx(1))));
          at[kLoop] = add(k0, kk);
          memref::StoreOp::create(b, loc, ifLoad(ok, aOperand, at, element),
                                  aTile, ValueRange{add(mul(kk, idx(bm)), r)});
        });
        stridedLoop(tid, bn * kBlockK, [&](Value e) {
          Value kk = arith::DivUIOp::create(b, loc, e, idx(bn));
          Value c = arith::RemUIOp::create(b, loc, e, idx(bn));
          SmallVector<Value> at(ivs);
          at[nLoop] = add(n0, c);
          at[kLoop] = add(k0, kk);
          Value ok =
              arith::AndIOp::create(b, loc, lt(at[nLoop], n), lt(at[kLoop], k));
          memref::StoreOp::create(b, loc, ifLoad(ok, bOperand, at, element),
                                  bTile, ValueRange{add(mul(kk, idx(bn)), c)});
        });
        gpu::BarrierOp::create(b, loc);
        auto inner = scf::ForOp::create(
            b, loc, idx(0), idx(kBlockK), idx(1), carried,
            [&](OpBuilder &nested2, Location, Value kk, ValueRange sums) {
              OpBuilder::InsertionGuard g2(b);
              b.setInsertionPointToStart(nested2.getBlock());
              SmallVector<Value> as, bs, next;
              for (int64_t i = 0; i < kPatch; ++i) {
                as.push_back(memref::LoadOp::create(
                    b, loc, aTile,
                    ValueRange{add(mul(kk, idx(bm)),
                                   add(mul(ty, idx(kPatch)), idx(i)))}));
                bs.push_back(memref::LoadOp::create(
                    b, loc, bTile,
                    ValueRange{add(mul(kk, idx(bn)),
                                   add(mul(tx, idx(kPatch)), idx(i)))}));
              }
              for (int64_t i = 0; i < kPatch; ++i)
                for (int64_t j = 0; j < kPatch; ++j)
                  next.push_back(body(as[i], bs[j], sums[i * kPatch + j]));
              scf::YieldOp::create(b, loc, next);
            });
        gpu::BarrierOp::create(b, loc);
        scf::YieldOp::create(b, loc, inner.getResults());
      });

  for (int64_t i = 0; i < kPatch; ++i)
    for (int64_t j = 0; j < kPatch; ++j) {
      auto store = scf::IfOp::create(
          b, loc, arith::AndIOp::create(b, loc, rowOk[i], colOk[j]), false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(store.thenBlock()->getTerminator());
      setRow(ivs, rows[i]);
      ivs[nLoop] = cols[j];
      fusion.emitStore(b, loc, kLoopOp.getResult(i * kPatch + j),
                       indicesOf(cOperand, ivs));
    }
}

} // namespace

FailureOr<bool> mlir::tfm::convertToTiledContraction(
    RewriterBase &rewriter, linalg::LinalgOp op, int64_t threadsM,
    int64_t threadsN, SmallVectorImpl<Operation *> &fused) {
  if (threadsM < 1 || threadsN < 1 || threadsM * threadsN > 1024)
    return op->emitOpError("tiled GEMM threads must be in [1, 1024]");
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics())
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return false;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return false;
  Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (!element.isF32())
    return false;
  for (Value input : op.getDpsInputs())
    if (getElementTypeOrSelf(input.getType()) != element)
      return false;
  tfm::ContractionFusion fusion = tfm::ContractionFusion::find(op);
  rewriter.setInsertionPoint(op);
  TiledContractionEmitter(rewriter, op, *dims, threadsM, threadsN, fusion)
      .emit();
  fusion.appendFused(fused);
  fusion.eraseFused(rewriter);
  rewriter.eraseOp(op);
  return true;
}
