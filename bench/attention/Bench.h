//===- Bench.h - Shared types of the attention benchmark -------*- C++ -*-===//
//
// One benchmark configuration is a shape (B, H, S, D), causal or not, and a
// thread count; it is measured once per implementation, each in a fresh child
// process (see Suite.cpp and Child.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_BENCH_ATTENTION_BENCH_H
#define TFM_BENCH_ATTENTION_BENCH_H

#include <cstdint>
#include <optional>
#include <string>

namespace bench {

/// q, k, v and y are all [b, h, s, d] (d_v = d_k = d).
struct Shape {
  int64_t b = 1, h = 1, s = 1, d = 1;

  int64_t elements() const { return b * h * s * d; }
  /// "1,8,1024,64", as --shape takes it.
  std::string str() const;
  bool operator==(const Shape &o) const {
    return b == o.b && h == o.h && s == o.s && d == o.d;
  }
};

/// Parses "B,H,S,D".
std::optional<Shape> parseShape(const std::string &text);

/// 4·B·H·S²·D floating-point operations (two matmuls of 2·S²·D per head);
/// half of that when causal.
double attentionFlops(const Shape &shape, bool causal);

/// What a child process runs.
enum class Impl {
  Noop,    ///< allocates and touches inputs/outputs, loads the library, runs
           ///< nothing
  Fused,   ///< the tfm model compiled with fuseAttention = true
  Unfused, ///< the same model compiled with fuseAttention = false
  OneDnn, ///< dnnl_sgemm (QKᵀ, PV) + a vectorized softmax (OneDnnAttention.cpp)
};

const char *implName(Impl impl);
std::optional<Impl> parseImpl(const std::string &name);

} // namespace bench

#endif // TFM_BENCH_ATTENTION_BENCH_H
