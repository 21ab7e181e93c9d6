//===- ReferenceLayers.h - float64 reference for layer options --*- C++ -*-===//
//
// The layers and options of docs/layers.md written from PyTorch's
// definitions in float64, sharing no code with the compiler: layer norm,
// activations, masked attention (SDPA and nn.MultiheadAttention with their
// own mask conventions) and nn.TransformerEncoderLayer. A query row whose
// keys are all masked gives zeros, as tfm defines it (PyTorch: NaN).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TESTS_E2E_REFERENCELAYERS_H
#define TFM_TESTS_E2E_REFERENCELAYERS_H

#include "Reference.h"

#include <functional>
#include <optional>

namespace ref {

/// nn.LayerNorm over the last dim (biased variance); weight/bias optional.
Array layerNorm(const Array &x, const Array *weight, const Array *bias,
                double eps);
Array relu(const Array &x);
/// F.gelu(x) (erf), or F.gelu(x, approximate="tanh").
Array gelu(const Array &x, bool tanh = false);

/// Says whether the key `j` is masked for query `i` of batch-and-head `n`,
/// and what it adds to the scaled score otherwise.
struct AttentionMask {
  std::function<bool(int64_t n, int64_t i, int64_t j)> masked;
  std::function<double(int64_t n, int64_t i, int64_t j)> bias;
};

/// softmax(q kᵀ · scale + mask) v over the last two dims of q [..., Sq, D],
/// k [..., Sk, D], v [..., Sk, Dv] (leading dims equal, flattened into n);
/// `causal` masks key j > i. Rows with every key masked give zeros. With
/// `probs`, also returns the softmax [..., Sq, Sk].
Array maskedAttention(const Array &q, const Array &k, const Array &v,
                      double scale, const AttentionMask &mask,
                      bool causal = false, Array *probs = nullptr);

/// nn.MultiheadAttention(batch_first=True).forward on [B, L, E] (or [L, E])
/// with its masks as an AttentionMask over (b * heads + h, i, j); `weights`,
/// when given, receives the attention weights averaged over heads
/// ([B, Lq, Lk]) or per head ([B, H, Lq, Lk]).
Array maskedMultiHeadAttention(const Array &q, const Array &k, const Array &v,
                               int64_t heads, const MhaWeights &w,
                               const AttentionMask &mask,
                               Array *weights = nullptr,
                               bool averageWeights = true);

/// nn.TransformerEncoderLayer's parameters.
struct EncoderLayerWeights {
  MhaWeights attention;
  Array linear1Weight, linear1Bias, linear2Weight, linear2Bias;
  Array norm1Weight, norm1Bias, norm2Weight, norm2Bias;
};

/// nn.TransformerEncoderLayer(batch_first=True) at inference on [B, S, E].
Array encoderLayer(const Array &x, int64_t heads, const EncoderLayerWeights &w,
                   bool normFirst, bool geluActivation, double eps,
                   const AttentionMask &mask);

} // namespace ref

#endif // TFM_TESTS_E2E_REFERENCELAYERS_H
