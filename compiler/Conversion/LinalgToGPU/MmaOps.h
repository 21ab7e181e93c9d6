//===- MmaOps.h - Building blocks of the tensor-core kernels ----*- C++ -*-===//
//
// What the tensor-core GEMM (MmaContraction.cpp) and flash attention
// (AttentionToGPU/MmaAttention.cpp) both build: index arithmetic in the
// form MmaLayout.h's lane maps take, the registers of an ldmatrix result
// as mma.sync takes them, and one m16n8k16 mma.sync.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CONVERSION_LINALGTOGPU_MMAOPS_H
#define TFM_COMPILER_CONVERSION_LINALGTOGPU_MMAOPS_H

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

namespace mlir::tfm::mma {

/// An index value with the arithmetic MmaLayout.h's maps use, building
/// unsigned arith ops.
struct IndexBuilder {
  OpBuilder *b;
  Location loc;
  Value v;
  IndexBuilder with(Value x) const { return {b, loc, x}; }
  Value c(int64_t x) const;
};
IndexBuilder operator/(IndexBuilder x, int64_t y);
IndexBuilder operator%(IndexBuilder x, int64_t y);
IndexBuilder operator*(IndexBuilder x, int64_t y);
IndexBuilder operator+(IndexBuilder x, int64_t y);
IndexBuilder operator+(IndexBuilder x, IndexBuilder y);

/// The four registers of an ldmatrix.x4 result (vector<4x2xhalf>), as
/// mma.sync takes them: vector<2xf16> for f16, i32 for bf16.
SmallVector<Value> fragmentRegisters(OpBuilder &b, Location loc, Value fragment,
                                     Type half);

/// ldmatrix.x4 (transposed or not) of the shared `tile` at the row and
/// column this lane addresses, as the four registers mma.sync takes.
SmallVector<Value> loadFragment(OpBuilder &b, Location loc, Value tile,
                                Value row, Value col, bool transpose,
                                Type half);

/// The register mma.sync takes for the pair (lo, hi) of f32 values rounded
/// to `half`: an A operand built from an earlier product's accumulators.
Value packPair(OpBuilder &b, Location loc, Value lo, Value hi, Type half);

/// D = A·B + C of one mma.sync.m16n8k16.row.col.f32.{half}: `a` the four A
/// registers, `bRegs` the two B registers, `c` the four f32 accumulators.
/// Returns D's four f32 values.
SmallVector<Value> emitMma(OpBuilder &b, Location loc, ValueRange a,
                           ValueRange bRegs, ValueRange c, Type half);

} // namespace mlir::tfm::mma

#endif // TFM_COMPILER_CONVERSION_LINALGTOGPU_MMAOPS_H
