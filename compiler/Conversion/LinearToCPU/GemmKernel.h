//===- GemmKernel.h - The typed register-tiled GEMM task --------*- C++ -*-===//
//
// One loop nest serves every element type of tfm.packed_linear: the packed
// weight's type picks how many k share a 32-bit lane (f32 1, bf16 2, i8 4),
// how the input's K chunk is converted as it is copied to the stack tile
// (copied, rounded to bf16, quantized to u8), the micro-kernel's dot product
// (FMA; vdpbf16ps or its widening form; vpdpbusd or its widening form) and
// its accumulator (f32, or i32 that the epilogue dequantizes).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CONVERSION_LINEARTOCPU_GEMMKERNEL_H
#define TFM_COMPILER_CONVERSION_LINEARTOCPU_GEMMKERNEL_H

#include "compiler/Conversion/KernelVariants/KernelVariants.h"
#include "dialects/Tfm/IR/TfmOps.h"

namespace mlir::tfm {

struct GemmTiling {
  int64_t lanes;        ///< 32-bit lanes per vector register
  int64_t panelVectors; ///< vectors per micro-kernel (kernelWidth / lanes)
  int64_t microRows;    ///< mr: rows of A per micro-kernel
  int64_t blockRows;    ///< Mc: at most this many rows per task
  int64_t blockK;       ///< Kc: depth of one B chunk (kept in L1), in k
  int64_t copyRows;     ///< rows of A converted at a time (a stack tile)
  /// The micro-kernel covers kernelWidth = 2 vectors of columns: a packed
  /// panel (packed for the widest variant) holds subPanels of them.
  int64_t kernelWidth;
  int64_t subPanels;
};

/// The tiling of a variant with `vectorBits`-wide registers over panels of
/// `panelWidth` columns of `packedBytes`-byte weights; `microRows` and
/// `blockK` override the defaults when positive.
GemmTiling getGemmTiling(int64_t vectorBits, int64_t panelWidth,
                         int64_t packedBytes, int64_t microRows,
                         int64_t blockK);

/// Whether the AMX variant can run `op`: bf16 or per-column i8 weights in
/// panels of 32 columns, K static and at most 256 KB for 32 rows of it.
bool gemmSupportsAmx(PackedLinearOp op);

/// Fills the entry block of `task`, whose arguments are the op's operands,
/// then the stored panels per task, the rows per row block (at most
/// `maxTaskRows`) and a [begin, end) task range, with the variant's loops.
void emitGemmTaskBody(PackedLinearOp op, const GemmTiling &tiling,
                      const KernelVariant &variant, int64_t maxTaskRows,
                      func::FuncOp task);

} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_LINEARTOCPU_GEMMKERNEL_H
