//===- ShapeRules.h - NumPy broadcasting, shared by ops and frontend -*- C++
//-*-===//
//
// The one statement of how shapes broadcast, used by the op verifiers (on
// MLIR shapes, where `?` agrees with anything) and by ModelBuilder (on
// named dimensions, where `seq` agrees only with `seq`).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_DIALECTS_TFM_IR_SHAPERULES_H
#define TFM_DIALECTS_TFM_IR_SHAPERULES_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir {
class Operation;
class TypeRange;
} // namespace mlir

namespace mlir::tfm {

/// NumPy broadcasting of `a` and `b`, aligned at their trailing dimensions:
/// a missing dimension or one that `isOne` stretches to the other side;
/// otherwise `merge(da, db)` gives the result's dimension, or nullopt when
/// the two disagree. Returns the index (in the result) of the first
/// disagreement, or nullopt when the shapes broadcast into `result`.
template <typename D, typename IsOne, typename Merge>
std::optional<size_t> broadcastDims(ArrayRef<D> a, ArrayRef<D> b,
                                    SmallVectorImpl<D> &result, const D &one,
                                    IsOne isOne, Merge merge) {
  size_t rank = std::max(a.size(), b.size());
  result.clear();
  for (size_t i = 0; i < rank; ++i) {
    const D &da = i < rank - a.size() ? one : a[i - (rank - a.size())];
    const D &db = i < rank - b.size() ? one : b[i - (rank - b.size())];
    if (isOne(da)) {
      result.push_back(db);
    } else if (isOne(db)) {
      result.push_back(da);
    } else if (std::optional<D> d = merge(da, db)) {
      result.push_back(*d);
    } else {
      return i;
    }
  }
  return std::nullopt;
}

/// True when two MLIR sizes may be equal (either is dynamic).
bool dimsAgree(int64_t a, int64_t b);
/// "?" or "4".
std::string formatDim(int64_t dim);
/// "[?, 4]".
std::string formatShape(ArrayRef<int64_t> shape);
/// Broadcasting of MLIR shapes: a dynamic size agrees with anything and
/// the static side wins.
LogicalResult broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                              SmallVectorImpl<int64_t> &result);

/// Checks that the operands of the elementwise op `op` broadcast together
/// into its result's shape: the rule its type inference applies, here with
/// clear messages at the op (the interface's own check only says that the
/// types are incompatible).
LogicalResult verifyBroadcastResult(Operation *op);

/// Whether `actual` are the `inferred` ranked tensor types, with dynamic
/// sizes on either side agreeing with anything: a builder may know a size
/// the operands' types do not (the isCompatibleReturnTypes of the ops that
/// infer their result types).
bool isRefinementOfInferredTypes(TypeRange inferred, TypeRange actual);

/// Checks that `op`'s first result has the shape `expected` (dynamic sizes
/// agree with anything).
LogicalResult verifyResultShape(Operation *op, ArrayRef<int64_t> expected);

} // namespace mlir::tfm

#endif // TFM_DIALECTS_TFM_IR_SHAPERULES_H
