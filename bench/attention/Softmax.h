//===- Softmax.h - Vectorized stable softmax rows for the baseline -*- C++
//-*-===//
#ifndef TFM_BENCH_ATTENTION_SOFTMAX_H
#define TFM_BENCH_ATTENTION_SOFTMAX_H

#include <cstdint>

namespace bench {

/// The unnormalized half of a stable softmax over row[0, valid): replaces
/// each x by exp(x - max) and returns their sum; row[valid, n) (masked keys)
/// becomes 0. The caller divides by the sum later (after P·V, on D values
/// instead of S). AVX-512 when the CPU has it, else AVX2+FMA, else scalar.
float softmaxExpRow(float *row, int64_t valid, int64_t n);

/// "AVX-512", "AVX2" or "scalar": what softmaxExpRow uses on this CPU.
const char *softmaxIsa();

} // namespace bench

#endif // TFM_BENCH_ATTENTION_SOFTMAX_H
