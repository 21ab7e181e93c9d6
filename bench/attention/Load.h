//===- Load.h - How busy the machine is ------------------------*- C++ -*-===//
//
// The benchmark shares its machine: other processes' CPU time during a
// measurement is recorded with it (the busy column), and the parent can wait
// for a quiet moment before it starts a measurement.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_BENCH_ATTENTION_LOAD_H
#define TFM_BENCH_ATTENTION_LOAD_H

namespace bench {

/// CPU seconds so far: busy time of the whole machine (every CPU, from
/// /proc/stat, steal included; 10 ms ticks) and of this process.
struct CpuTimes {
  double machine = 0, self = 0;
};
CpuTimes cpuTimes();

/// Cores that processes other than this one kept busy, on average, over the
/// next `seconds`.
double othersBusyCores(double seconds);

/// Waits (sampling 0.25 s at a time) until other processes use at most
/// `threshold` cores, or `maxSeconds` have passed; returns the last reading.
double waitForQuiet(double threshold, double maxSeconds);

} // namespace bench

#endif // TFM_BENCH_ATTENTION_LOAD_H
