//===- IndexArith.h - Index arithmetic for the kernel emitters --*- C++ -*-===//
//
// The hand-written kernel emitters (CPU GEMM and attention, GPU contractions
// and attention) build loop bounds and addresses from a handful of index ops
// and loops.
// Each gets them by deriving from IndexArith<Emitter>, which builds with the
// emitter's own `b` (an OpBuilder) at its `loc`, so that the helpers follow
// the emitter's insertion point.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CONVERSION_COMMON_INDEXARITH_H
#define TFM_COMPILER_CONVERSION_COMMON_INDEXARITH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tfm {

/// `Emitter` has members `b` (OpBuilder or OpBuilder &) and `loc`, visible
/// to this class (public, or `friend class IndexArith<Emitter>`).
template <typename Emitter> class IndexArith {
protected:
  Value idx(int64_t v) {
    return arith::ConstantIndexOp::create(builder(), location(), v);
  }
  Value add(Value x, Value y) { return binary<arith::AddIOp>(x, y); }
  Value sub(Value x, Value y) { return binary<arith::SubIOp>(x, y); }
  Value mul(Value x, Value y) { return binary<arith::MulIOp>(x, y); }
  Value min(Value x, Value y) { return binary<arith::MinSIOp>(x, y); }
  Value max(Value x, Value y) { return binary<arith::MaxSIOp>(x, y); }
  Value ceilDiv(Value x, Value y) { return binary<arith::CeilDivSIOp>(x, y); }
  /// scf.for over [lb, ub) by `step` with no iteration values; `body(iv)`
  /// builds the loop body at the emitter's builder.
  template <typename Fn> void forLoop(Value lb, Value ub, Value step, Fn body) {
    OpBuilder &b = builder();
    Location loc = location();
    scf::ForOp::create(b, loc, lb, ub, step, ValueRange{},
                       [&](OpBuilder &nested, Location, Value iv, ValueRange) {
                         OpBuilder::InsertionGuard guard(b);
                         b.setInsertionPointToStart(nested.getBlock());
                         body(iv);
                         scf::YieldOp::create(b, loc);
                       });
  }

private:
  template <typename Op> Value binary(Value x, Value y) {
    return Op::create(builder(), location(), x, y);
  }
  OpBuilder &builder() { return static_cast<Emitter *>(this)->b; }
  Location location() { return static_cast<Emitter *>(this)->loc; }
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_COMMON_INDEXARITH_H
