//===- Options.h - tfm-run's command line -----------------------*- C++ -*-===//
//
// The flags tfm-run takes (its --help), parsed and checked against each
// other; a bad flag fail()s with the usage.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TFM_RUN_OPTIONS_H
#define TFM_TOOLS_TFM_RUN_OPTIONS_H

#include <string>
#include <vector>

namespace tfm::run {

struct NamedFile {
  std::string name;
  std::string path;
};

struct Options {
  std::string artifact;
  std::vector<NamedFile> inputs, outputs, expected;
  double rtol = 1e-4;
  double atol = 1e-5;
  long bench = 0;
  /// Floating-point operations per run, for --bench; negative: not given.
  double flops = -1;
  /// 0: one per hardware thread.
  long threads = 1;
  /// External weights; empty: the artifact's own (or the file next to it).
  std::string weights;
  bool quiet = false;
  /// --atol-scaled: atol times max(1, the output's largest |expected|).
  bool atolScaled = false;
  /// --generate N: tokens to generate greedily (0: a plain run).
  long generate = 0;
  /// --text rows, the --tokenizer to encode them with, --max-length.
  std::vector<std::string> texts;
  std::string tokenizer;
  long maxLength = -1;
};

/// The options of `argv`; prints the usage and exits on --help.
Options parseOptions(int argc, char **argv);

} // namespace tfm::run

#endif // TFM_TOOLS_TFM_RUN_OPTIONS_H
