//===- Suite.h - The benchmark table ---------------------------*- C++ -*-===//
#ifndef TFM_BENCH_ATTENTION_SUITE_H
#define TFM_BENCH_ATTENTION_SUITE_H

#include "Options.h"

#include <string>

namespace bench {

/// Measures the FMA peak, compiles the models, measures every configuration
/// in child processes of `executable` and prints the table and a summary
/// against the targets of issue 3. Returns the process exit status (non-zero
/// when a check failed or a fused run did not complete).
int runSuite(const SuiteOptions &options, const std::string &executable);

} // namespace bench

#endif // TFM_BENCH_ATTENTION_SUITE_H
