//===- AttentionToGPU.cpp - Flash attention as one gpu.launch -------------===//
//
// Lowers bufferized tfm.attention to a flash-attention kernel: the CPU's
// tasks (one per (batch*head, query block)) become the blocks of a grid,
// and what the CPU keeps in stack tiles lives in shared memory:
//
//   block (bh, i0):                                   blockQ queries
//     Qs = scale * Q[bh, i0 : i0+Bq, :]              (shared, zero past Sq)
//     m = -inf, l = 0 (shared, per query); acc = 0   (registers, per thread)
//     for j0 in key blocks of Bk keys (causal: up to the block's last query)
//       Ks = K[bh, j0 : j0+Bk, :]                     (shared)    sync
//       S[r][c] = Qs[r] . Ks[c], masked -> -inf       (one score a thread,
//                                                      strided)   sync
//       Vs = V[bh, j0 : j0+Bk, :] (into Ks's space);
//       row r's thread: mNew = max(m, max S[r]); S[r] = exp(S[r] - mNew);
//                       alpha[r] = exp(m - mNew); l = l*alpha + sum S[r]
//                                                                  sync
//       acc[r][c] = acc[r][c]*alpha[r] + S[r] . Vs[:, c]  (thread-owned
//                                                      elements)   sync
//     O[bh, i0 + r, c] = acc / l[r]                   (0 where every key
//                                                      was masked)
//
// The accumulator [Bq, Dv] is spread over the block's threads, at most 32
// elements each (consecutive threads own consecutive columns, so V's shared
// tile is read without bank conflicts and O is written coalesced). Shared
// rows are padded by one element so that threads walking different rows hit
// different banks. Tile sizes are chosen at compile time from the head
// dimensions so that the static shared memory stays within 48 KB.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/AttentionToGPU/AttentionToGPU.h"
#include "compiler/Conversion/Common/IndexArith.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/ScopeExit.h"

#include <limits>

namespace mlir::tfm {
#define GEN_PASS_DEF_CONVERTATTENTIONTOGPU
#define GEN_PASS_DEF_TFMGPUDECOMPOSEATTENTION
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

int64_t tfm::FlashAttentionTiles::sharedFloats() const {
  return blockQ * queryStride() + blockK * keyValueStride() +
         blockQ * scoreStride() + 3 * blockQ;
}

FailureOr<tfm::FlashAttentionTiles>
tfm::chooseFlashAttentionTiles(const FlashAttentionLimits &limits,
                               int64_t headDim, int64_t valueDim) {
  if (limits.threads < 1 || headDim < 1 || valueDim < 1)
    return failure();
  FlashAttentionTiles tiles;
  tiles.threads = limits.threads;
  tiles.headDim = headDim;
  tiles.valueDim = valueDim;
  auto fits = [&] {
    return tiles.sharedFloats() * int64_t(sizeof(float)) <= limits.sharedBytes;
  };
  if (limits.blockQ > 0 || limits.blockK > 0) {
    // Tiles as asked (tests): only checked.
    tiles.blockQ = limits.blockQ > 0 ? limits.blockQ : 64;
    tiles.blockK = limits.blockK > 0 ? limits.blockK : 64;
    if (!fits() || tiles.accumulatorsPerThread() > limits.accumulators)
      return failure();
    return tiles;
  }
  // Each thread keeps at most `accumulators` output elements in registers,
  // and each query row's softmax is one thread's (the block's other threads
  // are idle then, so more rows than threads would serialize it).
  // A decode step (one query, or a few) gets a block of its size, not 64
  // rows of which most would idle.
  tiles.blockQ = 64;
  while (limits.queries > 0 && tiles.blockQ / 2 >= limits.queries)
    tiles.blockQ /= 2;
  while (tiles.blockQ > 1 &&
         (tiles.blockQ > limits.threads ||
          tiles.accumulatorsPerThread() > limits.accumulators))
    tiles.blockQ /= 2;
  tiles.blockK = 64;
  while (!fits() && tiles.blockK > tiles.blockQ)
    tiles.blockK /= 2;
  while (!fits() && (tiles.blockK > 1 || tiles.blockQ > 1)) {
    if (tiles.blockK >= tiles.blockQ && tiles.blockK > 1)
      tiles.blockK /= 2;
    else
      tiles.blockQ /= 2;
  }
  if (!fits())
    return failure();
  return tiles;
}

bool tfm::flashAttentionTakesLayout(AttentionOp op) {
  // The kernel indexes every operand by its own dims (any strided layout
  // reads correctly), in tfm.attention's fixed [..., S, D] order: operands
  // read through other indexing maps are first viewed in that order
  // (withDefaultLayout), which works for any map of Q, K, V and init; a mask
  // read through other than its default map would need dims inserted.
  if (!op.hasPureBufferSemantics())
    return false;
  if (!op.getMask())
    return true;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto maskRank = cast<ShapedType>(op.getMask().getType()).getRank();
  return maps[3] == AttentionOp::getDefaultIndexingMaps(
                        op.getContext(), op.getNumBatchDims(), maskRank)[3];
}

/// K or V in an element type other than Q's: a bf16/f16 key/value cache,
/// which the GPU kernels do not read (yet).
static bool hasNarrowKeysOrValues(AttentionOp op) {
  Type q = getElementTypeOrSelf(op.getQuery().getType());
  return getElementTypeOrSelf(op.getKey().getType()) != q ||
         getElementTypeOrSelf(op.getValue().getType()) != q;
}

bool tfm::gpuFlashAttentionTakes(AttentionOp op) {
  auto q = cast<ShapedType>(op.getQuery().getType());
  auto v = cast<ShapedType>(op.getValue().getType());
  if (!q.getElementType().isF32() || hasNarrowKeysOrValues(op))
    return false;
  if (Value mask = op.getMask()) {
    auto maskRank = cast<ShapedType>(mask.getType()).getRank();
    if (op.getIndexingMapsArray()[3] !=
        AttentionOp::getDefaultIndexingMaps(op.getContext(),
                                            op.getNumBatchDims(), maskRank)[3])
      return false;
  }
  // The head dimensions in the canonical order (the last dim of Q's and
  // V's canonical views).
  auto canonicalLast = [&](ShapedType type, unsigned mapIndex) {
    SmallVector<int64_t> positions = op.getCanonicalDimPositions(mapIndex);
    return type.getShape()[positions.back()];
  };
  int64_t headDim = canonicalLast(q, 0), valueDim = canonicalLast(v, 2);
  if (ShapedType::isDynamic(headDim) || ShapedType::isDynamic(valueDim))
    return false;
  return succeeded(
      chooseFlashAttentionTiles(FlashAttentionLimits(), headDim, valueDim));
}

AttentionOp tfm::withDefaultLayout(OpBuilder &b, AttentionOp op) {
  if (op.hasIdentityLayout())
    return op;
  // memref.transpose views each operand with its dims in the canonical
  // order: result dim c is the operand's dim positions[c].
  auto inCanonicalOrder = [&](Value operand, unsigned mapIndex) -> Value {
    SmallVector<int64_t> positions = op.getCanonicalDimPositions(mapIndex);
    SmallVector<unsigned> permutation(positions.begin(), positions.end());
    AffineMap map = AffineMap::getPermutationMap(permutation, b.getContext());
    if (map.isIdentity())
      return operand;
    return memref::TransposeOp::create(b, op.getLoc(), operand,
                                       AffineMapAttr::get(map));
  };
  unsigned initIndex = op.getMask() ? 4 : 3;
  return AttentionOp::create(
      b, op.getLoc(), TypeRange{}, inCanonicalOrder(op.getQuery(), 0),
      inCanonicalOrder(op.getKey(), 1), inCanonicalOrder(op.getValue(), 2),
      op.getMask(), op.getKvLength(), op.getQueryOffset(),
      inCanonicalOrder(op.getInit(), initIndex), op.getScaleAttr(),
      op.getCausalAttr(), /*indexing_maps=*/ArrayAttr(), op.getWindowAttr());
}

tfm::AttentionGrid tfm::emitAttentionGrid(OpBuilder &b, Location loc,
                                          AttentionOp op, int64_t blockQ) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value q = op.getQuery(), k = op.getKey();
  int64_t rank = cast<MemRefType>(q.getType()).getRank();
  AttentionGrid g;
  g.sq = memref::DimOp::create(b, loc, q, rank - 2);
  g.sk = memref::DimOp::create(b, loc, k, rank - 2);
  Value heads = idx(1);
  for (int64_t d = 0; d + 2 < rank; ++d) {
    Value dim = memref::DimOp::create(b, loc, q, d);
    g.batchDims.push_back(dim);
    heads = arith::MulIOp::create(b, loc, heads, dim);
  }
  g.queryBlocks = arith::CeilDivUIOp::create(b, loc, g.sq, idx(blockQ));
  g.blocks = arith::MulIOp::create(b, loc, heads, g.queryBlocks);
  // An empty problem still launches one (idle) block.
  g.grid = arith::MaxUIOp::create(b, loc, g.blocks, idx(1));
  return g;
}

Value tfm::emitBlockStart(OpBuilder &b, Location loc, const AttentionGrid &g,
                          Value block, int64_t blockQ,
                          SmallVectorImpl<Value> &leading) {
  Value bh = arith::DivUIOp::create(b, loc, block, g.queryBlocks);
  Value i0 = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, block, g.queryBlocks),
      arith::ConstantIndexOp::create(b, loc, blockQ));
  if (!g.batchDims.empty()) {
    auto split =
        affine::AffineDelinearizeIndexOp::create(b, loc, bh, g.batchDims);
    leading.assign(split.getResults().begin(), split.getResults().end());
  }
  return i0;
}

SmallVector<Value> tfm::sharedHeadIndices(OpBuilder &b, Location loc,
                                          Value buffer, ArrayRef<Value> leading,
                                          Value i, Value d) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<Value> indices;
  for (auto [dim, index] : llvm::enumerate(leading))
    indices.push_back(type.getDimSize(dim) == 1
                          ? arith::ConstantIndexOp::create(b, loc, 0)
                          : index);
  indices.append({i, d});
  return indices;
}

tfm::AttentionKeyRange tfm::emitKeyRange(OpBuilder &b, Location loc,
                                         AttentionOp op,
                                         ArrayRef<Value> leading, Value sq,
                                         Value sk, Value i0, Value rows) {
  auto min = [&](Value x, Value y) {
    return arith::MinSIOp::create(b, loc, x, y).getResult();
  };
  auto add = [&](Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y).getResult();
  };
  // The sequence's kv_length or query_offset, clamped to [0, Sk].
  auto perSequence = [&](Value buffer) -> Value {
    Value value = memref::LoadOp::create(b, loc, buffer, leading.front());
    Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
    return arith::MaxSIOp::create(b, loc, min(index, sk),
                                  arith::ConstantIndexOp::create(b, loc, 0));
  };
  AttentionKeyRange keys;
  keys.keyLimit = op.getKvLength() ? perSequence(op.getKvLength()) : sk;
  keys.queryOffset = op.getQueryOffset()
                         ? perSequence(op.getQueryOffset())
                         : arith::ConstantIndexOp::create(b, loc, 0);
  // Causal: no query sees past the last one's position, and the keys there
  // may not exist yet (a cache's unwritten rows): never read them.
  if (op.getCausal())
    keys.keyLimit = min(keys.keyLimit, add(keys.queryOffset, sq));
  keys.keyEnd = op.getCausal()
                    ? min(keys.keyLimit, add(keys.queryOffset, add(i0, rows)))
                    : keys.keyLimit;
  return keys;
}

Value tfm::emitMaskedScore(OpBuilder &b, Location loc, AttentionOp op,
                           Value score, Value i, Value j, Value sq,
                           const AttentionKeyRange &keys,
                           ArrayRef<Value> leading) {
  auto lt = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y)
        .getResult();
  };
  Value visible = lt(j, keys.keyLimit);
  if (op.getCausal())
    visible = arith::AndIOp::create(
        b, loc, visible,
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sle, j,
            arith::AddIOp::create(b, loc, keys.queryOffset, i)));
  // A sliding window hides keys more than `window - 1` positions back:
  // visible when position - j < window, i.e. position < j + window.
  if (std::optional<int64_t> window = op.getWindow())
    visible = arith::AndIOp::create(
        b, loc, visible,
        lt(arith::AddIOp::create(b, loc, keys.queryOffset, i),
           arith::AddIOp::create(
               b, loc, j, arith::ConstantIndexOp::create(b, loc, *window))));
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  Value mask = op.getMask();
  if (!mask)
    return arith::SelectOp::create(b, loc, visible, score, negInf);
  // The mask is read only where the score exists (rows past Sq do not).
  Value inside = arith::AndIOp::create(b, loc, visible, lt(i, sq));
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{b.getF32Type()}, inside,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  auto maskType = cast<MemRefType>(mask.getType());
  int64_t maskRank = maskType.getRank();
  int64_t rank = int64_t(leading.size()) + 2;
  SmallVector<Value> indices;
  for (int64_t d = 0; d < maskRank; ++d) {
    int64_t scoresDim = d + rank - maskRank;
    if (maskType.getShape()[d] == 1)
      indices.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    else if (scoresDim == rank - 1)
      indices.push_back(j);
    else if (scoresDim == rank - 2)
      indices.push_back(i);
    else
      indices.push_back(leading[scoresDim]);
  }
  Value m = memref::LoadOp::create(b, loc, mask, indices);
  Value masked =
      maskType.getElementType().isInteger(1)
          ? arith::SelectOp::create(b, loc, m, negInf, score).getResult()
          : arith::AddFOp::create(b, loc, score, m).getResult();
  scf::YieldOp::create(b, loc, masked);
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, negInf);
  return ifOp.getResult(0);
}

namespace {

/// Emits the kernel of one attention op. Every value is an index unless
/// named otherwise.
class FlashAttentionKernelEmitter
    : mlir::tfm::IndexArith<FlashAttentionKernelEmitter> {
  friend class mlir::tfm::IndexArith<FlashAttentionKernelEmitter>;

public:
  FlashAttentionKernelEmitter(AttentionOp op, const FlashAttentionTiles &tiles,
                              OpBuilder &b)
      : op(op), t(tiles), b(b), loc(op.getLoc()) {}

  void emit();

private:
  Value div(Value x, int64_t y) {
    return arith::DivUIOp::create(b, loc, x, idx(y));
  }
  Value rem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, idx(y));
  }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value fconst(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v)));
  }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fmax(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  Value load(Value memref, ValueRange indices) {
    return memref::LoadOp::create(b, loc, memref, indices);
  }
  void store(Value value, Value memref, ValueRange indices) {
    memref::StoreOp::create(b, loc, value, memref, indices);
  }
  void barrier() { gpu::BarrierOp::create(b, loc); }
  using mlir::tfm::IndexArith<FlashAttentionKernelEmitter>::forLoop;
  /// The block's threads over [0, count): thread t takes t, t + T, ...
  template <typename Fn> void stridedLoop(int64_t count, Fn fn) {
    forLoop(threadId, idx(count), idx(t.threads), fn);
  }
  /// A loop carrying values: fn(iv, carried) returns the next values.
  template <typename Fn>
  SmallVector<Value> forLoop(Value from, Value to, Value step, ValueRange init,
                             Fn fn) {
    auto loop = scf::ForOp::create(
        b, loc, from, to, step, init,
        [&](OpBuilder &nested, Location, Value iv, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(nested.getBlock());
          SmallVector<Value> next = fn(iv, carried);
          scf::YieldOp::create(b, loc, next);
        });
    return SmallVector<Value>(loop.getResults());
  }
  /// cond ? then() : otherwise, each built only in its branch.
  template <typename Fn>
  Value ifElse(Value cond, Type type, Fn then, Value otherwise) {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, cond,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(b, loc, then());
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, otherwise);
    }
    return ifOp.getResult(0);
  }
  template <typename Fn> void ifThen(Value cond, Fn then) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    then();
  }
  /// Element (i, d) of batch*head `bh`'s [S, D] matrix of `buffer`: a
  /// static unit batch dim (a K/V head shared by a group of query heads)
  /// is read at 0.
  SmallVector<Value> at(Value buffer, Value i, Value d) {
    return sharedHeadIndices(b, loc, buffer, leading, i, d);
  }

  void emitBlock(Value i0);
  void emitLoadTile(Value source, Value tile, Value first, Value limit,
                    int64_t rows, int64_t dim, int64_t stride, Value scale);
  Value emitScore(Value r, Value c, Value i0, Value j0);
  void emitSoftmaxRow(Value r);
  SmallVector<Value> emitAccumulate(ValueRange acc);
  void emitStore(ValueRange acc, Value i0);

  AttentionOp op;
  FlashAttentionTiles t;
  OpBuilder &b;
  Location loc;
  int64_t rank = 0;
  Value sq, sk, threadId;
  SmallVector<Value> leading; // the block's (batch, head, ...) indices
  AttentionKeyRange keys;
  // Shared tiles: queries [Bq][Dk+1], keys then values [Bk][max(Dk,Dv)+1],
  // scores then probabilities [Bq][Bk+1], per-query max, sum and
  // correction [Bq].
  Value qTile, kvTile, sTile, rowMax, rowSum, rowScale;
};

void FlashAttentionKernelEmitter::emit() {
  rank = cast<MemRefType>(op.getQuery().getType()).getRank();
  AttentionGrid g = emitAttentionGrid(b, loc, op, t.blockQ);
  sq = g.sq;
  sk = g.sk;

  MLIRContext *ctx = b.getContext();
  auto shared = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto tile = [&](int64_t floats) {
    return MemRefType::get({floats}, b.getF32Type(),
                           MemRefLayoutAttrInterface{}, shared);
  };
  SmallVector<Type> tiles = {tile(t.blockQ * t.queryStride()),
                             tile(t.blockK * t.keyValueStride()),
                             tile(t.blockQ * t.scoreStride()),
                             tile(t.blockQ),
                             tile(t.blockQ),
                             tile(t.blockQ)};
  Value one = idx(1);
  auto launch = gpu::LaunchOp::create(b, loc, g.grid, one, one, idx(t.threads),
                                      one, one, /*dynamicSharedMemorySize=*/
                                      nullptr, /*asyncTokenType=*/nullptr,
                                      ValueRange{}, tiles);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Operation *terminator = gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(terminator);
  ArrayRef<BlockArgument> workgroup = launch.getWorkgroupAttributions();
  qTile = workgroup[0];
  kvTile = workgroup[1];
  sTile = workgroup[2];
  rowMax = workgroup[3];
  rowSum = workgroup[4];
  rowScale = workgroup[5];
  threadId = launch.getThreadIds().x;
  Value block = launch.getBlockIds().x;
  // The condition is the same for the whole block, so the barriers inside
  // are reached by all of its threads or by none.
  ifThen(lt(block, g.blocks), [&] {
    emitBlock(emitBlockStart(b, loc, g, block, t.blockQ, leading));
  });
}

void FlashAttentionKernelEmitter::emitLoadTile(Value source, Value tile,
                                               Value first, Value limit,
                                               int64_t rows, int64_t dim,
                                               int64_t stride, Value scale) {
  // Consecutive threads read consecutive elements of a row (coalesced);
  // rows past `limit` are zeros, so that no garbage (a NaN) meets a zero
  // weight later.
  stridedLoop(rows * dim, [&](Value e) {
    Value r = div(e, dim), d = rem(e, dim);
    Value row = add(first, r);
    Value value = ifElse(
        lt(row, limit), b.getF32Type(),
        [&] {
          Value x = load(source, at(source, row, d));
          return scale ? fmul(x, scale) : x;
        },
        fconst(0.0));
    store(value, tile, ValueRange{add(mul(r, idx(stride)), d)});
  });
}

void FlashAttentionKernelEmitter::emitBlock(Value i0) {
  Value rows = min(idx(t.blockQ), sub(sq, i0));
  keys = emitKeyRange(b, loc, op, leading, sq, sk, i0, rows);
  Value keyLimit = keys.keyLimit;

  emitLoadTile(op.getQuery(), qTile, i0, sq, t.blockQ, t.headDim,
               t.queryStride(), fconst(op.getScale().convertToDouble()));
  stridedLoop(t.blockQ, [&](Value r) {
    store(fconst(-std::numeric_limits<double>::infinity()), rowMax,
          ValueRange{r});
    store(fconst(0.0), rowSum, ValueRange{r});
  });
  barrier();

  SmallVector<Value> zeros(t.accumulatorsPerThread(), fconst(0.0));
  SmallVector<Value> acc =
      forLoop(idx(0), keys.keyEnd, idx(t.blockK), zeros,
              [&](Value j0, ValueRange carried) -> SmallVector<Value> {
                emitLoadTile(op.getKey(), kvTile, j0, keyLimit, t.blockK,
                             t.headDim, t.keyValueStride(), Value());
                barrier();
                stridedLoop(t.blockQ * t.blockK, [&](Value e) {
                  Value r = div(e, t.blockK), c = rem(e, t.blockK);
                  store(emitScore(r, c, i0, j0), sTile,
                        ValueRange{add(mul(r, idx(t.scoreStride())), c)});
                });
                barrier();
                // The keys are consumed: the values take their place while the
                // row threads run the softmax.
                emitLoadTile(op.getValue(), kvTile, j0, keyLimit, t.blockK,
                             t.valueDim, t.keyValueStride(), Value());
                stridedLoop(t.blockQ, [&](Value r) { emitSoftmaxRow(r); });
                barrier();
                SmallVector<Value> next = emitAccumulate(carried);
                barrier();
                return next;
              });
  emitStore(acc, i0);
}

Value FlashAttentionKernelEmitter::emitScore(Value r, Value c, Value i0,
                                             Value j0) {
  Value qRow = mul(r, idx(t.queryStride()));
  Value kRow = mul(c, idx(t.keyValueStride()));
  Value dot = forLoop(idx(0), idx(t.headDim), idx(1), ValueRange{fconst(0.0)},
                      [&](Value d, ValueRange sum) -> SmallVector<Value> {
                        Value x = load(qTile, ValueRange{add(qRow, d)});
                        Value y = load(kvTile, ValueRange{add(kRow, d)});
                        return {fadd(sum[0], fmul(x, y))};
                      })
                  .front();
  return emitMaskedScore(b, loc, op, dot, add(i0, r), add(j0, c), sq, keys,
                         leading);
}

void FlashAttentionKernelEmitter::emitSoftmaxRow(Value r) {
  Value row = mul(r, idx(t.scoreStride()));
  Value negInf = fconst(-std::numeric_limits<double>::infinity());
  Value oldMax = load(rowMax, ValueRange{r});
  Value tileMax =
      forLoop(idx(0), idx(t.blockK), idx(1), ValueRange{negInf},
              [&](Value c, ValueRange m) -> SmallVector<Value> {
                return {fmax(m[0], load(sTile, ValueRange{add(row, c)}))};
              })
          .front();
  Value newMax = fmax(oldMax, tileMax);
  // A row with every key so far masked keeps a -inf max: subtracting 0
  // instead keeps exp(-inf - -inf) from making NaNs (its weights are 0).
  Value allMasked =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, newMax, negInf);
  Value shift = arith::SelectOp::create(b, loc, allMasked, fconst(0.0), newMax);
  Value alpha = exp(arith::SubFOp::create(b, loc, oldMax, shift));
  Value sum = forLoop(idx(0), idx(t.blockK), idx(1), ValueRange{fconst(0.0)},
                      [&](Value c, ValueRange s) -> SmallVector<Value> {
                        Value at = add(row, c);
                        Value p = exp(arith::SubFOp::create(
                            b, loc, load(sTile, ValueRange{at}), shift));
                        store(p, sTile, ValueRange{at});
                        return {fadd(s[0], p)};
                      })
                  .front();
  store(fadd(fmul(load(rowSum, ValueRange{r}), alpha), sum), rowSum,
        ValueRange{r});
  store(newMax, rowMax, ValueRange{r});
  store(alpha, rowScale, ValueRange{r});
}

SmallVector<Value> FlashAttentionKernelEmitter::emitAccumulate(ValueRange acc) {
  // Thread t owns elements t, t + T, ... of the [Bq, Dv] accumulator; an
  // element past the end (when T does not divide Bq*Dv) computes on row
  // Bq-1's last column and is never stored.
  int64_t elements = t.blockQ * t.valueDim;
  SmallVector<Value> scoreRows, columns, scaled;
  for (auto [n, a] : llvm::enumerate(acc)) {
    Value e = add(threadId, idx(int64_t(n) * t.threads));
    if (int64_t(n + 1) * t.threads > elements)
      e = min(e, idx(elements - 1));
    Value r = div(e, t.valueDim);
    scoreRows.push_back(mul(r, idx(t.scoreStride())));
    columns.push_back(rem(e, t.valueDim));
    scaled.push_back(fmul(a, load(rowScale, ValueRange{r})));
  }
  return forLoop(idx(0), idx(t.blockK), idx(1), scaled,
                 [&](Value j, ValueRange sums) -> SmallVector<Value> {
                   Value vRow = mul(j, idx(t.keyValueStride()));
                   SmallVector<Value> next;
                   for (auto [n, s] : llvm::enumerate(sums)) {
                     Value p = load(sTile, ValueRange{add(scoreRows[n], j)});
                     Value v = load(kvTile, ValueRange{add(vRow, columns[n])});
                     next.push_back(fadd(s, fmul(p, v)));
                   }
                   return next;
                 });
}

void FlashAttentionKernelEmitter::emitStore(ValueRange acc, Value i0) {
  int64_t elements = t.blockQ * t.valueDim;
  for (auto [n, value] : llvm::enumerate(acc)) {
    Value a = value;
    Value e = add(threadId, idx(int64_t(n) * t.threads));
    auto body = [&] {
      Value r = div(e, t.valueDim), c = rem(e, t.valueDim);
      Value i = add(i0, r);
      ifThen(lt(i, sq), [&] {
        Value l = load(rowSum, ValueRange{r});
        Value seen = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l,
                                           fconst(0.0));
        Value out = arith::SelectOp::create(
            b, loc, seen, arith::DivFOp::create(b, loc, a, l), fconst(0.0));
        store(out, op.getInit(), at(op.getInit(), i, c));
      });
    };
    if (int64_t(n + 1) * t.threads > elements)
      ifThen(lt(e, idx(elements)), body);
    else
      body();
  }
}

struct TfmGpuDecomposeAttentionPass
    : tfm::impl::TfmGpuDecomposeAttentionBase<TfmGpuDecomposeAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeAttentionPatterns(
        patterns, [](AttentionOp op) { return !gpuFlashAttentionTakes(op); });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

struct ConvertAttentionToGPUPass
    : tfm::impl::ConvertAttentionToGPUBase<ConvertAttentionToGPUPass> {
  using ConvertAttentionToGPUBase::ConvertAttentionToGPUBase;

  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    OpBuilder b(&getContext());
    Type half;
    if (mma == "f16")
      half = b.getF16Type();
    else if (mma == "bf16")
      half = b.getBF16Type();
    else if (!mma.empty()) {
      getOperation().emitError("convert-attention-to-gpu: mma must be f16 "
                               "or bf16, not '")
          << mma << "'";
      return signalPassFailure();
    }
    for (AttentionOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op.emitOpError("must be bufferized before convert-attention-to-gpu");
        return signalPassFailure();
      }
      if (!flashAttentionTakesLayout(op)) {
        op.emitOpError("has an operand layout the GPU kernel does not take");
        return signalPassFailure();
      }
      b.setInsertionPoint(op);
      AttentionOp canonical = withDefaultLayout(b, op);
      // The default-order view of `op` goes once lowered or refused.
      llvm::scope_exit eraseCanonical([&] {
        if (canonical != op)
          canonical.erase();
      });
      auto q = cast<MemRefType>(canonical.getQuery().getType());
      auto v = cast<MemRefType>(canonical.getValue().getType());
      if (!q.getElementType().isF32()) {
        op.emitOpError("has no GPU kernel for ")
            << q.getElementType() << " yet (f32 only)";
        return signalPassFailure();
      }
      if (hasNarrowKeysOrValues(op)) {
        op.emitOpError("has no GPU kernel for ")
            << getElementTypeOrSelf(op.getKey().getType()) << " keys and "
            << getElementTypeOrSelf(op.getValue().getType())
            << " values yet (a bf16/f16 KV cache is CPU-only: declare the "
               "caches f32 or leave out --kv-cache-dtype)";
        return signalPassFailure();
      }
      int64_t headDim = q.getShape().back(), valueDim = v.getShape().back();
      if (ShapedType::isDynamic(headDim) || ShapedType::isDynamic(valueDim)) {
        op.emitOpError("needs static head dimensions to lower to the GPU");
        return signalPassFailure();
      }
      // Head dimensions the tensor-core kernel cannot hold in registers
      // (over 128) keep the f32 kernel.
      b.setInsertionPoint(canonical);
      if (half && emitMmaFlashAttention(b, canonical, half, sharedBytes)) {
        op.erase();
        continue;
      }
      FlashAttentionLimits limits;
      limits.threads = threads;
      limits.sharedBytes = sharedBytes;
      limits.accumulators = accumulators;
      limits.blockQ = blockQ;
      limits.blockK = blockK;
      int64_t queries = q.getShape()[q.getRank() - 2];
      limits.queries = ShapedType::isDynamic(queries) ? 0 : queries;
      FailureOr<FlashAttentionTiles> tiles =
          chooseFlashAttentionTiles(limits, headDim, valueDim);
      if (failed(tiles)) {
        op.emitOpError("head dimensions ")
            << headDim << " and " << valueDim << " leave no flash-attention "
            << "tiles within " << int64_t(sharedBytes)
            << " bytes of shared memory "
            << "and " << int64_t(accumulators) << " accumulators per thread";
        return signalPassFailure();
      }
      b.setInsertionPoint(canonical);
      FlashAttentionKernelEmitter(canonical, *tiles, b).emit();
      op.erase();
    }
  }
};

} // namespace
