//===- ReferenceDecoder.cpp - float64 reference for decoder layers --------===//
#include "ReferenceDecoder.h"

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

} // namespace ref
