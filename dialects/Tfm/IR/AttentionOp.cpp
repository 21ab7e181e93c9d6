//===- AttentionOp.cpp - tfm.attention's indexing maps and verifier -------===//
//
// How tfm.attention reads its operands (indexing maps over the iteration
// space (batch..., m, k1, k2, n), their defaults and canonical positions)
// and what it accepts.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tfm/IR/ShapeRules.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

unsigned AttentionOp::getNumBatchDims() {
  if (std::optional<ArrayAttr> maps = getIndexingMaps()) {
    if (!maps->empty())
      if (auto map = dyn_cast<AffineMapAttr>((*maps)[0]))
        return std::max<int64_t>(map.getValue().getNumDims() - 4, 0);
  }
  return std::max<int64_t>(cast<ShapedType>(getQuery().getType()).getRank() - 2,
                           0);
}

SmallVector<AffineMap> AttentionOp::getDefaultIndexingMaps(MLIRContext *context,
                                                           unsigned batchDims,
                                                           int64_t maskRank) {
  unsigned m = batchDims, k1 = m + 1, k2 = m + 2, n = m + 3;
  auto map = [&](ArrayRef<unsigned> trailing, int64_t keep = -1) {
    SmallVector<AffineExpr> results;
    for (unsigned d = 0; d < batchDims; ++d)
      results.push_back(getAffineDimExpr(d, context));
    for (unsigned d : trailing)
      results.push_back(getAffineDimExpr(d, context));
    if (keep >= 0)
      results.erase(results.begin(),
                    results.end() - std::min<int64_t>(keep, results.size()));
    return AffineMap::get(batchDims + 4, 0, results, context);
  };
  SmallVector<AffineMap> maps = {map({m, k1}), map({k2, k1}), map({k2, n})};
  if (maskRank >= 0)
    maps.push_back(map({m, k2}, maskRank));
  maps.push_back(map({m, n}));
  return maps;
}

SmallVector<AffineMap> AttentionOp::getIndexingMapsArray() {
  if (std::optional<ArrayAttr> maps = getIndexingMaps())
    return llvm::to_vector(maps->getAsValueRange<AffineMapAttr>());
  int64_t maskRank =
      getMask() ? cast<ShapedType>(getMask().getType()).getRank() : -1;
  return getDefaultIndexingMaps(getContext(), getNumBatchDims(), maskRank);
}

bool AttentionOp::hasIdentityLayout() {
  if (!getIndexingMaps())
    return true;
  int64_t maskRank =
      getMask() ? cast<ShapedType>(getMask().getType()).getRank() : -1;
  return getIndexingMapsArray() ==
         getDefaultIndexingMaps(getContext(), getNumBatchDims(), maskRank);
}

/// The iteration dims of the operand of map `mapIndex`, in its canonical
/// order.
static SmallVector<unsigned> canonicalDims(AttentionOp op, unsigned mapIndex) {
  unsigned batch = op.getNumBatchDims();
  SmallVector<unsigned> dims = llvm::to_vector(llvm::seq<unsigned>(0, batch));
  unsigned m = op.getQueryDim(), k1 = op.getHeadDim(), k2 = op.getKeyDim(),
           n = op.getValueDim();
  bool hasMask = bool(op.getMask());
  if (mapIndex == 0)
    dims.append({m, k1});
  else if (mapIndex == 1)
    dims.append({k2, k1});
  else if (mapIndex == 2)
    dims.append({k2, n});
  else if (hasMask && mapIndex == 3)
    dims.append({m, k2});
  else
    dims.append({m, n});
  return dims;
}

SmallVector<int64_t> AttentionOp::getCanonicalDimPositions(unsigned mapIndex) {
  AffineMap map = getIndexingMapsArray()[mapIndex];
  SmallVector<int64_t> positions;
  for (unsigned dim : canonicalDims(*this, mapIndex)) {
    std::optional<unsigned> position =
        map.getResultPosition(getAffineDimExpr(dim, getContext()));
    positions.push_back(position ? int64_t(*position) : -1);
  }
  return positions;
}

/// Checks the structure of explicit indexing maps: one per operand, over the
/// same iteration space, each a permutation of its operand's dims with the
/// head dim innermost (the mask: any subset of the score dims).
static LogicalResult verifyIndexingMaps(AttentionOp op, ArrayAttr mapsAttr) {
  SmallVector<Value> operands = {op.getQuery(), op.getKey(), op.getValue()};
  if (op.getMask())
    operands.push_back(op.getMask());
  operands.push_back(op.getInit());
  if (mapsAttr.size() != operands.size())
    return op.emitOpError("needs ")
           << operands.size()
           << " indexing maps (query, key, value, mask when present, init), "
              "got "
           << mapsAttr.size();
  if (!llvm::all_of(mapsAttr, llvm::IsaPred<AffineMapAttr>))
    return op.emitOpError("indexing_maps must be affine maps");
  SmallVector<AffineMap> maps =
      llvm::to_vector(mapsAttr.getAsValueRange<AffineMapAttr>());
  unsigned numDims = maps[0].getNumDims();
  if (numDims < 4)
    return op.emitOpError("indexing maps need 4 or more dims (batch..., m, "
                          "k1, k2, n), got ")
           << numDims;
  bool hasMask = bool(op.getMask());
  for (auto [index, map] : llvm::enumerate(maps)) {
    bool isMask = hasMask && index == 3;
    if (map.getNumDims() != numDims || map.getNumSymbols() != 0 ||
        !map.isProjectedPermutation())
      return op.emitOpError("indexing map #")
             << index << " must be a projected permutation of " << numDims
             << " dims";
    int64_t rank = cast<ShapedType>(operands[index].getType()).getRank();
    if (int64_t(map.getNumResults()) != rank)
      return op.emitOpError("indexing map #")
             << index << " has " << map.getNumResults()
             << " results for an operand of rank " << rank;
    SmallVector<unsigned> expected = canonicalDims(op, index);
    for (AffineExpr result : map.getResults())
      if (!llvm::is_contained(expected,
                              cast<AffineDimExpr>(result).getPosition()))
        return op.emitOpError("indexing map #")
               << index << " reads a dim its operand does not have";
    if (isMask)
      continue;
    if (map.getNumResults() != expected.size())
      return op.emitOpError("indexing map #")
             << index << " must read all " << expected.size()
             << " dims of its operand";
    if (cast<AffineDimExpr>(map.getResults().back()).getPosition() !=
        expected.back())
      return op.emitOpError("indexing map #")
             << index << " must keep the head dim innermost";
  }
  return success();
}

LogicalResult AttentionOp::verify() {
  bool tensors = isa<RankedTensorType>(getInit().getType());
  for (Value v : getOperation()->getOperands()) {
    auto type = dyn_cast<ShapedType>(v.getType());
    if (!type || !type.hasRank() || isa<RankedTensorType>(type) != tensors)
      return emitOpError("operands must all be ranked tensors or all memrefs");
  }
  if (tensors != (getNumResults() == 1))
    return emitOpError(tensors ? "on tensors must return one result"
                               : "on memrefs returns nothing");
  std::optional<ArrayAttr> mapsAttr = getIndexingMaps();
  if (mapsAttr && failed(verifyIndexingMaps(*this, *mapsAttr)))
    return failure();
  auto physical = [](Value v) {
    return cast<ShapedType>(v.getType()).getShape();
  };
  // Shapes in canonical order: [batch..., seq, dim] (the mask as the
  // scores [batch..., Sq, Sk], 1 where it broadcasts).
  auto canonical = [&](Value v, unsigned mapIndex) {
    if (!mapsAttr)
      return SmallVector<int64_t>(physical(v));
    SmallVector<int64_t> shape;
    for (int64_t position : getCanonicalDimPositions(mapIndex))
      shape.push_back(position < 0 ? 1 : physical(v)[position]);
    return shape;
  };
  unsigned initIndex = getMask() ? 4 : 3;
  SmallVector<int64_t> q = canonical(getQuery(), 0), k = canonical(getKey(), 1),
                       v = canonical(getValue(), 2),
                       o = canonical(getInit(), initIndex);
  size_t rank = q.size();
  if (rank < 2 || k.size() != rank || v.size() != rank || o.size() != rank)
    return emitOpError("query, key, value and init must have the same rank, "
                       "2 or more");
  // A static 1 in a batch dim of the key and value broadcasts: one K/V
  // head shared by a group of query heads (grouped- and multi-query
  // attention), read in place by every kernel.
  auto broadcasts = [&](int64_t queryDim, int64_t dim) {
    return dim == 1 || dimsAgree(queryDim, dim);
  };
  for (size_t d = 0; d + 2 < rank; ++d)
    if (!broadcasts(q[d], k[d]) || !broadcasts(q[d], v[d]) ||
        !dimsAgree(q[d], o[d]))
      return emitOpError("query, key, value and init disagree in batch "
                         "dimension ")
             << d;
  if (!dimsAgree(q.back(), k.back()))
    return emitOpError("query ")
           << formatShape(q) << " and key " << formatShape(k)
           << " disagree on the head dimension";
  if (!dimsAgree(k[rank - 2], v[rank - 2]))
    return emitOpError("key ")
           << formatShape(k) << " and value " << formatShape(v)
           << " disagree on the key sequence length";
  if (!dimsAgree(o[rank - 2], q[rank - 2]) || !dimsAgree(o.back(), v.back()))
    return emitOpError("init ")
           << formatShape(o) << " must be [..., " << formatDim(q[rank - 2])
           << ", " << formatDim(v.back()) << "]";
  Type elementType = cast<ShapedType>(getQuery().getType()).getElementType();
  if (cast<ShapedType>(getInit().getType()).getElementType() != elementType)
    return emitOpError("query and init must share an element type");
  if (!isa<FloatType>(elementType))
    return emitOpError("needs a float element type");
  // A bf16/f16 key/value cache read by f32 attention: the kernels widen K
  // and V as they load them and accumulate in f32.
  for (Value x : {getKey(), getValue()}) {
    Type type = cast<ShapedType>(x.getType()).getElementType();
    if (type != elementType &&
        !(elementType.isF32() && (type.isBF16() || type.isF16())))
      return emitOpError("key and value must have the query's element type ")
             << elementType << ", or bf16/f16 with an f32 query; got " << type;
  }
  if (Value mask = getMask()) {
    auto maskType = cast<ShapedType>(mask.getType());
    Type maskElement = maskType.getElementType();
    if (maskElement != elementType && !maskElement.isInteger(1))
      return emitOpError("mask must be i1 or ") << elementType;
    SmallVector<int64_t> m = canonical(mask, 3);
    if (m.size() > rank)
      return emitOpError("mask has more dimensions than the scores");
    SmallVector<int64_t> scores(q.begin(), q.end() - 1);
    scores.push_back(k[rank - 2]);
    for (size_t i = 0; i < m.size(); ++i) {
      int64_t s = scores[rank - m.size() + i];
      if (m[i] != 1 && !dimsAgree(m[i], s))
        return emitOpError("mask ")
               << formatShape(physical(mask))
               << " does not broadcast to the scores " << formatShape(scores);
    }
  }
  for (Value perSequence : {getKvLength(), getQueryOffset()}) {
    if (!perSequence)
      continue;
    StringRef name =
        perSequence == getKvLength() ? "kv_length" : "query_offset";
    auto type = cast<ShapedType>(perSequence.getType());
    if (rank < 3)
      return emitOpError()
             << name << " needs a leading batch dimension (rank 3 or more)";
    if (type.getRank() != 1 || !type.getElementType().isInteger(64) ||
        !dimsAgree(type.getShape()[0], q[0]))
      return emitOpError() << name << " must be i64 [" << formatDim(q[0])
                           << "], one value per sequence";
  }
  if (getQueryOffset() && !getCausal())
    return emitOpError("query_offset only applies to causal attention");
  if (std::optional<int64_t> window = getWindow()) {
    if (!getCausal())
      return emitOpError("window only applies to causal attention");
    if (*window < 1)
      return emitOpError("window must be at least 1, got ") << *window;
  }
  if (!std::isfinite(getScale().convertToDouble()))
    return emitOpError("scale must be finite");
  return success();
}
