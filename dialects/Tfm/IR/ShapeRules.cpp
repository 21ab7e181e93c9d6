//===- ShapeRules.cpp - NumPy broadcasting on MLIR shapes -----------------===//
#include "dialects/Tfm/IR/ShapeRules.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

using namespace mlir;

bool mlir::tfm::dimsAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

std::string mlir::tfm::formatDim(int64_t dim) {
  return ShapedType::isDynamic(dim) ? "?" : std::to_string(dim);
}

std::string mlir::tfm::formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + formatDim(d);
  return s + "]";
}

LogicalResult mlir::tfm::broadcastShapes(ArrayRef<int64_t> a,
                                         ArrayRef<int64_t> b,
                                         SmallVectorImpl<int64_t> &result) {
  std::optional<size_t> mismatch = broadcastDims<int64_t>(
      a, b, result, 1, [](int64_t d) { return d == 1; },
      [](int64_t x, int64_t y) -> std::optional<int64_t> {
        if (!dimsAgree(x, y))
          return std::nullopt;
        return ShapedType::isDynamic(x) ? y : x;
      });
  return failure(mismatch.has_value());
}

LogicalResult mlir::tfm::verifyResultShape(Operation *op,
                                           ArrayRef<int64_t> expected) {
  ArrayRef<int64_t> actual =
      cast<ShapedType>(op->getResult(0).getType()).getShape();
  if (actual.size() == expected.size() &&
      llvm::all_of(llvm::zip(actual, expected), [](auto pair) {
        return dimsAgree(std::get<0>(pair), std::get<1>(pair));
      }))
    return success();
  return op->emitOpError("result shape ")
         << formatShape(actual) << " does not match the inferred shape "
         << formatShape(expected);
}
