//===- Peak.h - Measured FMA peak of one core ------------------*- C++ -*-===//
#ifndef TFM_BENCH_ATTENTION_PEAK_H
#define TFM_BENCH_ATTENTION_PEAK_H

#include <string>

namespace bench {

struct FmaPeak {
  /// "AVX-512" or "AVX2" (or "none" without FMA).
  std::string isa;
  int accumulators = 0;
  /// fp32 GFLOP/s of one thread (an FMA counts as 2 FLOPs): the best trial.
  double singleCore = 0;
  /// The best sum over `threads` threads running the loop at the same time.
  double allThreads = 0;
  unsigned threads = 0;
  /// Trials so far, and the slowest single-thread one (how much the
  /// machine's other load moved the readings).
  int singleTrials = 0, allTrials = 0;
  double slowestSingle = 0;
};

/// Runs a register-resident loop of independent vector FMAs
/// (_mm512_fmadd_ps on 16 accumulators, or _mm256_fmadd_ps on 12 when the CPU
/// has no AVX-512) for about `seconds` per trial, `singleTrials` times on one
/// thread and `allTrials` times on `threads` threads at once, raising the
/// maxima in `peak`. Called several times over a run, so that a peak taken
/// while other processes shared the core does not stand.
void sampleFmaPeak(FmaPeak &peak, double seconds, int singleTrials,
                   int allTrials, unsigned threads);

} // namespace bench

#endif // TFM_BENCH_ATTENTION_PEAK_H
