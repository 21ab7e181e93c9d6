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
  return verifyBroadcastResult(op);
}

/// The ops' shape rule: `operands` broadcast together into `shape`. Shapes
/// that do not broadcast are an error of `opName` at `location`.
LogicalResult inferBroadcastShape(std::optional<Location> location,
                                  StringRef opName, ValueRange operands,
                                  SmallVectorImpl<int64_t> &shape) {
  for (Value v : operands) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return emitOptionalError(location, "'", opName,
                               "' op operands must be ranked tensors");
    SmallVector<int64_t> next;
    if (failed(broadcastShapes(shape, type.getShape(), next))) {
      std::string shapes;
      for (Value w : operands)
        if (auto t = dyn_cast<RankedTensorType>(w.getType()))
          shapes += " " + formatShape(t.getShape());
      return emitOptionalError(location, "'", opName, "' op operand shapes",
                               shapes, " do not broadcast");
    }
    shape.assign(next);
  }
  return success();
}

/// The result type of `Op`: the broadcast shape of `operands` with `element`
/// as the element type (the first operand's when null).
template <typename Op>
LogicalResult inferBroadcastType(std::optional<Location> location,
                                 ValueRange operands, Type element,
                                 SmallVectorImpl<Type> &inferred) {
  SmallVector<int64_t> shape;
  if (failed(inferBroadcastShape(location, Op::getOperationName(), operands,
                                 shape)))
    return failure();
  if (!element)
    element =
        cast<RankedTensorType>(operands.front().getType()).getElementType();
  inferred.push_back(RankedTensorType::get(shape, element));
  return success();
}
} // namespace

LogicalResult mlir::tfm::verifyBroadcastResult(Operation *op) {
  SmallVector<int64_t> shape;
  if (failed(inferBroadcastShape(op->getLoc(), op->getName().getStringRef(),
                                 op->getOperands(), shape)))
    return failure();
  return verifyResultShape(op, shape);
}

bool mlir::tfm::isRefinementOfInferredTypes(TypeRange inferred,
                                            TypeRange actual) {
  if (inferred.size() != actual.size())
    return false;
  for (auto [a, b] : llvm::zip(inferred, actual)) {
    auto want = dyn_cast<RankedTensorType>(a);
    auto have = dyn_cast<RankedTensorType>(b);
    if (!want || !have || want.getElementType() != have.getElementType() ||
        want.getRank() != have.getRank())
      return false;
    for (auto [x, y] : llvm::zip(want.getShape(), have.getShape()))
      if (!dimsAgree(x, y))
        return false;
  }
  return true;
}

#define TFM_BROADCAST_BINARY_INFER(OP)                                         \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> location, ValueRange operands,    \
      DictionaryAttr, OpaqueProperties, RegionRange,                           \
      SmallVectorImpl<Type> &inferred) {                                       \
    return inferBroadcastType<OP>(location, operands, Type(), inferred);       \
  }                                                                            \
  bool OP::isCompatibleReturnTypes(TypeRange inferred, TypeRange actual) {     \
    return isRefinementOfInferredTypes(inferred, actual);                      \
  }
TFM_BROADCAST_BINARY_INFER(SubOp)
TFM_BROADCAST_BINARY_INFER(MulOp)
TFM_BROADCAST_BINARY_INFER(DivOp)
TFM_BROADCAST_BINARY_INFER(MaximumOp)
TFM_BROADCAST_BINARY_INFER(MinimumOp)
TFM_BROADCAST_BINARY_INFER(PowOp)
TFM_BROADCAST_BINARY_INFER(LogicalAndOp)
TFM_BROADCAST_BINARY_INFER(LogicalOrOp)
TFM_BROADCAST_BINARY_INFER(AddOp)
#undef TFM_BROADCAST_BINARY_INFER

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          ValueRange operands, DictionaryAttr,
                                          OpaqueProperties, RegionRange,
                                          SmallVectorImpl<Type> &inferred) {
  return inferBroadcastType<CompareOp>(location, operands,
                                       IntegerType::get(context, 1), inferred);
}
bool CompareOp::isCompatibleReturnTypes(TypeRange inferred, TypeRange actual) {
  return isRefinementOfInferredTypes(inferred, actual);
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> location,
                                        ValueRange operands, DictionaryAttr,
                                        OpaqueProperties, RegionRange,
                                        SmallVectorImpl<Type> &inferred) {
  // The condition's shape broadcasts too; the element type is the choices'.
  Type element = operands.size() == 3
                     ? cast<ShapedType>(operands[1].getType()).getElementType()
                     : Type();
  return inferBroadcastType<WhereOp>(location, operands, element, inferred);
}
bool WhereOp::isCompatibleReturnTypes(TypeRange inferred, TypeRange actual) {
  return isRefinementOfInferredTypes(inferred, actual);
}

LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }
LogicalResult MaximumOp::verify() { return verifyBinary(*this); }
LogicalResult MinimumOp::verify() { return verifyBinary(*this); }
LogicalResult PowOp::verify() { return verifyBinary(*this); }
LogicalResult LogicalAndOp::verify() { return verifyBinary(*this); }
LogicalResult LogicalOrOp::verify() { return verifyBinary(*this); }

LogicalResult CompareOp::verify() {
  if (failed(verifyElementTypes(*this, {getRhs()}, elementTypeOf(getLhs()))))
    return failure();
  return verifyBroadcastResult(*this);
}

LogicalResult WhereOp::verify() {
  if (failed(verifyElementTypes(*this, {getLhs(), getRhs()},
                                elementTypeOf(getResult()))))
    return failure();
  return verifyBroadcastResult(*this);
}

LogicalResult CastOp::verify() {
  return verifyResultShape(*this, shapeOf(getInput()));
}

LogicalResult ReduceOp::verify() {
  Type element = elementTypeOf(getInput());
  if (getKind() == ReduceKind::mean && !isa<FloatType>(element))
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
