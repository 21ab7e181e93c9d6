//===- AmxTiles.cpp - AMX tile products for the CPU kernels ---------------===//
#include "compiler/Conversion/KernelVariants/AmxTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tfm;

Value AmxTiles::addressOf(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  Value aligned =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value elementBytes =
      arith::ConstantIndexOp::create(b, loc, type.getElementTypeBitWidth() / 8);
  return arith::AddIOp::create(
      b, loc, aligned,
      arith::MulIOp::create(b, loc, metadata.getOffset(), elementBytes));
}

Value AmxTiles::stride(int64_t bytes) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(bytes));
}

Value AmxTiles::pointerAt(Value address) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()),
      arith::IndexCastOp::create(b, loc, b.getI64Type(), address).getResult());
}

namespace {
Value i16(OpBuilder &b, Location loc, int64_t v) {
  return LLVM::ConstantOp::create(b, loc, b.getI16Type(),
                                  b.getI16IntegerAttr(v));
}
} // namespace

Value AmxTiles::load(Value address, Value stride) {
  return LLVM::CallIntrinsicOp::create(
             b, loc, LLVM::LLVMX86AMXType::get(b.getContext()),
             b.getStringAttr("llvm.x86.tileloadd64.internal"),
             ValueRange{i16(b, loc, kAmxTileRows), i16(b, loc, kAmxTileBytes),
                        pointerAt(address), stride})
      .getResult(0);
}

Value AmxTiles::zero() {
  return LLVM::CallIntrinsicOp::create(
             b, loc, LLVM::LLVMX86AMXType::get(b.getContext()),
             b.getStringAttr("llvm.x86.tilezero.internal"),
             ValueRange{i16(b, loc, kAmxTileRows), i16(b, loc, kAmxTileBytes)})
      .getResult(0);
}

Value AmxTiles::multiply(Value c, Value a, Value bTile) {
  StringRef name = dot == AmxDot::BF16 ? "llvm.x86.tdpbf16ps.internal"
                                       : "llvm.x86.tdpbusd.internal";
  Value rows = i16(b, loc, kAmxTileRows), width = i16(b, loc, kAmxTileBytes);
  return LLVM::CallIntrinsicOp::create(
             b, loc, LLVM::LLVMX86AMXType::get(b.getContext()),
             b.getStringAttr(name), ValueRange{rows, width, width, c, a, bTile})
      .getResult(0);
}

void AmxTiles::store(Value tile, Value address, Value stride) {
  LLVM::CallIntrinsicOp::create(
      b, loc, b.getStringAttr("llvm.x86.tilestored64.internal"),
      ValueRange{i16(b, loc, kAmxTileRows), i16(b, loc, kAmxTileBytes),
                 pointerAt(address), stride, tile});
}

SmallVector<Value> AmxTiles::step(ValueRange c, int64_t rowTiles,
                                  int64_t colTiles, Value t, TileAddress a,
                                  Value aStride, TileAddress bt,
                                  Value bStride) {
  SmallVector<Value> aTiles, bTiles, next(c);
  for (int64_t r = 0; r < rowTiles; ++r)
    aTiles.push_back(load(a(r, t), aStride));
  for (int64_t col = 0; col < colTiles; ++col)
    bTiles.push_back(load(bt(col, t), bStride));
  for (int64_t r = 0; r < rowTiles; ++r)
    for (int64_t col = 0; col < colTiles; ++col)
      next[r * colTiles + col] =
          multiply(next[r * colTiles + col], aTiles[r], bTiles[col]);
  return next;
}

SmallVector<Value> AmxTiles::steps(ValueRange c, int64_t rowTiles,
                                   int64_t colTiles, Value begin, Value end,
                                   int64_t unroll, TileAddress a, Value aStride,
                                   TileAddress bt, Value bStride,
                                   llvm::function_ref<void(Value)> each) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto loop = [&](Value from, Value to, int64_t by, ValueRange init) {
    return SmallVector<Value>(
        scf::ForOp::create(
            b, loc, from, to, idx(by), init,
            [&](OpBuilder &nested, Location, Value kt, ValueRange acc) {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(nested.getBlock());
              SmallVector<Value> next(acc);
              for (int64_t u = 0; u < by; ++u) {
                Value t = arith::AddIOp::create(b, loc, kt, idx(u));
                next =
                    step(next, rowTiles, colTiles, t, a, aStride, bt, bStride);
                if (each)
                  each(t);
              }
              scf::YieldOp::create(b, loc, next);
            })
            .getResults());
  };
  SmallVector<Value> acc(c);
  Value rolledFrom = begin;
  if (unroll > 1) {
    rolledFrom = arith::SubIOp::create(
        b, loc, end,
        arith::RemUIOp::create(
            b, loc, arith::SubIOp::create(b, loc, end, begin), idx(unroll)));
    acc = loop(begin, rolledFrom, unroll, acc);
  }
  return loop(rolledFrom, end, 1, acc);
}
