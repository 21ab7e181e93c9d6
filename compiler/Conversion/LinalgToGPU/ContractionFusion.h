//===- ContractionFusion.h - Elementwise ops in a GEMM's kernel -*- C++ -*-===//
//
// The elementwise ops next to a contraction on buffers that its GEMM kernel
// (tensor-core or tiled) computes per output element instead of launching
// them: the op that fills the contraction's C before it (a linear layer's
// bias broadcast, a zero fill) and the op that reads C right after it (an
// activation, a residual add, a scale).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CONVERSION_LINALGTOGPU_CONTRACTIONFUSION_H
#define TFM_COMPILER_CONVERSION_LINALGTOGPU_CONTRACTIONFUSION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {

class ContractionFusion {
public:
  /// The prologue and epilogue `op` (a contraction on buffers with one
  /// init) can take, each only where computing it per element is what the
  /// two kernels would have done (see the .cpp for the conditions).
  static ContractionFusion find(linalg::LinalgOp op);

  Operation *prologue() const { return init; }
  linalg::GenericOp epilogue() const { return after; }

  /// C's initial value at output element `out` (C's indices), as `type`:
  /// the prologue's payload there, else C's element; 0 where `inside` is
  /// false (no load).
  Value emitInitial(OpBuilder &b, Location loc, Value inside,
                    ArrayRef<Value> out, Type type) const;
  /// Writes the accumulated `value` of output element `out`: through the
  /// epilogue's payload into its output, else into C.
  void emitStore(OpBuilder &b, Location loc, Value value,
                 ArrayRef<Value> out) const;
  /// Erases the fused ops once the kernel computes them.
  void eraseFused(RewriterBase &rewriter) const;
  /// Adds the fused ops to `ops`.
  void appendFused(SmallVectorImpl<Operation *> &ops) const;

private:
  Value c; ///< the contraction's init buffer
  /// A linalg.fill or elementwise linalg.generic writing C.
  Operation *init = nullptr;
  linalg::GenericOp after;
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_LINALGTOGPU_CONTRACTIONFUSION_H
