//===- LinearToCPU.cpp - Register-tiled GEMM for tfm.packed_linear --------===//
//
// Lowers bufferized tfm.packed_linear to a cache-blocked GEMM whose leaf is a
// register-tiled vector micro-kernel, split into tasks for the caller's
// threads:
//
//   for (row block rb, column block cb) in tasks:            (one task)
//     for k0 in K by Kc:                                     (B chunk in L1)
//       for row group g in rb:                               (copyRows rows)
//         At = A[g, k0:k0+Kc]                                (stack tile)
//         for panel p in cb:                                 (nr columns)
//           for i in g by mr:                                (micro-kernel)
//             acc[mr][nr] = k0 == 0 ? 0 : C[i:i+mr, p*nr:(p+1)*nr]
//             for k in [0, Kc): acc += At[i:i+mr, k] x Bp[p, k0+k, :]
//             C[...] = last chunk ? residual + act(acc + bias) : acc
//
// The packed weight `Bp [ceil(N/nr), K, nr]` was laid out at compile time
// (tfm-pack-linear), so each k step loads nr contiguous floats and broadcasts
// mr scalars of A: mr x nr/lanes FMAs per step with every accumulator in a
// register. The epilogue (bias, activation, residual) runs on the tile while
// it is in registers, once, on the last K chunk.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Common/IndexArith.h"
#include "compiler/Conversion/KernelVariants/KernelVariants.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Transforms/TaskFunctions.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::tfm {
#define GEN_PASS_DEF_CONVERTLINEARTOCPU
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {
struct GemmTiling {
  int64_t lanes;        ///< f32 lanes per vector register
  int64_t panelVectors; ///< vectors per micro-kernel (kernelWidth / lanes)
  int64_t microRows;    ///< mr: rows of A per micro-kernel
  int64_t blockRows;    ///< Mc: at most this many rows per task
  int64_t blockK;       ///< Kc: depth of one B chunk (kept in L1)
  int64_t copyRows;     ///< rows of A copied at a time (a stack tile)
  /// The micro-kernel covers kernelWidth = 2 vectors of columns: a packed
  /// panel (packed for the widest variant) holds subPanels of them.
  int64_t kernelWidth;
  int64_t subPanels;
};

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

/// Emits one variant's task body for a tfm.packed_linear: the loops over
/// the task's (row block, column block) pairs down to the micro-kernels.
class GemmEmitter : mlir::tfm::IndexArith<GemmEmitter> {
  friend class mlir::tfm::IndexArith<GemmEmitter>;

public:
  /// Emits at `at`'s insertion point, the start of the task's entry block.
  GemmEmitter(PackedLinearOp op, const GemmTiling &tiling, OpBuilder &at)
      : op(op), tiling(tiling),
        b(at.getInsertionBlock(), at.getInsertionPoint()), loc(op.getLoc()) {}

  /// The task's arguments: the op's operands, then the stored panels per
  /// task, the rows per row block and the [begin, end) task range.
  void emitTaskBody(ArrayRef<BlockArgument> args);

private:
  Value splat(double v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vectorType, b.getF32FloatAttr(v)));
  }

  /// Copies A's K chunk [m0, mEnd) x [k0, k0 + kc) into aChunk.
  void emitChunkCopy(Value m0, Value mEnd, Value k0, Value kc);
  /// The stored panel and the offset in it of kernel-wide panel `p`.
  std::pair<Value, Value> storedPanelOf(Value p);
  void emitMicroKernel(int64_t rows, Value i, Value chunkRow, Value p,
                       Value nextP, Value nextK0, Value k0, Value kc,
                       Value first);
  /// bias, activation and residual over the tile [i, i + rows) x panel p.
  void emitEpilogue(Value i, Value rows, Value p);
  bool needsEpilogue() {
    return op.getBias() || op.getResidual() || op.getActivation() != "none";
  }
  /// The lanes of vector `v` of panel `p` that hold real columns.
  Value columnMask(Value p, int64_t v);
  Value loadTile(Value buffer, Value row, Value column, Value mask);
  void storeTile(Value value, Value buffer, Value row, Value column,
                 Value mask);
  Value applyEpilogue(Value acc, Value row, Value p, int64_t v, Value mask);

  PackedLinearOp op;
  GemmTiling tiling;
  OpBuilder b;
  Location loc;

  VectorType vectorType;
  // Whether the last panel may be partial: N is dynamic or not a multiple.
  bool maskColumns = false;
  // Inside the task function: K, N and the kernel-wide panel count, and the
  // last row of the packed weight a prefetch may name (0 when K is 0).
  Value k, n, columnPanels, lastK;
  // Inside the task function: matrices [M, K], [panels, K, nr], [M, N].
  Value a, packed, bias, residual, c;
  // Inside the task function: the stack tile [copyRows, blockK] holding
  // the current row group's K chunk of A.
  Value aChunk;
};

/// K and N of a GEMM: constants for a packed weight, run-time values for a
/// matrix packed at run time (tfm-pack-matmul), read from the buffers at
/// `b`'s insertion point.
Value gemmDepth(OpBuilder &b, Location loc, Value packedWeight) {
  int64_t k = cast<MemRefType>(packedWeight.getType()).getShape()[1];
  if (!ShapedType::isDynamic(k))
    return arith::ConstantIndexOp::create(b, loc, k);
  return memref::DimOp::create(b, loc, packedWeight, 1);
}
Value gemmColumns(OpBuilder &b, Location loc, Value output) {
  auto type = cast<MemRefType>(output.getType());
  int64_t n = type.getShape().back();
  if (!ShapedType::isDynamic(n))
    return arith::ConstantIndexOp::create(b, loc, n);
  return memref::DimOp::create(b, loc, output, type.getRank() - 1);
}

/// Emits the call of a GEMM's task: how many (row block, column block)
/// tasks there are and how wide.
class GemmCallEmitter : mlir::tfm::IndexArith<GemmCallEmitter> {
  friend class mlir::tfm::IndexArith<GemmCallEmitter>;

public:
  GemmCallEmitter(OpBuilder &b, Location loc) : b(b), loc(loc) {}
  void emit(PackedLinearOp op, const GemmTiling &partition, int64_t panelWidth,
            func::FuncOp task);

private:
  OpBuilder &b;
  Location loc;
};

void GemmEmitter::emitTaskBody(ArrayRef<BlockArgument> args) {
  unsigned next = 0;
  a = viewAsMatrix(b, loc, args[next++]);
  packed = args[next++];
  bias = op.getBias() ? Value(args[next++]) : Value();
  residual = op.getResidual() ? viewAsMatrix(b, loc, args[next++]) : Value();
  c = viewAsMatrix(b, loc, args[next++]);
  // Tasks split the columns in whole stored panels, the same for every
  // variant; a narrower variant's micro-kernel covers part of one.
  Value panelsPerTask = mul(args[next++], idx(tiling.subPanels));
  Value blockRows = args[next++];
  Value begin = args[next++], end = args[next++];
  vectorType = VectorType::get({tiling.lanes}, b.getF32Type());
  int64_t staticN = cast<MemRefType>(op.getInit().getType()).getShape().back();
  maskColumns =
      ShapedType::isDynamic(staticN) || staticN % tiling.kernelWidth != 0;
  aChunk = memref::AllocaOp::create(
      b, loc, MemRefType::get({tiling.copyRows, tiling.blockK}, b.getF32Type()),
      b.getI64IntegerAttr(64));

  Value m = memref::DimOp::create(b, loc, a, 0);
  k = gemmDepth(b, loc, packed);
  lastK = sub(max(k, idx(1)), idx(1));
  n = gemmColumns(b, loc, c);
  columnPanels = ceilDiv(n, idx(tiling.kernelWidth));
  Value columnBlocks = ceilDiv(columnPanels, panelsPerTask);
  forLoop(begin, end, idx(1), [&](Value t) {
    Value rowBlock = arith::DivUIOp::create(b, loc, t, columnBlocks);
    Value columnBlock = arith::RemUIOp::create(b, loc, t, columnBlocks);
    Value m0 = mul(rowBlock, blockRows);
    Value mEnd = min(add(m0, blockRows), m);
    Value p0 = mul(columnBlock, panelsPerTask);
    Value pEnd = min(add(p0, panelsPerTask), columnPanels);
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
        emitChunkCopy(s0, sEnd, k0, kc);
        forLoop(p0, pEnd, idx(1), [&](Value p) {
          // The B chunk the next panel's first micro-kernel reads, the next
          // chunk's first panel after the last: prefetched while this panel
          // runs, as the packed weight streams from memory once per row
          // block and the hardware prefetchers stop at each 4 KB page.
          Value nextP = add(p, idx(1));
          Value lastPanel = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sge, nextP, pEnd);
          nextP = arith::SelectOp::create(b, loc, lastPanel, p0, nextP);
          Value nextK0 = arith::SelectOp::create(
              b, loc, lastPanel, min(add(k0, idx(tiling.blockK)), lastK), k0);
          forLoop(s0, sEnd, idx(tiling.microRows), [&](Value i) {
            Value rows = min(idx(tiling.microRows), sub(sEnd, i));
            // One micro-kernel per row count, so every accumulator of every
            // variant stays in a register.
            SmallVector<int64_t> cases;
            for (int64_t r = 1; r < tiling.microRows; ++r)
              cases.push_back(r);
            auto dispatch = scf::IndexSwitchOp::create(
                b, loc, TypeRange{}, rows, cases, cases.size());
            auto fill = [&](Region &region, int64_t r) {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(&region.emplaceBlock());
              emitMicroKernel(r, i, sub(i, s0), p, nextP, nextK0, k0, kc,
                              first);
              scf::YieldOp::create(b, loc);
            };
            for (auto [caseIndex, r] : llvm::enumerate(cases))
              fill(dispatch.getCaseRegions()[caseIndex], r);
            fill(dispatch.getDefaultRegion(), tiling.microRows);
            if (needsEpilogue()) {
              auto ifLast = scf::IfOp::create(b, loc, last, false);
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPoint(ifLast.thenBlock()->getTerminator());
              emitEpilogue(i, rows, p);
            }
          });
        });
      });
    });
  });
}

Value GemmEmitter::columnMask(Value p, int64_t v) {
  if (!maskColumns)
    return {};
  Value column = add(mul(p, idx(tiling.kernelWidth)), idx(v * tiling.lanes));
  Value valid = max(idx(0), min(idx(tiling.lanes), sub(n, column)));
  auto maskType = VectorType::get({tiling.lanes}, b.getI1Type());
  return vector::CreateMaskOp::create(b, loc, maskType, ValueRange{valid});
}

Value GemmEmitter::loadTile(Value buffer, Value row, Value column, Value mask) {
  if (!mask)
    return vector::LoadOp::create(b, loc, vectorType, buffer,
                                  ValueRange{row, column});
  return vector::MaskedLoadOp::create(
      b, loc, vectorType, buffer, ValueRange{row, column}, mask, splat(0.0));
}

void GemmEmitter::storeTile(Value value, Value buffer, Value row, Value column,
                            Value mask) {
  if (!mask)
    vector::StoreOp::create(b, loc, value, buffer, ValueRange{row, column});
  else
    vector::MaskedStoreOp::create(b, loc, buffer, ValueRange{row, column}, mask,
                                  value);
}

Value GemmEmitter::applyEpilogue(Value acc, Value row, Value p, int64_t v,
                                 Value mask) {
  Value column = add(mul(p, idx(tiling.kernelWidth)), idx(v * tiling.lanes));
  Value x = acc;
  if (bias)
    x = arith::AddFOp::create(
        b, loc, x,
        vector::LoadOp::create(b, loc, vectorType, bias, ValueRange{column}));
  StringRef activation = op.getActivation();
  if (activation == "relu") {
    x = arith::MaximumFOp::create(b, loc, x, splat(0.0));
  } else if (activation == "gelu") {
    // 0.5 x (1 + erf(x / sqrt(2)))
    Value erf = math::ErfOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, splat(M_SQRT1_2)));
    Value half = arith::MulFOp::create(b, loc, x, splat(0.5));
    x = arith::MulFOp::create(b, loc, half,
                              arith::AddFOp::create(b, loc, erf, splat(1.0)));
  } else if (activation == "gelu_tanh") {
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
  }
  if (residual)
    x = arith::AddFOp::create(b, loc, x, loadTile(residual, row, column, mask));
  return x;
}

void GemmEmitter::emitChunkCopy(Value m0, Value mEnd, Value k0, Value kc) {
  // Chunks are whole vectors unless K is not (blockK is a multiple of the
  // lanes).
  std::optional<int64_t> staticK = getConstantIntValue(k);
  bool wholeVectors = staticK && *staticK % tiling.lanes == 0;
  auto maskType = VectorType::get({tiling.lanes}, b.getI1Type());
  forLoop(m0, mEnd, idx(1), [&](Value row) {
    Value chunkRow = sub(row, m0);
    forLoop(idx(0), kc, idx(tiling.lanes), [&](Value kk) {
      SmallVector<Value> from{row, add(k0, kk)}, to{chunkRow, kk};
      if (wholeVectors) {
        Value v = vector::LoadOp::create(b, loc, vectorType, a, from);
        vector::StoreOp::create(b, loc, v, aChunk, to);
        return;
      }
      Value mask = vector::CreateMaskOp::create(
          b, loc, maskType, ValueRange{min(idx(tiling.lanes), sub(kc, kk))});
      Value v = vector::MaskedLoadOp::create(b, loc, vectorType, a, from, mask,
                                             splat(0.0));
      vector::MaskedStoreOp::create(b, loc, aChunk, to, mask, v);
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

void GemmEmitter::emitMicroKernel(int64_t rows, Value i, Value chunkRow,
                                  Value p, Value nextP, Value nextK0, Value k0,
                                  Value kc, Value first) {
  int64_t vectors = tiling.panelVectors;
  SmallVector<Value> masks, columns, rowIndex, chunkRows;
  for (int64_t v = 0; v < vectors; ++v) {
    masks.push_back(columnMask(p, v));
    columns.push_back(
        add(mul(p, idx(tiling.kernelWidth)), idx(v * tiling.lanes)));
  }
  for (int64_t r = 0; r < rows; ++r) {
    rowIndex.push_back(add(i, idx(r)));
    chunkRows.push_back(add(chunkRow, idx(r)));
  }
  Value storedPanel, panelOffset, nextStoredPanel, nextPanelOffset;
  std::tie(storedPanel, panelOffset) = storedPanelOf(p);
  std::tie(nextStoredPanel, nextPanelOffset) = storedPanelOf(nextP);
  // One prefetch per cache line of a K step of the panel.
  int64_t lineFloats = 16;
  SmallVector<int64_t> prefetchColumns;
  for (int64_t col = 0; col < tiling.kernelWidth; col += lineFloats)
    prefetchColumns.push_back(col);

  // Start from zero on the first K chunk, from the partial sums after.
  SmallVector<Type> accTypes(rows * vectors, vectorType);
  auto init = scf::IfOp::create(b, loc, accTypes, first, true, true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(init.thenBlock());
    Value zero = splat(0.0);
    scf::YieldOp::create(b, loc, SmallVector<Value>(rows * vectors, zero));
    b.setInsertionPointToStart(init.elseBlock());
    SmallVector<Value> partial;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < vectors; ++v)
        partial.push_back(loadTile(c, rowIndex[r], columns[v], masks[v]));
    scf::YieldOp::create(b, loc, partial);
  }

  auto loop = scf::ForOp::create(
      b, loc, idx(0), kc, idx(1), init.getResults(),
      [&](OpBuilder &nested, Location, Value kk, ValueRange acc) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(nested.getBlock());
        Value nextRow = min(add(nextK0, kk), lastK);
        for (int64_t col : prefetchColumns)
          memref::PrefetchOp::create(b, loc, packed,
                                     ValueRange{nextStoredPanel, nextRow,
                                                add(nextPanelOffset, idx(col))},
                                     /*isWrite=*/false, /*localityHint=*/2,
                                     /*isDataCache=*/true);
        SmallVector<Value> weights;
        for (int64_t v = 0; v < vectors; ++v)
          weights.push_back(vector::LoadOp::create(
              b, loc, vectorType, packed,
              ValueRange{storedPanel, add(k0, kk),
                         add(panelOffset, idx(v * tiling.lanes))}));
        SmallVector<Value> next;
        for (int64_t r = 0; r < rows; ++r) {
          Value scalar = memref::LoadOp::create(b, loc, aChunk,
                                                ValueRange{chunkRows[r], kk});
          Value broadcast =
              vector::BroadcastOp::create(b, loc, vectorType, scalar);
          for (int64_t v = 0; v < vectors; ++v)
            next.push_back(vector::FMAOp::create(b, loc, broadcast, weights[v],
                                                 acc[r * vectors + v]));
        }
        scf::YieldOp::create(b, loc, next);
      });

  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < vectors; ++v)
      storeTile(loop.getResult(r * vectors + v), c, rowIndex[r], columns[v],
                masks[v]);
}

void GemmEmitter::emitEpilogue(Value i, Value rows, Value p) {
  // Once per tile, after its last K chunk, over the tile just stored (still
  // in L1): one copy of the epilogue per task function instead of one per
  // micro-kernel variant keeps compile time low (erf is a long polynomial).
  SmallVector<Value> masks;
  for (int64_t v = 0; v < tiling.panelVectors; ++v)
    masks.push_back(columnMask(p, v));
  forLoop(i, add(i, rows), idx(1), [&](Value row) {
    for (int64_t v = 0; v < tiling.panelVectors; ++v) {
      Value column =
          add(mul(p, idx(tiling.kernelWidth)), idx(v * tiling.lanes));
      Value acc = loadTile(c, row, column, masks[v]);
      storeTile(applyEpilogue(acc, row, p, v, masks[v]), c, row, column,
                masks[v]);
    }
  });
}

/// The tiling of a variant with `vectorBits`-wide registers over panels of
/// `panelWidth` columns; `microRows` and `blockK` override the defaults
/// when positive.
GemmTiling tilingFor(int64_t vectorBits, int64_t panelWidth, int64_t microRows,
                     int64_t blockK) {
  GemmTiling t;
  t.lanes = std::max<int64_t>(vectorBits / 32, 1);
  t.panelVectors = 2;
  // Accumulators mr x 2 vectors plus the two weight vectors fit the
  // register file: 12 x 2 of AVX-512's 32, 6 x 2 of AVX2's and SSE's 16.
  t.microRows = microRows > 0 ? microRows : vectorBits >= 512 ? 12 : 6;
  t.blockRows = llvm::alignTo(24 * (vectorBits >= 512 ? 12 : 6), t.microRows);
  // A chunk of one panel (Kc x nr floats) is 16 KB: it stays in L1 while
  // the row block's micro-kernels sweep over it.
  t.blockK = blockK > 0 ? blockK : std::max<int64_t>(4096 / (2 * t.lanes), 64);
  // The copy of A's rows covers whole micro-kernels and stays within 48 KB
  // of stack.
  int64_t micros = std::max<int64_t>(12288 / (t.blockK * t.microRows), 1);
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

/// A key for the task of `op`: ops of equal operand types and epilogues
/// share one.
std::string taskKey(PackedLinearOp op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  for (Value v : op->getOperands())
    os << v.getType() << ";";
  os << op.getActivation() << ";" << (op.getBias() ? 1 : 0)
     << (op.getResidual() ? 1 : 0);
  return key;
}

/// Tasks come from the `partition` tiling (the widest variant's, whose
/// row blocks every variant's micro-kernels cover), so that the model's
/// glue is the same whichever variant runs.
void GemmCallEmitter::emit(PackedLinearOp op, const GemmTiling &partition,
                           int64_t panelWidth, func::FuncOp task) {
  // Tasks are (row block, column block) pairs, row-major. Every task
  // streams its row block's A and its column block's packed B from memory
  // (or L3): A once per column block, B once per row block. So there are as
  // few tasks as the caller's threads allow, as wide as possible, their
  // count a multiple of the threads; the rows are split evenly. On one
  // thread BERT's 512 x 3072 -> 768 projection gets 2 full-width tasks
  // instead of 16 (A was read 8 times): 17% faster.
  Value input = op.getInput();
  auto inputType = cast<MemRefType>(input.getType());
  Value rows = idx(1);
  for (int64_t d = 0; d + 1 < inputType.getRank(); ++d)
    rows = mul(rows, memref::DimOp::create(b, loc, input, d));
  Value panels = ceilDiv(gemmColumns(b, loc, op.getInit()), idx(panelWidth));
  Value threads =
      createExecThreadsQuery(b, loc, op->getParentOfType<ModuleOp>());
  Value minRowBlocks = ceilDiv(rows, idx(partition.blockRows));
  // A task's row groups each sweep the K chunk of all its panels, which
  // should stay in L2 between groups: at most 512 KB of them.
  int64_t maxPanels =
      std::max<int64_t>(1, (512 << 10) / (partition.blockK * panelWidth * 4));
  Value columnSplit = max(
      ceilDiv(panels, idx(maxPanels)),
      max(idx(1), min(panels, ceilDiv(threads, max(minRowBlocks, idx(1))))));
  // With one row block (short sequences, decode) the columns alone make
  // the tasks: a multiple of the threads, rather than rows split into
  // uneven micro-kernel counts.
  Value oneRowBlock = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                            minRowBlocks, idx(1));
  columnSplit = arith::SelectOp::create(
      b, loc, oneRowBlock,
      min(panels, mul(ceilDiv(columnSplit, threads), threads)), columnSplit);
  columnSplit = max(columnSplit, idx(1));
  Value rowSplit = max(minRowBlocks, ceilDiv(threads, columnSplit));
  rowSplit = ceilDiv(mul(ceilDiv(mul(rowSplit, columnSplit), threads), threads),
                     columnSplit);
  Value blockRows =
      mul(ceilDiv(ceilDiv(rows, rowSplit), idx(partition.microRows)),
          idx(partition.microRows));
  blockRows = max(blockRows, idx(partition.microRows));
  Value rowBlocks = ceilDiv(rows, blockRows);
  Value panelsPerTask = max(idx(1), ceilDiv(panels, columnSplit));
  Value columnBlocks = ceilDiv(panels, panelsPerTask);
  SmallVector<Value> args(op->getOperands());
  args.append({panelsPerTask, blockRows, idx(0), mul(rowBlocks, columnBlocks)});
  func::CallOp::create(b, loc, task, args);
}

struct ConvertLinearToCPUPass
    : tfm::impl::ConvertLinearToCPUBase<ConvertLinearToCPUPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<PackedLinearOp> ops;
    module.walk([&](PackedLinearOp op) { ops.push_back(op); });
    SmallVector<KernelVariant> variants =
        getKernelVariants(vectorBits, multiversion);
    llvm::StringMap<func::FuncOp> tasks;
    SmallVector<func::FuncOp> bodies;
    for (PackedLinearOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op.emitOpError("must be bufferized before convert-linear-to-cpu");
        return signalPassFailure();
      }
      for (Value operand : op->getOperands())
        if (!isGemmReadable(cast<MemRefType>(operand.getType()),
                            operand == op.getPackedWeight())) {
          op.emitOpError("needs contiguous buffers to lower to CPU");
          return signalPassFailure();
        }
      int64_t panelWidth =
          cast<MemRefType>(op.getPackedWeight().getType()).getShape()[2];
      auto tilingOf = [&](const KernelVariant &variant) {
        return tilingFor(variant.vectorBits, panelWidth, microRows, blockK);
      };
      func::FuncOp task = tasks.lookup(taskKey(op));
      if (!task) {
        SmallVector<Type> types(op->getOperandTypes());
        types.append(4, IndexType::get(&getContext()));
        OpBuilder before(op->getParentOfType<func::FuncOp>());
        FailureOr<func::FuncOp> created = createMultiversionTask(
            before, op.getLoc(), "__tfm_task_linear_", types, variants,
            [&](const KernelVariant &variant, func::FuncOp body) {
              OpBuilder at = OpBuilder::atBlockBegin(&body.front());
              GemmEmitter(op, tilingOf(variant), at)
                  .emitTaskBody(body.getArguments());
              func::ReturnOp::create(at, op.getLoc());
              bodies.push_back(body);
              return success();
            });
        if (failed(created))
          return signalPassFailure();
        task = *created;
        tasks[taskKey(op)] = task;
      }
      OpBuilder b(op);
      GemmCallEmitter(b, op.getLoc())
          .emit(op, tilingOf(variants.back()), panelWidth, task);
      op.erase();
    }
    // Activations as polynomials on vectors, in the tasks alone: LLVM would
    // scalarize them into libm calls otherwise.
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == "erf" || name == "tanh" ||
             name == math::ErfOp::getOperationName() ||
             name == math::TanhOp::getOperationName();
    });
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (func::FuncOp body : bodies)
      if (failed(applyPatternsGreedily(body, frozen)))
        return signalPassFailure();
  }
};
} // namespace
