//===- Inputs.cpp - Deterministic inputs and a float64 reference ---------===//
#include "Inputs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bench {

namespace {
uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
} // namespace

float inputValue(Tensor tensor, int64_t index) {
  uint64_t bits = splitmix64((uint64_t(tensor) << 56) ^ uint64_t(index));
  float unit = float(bits >> 40) * (1.0f / 16777216.0f); // [0, 1)
  float range = tensor == Tensor::V ? 1.0f : 2.0f;
  return (2 * unit - 1) * range;
}

void fillInput(Tensor tensor, const Shape &shape, float *data) {
  int64_t n = shape.elements();
  for (int64_t i = 0; i < n; ++i)
    data[i] = inputValue(tensor, i);
}

std::vector<RowId> checkRows(const Shape &shape) {
  std::vector<RowId> rows = {{0, 0, 0},
                             {0, 0, shape.s / 2},
                             {0, 0, shape.s - 1},
                             {shape.b - 1, shape.h - 1, 0},
                             {shape.b - 1, shape.h - 1, shape.s / 3},
                             {shape.b - 1, shape.h - 1, shape.s - 1}};
  return rows;
}

std::vector<double> referenceRow(const Shape &shape, bool causal, RowId row) {
  const int64_t s = shape.s, d = shape.d;
  const int64_t head = (row.b * shape.h + row.h) * s * d;
  auto at = [&](Tensor t, int64_t i, int64_t j) {
    return double(inputValue(t, head + i * d + j));
  };
  int64_t keys = causal ? row.s + 1 : s;
  std::vector<double> q(d), scores(keys);
  for (int64_t j = 0; j < d; ++j)
    q[j] = at(Tensor::Q, row.s, j);
  double scale = 1.0 / std::sqrt(double(d));
  double maxScore = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < keys; ++i) {
    double dot = 0;
    for (int64_t j = 0; j < d; ++j)
      dot += q[j] * at(Tensor::K, i, j);
    scores[i] = dot * scale;
    maxScore = std::max(maxScore, scores[i]);
  }
  double sum = 0;
  for (double &x : scores) {
    x = std::exp(x - maxScore);
    sum += x;
  }
  std::vector<double> y(d, 0.0);
  for (int64_t i = 0; i < keys; ++i)
    for (int64_t j = 0; j < d; ++j)
      y[j] += scores[i] * at(Tensor::V, i, j);
  for (double &x : y)
    x /= sum;
  return y;
}

double rowError(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.size() != b.size())
    return std::numeric_limits<double>::infinity();
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double delta = std::fabs(a[i] - b[i]);
    if (std::isnan(delta))
      return std::numeric_limits<double>::infinity();
    diff = std::max(diff, delta);
    scale = std::max(scale, std::fabs(b[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

} // namespace bench
