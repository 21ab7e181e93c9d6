//===- ModelBuilderLayers.cpp - Linear, embedding and normalization -------===//
//
// The layers of the language that are not attention: linear layers,
// embeddings and positional encodings, layer norm, activations and dropout
// (the identity at inference). Each checks its operands' shapes and dtypes
// and reports a located error before building its op.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/ModelBuilder.h"
#include "dialects/Tfm/IR/ShapeRules.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

FailureOr<Tensor> ModelBuilder::linear(const Tensor &x, const Tensor &weight,
                                       const std::optional<Tensor> &bias,
                                       Location loc) {
  if (x.rank() < 1 || weight.rank() != 2)
    return emitError(loc) << "linear needs an input of rank 1 or more and a "
                             "weight [out, in], got "
                          << formatShape(x.shape) << " and "
                          << formatShape(weight.shape);
  // A bf16/f16 input meets a checkpoint's f32 weights: computed in f32,
  // the result rounded to the input's type.
  if (isLowPrecisionFloat(x.elementType()) &&
      isa<FloatType>(weight.elementType()) && !x.sameElementType(weight))
    return computeIn(weight.elementType(), x, loc, [&](const Tensor &wide) {
      return linear(wide, weight, bias, loc);
    });
  if (!x.sameElementType(weight) || !isa<FloatType>(x.elementType()))
    return emitError(loc) << "linear: input and weight must have the same "
                             "float type, got "
                          << x.elementType() << " and " << weight.elementType();
  if (x.shape.back() != weight.shape[1])
    return emitError(loc) << "linear: input " << formatShape(x.shape) << " has "
                          << x.shape.back().str() << " features but the weight "
                          << formatShape(weight.shape) << " expects "
                          << weight.shape[1].str()
                          << " (weights are [out, in])";
  if (bias && (bias->rank() != 1 || bias->shape[0] != weight.shape[0] ||
               !bias->sameElementType(x)))
    return emitError(loc) << "linear: bias " << formatShape(bias->shape)
                          << " must be [" << weight.shape[0].str() << "]";
  Shape shape = x.shape;
  shape.back() = weight.shape[0];
  Value v =
      LinearOp::create(builder, loc, typeOf(shape, x.elementType()), x.value,
                       weight.value, bias ? bias->value : Value());
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::embedding(const Tensor &ids,
                                          const Tensor &table, Location loc,
                                          std::optional<int64_t> paddingIdx) {
  if (!ids.elementType().isInteger(64) && !ids.elementType().isInteger(32))
    return emitError(loc) << "embedding ids must be i64 or i32";
  if (table.rank() != 2 || !isa<FloatType>(table.elementType()))
    return emitError(loc) << "embedding table must be a float [num, dim], got "
                          << formatShape(table.shape);
  int64_t num = table.shape[0].size;
  if (num == 0)
    return emitError(loc) << "embedding table " << formatShape(table.shape)
                          << " has no rows";
  if (paddingIdx && (*paddingIdx < -num || *paddingIdx >= num))
    return emitError(loc) << "embedding: padding_idx " << *paddingIdx
                          << " is outside [" << -num << ", " << num << ")";
  Shape shape = ids.shape;
  shape.push_back(table.shape[1]);
  Value v =
      EmbeddingOp::create(builder, loc, typeOf(shape, table.elementType()),
                          ids.value, table.value, /*scales=*/Value(),
                          /*offsets=*/Value(), /*super_scales=*/Value(),
                          /*packed_rows=*/IntegerAttr());
  std::string name = "embedding";
  if (auto weight = table.value.getDefiningOp<WeightOp>())
    name += " '" + weight.getName().str() + "'";
  std::string message =
      name + ": a token id is outside [0, " + std::to_string(num) + ")";
  int32_t code = statusCode(1, message);
  Value status = CheckIndexOp::create(builder, loc, ids.value,
                                      builder.getI64IntegerAttr(num),
                                      builder.getI32IntegerAttr(code));
  addStatus(status, code, std::move(message));
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::positionalEncoding(const Tensor &x,
                                                   Location loc) {
  if (x.rank() < 2 || !isa<FloatType>(x.elementType()))
    return emitError(loc) << "positional_encoding needs a float [..., seq, "
                             "dim] tensor, got "
                          << formatShape(x.shape);
  if (x.shape.back().isSymbolic())
    return emitError(loc) << "positional_encoding needs a static model "
                             "dimension, got '"
                          << x.shape.back().str() << "'";
  Shape shape(ArrayRef(x.shape).take_back(2));
  Value v = PositionalEncodingOp::create(
      builder, loc, typeOf(shape, x.elementType()), x.value, Value());
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::learnedPositionalEncoding(const Tensor &x,
                                                          const Tensor &table,
                                                          Location loc) {
  if (x.rank() < 2 || !isa<FloatType>(x.elementType()))
    return emitError(loc) << "positional_encoding needs a float [..., seq, "
                             "dim] tensor, got "
                          << formatShape(x.shape);
  if (isLowPrecisionFloat(x.elementType()) &&
      isa<FloatType>(table.elementType()) && !x.sameElementType(table))
    return computeIn(table.elementType(), x, loc, [&](const Tensor &wide) {
      return learnedPositionalEncoding(wide, table, loc);
    });
  if (table.rank() != 2 || !x.sameElementType(table) ||
      table.shape[1] != x.shape.back())
    return emitError(loc) << "positional_encoding: the learned table "
                          << formatShape(table.shape) << " must be [max_len, "
                          << x.shape.back().str() << "] of the input's type";
  int64_t maxLen = table.shape[0].size;
  if (maxLen == 0)
    return emitError(loc) << "positional_encoding: the learned table "
                          << formatShape(table.shape) << " has no rows";
  const Dim &seq = x.shape[x.rank() - 2];
  if (!seq.isSymbolic() && seq.size > maxLen)
    return emitError(loc) << "positional_encoding: sequence length " << seq.size
                          << " exceeds the learned table's " << maxLen
                          << " positions";
  Shape shape(ArrayRef(x.shape).take_back(2));
  Value v = PositionalEncodingOp::create(
      builder, loc, typeOf(shape, x.elementType()), x.value, table.value);
  if (seq.isSymbolic()) {
    std::string name = "positional_encoding";
    if (auto weight = table.value.getDefiningOp<WeightOp>())
      name += " '" + weight.getName().str() + "'";
    std::string message = name + ": the sequence is longer than the table's " +
                          std::to_string(maxLen) + " positions";
    int32_t code = statusCode(2, message);
    Value status = CheckSizeOp::create(
        builder, loc, x.value, builder.getI64IntegerAttr(-2),
        builder.getI64IntegerAttr(maxLen), builder.getI32IntegerAttr(code));
    addStatus(status, code, std::move(message));
  }
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::layerNorm(const Tensor &x,
                                          const std::optional<Tensor> &weight,
                                          const std::optional<Tensor> &bias,
                                          double eps, Location loc) {
  if (x.rank() < 1 || !isa<FloatType>(x.elementType()))
    return emitError(loc) << "layer_norm needs a float tensor of rank 1 or "
                             "more, got "
                          << formatShape(x.shape);
  if (!std::isfinite(eps) || eps < 0)
    return emitError(loc) << "layer_norm: eps must be finite and "
                             "non-negative, got "
                          << eps;
  // With f32 weights a bf16/f16 input normalizes in f32 (its statistics
  // are f32 anyway) and rounds once.
  const std::optional<Tensor> &param = weight ? weight : bias;
  if (isLowPrecisionFloat(x.elementType()) && param &&
      isa<FloatType>(param->elementType()) && !param->sameElementType(x))
    return computeIn(param->elementType(), x, loc, [&](const Tensor &wide) {
      return layerNorm(wide, weight, bias, eps, loc);
    });
  for (const auto *p : {&weight, &bias}) {
    if (!*p)
      continue;
    const Tensor &t = **p;
    if (t.rank() != 1 || t.shape[0] != x.shape.back() || !t.sameElementType(x))
      return emitError(loc)
             << "layer_norm: " << (p == &weight ? "weight" : "bias") << " "
             << formatShape(t.shape) << " must be [" << x.shape.back().str()
             << "] (it normalizes the last dim of " << formatShape(x.shape)
             << ")";
  }
  Value v = LayerNormOp::create(builder, loc, x.value.getType(), x.value,
                                weight ? weight->value : Value(),
                                bias ? bias->value : Value(),
                                builder.getF64FloatAttr(eps));
  return Tensor{v, x.shape};
}

FailureOr<Tensor> ModelBuilder::relu(const Tensor &x, Location loc) {
  if (!isa<FloatType>(x.elementType()))
    return emitError(loc) << "relu needs a float tensor";
  Value v = ReluOp::create(builder, loc, x.value.getType(), x.value);
  return Tensor{v, x.shape};
}

FailureOr<Tensor> ModelBuilder::gelu(const Tensor &x,
                                     GeluApproximation approximate,
                                     Location loc) {
  if (!isa<FloatType>(x.elementType()))
    return emitError(loc) << "gelu needs a float tensor";
  Value v =
      GeluOp::create(builder, loc, x.value.getType(), x.value, approximate);
  return Tensor{v, x.shape};
}

FailureOr<Tensor> ModelBuilder::dropout(const Tensor &x, double p,
                                        Location loc) {
  if (!(p >= 0.0 && p <= 1.0))
    return emitError(loc) << "dropout probability has to be between 0 and 1, "
                             "but got "
                          << p;
  return x; // Inference: dropout is the identity.
}
