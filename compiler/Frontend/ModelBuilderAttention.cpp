//===- ModelBuilderAttention.cpp - Attention and encoder layers -----------===//
//
// Scaled dot-product attention, multi-head attention (PyTorch's packed or
// separate projections, key/value caches) and nn.TransformerEncoderLayer,
// with the PyTorch state_dict names of their weights.
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

MultiHeadAttentionWeights MultiHeadAttentionWeights::pytorch(StringRef prefix,
                                                             bool bias) {
  std::string p = prefix.empty() ? "" : (prefix + ".").str();
  MultiHeadAttentionWeights w;
  w.inProjWeight = p + "in_proj_weight";
  w.qProjWeight = p + "q_proj_weight";
  w.kProjWeight = p + "k_proj_weight";
  w.vProjWeight = p + "v_proj_weight";
  w.outWeight = p + "out_proj.weight";
  if (bias) {
    w.inProjBias = p + "in_proj_bias";
    w.outBias = p + "out_proj.bias";
  }
  return w;
}

TransformerEncoderLayerWeights
TransformerEncoderLayerWeights::pytorch(StringRef prefix) {
  std::string p = prefix.empty() ? "" : (prefix + ".").str();
  TransformerEncoderLayerWeights w;
  w.attention = MultiHeadAttentionWeights::pytorch(p + "self_attn", true);
  w.linear1Weight = p + "linear1.weight";
  w.linear1Bias = p + "linear1.bias";
  w.linear2Weight = p + "linear2.weight";
  w.linear2Bias = p + "linear2.bias";
  w.norm1Weight = p + "norm1.weight";
  w.norm1Bias = p + "norm1.bias";
  w.norm2Weight = p + "norm2.weight";
  w.norm2Bias = p + "norm2.bias";
  return w;
}

LogicalResult ModelBuilder::checkMask(const Tensor &mask, ArrayRef<Dim> scores,
                                      Type floatType, StringRef what,
                                      Location loc) {
  Type element = mask.elementType();
  if (!element.isInteger(1) && element != floatType)
    return emitError(loc) << what << " must be bool or " << floatType
                          << " (the scores' type), got " << element;
  bool ok = mask.rank() >= 1 && mask.rank() <= int64_t(scores.size());
  for (int64_t i = 0; ok && i < mask.rank(); ++i)
    ok = mask.shape[i] == Dim::of(1) ||
         mask.shape[i] == scores[scores.size() - mask.rank() + i];
  if (!ok)
    return emitError(loc) << what << " " << formatShape(mask.shape)
                          << " does not broadcast to the attention scores "
                          << formatShape(scores);
  return success();
}

FailureOr<Tensor> ModelBuilder::sdpa(const Tensor &q, const Tensor &k,
                                     const Tensor &v,
                                     std::optional<double> scale,
                                     Location loc) {
  SdpaOptions options;
  options.scale = scale;
  return sdpa(q, k, v, options, loc);
}

FailureOr<Tensor> ModelBuilder::sdpa(const Tensor &q, const Tensor &k,
                                     const Tensor &v,
                                     const SdpaOptions &options, Location loc) {
  if (q.rank() < 2 || k.rank() != q.rank() || v.rank() != q.rank())
    return emitError(loc) << "sdpa needs query, key and value of the same "
                             "rank (2 or more), got "
                          << formatShape(q.shape) << ", "
                          << formatShape(k.shape) << ", "
                          << formatShape(v.shape);
  if (!isa<FloatType>(q.elementType()) || !isa<FloatType>(k.elementType()) ||
      !isa<FloatType>(v.elementType()))
    return emitError(loc) << "sdpa operands must be floats, got "
                          << q.elementType() << ", " << k.elementType()
                          << " and " << v.elementType();
  if (!q.sameElementType(k) || !q.sameElementType(v)) {
    // f32 attention over a bf16/f16 key/value cache reads it as it is
    // (the kernels widen K and V as they load them); any other mix computes
    // in the query's type.
    bool narrowCache =
        (options.kvLength || options.queryOffset || options.window) &&
        q.elementType().isF32();
    auto keep = [&](const Tensor &t) {
      return narrowCache &&
             (t.elementType().isBF16() || t.elementType().isF16());
    };
    FailureOr<Tensor> kq = keep(k) ? k : castTo(k, q.elementType(), loc);
    FailureOr<Tensor> vq = keep(v) ? v : castTo(v, q.elementType(), loc);
    if (failed(kq) || failed(vq))
      return failure();
    if (!kq->sameElementType(k) || !vq->sameElementType(v))
      return sdpa(q, *kq, *vq, options, loc);
  }
  for (int64_t i = 0; i + 2 < q.rank(); ++i)
    for (const Tensor *t : {&k, &v})
      if (q.shape[i] != t->shape[i] && t->shape[i] != Dim::of(1))
        return emitError(loc)
               << "sdpa: batch dimension " << i << " differs between query "
               << formatShape(q.shape) << ", key " << formatShape(k.shape)
               << " and value " << formatShape(v.shape);
  // Grouped-query attention: keys and values of size 1 in a batch dim (a
  // K/V head shared by a group of query heads) are read in place by every
  // kernel, never copied per query head.
  if (q.shape.back() != k.shape.back())
    return emitError(loc) << "sdpa: query " << formatShape(q.shape)
                          << " and key " << formatShape(k.shape)
                          << " differ in the last dimension";
  if (k.shape[k.rank() - 2] != v.shape[v.rank() - 2])
    return emitError(loc) << "sdpa: key " << formatShape(k.shape)
                          << " and value " << formatShape(v.shape)
                          << " differ in sequence length";
  if (q.shape.back().isSymbolic())
    return emitError(loc) << "sdpa needs a static head dimension";
  if (options.scale && !std::isfinite(*options.scale))
    return emitError(loc) << "sdpa scale must be finite";
  if (options.attnMask) {
    Shape scores(ArrayRef(q.shape).drop_back());
    scores.push_back(k.shape[k.rank() - 2]);
    if (failed(checkMask(*options.attnMask, scores, q.elementType(),
                         "sdpa: attn_mask", loc)))
      return failure();
  }
  Shape shape = q.shape;
  shape.back() = v.shape.back();
  if (options.kvLength || options.queryOffset || options.window)
    return cachedAttention(q, k, v, options, shape, loc);
  Value result = SdpaOp::create(
      builder, loc, typeOf(shape, q.elementType()), q.value, k.value, v.value,
      options.attnMask ? options.attnMask->value : Value(),
      options.scale ? builder.getF64FloatAttr(*options.scale) : FloatAttr(),
      options.isCausal ? builder.getUnitAttr() : UnitAttr());
  return Tensor{result, shape};
}

FailureOr<Tensor>
ModelBuilder::cachedAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                              const SdpaOptions &options, const Shape &shape,
                              Location loc) {
  if (q.rank() < 3)
    return emitError(loc) << "sdpa: kv_length, query_offset and window need "
                             "a leading batch dimension, got "
                          << formatShape(q.shape);
  if (options.attnMask)
    return emitError(loc) << "sdpa: attn_mask cannot be combined with "
                             "kv_length, query_offset or window";
  if (options.queryOffset && !options.isCausal)
    return emitError(loc) << "sdpa: query_offset places causal queries; it "
                             "needs is_causal = true";
  if (options.window && !options.isCausal)
    return emitError(loc) << "sdpa: window is a causal sliding window; it "
                             "needs is_causal = true";
  if (options.window && *options.window < 1)
    return emitError(loc) << "sdpa: window must be at least 1, got "
                          << *options.window;
  for (const auto &[t, name] : {std::pair(options.kvLength, "kv_length"),
                                std::pair(options.queryOffset, "query_offset")})
    if (t && (t->rank() != 1 || !t->elementType().isInteger(64) ||
              t->shape[0] != q.shape[0]))
      return emitError(loc)
             << "sdpa: " << name << " must be i64 "
             << formatShape(ArrayRef(q.shape).take_front())
             << ", one value per sequence; got " << formatShape(t->shape);
  // Straight to the fused op: its kernel is what bounds the keys visited.
  RankedTensorType type = typeOf(shape, q.elementType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(
          builder, loc, d + 1 < type.getRank() ? q.value : v.value, d));
  Value init = tensor::EmptyOp::create(builder, loc, type, sizes);
  double scale =
      options.scale.value_or(1.0 / std::sqrt(double(q.shape.back().size)));
  Value result =
      AttentionOp::create(
          builder, loc, TypeRange{type}, q.value, k.value, v.value, Value(),
          options.kvLength ? options.kvLength->value : Value(),
          options.queryOffset ? options.queryOffset->value : Value(), init,
          builder.getF64FloatAttr(scale),
          options.isCausal ? builder.getUnitAttr() : UnitAttr(),
          /*indexing_maps=*/ArrayAttr(),
          options.window ? builder.getI64IntegerAttr(*options.window)
                         : IntegerAttr())
          .getResult()[0];
  return Tensor{result, shape};
}

FailureOr<Tensor> ModelBuilder::sliceRows(const Tensor &x, int64_t begin,
                                          int64_t count, Location loc) {
  Shape shape = x.shape;
  shape[0] = Dim::of(count);
  SmallVector<OpFoldResult> offsets(x.rank(), builder.getIndexAttr(0));
  offsets[0] = builder.getIndexAttr(begin);
  SmallVector<OpFoldResult> sizes, strides(x.rank(), builder.getIndexAttr(1));
  for (const Dim &d : shape)
    sizes.push_back(builder.getIndexAttr(d.size));
  Value v = tensor::ExtractSliceOp::create(builder, loc,
                                           typeOf(shape, x.elementType()),
                                           x.value, offsets, sizes, strides);
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::multiHeadAttention(
    const Tensor &q, const Tensor &k, const Tensor &v, int64_t heads,
    const MultiHeadAttentionWeights &names, Location loc) {
  FailureOr<AttentionResult> r =
      multiHeadAttention(q, k, v, heads, names, {}, loc);
  if (failed(r))
    return failure();
  return r->output;
}

FailureOr<ModelBuilder::AttentionResult> ModelBuilder::multiHeadAttention(
    const Tensor &query, const Tensor &key, const Tensor &value, int64_t heads,
    const MultiHeadAttentionWeights &names,
    const MultiHeadAttentionOptions &options, Location loc) {
  if (query.rank() < 2 || query.rank() > 3 || key.rank() != query.rank() ||
      value.rank() != query.rank())
    return emitError(loc) << "multi_head_attention needs query, key and value "
                             "as [seq, embed] or [batch, seq, embed], got "
                          << formatShape(query.shape) << ", "
                          << formatShape(key.shape) << ", "
                          << formatShape(value.shape);
  // A bf16/f16 layer meets the checkpoint's f32 weights: it computes in f32
  // (its float masks too) and rounds its outputs once.
  Type narrow = query.elementType();
  if (isLowPrecisionFloat(narrow)) {
    Type f32 = builder.getF32Type();
    // Once per distinct value: self-attention stays self-attention.
    SmallVector<std::pair<Value, Tensor>> widened;
    auto widen = [&](const Tensor &t) -> FailureOr<Tensor> {
      if (t.elementType() != narrow)
        return t;
      for (auto &[original, result] : widened)
        if (original == t.value)
          return result;
      FailureOr<Tensor> result = castTo(t, f32, loc);
      if (succeeded(result))
        widened.push_back({t.value, *result});
      return result;
    };
    FailureOr<Tensor> q = widen(query), k = widen(key), v = widen(value);
    if (failed(q) || failed(k) || failed(v))
      return failure();
    MultiHeadAttentionOptions wide = options;
    for (std::optional<Tensor> *mask : {&wide.keyPaddingMask, &wide.attnMask})
      if (*mask) {
        FailureOr<Tensor> m = widen(**mask);
        if (failed(m))
          return failure();
        *mask = *m;
      }
    FailureOr<AttentionResult> result =
        multiHeadAttention(*q, *k, *v, heads, names, wide, loc);
    if (failed(result))
      return failure();
    FailureOr<Tensor> output = castTo(result->output, narrow, loc);
    if (failed(output))
      return failure();
    result->output = *output;
    if (result->weights) {
      FailureOr<Tensor> weights = castTo(*result->weights, narrow, loc);
      if (failed(weights))
        return failure();
      result->weights = *weights;
    }
    return result;
  }
  // Sequence-first inputs [seq, batch, E] are transposed to batch first
  // (once per distinct value) and the output back.
  bool batched = query.rank() == 3;
  bool seqFirst = batched && !options.batchFirst;
  SmallVector<std::pair<Value, Tensor>> transposed;
  auto batchFirst = [&](const Tensor &t) -> Tensor {
    if (!seqFirst)
      return t;
    for (auto &[original, result] : transposed)
      if (original == t.value)
        return result;
    Tensor result = *transpose(t, 0, 1, loc);
    transposed.push_back({t.value, result});
    return result;
  };
  Tensor q = batchFirst(query), k = batchFirst(key), v = batchFirst(value);
  if (batched && (q.shape[0] != k.shape[0] || q.shape[0] != v.shape[0]))
    return emitError(loc) << "multi_head_attention: query, key and value "
                             "disagree on the batch size";
  if (k.shape[k.rank() - 2] != v.shape[v.rank() - 2])
    return emitError(loc) << "multi_head_attention: key "
                          << formatShape(key.shape) << " and value "
                          << formatShape(value.shape)
                          << " differ in sequence length";
  const Dim &embed = q.shape.back();
  if (embed.isSymbolic() || k.shape.back().isSymbolic() ||
      v.shape.back().isSymbolic())
    return emitError(loc) << "multi_head_attention needs static embedding "
                             "dimensions";
  if (heads <= 0 || embed.size % heads != 0)
    return emitError(loc) << "multi_head_attention: embedding dimension "
                          << embed.size << " is not divisible by " << heads
                          << " heads";
  int64_t e = embed.size;
  int64_t kdim = k.shape.back().size, vdim = v.shape.back().size;
  auto expect = [&](const Tensor &t, StringRef name,
                    ArrayRef<int64_t> shape) -> LogicalResult {
    Shape want;
    for (int64_t d : shape)
      want.push_back(Dim::of(d));
    if (t.shape == want && t.sameElementType(q))
      return success();
    return emitError(loc) << "multi_head_attention: weight '" << name << "' is "
                          << formatShape(t.shape) << " but must be "
                          << formatShape(want);
  };

  Tensor wq, wk, wv, wo;
  std::optional<Tensor> bq, bk, bv, bo;
  auto load = [&](StringRef name, Tensor &out) -> LogicalResult {
    FailureOr<Tensor> t = weight(name, loc);
    if (failed(t))
      return failure();
    out = *t;
    return success();
  };
  auto loadOptional = [&](StringRef name,
                          std::optional<Tensor> &out) -> LogicalResult {
    if (name.empty())
      return success();
    Tensor t;
    if (failed(load(name, t)))
      return failure();
    out = t;
    return success();
  };
  // A packed in_proj_bias [3E] goes with the packed weight, or with separate
  // weights (nn.MultiheadAttention with kdim/vdim != E).
  auto loadPackedBias = [&]() -> LogicalResult {
    if (names.inProjBias.empty())
      return success();
    Tensor packedBias;
    if (failed(load(names.inProjBias, packedBias)) ||
        failed(expect(packedBias, names.inProjBias, {3 * e})))
      return failure();
    bq = *sliceRows(packedBias, 0, e, loc);
    bk = *sliceRows(packedBias, e, e, loc);
    bv = *sliceRows(packedBias, 2 * e, e, loc);
    return success();
  };
  bool split = names.inProjWeight.empty() || kdim != e || vdim != e;
  if (!split) {
    Tensor packed;
    if (failed(load(names.inProjWeight, packed)) ||
        failed(expect(packed, names.inProjWeight, {3 * e, e})))
      return failure();
    wq = *sliceRows(packed, 0, e, loc);
    wk = *sliceRows(packed, e, e, loc);
    wv = *sliceRows(packed, 2 * e, e, loc);
    if (failed(loadPackedBias()))
      return failure();
  } else {
    MultiHeadAttentionWeights n = names;
    if (n.qWeight.empty()) {
      // nn.MultiheadAttention's names when kdim or vdim differ from E.
      if (n.qProjWeight.empty())
        return emitError(loc)
               << "multi_head_attention: a packed in_proj_weight needs key "
                  "and value of the query's embedding size "
               << e << " (got " << kdim << " and " << vdim
               << "); name the q/k/v weights separately";
      n.qWeight = n.qProjWeight;
      n.kWeight = n.kProjWeight;
      n.vWeight = n.vProjWeight;
    }
    if (failed(load(n.qWeight, wq)) || failed(load(n.kWeight, wk)) ||
        failed(load(n.vWeight, wv)) || failed(loadOptional(n.qBias, bq)) ||
        failed(loadOptional(n.kBias, bk)) || failed(loadOptional(n.vBias, bv)))
      return failure();
    if (!bq && !bk && !bv && failed(loadPackedBias()))
      return failure();
    if (failed(expect(wq, n.qWeight, {e, e})) ||
        failed(expect(wk, n.kWeight, {e, kdim})) ||
        failed(expect(wv, n.vWeight, {e, vdim})))
      return failure();
  }
  if (failed(load(names.outWeight, wo)) ||
      failed(loadOptional(names.outBias, bo)) ||
      failed(expect(wo, names.outWeight, {e, e})))
    return failure();
  std::optional<Tensor> biases[] = {bq, bk, bv, bo};
  int numBiases = llvm::count_if(biases, [](auto &b) { return b.has_value(); });
  if (numBiases != 0 && numBiases != 4)
    return emitError(loc) << "multi_head_attention needs all four biases "
                             "(q, k, v, out) or none";
  for (auto &b : biases)
    if (b && failed(expect(*b, "bias", {e})))
      return failure();

  // Masks, as nn.MultiheadAttention.forward takes them.
  const Dim &sq = q.shape[q.rank() - 2], &sk = k.shape[k.rank() - 2];
  Type floatType = q.elementType();
  auto checkMaskType = [&](const Tensor &m, StringRef what) -> LogicalResult {
    if (m.elementType().isInteger(1) || m.elementType() == floatType)
      return success();
    return emitError(loc) << "multi_head_attention: " << what
                          << " must be bool (true = masked) or " << floatType
                          << ", got " << m.elementType();
  };
  if (const std::optional<Tensor> &m = options.keyPaddingMask) {
    Shape want;
    if (batched)
      want.push_back(q.shape[0]);
    want.push_back(sk);
    if (failed(checkMaskType(*m, "key_padding_mask")))
      return failure();
    if (m->shape != want)
      return emitError(loc) << "multi_head_attention: key_padding_mask "
                            << formatShape(m->shape) << " must be "
                            << formatShape(want) << " ([batch, key length])";
  }
  if (const std::optional<Tensor> &m = options.attnMask) {
    if (failed(checkMaskType(*m, "attn_mask")))
      return failure();
    bool ok = m->shape == Shape{sq, sk};
    if (m->rank() == 3 && m->shape[1] == sq && m->shape[2] == sk) {
      if (!batched) {
        ok = m->shape[0] == Dim::of(heads);
      } else if (m->shape[0].isSymbolic() || q.shape[0].isSymbolic()) {
        return emitError(loc)
               << "multi_head_attention: a 3-D attn_mask "
               << formatShape(m->shape)
               << " needs a static batch size and a static first dimension "
                  "(batch * heads) to be checked against the query "
               << formatShape(query.shape);
      } else {
        ok = m->shape[0].size == q.shape[0].size * heads;
      }
    }
    if (!ok)
      return emitError(loc)
             << "multi_head_attention: attn_mask " << formatShape(m->shape)
             << " must be [" << sq.str() << ", " << sk.str() << "] or ["
             << (batched ? (q.shape[0].isSymbolic()
                                ? q.shape[0].str() + "*" + std::to_string(heads)
                                : std::to_string(q.shape[0].size * heads))
                         : std::to_string(heads))
             << ", " << sq.str() << ", " << sk.str() << "]";
  }

  Shape shape = q.shape;
  auto resultType = typeOf(shape, floatType);
  Type weightsType;
  Shape weightsShape;
  if (options.needWeights) {
    if (batched)
      weightsShape.push_back(q.shape[0]);
    if (!options.averageAttnWeights)
      weightsShape.push_back(Dim::of(heads));
    weightsShape.append({sq, sk});
    weightsType = typeOf(weightsShape, floatType);
  }
  auto valueOf = [](const std::optional<Tensor> &t) {
    return t ? t->value : Value();
  };
  auto op = MultiHeadAttentionOp::create(
      builder, loc, resultType, weightsType, q.value, k.value, v.value,
      wq.value, wk.value, wv.value, wo.value, valueOf(bq), valueOf(bk),
      valueOf(bv), valueOf(bo), valueOf(options.keyPaddingMask),
      valueOf(options.attnMask), builder.getI64IntegerAttr(heads),
      options.averageAttnWeights ? BoolAttr() : builder.getBoolAttr(false));
  AttentionResult result{Tensor{op.getResult(), shape}, std::nullopt};
  if (options.needWeights)
    result.weights = Tensor{op.getAttnWeights(), weightsShape};
  if (seqFirst)
    result.output = *transpose(result.output, 0, 1, loc);
  return result;
}

FailureOr<Tensor> ModelBuilder::transformerEncoderLayer(
    const Tensor &x, const TransformerEncoderLayerOptions &options,
    Location loc) {
  if (options.activation != "relu" && options.activation != "gelu")
    return emitError(loc) << "transformer_encoder_layer: activation must be "
                             "\"relu\" or \"gelu\", got \""
                          << options.activation << "\"";
  const TransformerEncoderLayerWeights &w = options.weights;
  auto param = [&](StringRef name) { return weight(name, loc); };
  MultiHeadAttentionOptions attention;
  attention.batchFirst = options.batchFirst;
  attention.attnMask = options.srcMask;
  attention.keyPaddingMask = options.srcKeyPaddingMask;
  auto selfAttention = [&](const Tensor &t) -> FailureOr<Tensor> {
    FailureOr<AttentionResult> r =
        multiHeadAttention(t, t, t, options.heads, w.attention, attention, loc);
    if (failed(r))
      return failure();
    return r->output;
  };
  auto norm = [&](const Tensor &t, StringRef weightName,
                  StringRef biasName) -> FailureOr<Tensor> {
    FailureOr<Tensor> scale = param(weightName), shift = param(biasName);
    if (failed(scale) || failed(shift))
      return failure();
    return layerNorm(t, *scale, *shift, options.eps, loc);
  };
  auto norm1 = [&](const Tensor &t) {
    return norm(t, w.norm1Weight, w.norm1Bias);
  };
  auto norm2 = [&](const Tensor &t) {
    return norm(t, w.norm2Weight, w.norm2Bias);
  };
  auto feedForward = [&](const Tensor &t) -> FailureOr<Tensor> {
    FailureOr<Tensor> w1 = param(w.linear1Weight), b1 = param(w.linear1Bias),
                      w2 = param(w.linear2Weight), b2 = param(w.linear2Bias);
    if (failed(w1) || failed(b1) || failed(w2) || failed(b2))
      return failure();
    FailureOr<Tensor> h = linear(t, *w1, *b1, loc);
    if (failed(h))
      return failure();
    h = options.activation == "relu" ? relu(*h, loc)
                                     : gelu(*h, GeluApproximation::none, loc);
    if (failed(h))
      return failure();
    return linear(*h, *w2, *b2, loc);
  };
  auto residual = [&](const Tensor &t,
                      const FailureOr<Tensor> &branch) -> FailureOr<Tensor> {
    if (failed(branch))
      return failure();
    return add(t, *branch, loc);
  };

  FailureOr<Tensor> y = x;
  if (options.normFirst) {
    // x = x + sa(norm1(x)); x = x + ff(norm2(x))
    FailureOr<Tensor> n1 = norm1(*y);
    if (failed(n1) || failed(y = residual(*y, selfAttention(*n1))))
      return failure();
    FailureOr<Tensor> n2 = norm2(*y);
    if (failed(n2))
      return failure();
    return residual(*y, feedForward(*n2));
  }
  // x = norm1(x + sa(x)); x = norm2(x + ff(x))
  if (failed(y = residual(*y, selfAttention(*y))) || failed(y = norm1(*y)) ||
      failed(y = residual(*y, feedForward(*y))))
    return failure();
  return norm2(*y);
}
