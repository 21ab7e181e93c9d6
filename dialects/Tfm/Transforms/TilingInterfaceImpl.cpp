//===- TilingInterfaceImpl.cpp - Tiling tfm.attention ---------------------===//
//
// tfm.attention's iteration space is its result's: the leading (batch,
// head) dims, the queries and the value columns, all parallel (the keys and
// the head dim are reduced inside a tile, by the online softmax). A tile is
// a smaller tfm.attention over slices of its operands, so the same tiled
// form serves every target: the CPU lowering and a GPU lowering that maps
// the tile loop to blocks both start from it.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tfm/Transforms/TilingInterfaceImpl.h"
#include "dialects/Tfm/IR/TfmDialect.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// A slice of `value` along the iteration space's tile: dims listed in
/// `tiled` (operand dim -> iteration dim) take the tile's offset and size,
/// the others stay whole.
Value sliceOf(OpBuilder &b, Location loc, Value value,
              ArrayRef<std::optional<unsigned>> tiled,
              ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> sliceOffsets,
      sliceSizes = tensor::getMixedSizes(b, loc, value);
  for (auto [dim, iterationDim] : llvm::enumerate(tiled)) {
    sliceOffsets.push_back(b.getIndexAttr(0));
    if (iterationDim) {
      sliceOffsets.back() = offsets[*iterationDim];
      sliceSizes[dim] = sizes[*iterationDim];
    }
  }
  SmallVector<OpFoldResult> strides(tiled.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, value, sliceOffsets, sliceSizes,
                                        strides);
}

/// The tiled dims of tfm.attention: its batch dims, the queries (m) and the
/// value columns (n), in that order; the op's iteration space adds the
/// reductions k1 (head dim) and k2 (keys), which a tile keeps whole.
struct TiledDims {
  explicit TiledDims(AttentionOp op)
      : batch(op.getNumBatchDims()), query(op.getQueryDim()),
        value(op.getValueDim()) {}
  unsigned size() const { return batch + 2; }
  /// The op's iteration dim of tiled dim `t`.
  unsigned opDim(unsigned t) const {
    return t < batch ? t : t == batch ? query : value;
  }
  /// The tiled dim of the op's iteration dim `d`, if it is tiled.
  std::optional<unsigned> tiledDim(unsigned d) const {
    if (d < batch)
      return d;
    if (d == query)
      return batch;
    if (d == value)
      return batch + 1;
    return std::nullopt;
  }
  unsigned batch, query, value;
};

/// Operand dim -> tiled dim through the operand's indexing map. A mask's,
/// key's or value's static unit dim broadcasts and stays whole.
SmallVector<std::optional<unsigned>> tiledDimsOf(Value operand, AffineMap map,
                                                 const TiledDims &dims,
                                                 bool unitDimsBroadcast) {
  auto type = cast<ShapedType>(operand.getType());
  SmallVector<std::optional<unsigned>> result;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    std::optional<unsigned> tiled =
        dims.tiledDim(cast<AffineDimExpr>(expr).getPosition());
    if (unitDimsBroadcast && type.getDimSize(i) == 1)
      tiled = std::nullopt;
    result.push_back(tiled);
  }
  return result;
}

struct AttentionTiling
    : public TilingInterface::ExternalModel<AttentionTiling, AttentionOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<utils::IteratorType>(
        TiledDims(cast<AttentionOp>(op)).size(), utils::IteratorType::parallel);
  }

  /// The init's sizes, in the tiled dims' order (the init reads every one).
  SmallVector<Range> getIterationDomain(Operation *op, OpBuilder &b) const {
    auto attention = cast<AttentionOp>(op);
    TiledDims dims(attention);
    SmallVector<OpFoldResult> initSizes =
        tensor::getMixedSizes(b, op->getLoc(), attention.getInit());
    SmallVector<Range> domain(dims.size());
    for (auto [i, tiled] : llvm::enumerate(tiledDimsOf(
             attention.getInit(), attention.getIndexingMapsArray().back(), dims,
             /*unitDimsBroadcast=*/false)))
      domain[*tiled] = {b.getIndexAttr(0), initSizes[i], b.getIndexAttr(1)};
    return domain;
  }

  FailureOr<TilingResult>
  getTiledImplementation(Operation *op, OpBuilder &b,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) const {
    auto attention = cast<AttentionOp>(op);
    if (attention.hasPureBufferSemantics())
      return op->emitOpError("is tiled on tensors only");
    Location loc = op->getLoc();
    TiledDims dims(attention);
    SmallVector<AffineMap> maps = attention.getIndexingMapsArray();
    // Q, K, V, init and the mask, each sliced where its map reads a tiled
    // dim: a tile takes its queries, the whole keys and values of its
    // batch, its value columns.
    auto slice = [&](Value operand, AffineMap map, bool unitDimsBroadcast) {
      return sliceOf(b, loc, operand,
                     tiledDimsOf(operand, map, dims, unitDimsBroadcast),
                     offsets, sizes);
    };
    Value query = slice(attention.getQuery(), maps[0], false);
    // A key's or value's static unit batch dim is a head shared by the
    // tile's query heads: whole, like the mask's.
    Value key = slice(attention.getKey(), maps[1], true);
    Value value = slice(attention.getValue(), maps[2], true);
    Value mask = attention.getMask();
    if (mask)
      mask = slice(mask, maps[3], /*unitDimsBroadcast=*/true);
    Value init = slice(attention.getInit(), maps.back(), false);
    // kv_length and query_offset hold one value per sequence of batch dim 0.
    Value kvLength = attention.getKvLength();
    if (kvLength)
      kvLength = sliceOf(b, loc, kvLength, {0u}, offsets, sizes);
    Value queryOffset = attention.getQueryOffset();
    if (queryOffset)
      queryOffset = sliceOf(b, loc, queryOffset, {0u}, offsets, sizes);
    // A tile of queries starting at q0 sees the keys its rows see in the
    // whole op: causal visibility moves with the rows' positions, q0 + i.
    OpFoldResult firstQuery = offsets[dims.batch];
    if (attention.getCausal() && !isZeroInteger(firstQuery)) {
      if (dims.batch == 0)
        return op->emitOpError(
            "causal attention without a batch dimension cannot be tiled "
            "along its queries (query_offset needs one)");
      Type i64 = b.getI64Type();
      Value start = arith::IndexCastOp::create(
          b, loc, i64, getValueOrCreateConstantIndexOp(b, loc, firstQuery));
      auto empty = [&] {
        return tensor::EmptyOp::create(b, loc, sizes.take_front(1), i64);
      };
      Value starts =
          linalg::FillOp::create(b, loc, ValueRange{start}, ValueRange{empty()})
              .getResult(0);
      queryOffset =
          queryOffset
              ? linalg::AddOp::create(b, loc, ValueRange{queryOffset, starts},
                                      ValueRange{empty()})
                    .getResult(0)
              : starts;
    }
    auto tile = AttentionOp::create(
        b, loc, TypeRange{init.getType()}, query, key, value, mask, kvLength,
        queryOffset, init, attention.getScaleAttr(), attention.getCausalAttr(),
        attention.getIndexingMapsAttr(), attention.getWindowAttr());
    SmallVector<Operation *> slices;
    for (Value operand : tile->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        slices.push_back(producer);
    return TilingResult{{tile}, {tile.getResult()[0]}, slices};
  }

  /// The init's tile: its dims in its own order.
  LogicalResult getResultTilePosition(
      Operation *op, OpBuilder &, unsigned, ArrayRef<OpFoldResult> offsets,
      ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
      SmallVector<OpFoldResult> &resultSizes) const {
    auto attention = cast<AttentionOp>(op);
    resultOffsets.clear();
    resultSizes.clear();
    for (std::optional<unsigned> tiled : tiledDimsOf(
             attention.getInit(), attention.getIndexingMapsArray().back(),
             TiledDims(attention), /*unitDimsBroadcast=*/false)) {
      resultOffsets.push_back(offsets[*tiled]);
      resultSizes.push_back(sizes[*tiled]);
    }
    return success();
  }

  LogicalResult getIterationDomainTileFromResultTile(
      Operation *op, OpBuilder &, unsigned, ArrayRef<OpFoldResult> offsets,
      ArrayRef<OpFoldResult> sizes,
      SmallVectorImpl<OpFoldResult> &iterationOffsets,
      SmallVectorImpl<OpFoldResult> &iterationSizes) const {
    auto attention = cast<AttentionOp>(op);
    TiledDims dims(attention);
    iterationOffsets.resize(dims.size());
    iterationSizes.resize(dims.size());
    for (auto [i, tiled] : llvm::enumerate(tiledDimsOf(
             attention.getInit(), attention.getIndexingMapsArray().back(), dims,
             /*unitDimsBroadcast=*/false))) {
      iterationOffsets[*tiled] = offsets[i];
      iterationSizes[*tiled] = sizes[i];
    }
    return success();
  }

  FailureOr<TilingResult>
  generateResultTileValue(Operation *op, OpBuilder &b, unsigned resultNumber,
                          ArrayRef<OpFoldResult> offsets,
                          ArrayRef<OpFoldResult> sizes) const {
    SmallVector<OpFoldResult> iterationOffsets, iterationSizes;
    if (failed(getIterationDomainTileFromResultTile(
            op, b, resultNumber, offsets, sizes, iterationOffsets,
            iterationSizes)))
      return failure();
    return getTiledImplementation(op, b, iterationOffsets, iterationSizes);
  }
};

} // namespace

void mlir::tfm::registerTilingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TfmDialect *) {
    AttentionOp::attachInterface<AttentionTiling>(*ctx);
  });
}
