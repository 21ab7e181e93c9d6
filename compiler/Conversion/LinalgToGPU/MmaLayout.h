//===- MmaLayout.h - Lane-to-element maps of mma.sync m16n8k16 --*- C++ -*-===//
//
// Which elements of a tile each lane of a warp holds for the tensor-core
// instructions the MMA GEMM uses (PTX ISA, "Matrix Fragments for
// mma.m16n8k16 with floating point type" and "ldmatrix"). The maps are
// templates over the index type: the kernel emitter instantiates them with
// IR values (IndexBuilder in MmaContraction.cpp), the unit test
// tests/gpu/mma_layout_test.cpp with integers, so that the arithmetic the
// kernel computes is the one checked against the ISA's tables.
//
// Terms (the ISA's): groupID = lane / 4, threadID_in_group = lane % 4.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CONVERSION_LINALGTOGPU_MMALAYOUT_H
#define TFM_COMPILER_CONVERSION_LINALGTOGPU_MMALAYOUT_H

#include <cstdint>

namespace mlir::tfm::mma {

/// The instruction's shape: mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.
inline constexpr int64_t kM = 16, kN = 8, kK = 16;
/// Lanes per warp.
inline constexpr int64_t kWarp = 32;

/// The f32 accumulator fragment (C and D, 16 x 8): register `reg` (0..3) of
/// `lane` holds C[accumulatorRow][accumulatorCol].
template <typename T> T accumulatorRow(T lane, int64_t reg) {
  return lane / 4 + reg / 2 * 8;
}
template <typename T> T accumulatorCol(T lane, int64_t reg) {
  return lane % 4 * 2 + reg % 2;
}

/// ldmatrix.x4 of a 16 x 16 A tile kept row-major (K contiguous) in shared
/// memory: the row (M) and column (K) of the 8-element row whose address
/// `lane` supplies. Lanes 8q .. 8q+7 address matrix q, which lands in the
/// A fragment's register q: a0a1 (rows 0-7, k 0-7), a2a3 (rows 8-15, k 0-7),
/// a4a5 (rows 0-7, k 8-15), a6a7 (rows 8-15, k 8-15).
template <typename T> T ldmatrixARow(T lane) {
  return lane % 8 + lane / 8 % 2 * 8;
}
template <typename T> T ldmatrixACol(T lane) { return lane / 16 * 8; }

/// ldmatrix.x4 of two 16 x 8 B tiles (K x N, N = 16 in all) kept as Bs[n][k]
/// (K contiguous): the n and k of the row `lane` addresses. Matrix q holds
/// n 8(q/2) .. 8(q/2)+7 and k 8(q%2) .. 8(q%2)+7, so registers 0 and 1 are
/// the B fragment (b0b1, b2b3) of the first 8 columns, 2 and 3 of the next.
template <typename T> T ldmatrixBRow(T lane) {
  return lane % 8 + lane / 16 * 8;
}
template <typename T> T ldmatrixBCol(T lane) { return lane / 8 % 2 * 8; }

/// ldmatrix.x4.trans of two 16 x 8 B tiles (K x N, N = 16 in all) kept
/// K-major as Vs[k][n] (N contiguous): the k and n of the row `lane`
/// addresses. Transposed, lane l receives elements (2(l%4), l/4) and
/// (2(l%4)+1, l/4) of each matrix, which is B's (k, n) fragment layout;
/// matrix q holds k 8(q%2) .. 8(q%2)+7 and n 8(q/2) .. 8(q/2)+7, so
/// registers 0 and 1 are the first 8 columns' b0b1 and b2b3, 2 and 3 the
/// next 8 columns'. The addresses are A's (ldmatrixARow, ldmatrixACol).
template <typename T> T ldmatrixTransBRow(T lane) { return ldmatrixARow(lane); }
template <typename T> T ldmatrixTransBCol(T lane) { return ldmatrixACol(lane); }

/// The A fragment (m16 x k16) of a product P·V where P is the f32
/// accumulator of two adjacent n8 tiles of an earlier mma (flash
/// attention's probabilities): A's register `reg` is the (rounded) pair of
/// accumulator registers accumulatorAsA{Tile,Reg}(reg) and that + 1. Both
/// fragments give a lane the same rows (groupID, +8) and the same column
/// pairs (2 threadID_in_group, +8 in the second tile), so no data moves
/// between lanes.
inline constexpr int64_t accumulatorAsATile(int64_t reg) { return reg / 2; }
inline constexpr int64_t accumulatorAsAReg(int64_t reg) { return reg % 2 * 2; }

} // namespace mlir::tfm::mma

#endif // TFM_COMPILER_CONVERSION_LINALGTOGPU_MMALAYOUT_H
