//===- GemmInput.cpp - The typed GEMM task's A tile -----------------------===//
//
// GemmEmitter's copies of A into the stack tile the micro-kernel reads:
// f32 as it is, bf16 rounded to nearest even, i8 quantized per row with
// each row's scale and zero point (GemmKernel.cpp's header says how the
// tile fits the task; GemmBlockQuant.cpp quantizes per block).
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

void GemmEmitter::emitRowQuantization(Value m0, Value mEnd) {
  // Asymmetric, per row: [min, max] (with 0 in it, so that zeros stay
  // exact) mapped onto [0, 255]. The scale's reciprocal is what the copy
  // multiplies by; tests compute the same f32 expressions.
  auto maskType = VectorType::get({tiling.lanes}, b.getI1Type());
  auto f32Const = [&](float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  forLoop(m0, mEnd, idx(1), [&](Value row) {
    auto range = scf::ForOp::create(
        b, loc, idx(0), k, idx(tiling.lanes), ValueRange{splat(0), splat(0)},
        [&](OpBuilder &nested, Location, Value kk, ValueRange minMax) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(nested.getBlock());
          Value mask = vector::CreateMaskOp::create(
              b, loc, maskType, ValueRange{min(idx(tiling.lanes), sub(k, kk))});
          Value x = vector::MaskedLoadOp::create(
              b, loc, f32Vector, a, ValueRange{row, kk}, mask, splat(0));
          scf::YieldOp::create(
              b, loc,
              ValueRange{arith::MinNumFOp::create(b, loc, minMax[0], x),
                         arith::MaxNumFOp::create(b, loc, minMax[1], x)});
        });
    Value low = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::MINNUMF, range.getResult(0));
    Value high = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::MAXNUMF, range.getResult(1));
    Value scale = arith::DivFOp::create(
        b, loc, arith::SubFOp::create(b, loc, high, low), f32Const(255.0f));
    Value zeroScale = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            scale, f32Const(0.0f));
    scale = arith::SelectOp::create(b, loc, zeroScale, f32Const(1.0f), scale);
    Value inverse = arith::DivFOp::create(b, loc, f32Const(1.0f), scale);
    Value zero = math::RoundEvenOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, arith::NegFOp::create(b, loc, low),
                              inverse));
    zero = arith::MinNumFOp::create(
        b, loc, arith::MaxNumFOp::create(b, loc, zero, f32Const(0.0f)),
        f32Const(255.0f));
    Value taskRow = sub(row, m0);
    memref::StoreOp::create(b, loc, scale, rowScale, ValueRange{taskRow});
    memref::StoreOp::create(b, loc, inverse, rowInverse, ValueRange{taskRow});
    memref::StoreOp::create(b, loc, zero, rowZero, ValueRange{taskRow});
  });
}

Value GemmEmitter::roundToBF16Bits(Value x) {
  // Round to nearest even on the bits, as vcvtneps2bf16 does: NaN stays a
  // (quiet) NaN, zeros and denormals become signed zeros.
  Value bits = bitcast(i32Vector, x);
  auto shr = [&](Value v, int64_t s) {
    return arith::ShRUIOp::create(b, loc, v, splatInt(s));
  };
  auto andi = [&](Value v, int64_t m) {
    return arith::AndIOp::create(b, loc, v, splatInt(m));
  };
  Value high = shr(bits, 16);
  Value bias = arith::AddIOp::create(b, loc, andi(high, 1), splatInt(0x7fff));
  Value rounded = shr(arith::AddIOp::create(b, loc, bits, bias), 16);
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  Value quiet = arith::OrIOp::create(b, loc, high, splatInt(0x40));
  Value tiny = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     andi(bits, 0x7f800000), splatInt(0));
  Value sign = andi(high, 0x8000);
  return arith::SelectOp::create(
      b, loc, isNan, quiet,
      arith::SelectOp::create(b, loc, tiny, sign, rounded));
}

Value GemmEmitter::convertInput(Value x, Value taskRow) {
  auto packedLanes = VectorType::get({tiling.lanes / group}, b.getI32Type());
  if (kind == GemmKind::BF16) {
    auto bf16Vector = VectorType::get({tiling.lanes}, b.getBF16Type());
    Value rounded =
        nativeDot ? arith::TruncFOp::create(b, loc, bf16Vector, x).getResult()
                  : bitcast(bf16Vector,
                            arith::TruncIOp::create(
                                b, loc,
                                VectorType::get({tiling.lanes}, b.getI16Type()),
                                roundToBF16Bits(x)));
    return bitcast(packedLanes, rounded);
  }
  // u8 = clamp(round(x / scale) + zero point, 0, 255).
  auto scalar = [&](Value buffer) {
    return vector::BroadcastOp::create(
        b, loc, f32Vector,
        memref::LoadOp::create(b, loc, buffer, ValueRange{taskRow}));
  };
  Value q = arith::AddFOp::create(
      b, loc,
      math::RoundEvenOp::create(
          b, loc, arith::MulFOp::create(b, loc, x, scalar(rowInverse))),
      scalar(rowZero));
  q = arith::MinNumFOp::create(
      b, loc, arith::MaxNumFOp::create(b, loc, q, splat(0)), splat(255));
  Value bytes = arith::TruncIOp::create(
      b, loc, VectorType::get({tiling.lanes}, b.getI8Type()),
      arith::FPToUIOp::create(b, loc, i32Vector, q));
  return bitcast(packedLanes, bytes);
}

void GemmEmitter::emitChunkCopy(Value m0, Value s0, Value sEnd, Value k0,
                                Value kc, Value tile) {
  // Chunks are whole vectors unless K is not (blockK is a multiple of the
  // lanes).
  std::optional<int64_t> staticK = getConstantIntValue(k);
  bool wholeVectors = staticK && *staticK % tiling.lanes == 0;
  auto maskType = VectorType::get({tiling.lanes}, b.getI1Type());
  forLoop(s0, sEnd, idx(1), [&](Value row) {
    Value chunkRow = sub(row, s0);
    forLoop(idx(0), kc, idx(tiling.lanes), [&](Value kk) {
      SmallVector<Value> from{row, add(k0, kk)};
      Value mask;
      Value x;
      if (wholeVectors) {
        x = vector::LoadOp::create(b, loc, f32Vector, a, from);
      } else {
        mask = vector::CreateMaskOp::create(
            b, loc, maskType, ValueRange{min(idx(tiling.lanes), sub(kc, kk))});
        x = vector::MaskedLoadOp::create(b, loc, f32Vector, a, from, mask,
                                         splat(0.0));
      }
      if (kind == GemmKind::F32) {
        SmallVector<Value> to{chunkRow, kk};
        if (mask)
          vector::MaskedStoreOp::create(b, loc, tile, to, mask, x);
        else
          vector::StoreOp::create(b, loc, x, tile, to);
        return;
      }
      // Whole lanes of g values (past K, weights are zero: what A holds
      // there does not count).
      Value lanes = convertInput(x, sub(row, m0));
      vector::StoreOp::create(
          b, loc, lanes, tile,
          ValueRange{chunkRow, arith::DivUIOp::create(b, loc, kk, idx(group))});
    });
  });
}
