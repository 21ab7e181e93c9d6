//===- Reference.h - A float64 reference for the e2e tests ------*- C++ -*-===//
//
// Plain row-major float64 arrays and straightforward loops, written from the
// PyTorch definitions and sharing no code with the compiler, so that the
// end-to-end tests check the compiled models against an independent oracle.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TESTS_E2E_REFERENCE_H
#define TFM_TESTS_E2E_REFERENCE_H

#include <cstdint>
#include <optional>
#include <vector>

namespace e2e {
struct HostTensor;
struct Weight;
} // namespace e2e

namespace ref {

/// A dense, row-major float64 array.
struct Array {
  std::vector<int64_t> shape;
  std::vector<double> data;

  Array() = default;
  Array(std::vector<int64_t> shape, std::vector<double> data);
  /// A zero-filled array.
  explicit Array(std::vector<int64_t> shape);

  int64_t rank() const { return int64_t(shape.size()); }
  int64_t numel() const;
  int64_t dim(int64_t i) const { return shape[size_t(i < 0 ? i + rank() : i)]; }
};

Array fromFloats(std::vector<int64_t> shape, const std::vector<float> &values);
Array fromWeight(const e2e::Weight &weight);
/// Any dtype, converted to double.
Array fromTensor(const e2e::HostTensor &tensor);

/// y = x W^T + b over the last dim of x; W is PyTorch's [out, in].
Array linear(const Array &x, const Array &w, const Array *b = nullptr);
/// numpy.matmul for rank >= 2: batch dims broadcast.
Array matmul(const Array &a, const Array &b);
/// Swaps dims d0 and d1 (negative counts from the end).
Array transpose(const Array &x, int64_t d0, int64_t d1);
/// exp(x - max) / sum(exp(x - max)) along `dim`.
Array softmax(const Array &x, int64_t dim);
Array scale(const Array &x, double factor);
/// Elementwise sum with numpy broadcasting.
Array add(const Array &a, const Array &b);
Array concat(const std::vector<Array> &inputs, int64_t dim);
/// softmax(q k^T * scale) v over the last two dims, with scale 1/sqrt(d)
/// by default; leading dims are batch dims that must agree.
Array sdpa(const Array &q, const Array &k, const Array &v,
           std::optional<double> scale = std::nullopt);
/// table[ids] (ids of any shape; table [num, dim]).
Array embedding(const std::vector<int64_t> &idShape,
                const std::vector<int64_t> &ids, const Array &table);
/// The sinusoidal encoding [seq, dim]: pe[p, 2i] = sin(p w_i),
/// pe[p, 2i+1] = cos(p w_i), w_i = exp(-(2i) ln(10000) / dim).
Array positionalEncoding(int64_t seq, int64_t dim);
/// x.masked_fill(mask != 0, value): `mask` (any integers, shape
/// `maskShape`) aligns with x at the trailing dims; size-1 and missing dims
/// broadcast.
Array maskedFill(const Array &x, const std::vector<int64_t> &maskShape,
                 const std::vector<int64_t> &mask, double value);
/// Scores [..., queries, keys] with key j > query i set to -inf.
Array causalMask(const Array &x);
/// Rows [begin, begin + count) of dim 0.
Array rows(const Array &x, int64_t begin, int64_t count);

/// nn.MultiheadAttention's projections: q/k/v weights [E, E_q/k/v], the
/// output projection [E, E], and optional biases [E].
struct MhaWeights {
  Array wq, wk, wv, wo;
  std::optional<Array> bq, bk, bv, bo;
  /// Splits nn.MultiheadAttention's in_proj_weight [3E, E] (and bias) into
  /// rows [0, E), [E, 2E), [2E, 3E).
  static MhaWeights packed(const Array &inProjWeight, const Array *inProjBias,
                           const Array &outWeight, const Array *outBias);
};
/// nn.MultiheadAttention(E, heads, batch_first=True) forward on [batch, L, E]
/// or unbatched [L, E] inputs (no masks, no dropout): heads split the
/// projected features into E/heads-wide slices, scale 1/sqrt(E/heads).
Array multiHeadAttention(const Array &q, const Array &k, const Array &v,
                         int64_t heads, const MhaWeights &w);

} // namespace ref

#endif // TFM_TESTS_E2E_REFERENCE_H
