//===- ModelBuilderSlice.cpp - Indexing, split and arange -----------------===//
//
// `x[...]` and split become tensor.extract_slice (a view after
// bufferization), arange a linalg.generic over linalg.index. Bounds on
// static dims are checked now; on named dims they clamp as Python's slices
// do, and an integer index is checked at run time and made safe to read.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/ModelBuilder.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// Python's slice bound: negative counts from the end, then clamped into
/// [0, size].
int64_t clampBound(int64_t bound, int64_t size) {
  if (bound < 0)
    bound += size;
  return std::min(std::max(bound, int64_t(0)), size);
}

/// The same on an index value (a named dim's run-time size).
Value clampBound(OpBuilder &b, Location loc, int64_t bound, Value size) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value v = arith::ConstantIndexOp::create(b, loc, std::abs(bound));
  if (bound < 0)
    v = arith::SubIOp::create(b, loc, size,
                              arith::MinUIOp::create(b, loc, v, size));
  return arith::MaxSIOp::create(b, loc, zero,
                                arith::MinUIOp::create(b, loc, v, size));
}

std::string sliceName(const Dim &d, const IndexItem &item) {
  std::string s = d.symbol + "[";
  if (item.start)
    s += std::to_string(*item.start);
  s += ":";
  if (item.stop)
    s += std::to_string(*item.stop);
  return s + "]";
}
} // namespace

FailureOr<Tensor> ModelBuilder::index(const Tensor &x,
                                      ArrayRef<IndexItem> items, Location loc) {
  // Expand `...` into full slices.
  SmallVector<IndexItem> full;
  int64_t explicitItems = 0, ellipses = 0;
  for (const IndexItem &item : items)
    item.kind == IndexItem::ellipsis ? ++ellipses : ++explicitItems;
  if (ellipses > 1)
    return emitError(loc) << "an index can hold one '...'";
  if (explicitItems > x.rank())
    return emitError(loc) << "too many indices (" << explicitItems << ") for "
                          << formatShape(x.shape);
  for (const IndexItem &item : items) {
    if (item.kind != IndexItem::ellipsis) {
      full.push_back(item);
      continue;
    }
    full.append(size_t(x.rank() - explicitItems), IndexItem());
  }
  full.append(size_t(x.rank()) - full.size(), IndexItem());

  SmallVector<OpFoldResult> offsets, sizes,
      strides(x.rank(), builder.getIndexAttr(1));
  Shape shape;
  SmallVector<int64_t> resultSizes;
  Value source = x.value;
  for (auto [i, item] : llvm::enumerate(full)) {
    const Dim &d = x.shape[i];
    Value size = d.isSymbolic()
                     ? tensor::DimOp::create(builder, loc, x.value, i)
                     : Value();
    if (item.kind == IndexItem::single) {
      int64_t at = item.index;
      if (!d.isSymbolic()) {
        if (at < -d.size || at >= d.size)
          return emitError(loc)
                 << "index " << at << " is out of range for "
                 << "dimension " << i << " of " << formatShape(x.shape);
        offsets.push_back(builder.getIndexAttr(at < 0 ? at + d.size : at));
        sizes.push_back(builder.getIndexAttr(1));
        continue;
      }
      // A run-time check reports an index outside the named dim; the read
      // then comes from a one-row zero tensor instead of `x`, so that it
      // stays in bounds even when the dim is 0.
      Value offset = arith::ConstantIndexOp::create(builder, loc, at);
      if (at < 0)
        offset = arith::AddIOp::create(builder, loc, size, offset);
      Value ok = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                       offset, size);
      std::string message = "index " + std::to_string(at) +
                            " is outside the dimension '" + d.symbol + "'";
      int32_t code = statusCode(3, message);
      Value failedCode = arith::ConstantOp::create(
          builder, loc, builder.getI32IntegerAttr(code));
      Value zeroCode =
          arith::ConstantOp::create(builder, loc, builder.getI32IntegerAttr(0));
      addStatus(arith::SelectOp::create(builder, loc, ok, zeroCode, failedCode),
                code, std::move(message));
      Value zeroIndex = arith::ConstantIndexOp::create(builder, loc, 0);
      offsets.push_back(
          arith::SelectOp::create(builder, loc, ok, offset, zeroIndex)
              .getResult());
      sizes.push_back(builder.getIndexAttr(1));
      source = safeSource(source, x, i, ok, loc);
      continue;
    }
    if (!d.isSymbolic()) {
      int64_t begin = item.start ? clampBound(*item.start, d.size) : 0;
      int64_t end = item.stop ? clampBound(*item.stop, d.size) : d.size;
      int64_t length = std::max(end - begin, int64_t(0));
      offsets.push_back(builder.getIndexAttr(begin));
      sizes.push_back(builder.getIndexAttr(length));
      shape.push_back(Dim::of(length));
      resultSizes.push_back(length);
      continue;
    }
    if (!item.start && !item.stop) {
      offsets.push_back(builder.getIndexAttr(0));
      sizes.push_back(size);
      shape.push_back(d);
      resultSizes.push_back(ShapedType::kDynamic);
      continue;
    }
    Value begin = item.start ? clampBound(builder, loc, *item.start, size)
                             : arith::ConstantIndexOp::create(builder, loc, 0);
    Value end = item.stop ? clampBound(builder, loc, *item.stop, size) : size;
    Value length = arith::SubIOp::create(
        builder, loc, arith::MaxSIOp::create(builder, loc, begin, end), begin);
    offsets.push_back(begin);
    sizes.push_back(length);
    shape.push_back(Dim::named(sliceName(d, item)));
    resultSizes.push_back(ShapedType::kDynamic);
  }
  auto type = RankedTensorType::get(resultSizes, x.elementType());
  Value v = tensor::ExtractSliceOp::create(builder, loc, type, source, offsets,
                                           sizes, strides);
  return Tensor{v, shape};
}

Value ModelBuilder::safeSource(Value source, const Tensor &x, int64_t dim,
                               Value ok, Location loc) {
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<int64_t> rowShape(type.getShape());
  rowShape[dim] = 1;
  auto rowType = RankedTensorType::get(rowShape, type.getElementType());
  SmallVector<Value> dynamicSizes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (rowType.isDynamicDim(i))
      dynamicSizes.push_back(tensor::DimOp::create(builder, loc, source, i));
  Value empty = tensor::EmptyOp::create(builder, loc, rowType, dynamicSizes);
  Value zero = arith::ConstantOp::create(
      builder, loc, builder.getZeroAttr(type.getElementType()));
  Value row = linalg::FillOp::create(builder, loc, zero, empty).getResult(0);
  row = tensor::CastOp::create(builder, loc, type, row);
  return arith::SelectOp::create(builder, loc, ok, source, row);
}

FailureOr<std::vector<Tensor>> ModelBuilder::split(const Tensor &x,
                                                   ArrayRef<int64_t> sizes,
                                                   bool chunked, int64_t dim,
                                                   Location loc) {
  FailureOr<int64_t> d = normalizeDim(x, dim, loc);
  if (failed(d))
    return failure();
  const Dim &along = x.shape[*d];
  if (along.isSymbolic())
    return emitError(loc) << "split along the named dimension '" << along.symbol
                          << "' is not supported";
  SmallVector<int64_t> pieces;
  if (chunked) {
    if (sizes.size() != 1 || sizes[0] <= 0)
      return emitError(loc) << "split: the chunk size must be positive";
    // Counted before any piece exists: a static dim may be 2^40.
    int64_t count = along.size / sizes[0] + (along.size % sizes[0] != 0);
    if (count > kMaxSplitPieces)
      return emitError(loc) << "split: " << formatShape(x.shape)
                            << " in chunks of " << sizes[0] << " makes "
                            << count << " pieces; at most " << kMaxSplitPieces;
    for (int64_t at = 0; at < along.size; at += sizes[0])
      pieces.push_back(std::min(sizes[0], along.size - at));
  } else {
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0 || s > along.size)
        return emitError(loc)
               << "split: size " << s << " does not fit "
               << "dimension " << *d << " of " << formatShape(x.shape);
      total += s;
      pieces.push_back(s);
    }
    if (total != along.size)
      return emitError(loc)
             << "split: the sizes add up to " << total << " but dimension "
             << *d << " of " << formatShape(x.shape) << " is " << along.size;
  }
  std::vector<Tensor> result;
  int64_t at = 0;
  for (int64_t piece : pieces) {
    IndexItem item;
    item.start = at;
    item.stop = at + piece;
    SmallVector<IndexItem> items(size_t(x.rank()), IndexItem());
    items[*d] = item;
    FailureOr<Tensor> t = index(x, items, loc);
    if (failed(t))
      return failure();
    result.push_back(*t);
    at += piece;
  }
  return result;
}

FailureOr<Tensor> ModelBuilder::arange(int64_t start, const Dim &end,
                                       int64_t step, Location loc) {
  if (step == 0)
    return emitError(loc) << "arange: step must not be 0";
  if (end.isSymbolic() && (start != 0 || step != 1))
    return emitError(loc) << "arange up to the named dimension '" << end.symbol
                          << "' needs start 0 and step 1";
  Shape shape;
  if (end.isSymbolic()) {
    shape.push_back(end);
  } else {
    int64_t span = end.size - start;
    int64_t count = span / step + (span % step != 0 ? 1 : 0);
    shape.push_back(Dim::of(std::max(count, int64_t(0))));
  }
  auto type = typeOf(shape, builder.getI64Type());
  SmallVector<Value> dynamicSizes;
  if (end.isSymbolic()) {
    FailureOr<Value> size = sizeOf(end, Tensor(), loc);
    if (failed(size))
      return failure();
    dynamicSizes.push_back(*size);
  }
  Value empty = tensor::EmptyOp::create(builder, loc, type, dynamicSizes);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, getContext());
  Value v =
      linalg::GenericOp::create(
          builder, loc, TypeRange{type}, ValueRange{}, ValueRange{empty},
          ArrayRef<AffineMap>{identity},
          ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
          [&](OpBuilder &b, Location l, ValueRange) {
            Value i = arith::IndexCastOp::create(
                b, l, b.getI64Type(), linalg::IndexOp::create(b, l, 0));
            Value first =
                arith::ConstantOp::create(b, l, b.getI64IntegerAttr(start));
            Value stride =
                arith::ConstantOp::create(b, l, b.getI64IntegerAttr(step));
            Value value = arith::AddIOp::create(
                b, l, first, arith::MulIOp::create(b, l, i, stride));
            linalg::YieldOp::create(b, l, value);
          })
          .getResult(0);
  return Tensor{v, shape};
}
