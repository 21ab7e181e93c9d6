//===- Options.h - Command line of tfm-bench-attention ---------*- C++ -*-===//
#ifndef TFM_BENCH_ATTENTION_OPTIONS_H
#define TFM_BENCH_ATTENTION_OPTIONS_H

#include "Bench.h"
#include "Child.h"

#include <string>
#include <vector>

namespace bench {

/// What the parent (the suite) runs.
struct SuiteOptions {
  std::vector<Shape> shapes;
  std::vector<bool> causal = {false, true};
  std::vector<unsigned> threads = {1, 2};
  int minReps = 3;
  int maxReps = 50;
  double budgetMs = 500;
  /// Each implementation is measured this many times (each in a fresh child);
  /// the table keeps the fastest.
  int rounds = 1;
  /// A measurement during which other processes used more than
  /// busyThreshold cores is repeated, up to `retries` times, keeping the
  /// fastest run.
  int retries = 2;
  double busyThreshold = 0.25;
  /// Before each measurement, wait up to this many seconds for other
  /// processes to use at most busyThreshold cores.
  double quietWait = 1;
  /// The unfused path is skipped when the B·H·S² fp32 scores alone exceed
  /// this many MiB.
  double unfusedBudgetMiB = 256;
  bool runUnfused = true;
  bool runOneDnn = true;
  bool dynamicSeq = false;
  /// Where the models are compiled; a fresh temporary directory (removed at
  /// the end) when empty.
  std::string workDir;
  double peakSeconds = 0.2;
  int peakTrials = 5;
  /// Only measure and print the FMA peak.
  bool peakOnly = false;
};

struct CommandLine {
  bool help = false;
  bool child = false;
  ChildOptions childOptions;
  SuiteOptions suite;
  std::string error;
};

/// The shapes of issue 3, item 5.
std::vector<Shape> defaultShapes();
std::vector<Shape> quickShapes();

CommandLine parseCommandLine(int argc, char **argv);

extern const char *const kUsage;

} // namespace bench

#endif // TFM_BENCH_ATTENTION_OPTIONS_H
