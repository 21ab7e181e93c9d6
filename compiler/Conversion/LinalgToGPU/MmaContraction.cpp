//===- MmaContraction.cpp - Contractions as tensor-core GEMMs -------------===//
//
// A contraction (matmul, batch_matmul, a linear layer's generic with its
// weight [N, K]) in f16 or bf16 with f32 accumulation, on mma.sync:
//
//   grid (ceil(N / 64), ceil(M / 64), batch), block 128 threads = 2 x 2
//   warps, each warp a 32 x 32 tile of C = 2 x 4 m16n8k16 tiles, its
//   32 accumulators (f32) in registers:
//   acc = C[warp tile]                              (linalg: C += A B)
//   for k0 < K step 32:
//     As[64][32+8] = half(A[m0 : m0+64, k0 : k0+32])  (strided over the
//     Bs[64][32+8] = half(B[k0 : k0+32, n0 : n0+64])^T  threads; zeros
//                                          sync          outside)
//     for ks < 2: ldmatrix.x4 A (2 per warp), B (2 per warp, two n8 tiles
//                 each), 8 mma.sync m16n8k16
//                                          sync
//   C[warp tile] = acc                              (guarded at the edges)
//
// Rows of the shared tiles are padded by 8 halves (80 bytes) so that the 8
// rows one ldmatrix matrix reads fall into 8 different groups of 4 banks,
// and stay 16-byte aligned as ldmatrix requires. The lane maps of the
// fragments are in MmaLayout.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/LinalgToGPU/MmaContraction.h"
#include "compiler/Conversion/Common/IndexArith.h"
#include "compiler/Conversion/LinalgToGPU/ContractionFusion.h"
#include "compiler/Conversion/LinalgToGPU/MmaLayout.h"
#include "compiler/Conversion/LinalgToGPU/MmaOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
namespace mma = mlir::tfm::mma;
using mma::IndexBuilder;

namespace {
constexpr int64_t kBlockM = 64, kBlockN = 64, kBlockK = 32;
constexpr int64_t kWarpsM = 2, kWarpsN = 2;
constexpr int64_t kThreads = kWarpsM * kWarpsN * mma::kWarp;
constexpr int64_t kWarpM = kBlockM / kWarpsM, kWarpN = kBlockN / kWarpsN;
constexpr int64_t kTilesM = kWarpM / mma::kM, kTilesN = kWarpN / mma::kN;
/// Halves of padding per shared row (see the file comment).
constexpr int64_t kPad = 8;
/// Static N below which a contraction is not worth a tensor-core GEMM.
constexpr int64_t kMinColumns = 16;
/// Consecutive elements a thread loads into a shared tile at a time.
constexpr int64_t kRun = 8;

/// Whether `v` is block argument `index` of `block`, possibly through an
/// arith.extf (a half operand read in an f32 contraction).
bool isArgument(Value v, Block *block, unsigned index,
                SmallPtrSetImpl<Operation *> &seen) {
  if (auto ext = v.getDefiningOp<arith::ExtFOp>()) {
    seen.insert(ext);
    v = ext.getIn();
  }
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == block && arg.getArgNumber() == index;
}

/// The body is acc + a * b, in either order of each.
bool isMultiplyAdd(linalg::LinalgOp op) {
  Block *block = op.getBlock();
  auto add =
      block->getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  SmallPtrSet<Operation *, 4> seen = {add};
  Value acc = add.getLhs(), product = add.getRhs();
  if (!isa<BlockArgument>(acc))
    std::swap(acc, product);
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul || !isArgument(acc, block, 2, seen))
    return false;
  seen.insert(mul);
  bool direct = isArgument(mul.getLhs(), block, 0, seen) &&
                isArgument(mul.getRhs(), block, 1, seen);
  bool swapped = !direct && isArgument(mul.getLhs(), block, 1, seen) &&
                 isArgument(mul.getRhs(), block, 0, seen);
  return (direct || swapped) &&
         seen.size() == static_cast<size_t>(
                            std::distance(block->without_terminator().begin(),
                                          block->without_terminator().end()));
}

class MmaContractionEmitter : mlir::tfm::IndexArith<MmaContractionEmitter> {
  friend class mlir::tfm::IndexArith<MmaContractionEmitter>;

public:
  MmaContractionEmitter(RewriterBase &b, linalg::LinalgOp op,
                        const linalg::ContractionDimensions &dims, Type half,
                        const tfm::ContractionFusion &fusion)
      : b(b), op(op), dims(dims), loc(op.getLoc()), half(half), fusion(fusion) {
  }

  void emit();

private:
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  IndexBuilder ix(Value v) { return {&b, loc, v}; }
  SmallVector<Value> indicesOf(OpOperand &operand, ArrayRef<Value> ivs) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<Value> indices;
    for (AffineExpr e : map.getResults())
      indices.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
    return indices;
  }
  /// The operand at `ivs` where `cond`, else 0, as `type`: rounded right
  /// after the load, so that tfm-gpu-round-weights can see a constant read
  /// only to be rounded.
  Value ifLoad(Value cond, OpOperand &operand, ArrayRef<Value> ivs, Type type) {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, cond, true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value v =
        memref::LoadOp::create(b, loc, operand.get(), indicesOf(operand, ivs));
    if (v.getType() != type)
      v = arith::TruncFOp::create(b, loc, type, v);
    scf::YieldOp::create(b, loc, v);
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(
        b, loc,
        ValueRange{arith::ConstantOp::create(b, loc, b.getZeroAttr(type))});
    return ifOp.getResult(0);
  }
  void setRow(SmallVectorImpl<Value> &ivs, Value row) {
    if (dims.m.size() == 1) {
      ivs[dims.m.front()] = row;
      return;
    }
    auto split = affine::AffineDelinearizeIndexOp::create(b, loc, row, mSizes);
    for (auto [d, v] : llvm::zip(dims.m, split.getResults()))
      ivs[d] = v;
  }
  /// Whether the innermost index of operand `i` is the K loop (K contiguous
  /// for an identity layout): the tile loads then walk K fastest.
  bool kInnermost(unsigned i) {
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(i));
    return map.getNumResults() &&
           cast<AffineDimExpr>(map.getResults().back()).getPosition() ==
               dims.k.front();
  }
  /// Loads operand `i`'s tile of 64 rows (M or N) by 32 k into `tile`
  /// ([row][k]) in half precision, strided over the block's threads.
  void loadTile(unsigned i, Value tile, Value tid, Value k0,
                ArrayRef<Value> ivs);
  RewriterBase &b;
  linalg::LinalgOp op;
  linalg::ContractionDimensions dims;
  Location loc;
  Type half;
  const tfm::ContractionFusion &fusion;
  Value m, n, k, m0, n0;
  /// The m16 and n8 tiles of a warp (kTilesM x kTilesN, fewer for a small
  /// static M or N).
  int64_t tilesM = kTilesM, tilesN = kTilesN;
  SmallVector<OpFoldResult> mSizes;
};

void MmaContractionEmitter::loadTile(unsigned i, Value tile, Value tid,
                                     Value k0, ArrayRef<Value> ivs) {
  OpOperand &operand = *op.getDpsInputOperand(i);
  bool isA = i == 0;
  bool kFast = kInnermost(i);
  int64_t rows = isA ? kBlockM : kBlockN;
  // Each thread loads runs of kRun consecutive elements along the operand's
  // innermost dimension (row or k), so that it keeps a few run bases live
  // across the K loop instead of one address per element.
  int64_t runsPerLine = (kFast ? kBlockK : rows) / kRun;
  scf::ForOp::create(
      b, loc, tid, idx(rows * kBlockK / kRun), idx(kThreads), ValueRange{},
      [&](OpBuilder &nested, Location, Value c, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(nested.getBlock());
        Value line = (ix(c) / runsPerLine).v;
        Value start = (ix(c) % runsPerLine * kRun).v;
        for (int64_t j = 0; j < kRun; ++j) {
          Value along = add(start, idx(j));
          Value r = kFast ? line : along;
          Value kk = kFast ? along : line;
          Value kAt = add(k0, kk);
          SmallVector<Value> at(ivs);
          at[dims.k.front()] = kAt;
          Value row = add(isA ? m0 : n0, r);
          Value ok = both(lt(row, isA ? m : n), lt(kAt, k));
          // Rows past the end are not loaded (the load is under `ok`).
          if (isA)
            setRow(at, row);
          else
            at[dims.n.front()] = row;
          memref::StoreOp::create(b, loc, ifLoad(ok, operand, at, half), tile,
                                  ValueRange{r, kk});
        }
        scf::YieldOp::create(b, loc);
      });
}

void MmaContractionEmitter::emit() {
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  auto size = [&](unsigned loop) {
    return getValueOrCreateConstantIndexOp(b, loc, ranges[loop].size);
  };
  unsigned nLoop = dims.n.front();
  n = size(nLoop);
  // A static M or N smaller than a warp's tile needs fewer m16 / n8 tiles:
  // the others would only carry accumulators that are never stored (and
  // ptxas spills around such dead loop-carried fragments).
  auto tilesFor = [&](ArrayRef<unsigned> loops, int64_t tile, int64_t most) {
    int64_t extent = 1;
    for (unsigned d : loops) {
      std::optional<int64_t> c = getConstantIntValue(ranges[d].size);
      if (!c)
        return most;
      extent *= *c;
    }
    return std::clamp<int64_t>(llvm::divideCeil(extent, tile), 1, most);
  };
  tilesM = tilesFor(dims.m, mma::kM, kTilesM);
  tilesN = tilesFor(dims.n, mma::kN, kTilesN);
  k = size(dims.k.front());
  m = idx(1);
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
  auto atLeastOne = [&](Value v) {
    return arith::MaxUIOp::create(b, loc, v, idx(1)).getResult();
  };
  auto shared =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  SmallVector<Type> tiles = {
      MemRefType::get({kBlockM, kBlockK + kPad}, half,
                      MemRefLayoutAttrInterface{}, shared),
      MemRefType::get({kBlockN, kBlockK + kPad}, half,
                      MemRefLayoutAttrInterface{}, shared)};
  auto launch = gpu::LaunchOp::create(
      b, loc, atLeastOne(arith::CeilDivUIOp::create(b, loc, n, idx(kBlockN))),
      atLeastOne(arith::CeilDivUIOp::create(b, loc, m, idx(kBlockM))),
      atLeastOne(batch), idx(kThreads), idx(1), idx(1), nullptr, nullptr,
      ValueRange{}, tiles);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Operation *terminator = gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(terminator);
  Value aTile = launch.getWorkgroupAttributions()[0];
  Value bTile = launch.getWorkgroupAttributions()[1];
  Value tid = launch.getThreadIds().x;
  IndexBuilder lane = ix(tid) % mma::kWarp;
  IndexBuilder warp = ix(tid) / mma::kWarp;
  Value warpM = (warp / kWarpsN * kWarpM).v;
  Value warpN = (warp % kWarpsN * kWarpN).v;
  m0 = mul(launch.getBlockIds().y, idx(kBlockM));
  n0 = mul(launch.getBlockIds().x, idx(kBlockN));
  Value bz = launch.getBlockIds().z;
  // The whole block agrees on the condition: its barriers are reached by
  // all threads or none.
  auto guardIf = scf::IfOp::create(
      b, loc, both(both(lt(m0, m), lt(n0, n)), lt(bz, batch)), false);
  b.setInsertionPoint(guardIf.thenBlock()->getTerminator());

  SmallVector<Value> ivs(op.getNumLoops(), idx(0));
  if (!dims.batch.empty()) {
    auto split =
        affine::AffineDelinearizeIndexOp::create(b, loc, bz, batchSizes);
    for (auto [d, v] : llvm::zip(dims.batch, split.getResults()))
      ivs[d] = v;
  }
  OpOperand &cOperand = *op.getDpsInitOperand(0);

  // Accumulator (mi, ni, reg) of this lane: C[row][col].
  SmallVector<Value> accRows, accCols;
  for (int64_t mi = 0; mi < tilesM; ++mi)
    for (int64_t ni = 0; ni < tilesN; ++ni)
      for (int64_t reg = 0; reg < 4; ++reg) {
        accRows.push_back(add(
            add(m0, warpM), (mma::accumulatorRow(lane, reg) + mi * mma::kM).v));
        accCols.push_back(add(
            add(n0, warpN), (mma::accumulatorCol(lane, reg) + ni * mma::kN).v));
      }
  SmallVector<Value> acc;
  for (auto [row, col] : llvm::zip(accRows, accCols)) {
    setRow(ivs, row);
    ivs[nLoop] = col;
    acc.push_back(fusion.emitInitial(b, loc, both(lt(row, m), lt(col, n)),
                                     indicesOf(cOperand, ivs), b.getF32Type()));
  }

  auto kLoopOp = scf::ForOp::create(
      b, loc, idx(0), k, idx(kBlockK), acc,
      [&](OpBuilder &nested, Location, Value k0, ValueRange carried) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(nested.getBlock());
        loadTile(0, aTile, tid, k0, ivs);
        loadTile(1, bTile, tid, k0, ivs);
        gpu::BarrierOp::create(b, loc);
        SmallVector<Value> sums(carried);
        for (int64_t ks = 0; ks < kBlockK / mma::kK; ++ks) {
          SmallVector<SmallVector<Value>> aRegs, bRegs;
          for (int64_t mi = 0; mi < tilesM; ++mi) {
            Value row = add(warpM, (mma::ldmatrixARow(lane) + mi * mma::kM).v);
            Value col = (mma::ldmatrixACol(lane) + ks * mma::kK).v;
            aRegs.push_back(mma::loadFragment(b, loc, aTile, row, col,
                                              /*transpose=*/false, half));
          }
          for (int64_t pair = 0; pair < (tilesN + 1) / 2; ++pair) {
            Value row =
                add(warpN, (mma::ldmatrixBRow(lane) + pair * 2 * mma::kN).v);
            Value col = (mma::ldmatrixBCol(lane) + ks * mma::kK).v;
            SmallVector<Value> regs = mma::loadFragment(
                b, loc, bTile, row, col, /*transpose=*/false, half);
            bRegs.push_back({regs[0], regs[1]});
            bRegs.push_back({regs[2], regs[3]});
          }
          for (int64_t mi = 0; mi < tilesM; ++mi)
            for (int64_t ni = 0; ni < tilesN; ++ni) {
              int64_t base = (mi * tilesN + ni) * 4;
              SmallVector<Value> d =
                  mma::emitMma(b, loc, aRegs[mi], bRegs[ni],
                               ArrayRef<Value>(sums).slice(base, 4), half);
              std::copy(d.begin(), d.end(), sums.begin() + base);
            }
        }
        gpu::BarrierOp::create(b, loc);
        scf::YieldOp::create(b, loc, sums);
      });

  for (auto [i, rowCol] : llvm::enumerate(llvm::zip(accRows, accCols))) {
    auto [row, col] = rowCol;
    auto store = scf::IfOp::create(b, loc, both(lt(row, m), lt(col, n)), false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(store.thenBlock()->getTerminator());
    setRow(ivs, row);
    ivs[nLoop] = col;
    fusion.emitStore(b, loc, kLoopOp.getResult(i), indicesOf(cOperand, ivs));
  }
}

} // namespace

FailureOr<bool>
mlir::tfm::convertToMmaContraction(RewriterBase &rewriter, linalg::LinalgOp op,
                                   Type half,
                                   SmallVectorImpl<Operation *> &fused) {
  if (!half.isF16() && !half.isBF16())
    return op->emitOpError("tensor-core GEMMs take f16 or bf16, not ") << half;
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
  if (!getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32() ||
      !isMultiplyAdd(op))
    return false;
  // Fewer than 16 static columns (a head of 2 or 4) leave most of every
  // B fragment empty, and ptxas spills in such kernels: they are left to
  // the one-thread-per-output kernel.
  int64_t columns = op.getStaticLoopRanges()[dims->n.front()];
  if (!ShapedType::isDynamic(columns) && columns < kMinColumns)
    return false;
  for (Value input : op.getDpsInputs()) {
    Type type = getElementTypeOrSelf(input.getType());
    if (!type.isF32() && type != half)
      return false;
  }
  tfm::ContractionFusion fusion = tfm::ContractionFusion::find(op);
  rewriter.setInsertionPoint(op);
  MmaContractionEmitter(rewriter, op, *dims, half, fusion).emit();
  fusion.appendFused(fused);
  fusion.eraseFused(rewriter);
  rewriter.eraseOp(op);
  return true;
}
