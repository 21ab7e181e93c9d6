//===- GemmBlockQuant.cpp - The typed GEMM task on GGUF blocks ------------===//
//
// GemmEmitter's block-quantized i8 pieces (GGUF Q8_0 ... Q6_K): the K loop
// block by block, the blocks' scales and offsets as stored, and the input
// copy quantized per block (GemmKernel.cpp's header says how they fit the
// task).
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
