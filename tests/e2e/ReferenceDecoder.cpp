//===- ReferenceDecoder.cpp - float64 reference for decoder layers --------===//
#include "ReferenceDecoder.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace ref {

Array sigmoid(const Array &x) {
  Array y(x.shape);
  for (size_t i = 0; i < x.data.size(); ++i)
    y.data[i] = 1.0 / (1.0 + std::exp(-x.data[i]));
  return y;
}

Array silu(const Array &x) {
  Array y = sigmoid(x);
  for (size_t i = 0; i < x.data.size(); ++i)
    y.data[i] *= x.data[i];
  return y;
}

Array rmsNorm(const Array &x, const Array *weight, double eps, double offset) {
  int64_t d = x.dim(-1), rows = x.numel() / d;
  Array y(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *in = &x.data[size_t(r * d)];
    double sum = 0;
    for (int64_t j = 0; j < d; ++j)
      sum += in[j] * in[j];
    double inverse = 1.0 / std::sqrt(sum / double(d) + eps);
    for (int64_t j = 0; j < d; ++j)
      y.data[size_t(r * d + j)] =
          in[j] * inverse * (weight ? offset + weight->data[size_t(j)] : 1.0);
  }
  return y;
}

namespace {
/// transformers' inverse frequencies with its rope_scaling recipes.
std::vector<double> inverseFrequencies(int64_t dims, const Rope &o) {
  std::vector<double> f;
  for (int64_t i = 0; i < dims; i += 2)
    f.push_back(std::pow(o.theta, -double(i) / double(dims)));
  if (o.scaling == "linear") {
    for (double &v : f)
      v /= o.factor;
  } else if (o.scaling == "llama3") {
    double context = double(o.originalMaxPositions);
    double low = context / o.lowFreqFactor, high = context / o.highFreqFactor;
    for (double &v : f) {
      double wavelength = 2 * M_PI / v;
      double scaled = wavelength > low ? v / o.factor : v;
      double smooth = (context / wavelength - o.lowFreqFactor) /
                      (o.highFreqFactor - o.lowFreqFactor);
      bool medium = !(wavelength < high) && !(wavelength > low);
      v = medium ? (1 - smooth) * scaled / o.factor + smooth * scaled : scaled;
    }
  }
  if (!o.freqFactors.empty()) {
    assert(o.freqFactors.size() == f.size());
    for (size_t i = 0; i < f.size(); ++i)
      f[i] /= o.freqFactors[i];
  }
  return f;
}
} // namespace

Array rope(const Array &x, const std::vector<std::vector<int64_t>> &positions,
           const Rope &o) {
  assert(x.rank() == 4);
  int64_t B = x.dim(0), H = x.dim(1), S = x.dim(2), D = x.dim(3);
  int64_t rotary = o.rotaryDims ? o.rotaryDims : D, half = rotary / 2;
  std::vector<double> f = inverseFrequencies(rotary, o);
  Array y = x;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s) {
        const double *in = &x.data[size_t(((b * H + h) * S + s) * D)];
        double *out = &y.data[size_t(((b * H + h) * S + s) * D)];
        double p = double(positions[size_t(b)][size_t(s)]);
        for (int64_t i = 0; i < half; ++i) {
          double c = std::cos(p * f[size_t(i)]),
                 sn = std::sin(p * f[size_t(i)]);
          // apply_rotary_pos_emb: x * cos + rotate_half(x) * sin, cos and
          // sin repeated over both halves; pairs: llama.cpp's rope mode 0.
          int64_t a = o.pairs ? 2 * i : i, z = o.pairs ? 2 * i + 1 : i + half;
          out[a] = in[a] * c - in[z] * sn;
          out[z] = in[z] * c + in[a] * sn;
        }
      }
  return y;
}

namespace {
/// [1, H, S, D] of x [1, S, H * D].
Array splitHeads(const Array &x, int64_t heads, int64_t headDim) {
  int64_t s = x.dim(1);
  Array y({1, heads, s, headDim});
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t t = 0; t < s; ++t)
      for (int64_t d = 0; d < headDim; ++d)
        y.data[size_t((h * s + t) * headDim + d)] =
            x.data[size_t(t * heads * headDim + h * headDim + d)];
  return y;
}
} // namespace

std::vector<std::vector<double>>
llamaLogits(const LlamaConfig &c,
            const std::function<Array(LlamaWeight, int)> &weight,
            const std::vector<int64_t> &ids) {
  using W = LlamaWeight;
  int64_t s = int64_t(ids.size()), dh = c.headDim;
  Array table = weight(W::Embedding, -1);
  Array x({1, s, c.hidden});
  for (int64_t t = 0; t < s; ++t)
    for (int64_t j = 0; j < c.hidden; ++j)
      x.data[size_t(t * c.hidden + j)] =
          table.data[size_t(ids[size_t(t)] * c.hidden + j)];
  std::vector<std::vector<int64_t>> positions(1);
  for (int64_t t = 0; t < s; ++t)
    positions[0].push_back(t);
  for (int i = 0; i < c.layers; ++i) {
    Array norm = weight(W::AttentionNorm, i);
    Array h = rmsNorm(x, &norm, c.eps);
    Array q = rope(splitHeads(linear(h, weight(W::Query, i)), c.heads, dh),
                   positions, c.rope);
    Array k = rope(splitHeads(linear(h, weight(W::Key, i)), c.kvHeads, dh),
                   positions, c.rope);
    Array v = splitHeads(linear(h, weight(W::Value, i)), c.kvHeads, dh);
    Array merged({1, s, c.heads * dh});
    int64_t group = c.heads / c.kvHeads;
    for (int64_t hq = 0; hq < c.heads; ++hq) {
      int64_t hk = hq / group;
      for (int64_t t = 0; t < s; ++t) {
        std::vector<double> scores(size_t(t + 1));
        double max = -INFINITY;
        for (int64_t u = 0; u <= t; ++u) {
          double dot = 0;
          for (int64_t d = 0; d < dh; ++d)
            dot += q.data[size_t((hq * s + t) * dh + d)] *
                   k.data[size_t((hk * s + u) * dh + d)];
          scores[size_t(u)] = dot / std::sqrt(double(dh));
          max = std::max(max, scores[size_t(u)]);
        }
        double sum = 0;
        for (double &e : scores)
          sum += (e = std::exp(e - max));
        for (int64_t u = 0; u <= t; ++u)
          for (int64_t d = 0; d < dh; ++d)
            merged.data[size_t(t * c.heads * dh + hq * dh + d)] +=
                scores[size_t(u)] / sum * v.data[size_t((hk * s + u) * dh + d)];
      }
    }
    x = add(x, linear(merged, weight(W::Output, i)));
    Array post = weight(W::FeedForwardNorm, i);
    h = rmsNorm(x, &post, c.eps);
    Array gate = silu(linear(h, weight(W::Gate, i)));
    Array up = linear(h, weight(W::Up, i));
    for (size_t e = 0; e < gate.data.size(); ++e)
      gate.data[e] *= up.data[e];
    x = add(x, linear(gate, weight(W::Down, i)));
  }
  Array final = weight(W::FinalNorm, -1);
  Array logits = linear(rmsNorm(x, &final, c.eps), weight(W::LmHead, -1));
  std::vector<std::vector<double>> rows;
  for (int64_t t = 0; t < s; ++t)
    rows.emplace_back(logits.data.begin() + t * c.vocab,
                      logits.data.begin() + (t + 1) * c.vocab);
  return rows;
}

} // namespace ref
