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

struct AttentionTiling
    : public TilingInterface::ExternalModel<AttentionTiling, AttentionOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    auto attention = cast<AttentionOp>(op);
    return SmallVector<utils::IteratorType>(
        cast<ShapedType>(attention.getInit().getType()).getRank(),
        utils::IteratorType::parallel);
  }

  SmallVector<Range> getIterationDomain(Operation *op, OpBuilder &b) const {
    auto attention = cast<AttentionOp>(op);
    SmallVector<Range> domain;
    for (OpFoldResult size :
         tensor::getMixedSizes(b, op->getLoc(), attention.getInit()))
      domain.push_back({b.getIndexAttr(0), size, b.getIndexAttr(1)});
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
    unsigned rank = offsets.size();
    unsigned queryDim = rank - 2, valueDim = rank - 1;
    // Operand dim -> iteration dim, for Q [..., Sq, Dk], K [..., Sk, Dk],
    // V [..., Sk, Dv] and init [..., Sq, Dv].
    SmallVector<std::optional<unsigned>> lead;
    for (unsigned d = 0; d < queryDim; ++d)
      lead.push_back(d);
    auto withTail = [&](std::optional<unsigned> rows,
                        std::optional<unsigned> columns) {
      SmallVector<std::optional<unsigned>> dims(lead);
      dims.push_back(rows);
      dims.push_back(columns);
      return dims;
    };
    Value query = sliceOf(b, loc, attention.getQuery(),
                          withTail(queryDim, std::nullopt), offsets, sizes);
    Value key = sliceOf(b, loc, attention.getKey(),
                        withTail(std::nullopt, std::nullopt), offsets, sizes);
    Value value = sliceOf(b, loc, attention.getValue(),
                          withTail(std::nullopt, valueDim), offsets, sizes);
    Value init = sliceOf(b, loc, attention.getInit(),
                         withTail(queryDim, valueDim), offsets, sizes);

    // The mask is aligned with the scores [..., Sq, Sk] at its trailing dims;
    // a static 1 broadcasts and stays whole, as does the key dim.
    Value mask = attention.getMask();
    if (mask) {
      auto maskType = cast<RankedTensorType>(mask.getType());
      unsigned maskRank = maskType.getRank();
      SmallVector<std::optional<unsigned>> dims;
      for (unsigned i = 0; i < maskRank; ++i) {
        unsigned scoresDim = rank - maskRank + i;
        bool broadcast = maskType.getDimSize(i) == 1;
        dims.push_back(broadcast || scoresDim == valueDim
                           ? std::nullopt
                           : std::optional<unsigned>(scoresDim));
      }
      mask = sliceOf(b, loc, mask, dims, offsets, sizes);
    }
    // kv_length and query_offset hold one value per sequence of dim 0.
    Value kvLength = attention.getKvLength();
    if (kvLength)
      kvLength = sliceOf(b, loc, kvLength, {0u}, offsets, sizes);
    Value queryOffset = attention.getQueryOffset();
    if (queryOffset)
      queryOffset = sliceOf(b, loc, queryOffset, {0u}, offsets, sizes);
    // A tile of queries starting at q0 sees the keys its rows see in the
    // whole op: causal visibility moves with the rows' positions, q0 + i.
    if (attention.getCausal() && !isZeroInteger(offsets[queryDim])) {
      if (rank < 3)
        return op->emitOpError(
            "causal attention without a batch dimension cannot be tiled "
            "along its queries (query_offset needs one)");
      Type i64 = b.getI64Type();
      Value start = arith::IndexCastOp::create(
          b, loc, i64,
          getValueOrCreateConstantIndexOp(b, loc, offsets[queryDim]));
      Value empty = tensor::EmptyOp::create(b, loc, sizes.take_front(1), i64);
      Value starts =
          linalg::FillOp::create(b, loc, ValueRange{start}, ValueRange{empty})
              .getResult(0);
      queryOffset =
          queryOffset
              ? linalg::AddOp::create(b, loc, ValueRange{queryOffset, starts},
                                      ValueRange{tensor::EmptyOp::create(
                                          b, loc, sizes.take_front(1), i64)})
                    .getResult(0)
              : starts;
    }
    auto tile = AttentionOp::create(
        b, loc, TypeRange{init.getType()}, query, key, value, mask, kvLength,
        queryOffset, init, attention.getScaleAttr(), attention.getCausalAttr());
    SmallVector<Operation *> slices;
    for (Value operand : tile->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        slices.push_back(producer);
    return TilingResult{{tile}, {tile.getResult()[0]}, slices};
  }

  LogicalResult getResultTilePosition(
      Operation *, OpBuilder &, unsigned, ArrayRef<OpFoldResult> offsets,
      ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
      SmallVector<OpFoldResult> &resultSizes) const {
    resultOffsets.assign(offsets.begin(), offsets.end());
    resultSizes.assign(sizes.begin(), sizes.end());
    return success();
  }

  LogicalResult getIterationDomainTileFromResultTile(
      Operation *, OpBuilder &, unsigned, ArrayRef<OpFoldResult> offsets,
      ArrayRef<OpFoldResult> sizes,
      SmallVectorImpl<OpFoldResult> &iterationOffsets,
      SmallVectorImpl<OpFoldResult> &iterationSizes) const {
    iterationOffsets.assign(offsets.begin(), offsets.end());
    iterationSizes.assign(sizes.begin(), sizes.end());
    return success();
  }

  FailureOr<TilingResult>
  generateResultTileValue(Operation *op, OpBuilder &b, unsigned,
                          ArrayRef<OpFoldResult> offsets,
                          ArrayRef<OpFoldResult> sizes) const {
    return getTiledImplementation(op, b, offsets, sizes);
  }
};

} // namespace

void mlir::tfm::registerTilingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TfmDialect *) {
    AttentionOp::attachInterface<AttentionTiling>(*ctx);
  });
}
