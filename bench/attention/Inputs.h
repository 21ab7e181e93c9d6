//===- Inputs.h - Deterministic inputs and a float64 reference -*- C++ -*-===//
//
// Every process (the parent and each child) derives the same q, k, v from a
// counter-based hash, so the children need not share memory with the parent
// and the parent can compute reference rows without holding the tensors.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_BENCH_ATTENTION_INPUTS_H
#define TFM_BENCH_ATTENTION_INPUTS_H

#include "Bench.h"

#include <vector>

namespace bench {

enum class Tensor { Q = 0, K = 1, V = 2 };

/// Element `index` (row-major over [b, h, s, d]) of q, k or v: uniform in
/// [-2, 2) for q and k (so that the softmax is not flat) and [-1, 1) for v.
float inputValue(Tensor tensor, int64_t index);

/// Fills `data` (shape.elements() floats) with inputValue.
void fillInput(Tensor tensor, const Shape &shape, float *data);

/// An output row y[b, h, s, :].
struct RowId {
  int64_t b, h, s;
};

/// The rows the benchmark compares: first, middle and last query of the first
/// and the last (b, h), and a row at S/3.
std::vector<RowId> checkRows(const Shape &shape);

/// y[b, h, s, :] in float64: softmax(q kᵀ / sqrt(d)) v, keys > s masked out
/// when causal.
std::vector<double> referenceRow(const Shape &shape, bool causal, RowId row);

/// max_i |a_i - b_i| / max_i |b_i|: the error of `a` relative to the row's
/// scale (elementwise relative errors blow up near zeros).
double rowError(const std::vector<double> &a, const std::vector<double> &b);

} // namespace bench

#endif // TFM_BENCH_ATTENTION_INPUTS_H
