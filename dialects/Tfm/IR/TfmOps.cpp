//===- TfmOps.cpp - Verifiers of the tfm operations -----------------------===//
//
// Verifiers check static shape agreement only: a dynamic dimension agrees with
// anything. The frontend tracks symbolic dimensions and reports mismatches
// between named dimensions before ops are built.
//
//===----------------------------------------------------------------------===//

#include "dialects/Tfm/IR/TfmOps.h"
#include "dialects/Tfm/IR/ShapeRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

namespace {
ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Resolves a possibly negative dimension index; returns -1 when out of range.
int64_t normalizeDim(int64_t dim, int64_t rank) {
  if (dim < 0)
    dim += rank;
  return (dim < 0 || dim >= rank) ? -1 : dim;
}

/// A mask must broadcast to `scores` (aligned at the trailing dims, a missing
/// or static-1 dim stretches) and be i1 or of the scores' element type.
LogicalResult verifyMask(Operation *op, StringRef what, Value mask,
                         ArrayRef<int64_t> scores, Type elementType) {
  auto type = cast<RankedTensorType>(mask.getType());
  if (!type.getElementType().isInteger(1) &&
      type.getElementType() != elementType)
    return op->emitOpError() << what << " must be i1 or " << elementType
                             << ", got " << type.getElementType();
  ArrayRef<int64_t> m = type.getShape();
  if (m.empty())
    return op->emitOpError() << what << " must have rank 1 or more";
  bool ok = m.size() <= scores.size();
  for (size_t i = 0; ok && i < m.size(); ++i)
    ok = m[i] == 1 || dimsAgree(m[i], scores[scores.size() - m.size() + i]);
  if (!ok)
    return op->emitOpError()
           << what << " " << formatShape(m)
           << " does not broadcast to the scores " << formatShape(scores);
  return success();
}

LogicalResult verifySameElementType(Operation *op) {
  Type elementType = getElementTypeOrSelf(op->getResult(0).getType());
  for (OpOperand &operand : op->getOpOperands()) {
    Type t = getElementTypeOrSelf(operand.get().getType());
    if (t.isInteger())
      continue; // Only embedding ids are integers; ODS checks where.
    if (t != elementType)
      return op->emitOpError("operand #")
             << operand.getOperandNumber() << " has element type " << t
             << " but the result has " << elementType;
  }
  return success();
}
} // namespace

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty weight name");
  return success();
}

LogicalResult MatmulOp::verify() {
  ArrayRef<int64_t> lhs = shapeOf(getLhs()), rhs = shapeOf(getRhs());
  if (lhs.size() < 2 || rhs.size() < 2)
    return emitOpError("expects lhs and rhs of rank 2 or more, got lhs ")
           << formatShape(lhs) << " and rhs " << formatShape(rhs);
  if (!dimsAgree(lhs.back(), rhs[rhs.size() - 2]))
    return emitOpError("lhs ")
           << formatShape(lhs) << " and rhs " << formatShape(rhs)
           << " do not agree on the contracted dimension ("
           << formatDim(lhs.back()) << " vs " << formatDim(rhs[rhs.size() - 2])
           << ")";
  SmallVector<int64_t> batch;
  if (failed(broadcastShapes(lhs.drop_back(2), rhs.drop_back(2), batch)))
    return emitOpError("batch dimensions of lhs ")
           << formatShape(lhs) << " and rhs " << formatShape(rhs)
           << " do not broadcast";
  batch.push_back(lhs[lhs.size() - 2]);
  batch.push_back(rhs.back());
  if (failed(verifySameElementType(*this)))
    return failure();
  return verifyResultShape(*this, batch);
}

std::pair<int64_t, int64_t> TransposeOp::getNormalizedDims() {
  int64_t rank = getInput().getType().getRank();
  return {normalizeDim(getDim0(), rank), normalizeDim(getDim1(), rank)};
}

LogicalResult TransposeOp::verify() {
  auto [d0, d1] = getNormalizedDims();
  if (d0 < 0 || d1 < 0)
    return emitOpError("dimensions (")
           << int64_t(getDim0()) << ", " << int64_t(getDim1())
           << ") out of range for input " << formatShape(shapeOf(getInput()));
  if (getInput().getType().getElementType() !=
      getResult().getType().getElementType())
    return emitOpError("result element type differs from the input's");
  SmallVector<int64_t> expected(shapeOf(getInput()));
  std::swap(expected[d0], expected[d1]);
  return verifyResultShape(*this, expected);
}

/// Swapping a dimension with itself leaves the tensor as it is.
OpFoldResult TransposeOp::fold(FoldAdaptor) {
  auto [d0, d1] = getNormalizedDims();
  if (d0 == d1 && getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

/// x * 1 and x / 1 are x, bit for bit.
OpFoldResult ScaleOp::fold(FoldAdaptor) {
  if (getFactor().convertToDouble() == 1.0)
    return getInput();
  return {};
}

LogicalResult ScaleOp::verify() {
  double factor = getFactor().convertToDouble();
  if (!std::isfinite(factor))
    return emitOpError("factor must be finite");
  if (getDivide() && factor == 0.0)
    return emitOpError("divides by zero");
  return success();
}

int64_t SoftmaxOp::getNormalizedDim() {
  return normalizeDim(getDim(), getInput().getType().getRank());
}

LogicalResult SoftmaxOp::verify() {
  if (getNormalizedDim() < 0)
    return emitOpError("dimension ")
           << int64_t(getDim()) << " out of range for input "
           << formatShape(shapeOf(getInput()));
  return success();
}

LogicalResult AddOp::verify() {
  if (failed(verifySameElementType(*this)))
    return failure();
  Type element = getResult().getType().getElementType();
  if (getLhs().getType().getElementType() != element ||
      getRhs().getType().getElementType() != element)
    return emitOpError("operands and result must share one element type");
  return verifyBroadcastResult(*this);
}

int64_t ConcatOp::getNormalizedDim() {
  return normalizeDim(getDim(), getResult().getType().getRank());
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  int64_t dim = getNormalizedDim();
  if (dim < 0)
    return emitOpError("dimension ")
           << int64_t(getDim()) << " out of range for rank "
           << getResult().getType().getRank();
  SmallVector<int64_t> expected(shapeOf(getInputs().front()));
  if (expected.size() != size_t(getResult().getType().getRank()))
    return emitOpError("input #0 has rank ")
           << expected.size() << " but the result has rank "
           << getResult().getType().getRank();
  for (auto [i, input] : llvm::enumerate(getInputs().drop_front())) {
    ArrayRef<int64_t> shape = shapeOf(input);
    if (shape.size() != expected.size())
      return emitOpError("input #") << i + 1 << " has rank " << shape.size()
                                    << " but input #0 has " << expected.size();
    for (size_t d = 0; d < shape.size(); ++d) {
      if (int64_t(d) == dim) {
        expected[d] = ShapedType::isDynamic(expected[d]) ||
                              ShapedType::isDynamic(shape[d])
                          ? ShapedType::kDynamic
                          : expected[d] + shape[d];
      } else if (!dimsAgree(expected[d], shape[d])) {
        return emitOpError("input #")
               << i + 1 << " " << formatShape(shape)
               << " disagrees with input #0 in dimension " << d;
      }
    }
  }
  // Integers too: verifySameElementType leaves them to ODS.
  Type element = getResult().getType().getElementType();
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (getElementTypeOrSelf(input.getType()) != element)
      return emitOpError("operand #")
             << i << " has element type " << getElementTypeOrSelf(input)
             << " but the result has " << element;
  return verifyResultShape(*this, expected);
}

LogicalResult MaskedFillOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput()), mask = shapeOf(getMask());
  if (mask.size() > input.size())
    return emitOpError("mask ")
           << formatShape(mask) << " has more dimensions than the input "
           << formatShape(input);
  for (size_t i = 0; i < mask.size(); ++i) {
    int64_t d = input[input.size() - mask.size() + i];
    if (mask[i] != 1 && !dimsAgree(mask[i], d))
      return emitOpError("mask ")
             << formatShape(mask) << " does not broadcast to the input "
             << formatShape(input);
  }
  if (getInput().getType() != getResult().getType())
    return emitOpError("result type must equal the input type");
  return success();
}

LogicalResult CausalMaskOp::verify() {
  if (getInput().getType().getRank() < 2)
    return emitOpError("input must be [..., Sq, Sk]");
  return success();
}

LogicalResult CheckIndexOp::verify() {
  if (int64_t(getBound()) < 1)
    return emitOpError("bound must be positive, got ") << int64_t(getBound());
  if (getCode() == 0)
    return emitOpError("code must be non-zero (0 means success)");
  return success();
}

int64_t CheckSizeOp::getNormalizedDim() {
  return normalizeDim(getDim(), getInput().getType().getRank());
}

LogicalResult CheckSizeOp::verify() {
  if (getNormalizedDim() < 0)
    return emitOpError("dimension ")
           << int64_t(getDim()) << " out of range for input "
           << formatShape(shapeOf(getInput()));
  if (int64_t(getMax()) < 0)
    return emitOpError("max must be non-negative, got ") << int64_t(getMax());
  if (getCode() == 0)
    return emitOpError("code must be non-zero (0 means success)");
  return success();
}

LogicalResult LayerNormOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  if (input.empty())
    return emitOpError("input must have rank 1 or more");
  for (auto [v, name] :
       {std::pair(getWeight(), "weight"), std::pair(getBias(), "bias")}) {
    if (!v)
      continue;
    ArrayRef<int64_t> shape = shapeOf(v);
    if (shape.size() != 1 || !dimsAgree(shape[0], input.back()))
      return emitOpError() << name << " " << formatShape(shape) << " must be ["
                           << formatDim(input.back()) << "] to normalize input "
                           << formatShape(input);
  }
  double eps = getEpsilon().convertToDouble();
  if (!std::isfinite(eps) || eps < 0)
    return emitOpError("eps must be finite and non-negative");
  if (failed(verifySameElementType(*this)))
    return failure();
  return verifyResultShape(*this, input);
}

LogicalResult LinearOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput()), weight = shapeOf(getWeight());
  if (input.empty())
    return emitOpError("input must have rank 1 or more");
  if (weight.size() != 2)
    return emitOpError("weight must be [out, in], got ") << formatShape(weight);
  if (!dimsAgree(input.back(), weight[1]))
    return emitOpError("input ")
           << formatShape(input) << " has " << formatDim(input.back())
           << " features but weight " << formatShape(weight) << " expects "
           << formatDim(weight[1]);
  if (getBias()) {
    ArrayRef<int64_t> bias = shapeOf(getBias());
    if (bias.size() != 1 || !dimsAgree(bias[0], weight[0]))
      return emitOpError("bias ")
             << formatShape(bias) << " must be [" << formatDim(weight[0])
             << "] to match weight " << formatShape(weight);
  }
  SmallVector<int64_t> expected(input);
  expected.back() = weight[0];
  if (failed(verifySameElementType(*this)))
    return failure();
  return verifyResultShape(*this, expected);
}

/// The quantized gather's panels and block scales: the encoding of a
/// block-quantized `tfm.packed_linear` weight (TfmKernelOps.td), of `rows`
/// columns of `dim` k.
static LogicalResult verifyBlockPanels(EmbeddingOp op, int64_t rows,
                                       int64_t dim) {
  ArrayRef<int64_t> weight = shapeOf(op.getWeight());
  if (weight[2] % 4 != 0)
    return op.emitOpError("quantized panels must be [panels, depth, width * "
                          "4], got ")
           << formatShape(weight);
  int64_t width = weight[2] / 4, columns = weight[0] * width;
  if (weight[0] * width < rows || (weight[0] - 1) * width >= rows)
    return op.emitOpError("packed weight ")
           << formatShape(weight) << " does not hold exactly the panels of "
           << rows << " rows";
  if (ShapedType::isDynamic(dim) || dim % 32 != 0 ||
      !llvm::is_contained({dim / 4, dim / 8, dim / 32 * 5, dim / 32 * 6},
                          weight[1]))
    return op.emitOpError("quantized panels of depth ")
           << weight[1] << " hold no dim " << formatDim(dim)
           << " (dim / 4, / 8, / 32 * 5 or * 6, dim a multiple of 32)";
  ArrayRef<int64_t> scales = shapeOf(op.getScales());
  if (scales.size() != 2 || ShapedType::isDynamicShape(scales) ||
      scales[0] <= 0 || dim % scales[0] != 0 || scales[1] != columns)
    return op.emitOpError("scales must be [dim / block, ")
           << columns << "], got " << formatShape(scales);
  auto elementOf = [](Value v) {
    return cast<ShapedType>(v.getType()).getElementType();
  };
  bool integerScales = elementOf(op.getScales()).isInteger(8);
  if (!integerScales && !elementOf(op.getScales()).isF16())
    return op.emitOpError("block scales are f16, or i8 with super_scales");
  if (Value offsets = op.getOffsets())
    if (shapeOf(offsets) != scales ||
        elementOf(offsets) != elementOf(op.getScales()))
      return op.emitOpError("offsets must match the scales, got ")
             << offsets.getType();
  if (integerScales != bool(op.getSuperScales()))
    return op.emitOpError("i8 block scales, and only they, take "
                          "super_scales");
  if (Value super = op.getSuperScales()) {
    ArrayRef<int64_t> s = shapeOf(super);
    if (s.size() != 3 || ShapedType::isDynamicShape(s) ||
        s[0] != (op.getOffsets() ? 2 : 1) || s[1] <= 0 || dim % s[1] != 0 ||
        (dim / s[1]) % (dim / scales[0]) != 0 || s[2] != columns)
      return op.emitOpError("super_scales must be [")
             << (op.getOffsets() ? 2 : 1) << ", dim / super-block, " << columns
             << "], got " << formatShape(s);
  }
  return success();
}

LogicalResult EmbeddingOp::verify() {
  ArrayRef<int64_t> weight = shapeOf(getWeight());
  bool quantized =
      cast<ShapedType>(getWeight().getType()).getElementType().isInteger(8);
  if ((getOffsets() || getSuperScales()) && !getScales())
    return emitOpError("offsets and super_scales come with scales");
  if (std::optional<int64_t> rows = getPackedRows()) {
    if (quantized != bool(getScales()))
      return emitOpError("i8 panels, and only they, take scales");
    if (weight.size() != 3 || ShapedType::isDynamicShape(weight))
      return emitOpError("packed weight must be static [panels, dim, width], "
                         "got ")
             << formatShape(weight);
    ArrayRef<int64_t> result = shapeOf(getResult());
    int64_t dim = quantized ? result.back() : weight[1];
    if (quantized) {
      if (failed(verifyBlockPanels(*this, *rows, dim)))
        return failure();
    } else if (weight[0] * weight[2] < *rows ||
               (weight[0] - 1) * weight[2] >= *rows) {
      return emitOpError("packed weight ")
             << formatShape(weight) << " does not hold exactly the panels of "
             << *rows << " rows";
    }
    SmallVector<int64_t> expected(shapeOf(getIndices()));
    expected.push_back(dim);
    if (!quantized && failed(verifySameElementType(*this)))
      return failure();
    return verifyResultShape(*this, expected);
  }
  if (quantized || getScales())
    return emitOpError("an i8 table, and scales, come packed (packed_rows)");
  if (weight.size() != 2)
    return emitOpError("weight must be [num_embeddings, dim], got ")
           << formatShape(weight);
  if (weight[0] == 0)
    return emitOpError("weight has no rows to look up");
  SmallVector<int64_t> expected(shapeOf(getIndices()));
  expected.push_back(weight[1]);
  if (failed(verifySameElementType(*this)))
    return failure();
  return verifyResultShape(*this, expected);
}

LogicalResult PositionalEncodingOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  if (input.size() < 2)
    return emitOpError("input must be [..., seq, dim], got ")
           << formatShape(input);
  if (Value table = getTable()) {
    ArrayRef<int64_t> t = shapeOf(table);
    if (t.size() != 2 || !dimsAgree(t[1], input.back()))
      return emitOpError("table ") << formatShape(t) << " must be [max_len, "
                                   << formatDim(input.back()) << "]";
    if (t[0] == 0)
      return emitOpError("table has no rows");
  }
  if (failed(verifySameElementType(*this)))
    return failure();
  return verifyResultShape(*this, input.take_back(2));
}

double SdpaOp::getScaleOrDefault() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  return 1.0 / std::sqrt(double(shapeOf(getQuery()).back()));
}

LogicalResult SdpaOp::verify() {
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey()),
                    v = shapeOf(getValue());
  if (q.size() < 2 || k.size() != q.size() || v.size() != q.size())
    return emitOpError("query ")
           << formatShape(q) << ", key " << formatShape(k) << " and value "
           << formatShape(v) << " must have the same rank, 2 or more";
  // Key and value broadcast over their static unit batch dims: a K/V head
  // shared by a group of query heads.
  for (size_t d = 0; d + 2 < q.size(); ++d)
    if ((k[d] != 1 && !dimsAgree(q[d], k[d])) ||
        (v[d] != 1 && !dimsAgree(q[d], v[d])))
      return emitOpError("query ")
             << formatShape(q) << ", key " << formatShape(k) << " and value "
             << formatShape(v) << " disagree in batch dimension " << d;
  if (!dimsAgree(q.back(), k.back()))
    return emitOpError("query ")
           << formatShape(q) << " and key " << formatShape(k)
           << " disagree on the head dimension (" << formatDim(q.back())
           << " vs " << formatDim(k.back()) << ")";
  if (!dimsAgree(k[k.size() - 2], v[v.size() - 2]))
    return emitOpError("key ")
           << formatShape(k) << " and value " << formatShape(v)
           << " disagree on the key sequence length";
  if (std::optional<APFloat> scale = getScale()) {
    if (!std::isfinite(scale->convertToDouble()))
      return emitOpError("scale must be finite");
  } else if (ShapedType::isDynamic(q.back())) {
    return emitOpError("needs a static head dimension or an explicit scale");
  }
  if (Value mask = getMask()) {
    SmallVector<int64_t> scores(q.drop_back());
    scores.push_back(k[k.size() - 2]);
    if (failed(verifyMask(*this, "mask", mask, scores,
                          getQuery().getType().getElementType())))
      return failure();
  }
  SmallVector<int64_t> expected(q);
  expected.back() = v.back();
  if (failed(verifySameElementType(*this)))
    return failure();
  return verifyResultShape(*this, expected);
}

LogicalResult MultiHeadAttentionOp::verify() {
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey()),
                    v = shapeOf(getValue());
  if (q.size() < 2 || q.size() > 3 || k.size() != q.size() ||
      v.size() != q.size())
    return emitOpError("query ")
           << formatShape(q) << ", key " << formatShape(k) << " and value "
           << formatShape(v)
           << " must all be [seq, embed] or [batch, seq, embed]";
  if (q.size() == 3 && (!dimsAgree(q[0], k[0]) || !dimsAgree(q[0], v[0])))
    return emitOpError("query, key and value disagree on the batch size");
  if (!dimsAgree(k[k.size() - 2], v[v.size() - 2]))
    return emitOpError("key ")
           << formatShape(k) << " and value " << formatShape(v)
           << " disagree on the key sequence length";
  int64_t embed = q.back();
  if (ShapedType::isDynamic(embed))
    return emitOpError("needs a static embedding dimension");
  if (embed % getNumHeads() != 0)
    return emitOpError("embedding dimension ")
           << embed << " is not divisible by " << getNumHeads() << " heads";
  auto checkWeight = [&](Value w, StringRef name,
                         ArrayRef<int64_t> expected) -> LogicalResult {
    ArrayRef<int64_t> shape = shapeOf(w);
    if (shape.size() == expected.size() &&
        llvm::all_of(llvm::zip(shape, expected), [](auto pair) {
          return dimsAgree(std::get<0>(pair), std::get<1>(pair));
        }))
      return success();
    return emitOpError() << name << " is " << formatShape(shape)
                         << " but must be " << formatShape(expected);
  };
  if (failed(checkWeight(getQWeight(), "q_weight", {embed, embed})) ||
      failed(checkWeight(getKWeight(), "k_weight", {embed, k.back()})) ||
      failed(checkWeight(getVWeight(), "v_weight", {embed, v.back()})) ||
      failed(checkWeight(getOutWeight(), "out_weight", {embed, embed})))
    return failure();
  Value biases[] = {getQBias(), getKBias(), getVBias(), getOutBias()};
  int numBiases = llvm::count_if(biases, [](Value b) { return bool(b); });
  if (numBiases != 0 && numBiases != 4)
    return emitOpError("needs all four biases or none");
  StringRef biasNames[] = {"q_bias", "k_bias", "v_bias", "out_bias"};
  for (auto [bias, name] : llvm::zip(biases, biasNames))
    if (bias && failed(checkWeight(bias, name, {embed})))
      return failure();

  bool batched = q.size() == 3;
  int64_t heads = getNumHeads();
  int64_t sq = q[q.size() - 2], sk = k[k.size() - 2];
  Type elementType = getQuery().getType().getElementType();
  auto checkMask =
      [&](Value mask, StringRef name,
          ArrayRef<SmallVector<int64_t>> allowed) -> LogicalResult {
    auto type = cast<RankedTensorType>(mask.getType());
    if (!type.getElementType().isInteger(1) &&
        type.getElementType() != elementType)
      return emitOpError() << name << " must be i1 or " << elementType
                           << ", got " << type.getElementType();
    for (ArrayRef<int64_t> shape : allowed)
      if (shape.size() == size_t(type.getRank()) &&
          llvm::all_of(llvm::zip(shape, type.getShape()), [](auto pair) {
            return dimsAgree(std::get<0>(pair), std::get<1>(pair));
          }))
        return success();
    InFlightDiagnostic diag = emitOpError()
                              << name << " " << formatShape(type.getShape())
                              << " must be ";
    for (auto [i, shape] : llvm::enumerate(allowed))
      diag << (i ? " or " : "") << formatShape(shape);
    return diag;
  };
  int64_t batchHeads = ShapedType::kDynamic;
  if (batched && !ShapedType::isDynamic(q[0]))
    batchHeads = q[0] * heads;
  if (Value mask = getKeyPaddingMask()) {
    SmallVector<int64_t> shape =
        batched ? SmallVector<int64_t>{q[0], sk} : SmallVector<int64_t>{sk};
    if (failed(checkMask(mask, "key_padding_mask", {shape})))
      return failure();
  }
  if (Value mask = getAttnMask()) {
    SmallVector<int64_t> perHead = {batched ? batchHeads : heads, sq, sk};
    if (failed(checkMask(mask, "attn_mask", {{sq, sk}, perHead})))
      return failure();
  }
  if (Value weights = getAttnWeights()) {
    SmallVector<int64_t> expected;
    if (batched)
      expected.push_back(q[0]);
    if (!getAverageAttnWeights())
      expected.push_back(heads);
    expected.append({sq, sk});
    ArrayRef<int64_t> shape = shapeOf(weights);
    if (shape.size() != expected.size() ||
        !llvm::all_of(llvm::zip(shape, expected), [](auto pair) {
          return dimsAgree(std::get<0>(pair), std::get<1>(pair));
        }))
      return emitOpError("attention weights ")
             << formatShape(shape) << " must be " << formatShape(expected);
    if (cast<RankedTensorType>(weights.getType()).getElementType() !=
        elementType)
      return emitOpError("attention weights must be ") << elementType;
  }
  SmallVector<int64_t> expected(q);
  if (failed(verifySameElementType(*this)))
    return failure();
  return verifyResultShape(*this, expected);
}

/// A destination-style op on buffers reads every operand but `init`, which
/// it writes.
static void addBufferEffects(
    Operation *op, OpOperand &init,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &operand : op->getOpOperands()) {
    if (&operand == &init)
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

void AttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (hasPureBufferSemantics())
    addBufferEffects(getOperation(), getInitMutable(), effects);
}

LogicalResult CacheAppendOp::verify() {
  bool tensors = isa<RankedTensorType>(getCache().getType());
  for (Value v : getOperation()->getOperands()) {
    auto type = dyn_cast<ShapedType>(v.getType());
    if (!type || !type.hasRank() || isa<RankedTensorType>(type) != tensors)
      return emitOpError("operands must all be ranked tensors or all memrefs");
  }
  if (tensors != bool(getResult()))
    return emitOpError(tensors ? "on tensors returns the updated cache"
                               : "on memrefs returns the status alone");
  auto shape = [](Value v) { return cast<ShapedType>(v.getType()).getShape(); };
  ArrayRef<int64_t> rows = shape(getRows()), cache = shape(getCache()),
                    offset = shape(getOffset());
  int64_t rank = cache.size(), dim = getDim();
  if (rank < 2 || dim < 1 || dim >= rank)
    return emitOpError("dim ") << dim << " must name a non-batch dimension of "
                               << formatShape(cache);
  if (int64_t(rows.size()) != rank)
    return emitOpError("rows ")
           << formatShape(rows) << " and cache " << formatShape(cache)
           << " must have the same rank";
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim && !dimsAgree(rows[d], cache[d]))
      return emitOpError("rows ")
             << formatShape(rows) << " and cache " << formatShape(cache)
             << " disagree in dimension " << d;
  if (cast<ShapedType>(getRows().getType()).getElementType() !=
      cast<ShapedType>(getCache().getType()).getElementType())
    return emitOpError("rows and cache must share an element type");
  if (offset.size() != 1 || !dimsAgree(offset[0], cache[0]) ||
      !cast<ShapedType>(getOffset().getType()).getElementType().isInteger(64))
    return emitOpError("offset must be i64 [")
           << formatDim(cache[0]) << "], one value per sequence";
  if (getCode() == 0)
    return emitOpError("code must be non-zero");
  if (tensors && getResult().getType() != getCache().getType())
    return emitOpError("result must have the cache's type");
  return success();
}

void CacheAppendOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (!hasPureBufferSemantics())
    return;
  // The cache is read as well as written: the rows it keeps are its own.
  for (OpOperand &operand : getOperation()->getOpOperands())
    effects.emplace_back(MemoryEffects::Read::get(), &operand,
                         SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &getCacheMutable(),
                       SideEffects::DefaultResource::get());
}

LogicalResult PackedLinearOp::verify() {
  bool tensors = isa<RankedTensorType>(getInit().getType());
  for (Value v : getOperation()->getOperands()) {
    auto type = dyn_cast<ShapedType>(v.getType());
    if (!type || !type.hasRank() || isa<RankedTensorType>(type) != tensors)
      return emitOpError("operands must all be ranked tensors or all memrefs");
  }
  auto elementOf = [](Value v) {
    return cast<ShapedType>(v.getType()).getElementType();
  };
  for (Value v : {getInput(), getBias(), getResidual(), getInit()})
    if (v && !elementOf(v).isF32())
      return emitOpError("input, bias, residual and init must be f32");
  Type packedType = elementOf(getPackedWeight());
  bool quantized = packedType.isInteger(8);
  if (!packedType.isF32() && !packedType.isBF16() && !quantized)
    return emitOpError("packed weight must be f32, bf16 or i8");
  bool blocks = hasBlockScales();
  if (getWeightOffsets() && !(quantized && blocks))
    return emitOpError("weight_offsets need block weight_scales");
  if (quantized && blocks && getWeightSums())
    return emitOpError("block scales take no weight_sums");
  if (quantized != bool(getWeightScales()) ||
      (quantized && !blocks) != bool(getWeightSums()))
    return emitOpError("an i8 packed weight, and only it, takes "
                       "weight_scales and weight_sums");
  if (tensors != (getNumResults() == 1))
    return emitOpError(tensors ? "on tensors must return one result"
                               : "on memrefs returns nothing");
  auto shape = [](Value v) { return cast<ShapedType>(v.getType()).getShape(); };
  ArrayRef<int64_t> x = shape(getInput()), w = shape(getPackedWeight()),
                    o = shape(getInit());
  int64_t group = getPackGroup();
  // Panels and K are dynamic for a matrix packed at run time
  // (tfm-pack-matmul); the panel width is the kernel's, always static.
  if (w.size() != 3 || ShapedType::isDynamic(w[2]) || w[2] < 1 ||
      w[2] % group != 0)
    return group == 1 ? emitOpError("packed weight must be [panels, K, "
                                    "width] with a static width")
                      : emitOpError("packed weight must be [panels, K / ")
                            << group << ", width * " << group
                            << "] with a static width";
  if (x.empty() || o.size() != x.size())
    return emitOpError("input and init must have the same rank, 1 or more");
  for (size_t d = 0; d + 1 < x.size(); ++d)
    if (!dimsAgree(x[d], o[d]))
      return emitOpError("input ")
             << formatShape(x) << " and init " << formatShape(o)
             << " disagree in dimension " << d;
  int64_t depth = ShapedType::isDynamic(x.back())
                      ? x.back()
                      : llvm::divideCeilSigned(x.back(), group);
  // Block-quantized 4-bit weights (GGUF Q4_0) hold two k per byte: a lane
  // of 4 bytes is 8 k, `[panels, K/8, nr*4]`; 5- and 6-bit ones add a bit
  // plane row per high bit and 32 k, `[panels, K/32 * (4 + bits), nr*4]`.
  bool nibbles = blocks && !ShapedType::isDynamic(x.back()) &&
                 !ShapedType::isDynamic(w[1]) && x.back() % 32 == 0 &&
                 (w[1] * 8 == x.back() || w[1] * 32 == x.back() * 5 ||
                  w[1] * 32 == x.back() * 6);
  if (nibbles)
    depth = w[1];
  if (!dimsAgree(depth, w[1]))
    return emitOpError("input ")
           << formatShape(x) << " does not have the packed weight's "
           << (group == 1 ? "" : "about ") << w[1] * group << " input features";
  int64_t width = w[2] / group;
  bool staticPanels = !ShapedType::isDynamic(w[0]);
  if (staticPanels && (ShapedType::isDynamic(o.back()) ||
                       llvm::divideCeilSigned(o.back(), width) != w[0]))
    return emitOpError("init ")
           << formatShape(o) << " needs " << w[0] * width - width + 1 << " to "
           << w[0] * width << " static output features";
  auto checkPerColumn = [&](Value v, StringRef name,
                            bool (*isElement)(Type)) -> LogicalResult {
    if (!v)
      return success();
    if (!staticPanels)
      return emitOpError("a ") << name
                               << " needs a packed weight of static "
                                  "shape";
    if (shape(v) != ArrayRef<int64_t>{w[0] * width})
      return emitOpError(name) << " must be [" << w[0] * width << "] (padded)";
    if (!isElement(elementOf(v)))
      return emitOpError(name) << " has the wrong element type";
    return success();
  };
  if (blocks) {
    // One scale (and offset) per block of 16 or 32 k and column: K static,
    // whole blocks.
    auto scalesType = cast<ShapedType>(getWeightScales().getType());
    if (ShapedType::isDynamic(x.back()) || x.back() % 16 != 0)
      return emitOpError("block scales need a static K that is a multiple "
                         "of 16, not ")
             << formatShape(x);
    int64_t block = getWeightBlock();
    if (block != 16 && block != 32)
      return emitOpError("block weight_scales must have K / 32 or K / 16 "
                         "rows (")
             << x.back() / 32 << " or " << x.back() / 16 << "), not "
             << formatShape(scalesType.getShape());
    for (Value v : {getWeightScales(), getWeightOffsets()}) {
      if (!v)
        continue;
      auto type = cast<ShapedType>(v.getType());
      if (!staticPanels ||
          type.getShape() != ArrayRef<int64_t>{x.back() / block, w[0] * width})
        return emitOpError("block weight_scales and weight_offsets must be [")
               << x.back() / block << ", "
               << (staticPanels ? w[0] * width : ShapedType::kDynamic)
               << "] (K / " << block << ", padded N)";
    }
    // f32, f16 as the file has it, or a K-quant's i8 sub-block integers
    // times f16 super-block values.
    Type scaleElement = elementOf(getWeightScales());
    Value super = getWeightSuperScales();
    bool integers = scaleElement.isInteger(8);
    if (!scaleElement.isF32() && !scaleElement.isF16() && !integers)
      return emitOpError("block weight_scales must be f32, f16 or i8");
    if (Value offsets = getWeightOffsets();
        offsets && elementOf(offsets) != scaleElement)
      return emitOpError("block weight_offsets must have weight_scales' "
                         "element type");
    if (integers != bool(super))
      return emitOpError("i8 block weight_scales, and only they, take "
                         "weight_super_scales");
    if (super) {
      auto superType = cast<ShapedType>(super.getType());
      ArrayRef<int64_t> s = superType.getShape();
      int64_t parts = getWeightOffsets() ? 2 : 1;
      if (!superType.getElementType().isF16() || s.size() != 3 ||
          s[0] != parts || ShapedType::isDynamic(s[1]) || s[1] <= 0 ||
          x.back() % s[1] != 0 || (x.back() / s[1]) % block != 0 ||
          s[2] != w[0] * width)
        return emitOpError("weight_super_scales must be f16 [")
               << parts << ", K / super-block, " << w[0] * width
               << "], the super-block a multiple of " << block << ", not "
               << superType;
    }
  } else if (getWeightSuperScales()) {
    return emitOpError("weight_super_scales need block weight_scales");
  }
  if (failed(checkPerColumn(getBias(), "bias",
                            [](Type t) { return t.isF32(); })) ||
      failed(checkPerColumn(blocks ? Value() : getWeightScales(),
                            "weight_scales",
                            [](Type t) { return t.isF32(); })) ||
      failed(checkPerColumn(getWeightSums(), "weight_sums",
                            [](Type t) { return t.isInteger(32); })))
    return failure();
  if (Value residual = getResidual())
    if (shape(residual).size() != o.size() ||
        !llvm::all_of(llvm::zip(shape(residual), o), [](auto pair) {
          return dimsAgree(std::get<0>(pair), std::get<1>(pair));
        }))
      return emitOpError("residual must have the result's shape");
  return success();
}

void PackedLinearOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (hasPureBufferSemantics())
    addBufferEffects(getOperation(), getInitMutable(), effects);
}

#define GET_OP_CLASSES
#include "dialects/Tfm/IR/TfmOps.cpp.inc"

bool mlir::tfm::hasContiguousRows(MemRefType type) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         (strides.empty() || strides.back() == 1);
}

bool mlir::tfm::isGemmReadable(MemRefType type, bool indexedDirectly) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  return (indexedDirectly || type.getRank() <= 2) &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}
