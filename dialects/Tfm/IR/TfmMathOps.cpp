//===- TfmMathOps.cpp - Verifiers of elementwise, reduction, shape ops ----===//
//
// Broadcasting follows ShapeRules.h; as in TfmOps.cpp, a dynamic size agrees
// with anything and the frontend checks named dimensions before it builds.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tfm/IR/ShapeRules.h"
#include "dialects/Tfm/IR/TfmOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {
ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// The operands broadcast together into the result's shape.
LogicalResult verifyBroadcast(Operation *op, ValueRange operands) {
  SmallVector<int64_t> shape;
  for (Value v : operands) {
    SmallVector<int64_t> next;
    if (failed(broadcastShapes(shape, shapeOf(v), next))) {
      InFlightDiagnostic diag = op->emitOpError("operand shapes");
      for (Value w : operands)
        diag << " " << formatShape(shapeOf(w));
      return diag << " do not broadcast";
    }
    shape = std::move(next);
  }
  return verifyResultShape(op, shape);
}

/// Every value has `type` as its element type.
LogicalResult verifyElementTypes(Operation *op, ValueRange values, Type type) {
  for (Value v : values)
    if (elementTypeOf(v) != type)
      return op->emitOpError("mixes the element types ")
             << elementTypeOf(v) << " and " << type;
  return success();
}

template <typename Op> LogicalResult verifyBinary(Op op) {
  if (failed(verifyElementTypes(op, {op.getLhs(), op.getRhs()},
                                elementTypeOf(op.getResult()))))
    return failure();
  return verifyBroadcast(op, {op.getLhs(), op.getRhs()});
}
} // namespace

LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }
LogicalResult MaximumOp::verify() { return verifyBinary(*this); }
LogicalResult MinimumOp::verify() { return verifyBinary(*this); }
LogicalResult PowOp::verify() { return verifyBinary(*this); }
LogicalResult LogicalAndOp::verify() { return verifyBinary(*this); }
LogicalResult LogicalOrOp::verify() { return verifyBinary(*this); }

LogicalResult CompareOp::verify() {
  static constexpr StringRef kPredicates[] = {"lt", "le", "gt",
                                              "ge", "eq", "ne"};
  if (!llvm::is_contained(kPredicates, getPredicate()))
    return emitOpError("predicate must be lt, le, gt, ge, eq or ne, got \"")
           << getPredicate() << "\"";
  if (failed(verifyElementTypes(*this, {getRhs()}, elementTypeOf(getLhs()))))
    return failure();
  return verifyBroadcast(*this, {getLhs(), getRhs()});
}

LogicalResult WhereOp::verify() {
  if (failed(verifyElementTypes(*this, {getLhs(), getRhs()},
                                elementTypeOf(getResult()))))
    return failure();
  return verifyBroadcast(*this, {getCondition(), getLhs(), getRhs()});
}

LogicalResult CastOp::verify() {
  return verifyResultShape(*this, shapeOf(getInput()));
}

LogicalResult ReduceOp::verify() {
  StringRef kind = getKind();
  if (kind != "sum" && kind != "mean" && kind != "max" && kind != "min")
    return emitOpError("kind must be sum, mean, max or min, got \"")
           << kind << "\"";
  Type element = elementTypeOf(getInput());
  if (kind == "mean" && !isa<FloatType>(element))
    return emitOpError("mean needs a float input, got ") << element;
  if (elementTypeOf(getResult()) != element)
    return emitOpError("result element type differs from the input's");
  ArrayRef<int64_t> input = shapeOf(getInput());
  ArrayRef<int64_t> dims = getDims();
  for (auto [i, d] : llvm::enumerate(dims))
    if (d < 0 || d >= int64_t(input.size()) || (i > 0 && dims[i - 1] >= d))
      return emitOpError("dims must be distinct, sorted and within rank ")
             << input.size();
  SmallVector<int64_t> expected;
  for (auto [i, size] : llvm::enumerate(input)) {
    if (!llvm::is_contained(dims, int64_t(i)))
      expected.push_back(size);
    else if (getKeepdim())
      expected.push_back(1);
  }
  return verifyResultShape(*this, expected);
}

LogicalResult ReshapeOp::verify() {
  auto result = cast<RankedTensorType>(getResult().getType());
  if (getSizes().size() != result.getNumDynamicDims())
    return emitOpError("needs one size for each of the ")
           << result.getNumDynamicDims() << " dynamic result dimensions, got "
           << getSizes().size();
  if (elementTypeOf(getInput()) != result.getElementType())
    return emitOpError("result element type differs from the input's");
  auto input = cast<RankedTensorType>(getInput().getType());
  if (input.hasStaticShape() && result.hasStaticShape() &&
      input.getNumElements() != result.getNumElements())
    return emitOpError("input ")
           << formatShape(input.getShape()) << " and result "
           << formatShape(result.getShape())
           << " have different element counts";
  return success();
}

/// A reshape to the input's own type is the input when every dynamic size
/// is the input's size in that dimension (a static shape has none).
OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (input != getResult().getType())
    return {};
  unsigned next = 0;
  for (auto [d, size] : llvm::enumerate(input.getShape())) {
    if (!ShapedType::isDynamic(size))
      continue;
    auto dim = getSizes()[next++].getDefiningOp<tensor::DimOp>();
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    if (!dim || dim.getSource() != getInput() || index != int64_t(d))
      return {};
  }
  return getInput();
}

LogicalResult PermuteOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  ArrayRef<int64_t> permutation = getPermutation();
  SmallVector<bool> seen(input.size(), false);
  if (permutation.size() != input.size())
    return emitOpError("permutation has ")
           << permutation.size() << " entries for rank " << input.size();
  SmallVector<int64_t> expected;
  for (int64_t p : permutation) {
    if (p < 0 || p >= int64_t(input.size()) || seen[p])
      return emitOpError("is not a permutation of the input's dimensions");
    seen[p] = true;
    expected.push_back(input[p]);
  }
  if (elementTypeOf(getResult()) != elementTypeOf(getInput()))
    return emitOpError("result element type differs from the input's");
  return verifyResultShape(*this, expected);
}
