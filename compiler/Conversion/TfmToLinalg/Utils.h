//===- Utils.h - Helpers shared by the tfm-to-linalg patterns ---*- C++ -*-===//
#ifndef TFM_COMPILER_CONVERSION_TFMTOLINALG_UTILS_H
#define TFM_COMPILER_CONVERSION_TFMTOLINALG_UTILS_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::tfm {

/// Where a result dimension's run-time size comes from: dimension `dim` of
/// `source`. Unused for static dimensions.
struct DimSource {
  Value source;
  int64_t dim;
};

/// Every dimension of `v`, as the source of a same-shaped result's sizes.
SmallVector<DimSource> getDimSources(Value v);

/// `n` parallel iterators, for elementwise generics.
SmallVector<utils::IteratorType> getParallelIterators(unsigned n);

/// A `tensor.empty` of `type` whose dynamic sizes are read with `tensor.dim`
/// from `sources` (one entry per dimension of `type`).
Value createEmptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                        ArrayRef<DimSource> sources);

/// An elementwise generic over `input` (into a new tensor of its shape)
/// whose payload `body` maps an element to its result; the payload may read
/// its position with linalg.index.
Value mapElements(OpBuilder &b, Location loc, Value input,
                  function_ref<Value(OpBuilder &, Location, Value)> body);

/// `createEmptyTensor` filled with `value`.
Value createFilledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                         ArrayRef<DimSource> sources, double value);

/// The indexing map reading `operandShape` broadcast NumPy-style into a loop
/// nest whose leading `resultShape.size()` loops walk the result: operand
/// dims align at the trailing end, and a static 1 facing a dimension that is
/// not 1 reads index 0. `numLoops` may exceed the result rank (reductions).
AffineMap getBroadcastMap(MLIRContext *ctx, ArrayRef<int64_t> operandShape,
                          ArrayRef<int64_t> resultShape, unsigned numLoops,
                          unsigned firstResultLoop = 0);

/// For each result dimension of a NumPy broadcast of `lhs` and `rhs`, the
/// operand whose dimension gives its run-time size.
SmallVector<DimSource> getBroadcastDimSources(Value lhs, Value rhs,
                                              unsigned leadingDims,
                                              unsigned trailingDimsToSkip);

/// An elementwise generic producing `resultType` from `operands`, each read
/// through its NumPy broadcast map (ranks align at the trailing dims, static
/// 1s stretch); `body` maps the operands' elements to the result's. Dynamic
/// result sizes are read from the first operand that has the dimension.
Value createBroadcastGeneric(
    OpBuilder &b, Location loc, RankedTensorType resultType,
    ValueRange operands,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body);

} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_TFMTOLINALG_UTILS_H
