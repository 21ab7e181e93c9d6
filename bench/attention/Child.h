//===- Child.h - Measure one configuration in this process -----*- C++ -*-===//
//
// The benchmark re-executes itself with --child for every (configuration,
// implementation), so that each measurement starts from a fresh address
// space and its peak resident set belongs to that run alone. The child prints
// its results on stdout, one record a line:
//
//   result ms=<min> median_ms=<median> reps=<n> hwm_kb=<VmHWM> others=<cores>
//   row <b> <h> <s> <y[b,h,s,0]> ... <y[b,h,s,D-1]>
//   error <message>
//
//===----------------------------------------------------------------------===//
#ifndef TFM_BENCH_ATTENTION_CHILD_H
#define TFM_BENCH_ATTENTION_CHILD_H

#include "Bench.h"

#include <string>

namespace bench {

struct ChildOptions {
  Impl impl = Impl::Fused;
  Shape shape;
  bool causal = false;
  unsigned threads = 1;
  /// The compiled model (Fused, Unfused; optional for Noop).
  std::string library;
  /// One warm-up run, then at least minReps timed runs, and more (up to
  /// maxReps) while the timed runs total less than budgetMs. A warm-up longer
  /// than budgetMs counts as the first timed run and lowers minReps to 2.
  int minReps = 3;
  int maxReps = 50;
  double budgetMs = 500;
};

/// Runs the child's measurement; the process exit status.
int runChild(const ChildOptions &options);

/// VmHWM of this process in KiB (from /proc/self/status), -1 if unknown.
long peakRssKiB();

} // namespace bench

#endif // TFM_BENCH_ATTENTION_CHILD_H
