//===- ReferenceLayers.cpp - float64 reference for layer options ----------===//
#include "ReferenceLayers.h"

#include <cmath>
#include <stdexcept>

namespace ref {

namespace {
void require(bool condition, const char *what) {
  if (!condition)
    throw std::logic_error(std::string("ref: ") + what);
}

template <typename F> Array map(const Array &x, F f) {
  Array y(x.shape);
  for (size_t i = 0; i < x.data.size(); ++i)
    y.data[i] = f(x.data[i]);
  return y;
}
} // namespace

Array layerNorm(const Array &x, const Array *weight, const Array *bias,
                double eps) {
  int64_t d = x.dim(-1);
  require(!weight || weight->numel() == d, "layer_norm weight");
  require(!bias || bias->numel() == d, "layer_norm bias");
  Array y(x.shape);
  for (int64_t row = 0; row * d < x.numel(); ++row) {
    const double *in = x.data.data() + row * d;
    double mean = 0, var = 0;
    for (int64_t c = 0; c < d; ++c)
      mean += in[c];
    mean /= double(d);
    for (int64_t c = 0; c < d; ++c)
      var += (in[c] - mean) * (in[c] - mean);
    var /= double(d);
    for (int64_t c = 0; c < d; ++c) {
      double v = (in[c] - mean) / std::sqrt(var + eps);
      if (weight)
        v *= weight->data[size_t(c)];
      if (bias)
        v += bias->data[size_t(c)];
      y.data[size_t(row * d + c)] = v;
    }
  }
  return y;
}

Array relu(const Array &x) {
  // torch.relu(nan) is nan: a NaN must not turn into 0.
  return map(x, [](double v) { return std::isnan(v) || v > 0 ? v : 0.0; });
}

Array gelu(const Array &x, bool tanh) {
  if (tanh)
    return map(x, [](double v) {
      return 0.5 * v *
             (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    });
  return map(x, [](double v) { return 0.5 * v * (1 + std::erf(v / M_SQRT2)); });
}

Array maskedAttention(const Array &q, const Array &k, const Array &v,
                      double scale, const AttentionMask &mask, bool causal,
                      Array *probs) {
  require(q.rank() >= 2 && k.rank() == q.rank() && v.rank() == q.rank(),
          "attention ranks");
  int64_t sq = q.dim(-2), sk = k.dim(-2), d = q.dim(-1), dv = v.dim(-1);
  require(k.dim(-1) == d && v.dim(-2) == sk, "attention shapes");
  int64_t n = q.numel() / (sq * d);
  std::vector<int64_t> outShape = q.shape;
  outShape.back() = dv;
  Array out(outShape);
  std::vector<int64_t> probShape = q.shape;
  probShape.back() = sk;
  if (probs)
    *probs = Array(probShape);
  std::vector<double> s(static_cast<size_t>(sk));
  std::vector<bool> keep(static_cast<size_t>(sk));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < sq; ++i) {
      double m = -INFINITY;
      for (int64_t j = 0; j < sk; ++j) {
        keep[size_t(j)] =
            !(causal && j > i) && !(mask.masked && mask.masked(b, i, j));
        if (!keep[size_t(j)])
          continue;
        double dot = 0;
        for (int64_t c = 0; c < d; ++c)
          dot += q.data[size_t((b * sq + i) * d + c)] *
                 k.data[size_t((b * sk + j) * d + c)];
        s[size_t(j)] = dot * scale + (mask.bias ? mask.bias(b, i, j) : 0.0);
        m = std::max(m, s[size_t(j)]);
      }
      double sum = 0;
      for (int64_t j = 0; j < sk; ++j) {
        // -inf biases mask too.
        s[size_t(j)] = keep[size_t(j)] && std::isfinite(m)
                           ? std::exp(s[size_t(j)] - m)
                           : 0.0;
        sum += s[size_t(j)];
      }
      for (int64_t j = 0; j < sk; ++j) {
        double p = sum > 0 ? s[size_t(j)] / sum : 0.0;
        if (probs)
          probs->data[size_t((b * sq + i) * sk + j)] = p;
        for (int64_t c = 0; c < dv; ++c)
          out.data[size_t((b * sq + i) * dv + c)] +=
              p * v.data[size_t((b * sk + j) * dv + c)];
      }
    }
  return out;
}

namespace {
/// [B, L, H*D] -> [B, H, L, D] (batch optional).
Array splitHeads(const Array &x, int64_t heads) {
  int64_t batch = x.rank() == 3 ? x.shape[0] : 1;
  int64_t l = x.dim(-2), e = x.dim(-1), d = e / heads;
  Array y({batch, heads, l, d});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < l; ++i)
        for (int64_t c = 0; c < d; ++c)
          y.data[size_t(((b * heads + h) * l + i) * d + c)] =
              x.data[size_t((b * l + i) * e + h * d + c)];
  return y;
}
} // namespace

Array maskedMultiHeadAttention(const Array &q, const Array &k, const Array &v,
                               int64_t heads, const MhaWeights &w,
                               const AttentionMask &mask, Array *weights,
                               bool averageWeights) {
  auto opt = [](const std::optional<Array> &a) { return a ? &*a : nullptr; };
  Array Q = linear(q, w.wq, opt(w.bq));
  Array K = linear(k, w.wk, opt(w.bk));
  Array V = linear(v, w.wv, opt(w.bv));
  int64_t e = Q.dim(-1), d = e / heads;
  int64_t batch = q.rank() == 3 ? q.shape[0] : 1;
  int64_t lq = Q.dim(-2), lk = K.dim(-2);
  Array probs;
  Array o = maskedAttention(splitHeads(Q, heads), splitHeads(K, heads),
                            splitHeads(V, heads), 1.0 / std::sqrt(double(d)),
                            mask, false, &probs);
  // [B, H, Lq, D] -> [B, Lq, E]
  Array merged(Q.shape);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < lq; ++i)
        for (int64_t c = 0; c < d; ++c)
          merged.data[size_t((b * lq + i) * e + h * d + c)] =
              o.data[size_t(((b * heads + h) * lq + i) * d + c)];
  if (weights) {
    std::vector<int64_t> shape;
    if (q.rank() == 3)
      shape.push_back(batch);
    if (!averageWeights)
      shape.push_back(heads);
    shape.push_back(lq);
    shape.push_back(lk);
    if (!averageWeights) {
      *weights = Array(shape, probs.data);
    } else {
      *weights = Array(shape);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t i = 0; i < lq * lk; ++i)
            weights->data[size_t(b * lq * lk + i)] +=
                probs.data[size_t((b * heads + h) * lq * lk + i)] /
                double(heads);
    }
  }
  return linear(merged, w.wo, opt(w.bo));
}

Array encoderLayer(const Array &x, int64_t heads, const EncoderLayerWeights &w,
                   bool normFirst, bool geluActivation, double eps,
                   const AttentionMask &mask) {
  auto sa = [&](const Array &t) {
    return maskedMultiHeadAttention(t, t, t, heads, w.attention, mask);
  };
  auto ff = [&](const Array &t) {
    Array h = linear(t, w.linear1Weight, &w.linear1Bias);
    h = geluActivation ? gelu(h) : relu(h);
    return linear(h, w.linear2Weight, &w.linear2Bias);
  };
  auto norm1 = [&](const Array &t) {
    return layerNorm(t, &w.norm1Weight, &w.norm1Bias, eps);
  };
  auto norm2 = [&](const Array &t) {
    return layerNorm(t, &w.norm2Weight, &w.norm2Bias, eps);
  };
  if (normFirst) {
    Array y = add(x, sa(norm1(x)));
    return add(y, ff(norm2(y)));
  }
  Array y = norm1(add(x, sa(x)));
  return norm2(add(y, ff(y)));
}

} // namespace ref
