//===- OneDnnAttention.h - Unfused attention on oneDNN's sgemm -*- C++ -*-===//
//
// The baseline the issue asks for: per (batch, head), S = (Q Kᵀ) / sqrt(D)
// with dnnl_sgemm, a vectorized stable softmax over each row of S
// (Softmax.cpp), then Y = P V with dnnl_sgemm, the 1/sum of each row applied
// to Y's D values instead of P's S values. For causal attention the query
// rows go in blocks of kCausalBlock, each multiplying only the keys up to its
// last row, so that most of the masked half is never computed (a plain
// "compute everything, then mask" baseline would do twice the work).
//
// Threads: the (batch, head) pairs are the tasks of the given tfm_exec (the
// runtime's thread pool), and every dnnl_sgemm call runs on one OpenMP thread
// (OMP_NUM_THREADS=1 in the child's environment, and omp_set_num_threads(1)
// on each calling thread), so a 1-thread row uses one thread and a 2-thread
// row two. Scratch: one S×S (or kCausalBlock×S) score block per thread.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_BENCH_ATTENTION_ONEDNNATTENTION_H
#define TFM_BENCH_ATTENTION_ONEDNNATTENTION_H

#include "Bench.h"
#include "tfm/runtime.h"

#include <string>

namespace bench {

constexpr int64_t kCausalBlock = 128;

/// Whether the benchmark was built with oneDNN.
bool oneDnnAvailable();
/// "oneDNN 2.6.3 (OpenMP)", or why it is missing.
std::string oneDnnDescription();
/// omp_get_max_threads() of the calling thread as oneDNN's OpenMP sees it;
/// -1 when unknown.
int oneDnnOmpThreads();

/// y = softmax(q kᵀ / sqrt(d) [causal]) v for row-major [b, h, s, d] tensors.
/// Returns false when an sgemm fails (or without oneDNN).
bool oneDnnAttention(const Shape &shape, bool causal, const float *q,
                     const float *k, const float *v, float *y,
                     const tfm_exec *exec);

} // namespace bench

#endif // TFM_BENCH_ATTENTION_ONEDNNATTENTION_H
