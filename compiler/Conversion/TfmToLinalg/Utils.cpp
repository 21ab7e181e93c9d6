//===- Utils.cpp - Helpers shared by the tfm-to-linalg patterns -----------===//
#include "compiler/Conversion/TfmToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tfm;

SmallVector<DimSource> mlir::tfm::getDimSources(Value v) {
  SmallVector<DimSource> sources;
  for (int64_t i = 0, e = cast<ShapedType>(v.getType()).getRank(); i < e; ++i)
    sources.push_back({v, i});
  return sources;
}

SmallVector<utils::IteratorType> mlir::tfm::getParallelIterators(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

Value mlir::tfm::createEmptyTensor(OpBuilder &b, Location loc,
                                   RankedTensorType type,
                                   ArrayRef<DimSource> sources) {
  SmallVector<Value> dynamicSizes;
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      dynamicSizes.push_back(
          tensor::DimOp::create(b, loc, sources[i].source, sources[i].dim));
  return tensor::EmptyOp::create(b, loc, type, dynamicSizes);
}

Value mlir::tfm::mapElements(
    OpBuilder &b, Location loc, Value input,
    function_ref<Value(OpBuilder &, Location, Value)> body) {
  auto type = cast<RankedTensorType>(input.getType());
  unsigned rank = type.getRank();
  Value init = createEmptyTensor(b, loc, type, getDimSources(input));
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{input}, ValueRange{init},
             ArrayRef<AffineMap>{identity, identity},
             getParallelIterators(rank),
             [&](OpBuilder &nested, Location l, ValueRange args) {
               linalg::YieldOp::create(nested, l, body(nested, l, args[0]));
             })
      .getResult(0);
}

Value mlir::tfm::createFilledTensor(OpBuilder &b, Location loc,
                                    RankedTensorType type,
                                    ArrayRef<DimSource> sources, double value) {
  Value empty = createEmptyTensor(b, loc, type, sources);
  Value fill = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), value));
  return linalg::FillOp::create(b, loc, fill, empty).getResult(0);
}

AffineMap mlir::tfm::getBroadcastMap(MLIRContext *ctx,
                                     ArrayRef<int64_t> operandShape,
                                     ArrayRef<int64_t> resultShape,
                                     unsigned numLoops,
                                     unsigned firstResultLoop) {
  SmallVector<AffineExpr> exprs;
  size_t offset = resultShape.size() - operandShape.size();
  for (auto [i, size] : llvm::enumerate(operandShape)) {
    int64_t resultSize = resultShape[i + offset];
    if (size == 1 && resultSize != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(firstResultLoop + i + offset, ctx));
  }
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

SmallVector<DimSource>
mlir::tfm::getBroadcastDimSources(Value lhs, Value rhs, unsigned leadingDims,
                                  unsigned trailingDimsToSkip) {
  ArrayRef<int64_t> a = cast<RankedTensorType>(lhs.getType()).getShape();
  ArrayRef<int64_t> b = cast<RankedTensorType>(rhs.getType()).getShape();
  size_t aRank = a.size() - trailingDimsToSkip;
  size_t bRank = b.size() - trailingDimsToSkip;
  size_t rank = std::max(aRank, bRank);
  SmallVector<DimSource> sources;
  for (size_t i = 0; i < rank && sources.size() < leadingDims; ++i) {
    bool inA = i >= rank - aRank, inB = i >= rank - bRank;
    int64_t ai = int64_t(i) - int64_t(rank - aRank);
    int64_t bi = int64_t(i) - int64_t(rank - bRank);
    if (inA && (!inB || a[ai] != 1))
      sources.push_back({lhs, ai});
    else
      sources.push_back({rhs, bi});
  }
  return sources;
}

Value mlir::tfm::createBroadcastGeneric(
    OpBuilder &b, Location loc, RankedTensorType resultType,
    ValueRange operands,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> result = resultType.getShape();
  unsigned rank = result.size();
  SmallVector<DimSource> sources;
  for (unsigned i = 0; i < rank; ++i) {
    DimSource source{Value(), 0};
    for (Value v : operands) {
      ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
      int64_t lead = int64_t(rank) - int64_t(shape.size());
      if (int64_t(i) >= lead && shape[i - lead] != 1) {
        source = {v, int64_t(i) - lead};
        break;
      }
    }
    sources.push_back(source);
  }
  SmallVector<AffineMap> maps;
  for (Value v : operands)
    maps.push_back(getBroadcastMap(
        ctx, cast<RankedTensorType>(v.getType()).getShape(), result, rank));
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Value init = createEmptyTensor(b, loc, resultType, sources);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, operands, ValueRange{init}, maps,
             getParallelIterators(rank),
             [&](OpBuilder &nested, Location l, ValueRange args) {
               linalg::YieldOp::create(nested, l,
                                       body(nested, l, args.drop_back()));
             })
      .getResult(0);
}
