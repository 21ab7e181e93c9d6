//===- MmaOps.cpp - Building blocks of the tensor-core kernels ------------===//
#include "compiler/Conversion/LinalgToGPU/MmaOps.h"
#include "compiler/Conversion/LinalgToGPU/MmaLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tfm;

Value mma::IndexBuilder::c(int64_t x) const {
  return arith::ConstantIndexOp::create(*b, loc, x);
}
mma::IndexBuilder mma::operator/(IndexBuilder x, int64_t y) {
  return x.with(arith::DivUIOp::create(*x.b, x.loc, x.v, x.c(y)));
}
mma::IndexBuilder mma::operator%(IndexBuilder x, int64_t y) {
  return x.with(arith::RemUIOp::create(*x.b, x.loc, x.v, x.c(y)));
}
mma::IndexBuilder mma::operator*(IndexBuilder x, int64_t y) {
  return x.with(arith::MulIOp::create(*x.b, x.loc, x.v, x.c(y)));
}
mma::IndexBuilder mma::operator+(IndexBuilder x, int64_t y) {
  return x.with(arith::AddIOp::create(*x.b, x.loc, x.v, x.c(y)));
}
mma::IndexBuilder mma::operator+(IndexBuilder x, IndexBuilder y) {
  return x.with(arith::AddIOp::create(*x.b, x.loc, x.v, y.v));
}

/// mma.sync takes bf16 pairs as b32 registers.
static Value asRegister(OpBuilder &b, Location loc, Value pair, Type half) {
  if (!half.isBF16())
    return pair;
  Value word = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, loc, word, 0);
}

SmallVector<Value> mma::fragmentRegisters(OpBuilder &b, Location loc,
                                          Value fragment, Type half) {
  SmallVector<Value> registers;
  for (int64_t i = 0; i < 4; ++i)
    registers.push_back(asRegister(
        b, loc, vector::ExtractOp::create(b, loc, fragment, i), half));
  return registers;
}

SmallVector<Value> mma::loadFragment(OpBuilder &b, Location loc, Value tile,
                                     Value row, Value col, bool transpose,
                                     Type half) {
  Value fragment = nvgpu::LdMatrixOp::create(
      b, loc, VectorType::get({4, 2}, half), tile, ValueRange{row, col},
      transpose, /*numTiles=*/4);
  return fragmentRegisters(b, loc, fragment, half);
}

Value mma::packPair(OpBuilder &b, Location loc, Value lo, Value hi, Type half) {
  Value pair = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, half),
      ValueRange{arith::TruncFOp::create(b, loc, half, lo),
                 arith::TruncFOp::create(b, loc, half, hi)});
  return asRegister(b, loc, pair, half);
}

SmallVector<Value> mma::emitMma(OpBuilder &b, Location loc, ValueRange a,
                                ValueRange bRegs, ValueRange c, Type half) {
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));
  auto ptxType = half.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, a, bRegs, c, {kM, kN, kK}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t reg = 0; reg < 4; ++reg)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, op.getResult(), reg));
  return d;
}
