//===- Spawn.h - Run one measurement in a child process --------*- C++ -*-===//
#ifndef TFM_BENCH_ATTENTION_SPAWN_H
#define TFM_BENCH_ATTENTION_SPAWN_H

#include "Child.h"
#include "Inputs.h"

#include <string>
#include <vector>

namespace bench {

struct ChildResult {
  bool ok = false;
  /// The child's "error" line, or how it died.
  std::string error;
  double ms = 0, medianMs = 0;
  int reps = 0;
  /// The child's VmHWM in KiB.
  long peakKiB = -1;
  /// CPU time other processes used during the timed runs, in cores (0 to
  /// the number of CPUs): how disturbed the measurement was; -1 when its
  /// timed phase was too short to tell.
  double others = 0;
  /// The "row" records, in the order of checkRows.
  std::vector<RowId> rowIds;
  std::vector<std::vector<double>> rows;
};

/// The path of this executable (/proc/self/exe).
std::string selfExecutable();

/// Runs `executable --child ...` for `options` with posix_spawn, reads its
/// stdout and waits for it. The child inherits stderr and the environment.
ChildResult spawnChild(const std::string &executable,
                       const ChildOptions &options);

} // namespace bench

#endif // TFM_BENCH_ATTENTION_SPAWN_H
