//===- Options.cpp - Command line of tfm-bench-attention -----------------===//
#include "Options.h"

#include <cstdlib>
#include <sstream>

namespace bench {

const char *const kUsage =
    R"(usage: tfm-bench-attention [options]

Benchmarks fused attention (tfm), the unfused tfm path and a oneDNN-sgemm
baseline; prints a markdown table on stdout, progress on stderr.

  --quick                 shapes 1,8,512,64 and 1,8,1024,64, --reps 20,
                          --budget-ms 250
  --shape B,H,S,D         only this shape (repeatable; any shape allowed)
  --causal yes|no|both    default both
  --threads LIST          comma-separated thread counts, default 1,2
  --reps N                at most N timed runs per measurement (default 50)
  --min-reps N            at least N timed runs (default 3)
  --budget-ms X           stop adding runs once they total X ms (default 500)
  --rounds R              measure each implementation R times, each in a
                          fresh process, keep the fastest (default 1)
  --retries N             re-measure (fresh process) up to N times when other
                          processes used more than --busy cores meanwhile
                          (default 2)
  --busy C                that threshold in cores (default 0.25)
  --quiet-wait S          before each measurement, wait up to S seconds for
                          the machine to be that quiet (default 1)
  --unfused-budget-mb M   skip the unfused path when the B*H*S*S fp32 scores
                          exceed M MiB (default 256)
  --no-unfused            skip the unfused tfm path
  --no-onednn             skip the oneDNN baseline
  --dynamic-seq           compile S as a named dim `seq` instead of a number
  --peak-only             only measure the FMA peak (--peak-trials N, default 5)
  --work-dir DIR          compile models into DIR and keep them
  --help
)";

std::vector<Shape> defaultShapes() {
  return {{1, 8, 128, 64},  {1, 8, 512, 64},   {1, 8, 1024, 64},
          {1, 8, 2048, 64}, {1, 12, 4096, 64}, {4, 8, 512, 64},
          {1, 8, 1024, 128}};
}

std::vector<Shape> quickShapes() { return {{1, 8, 512, 64}, {1, 8, 1024, 64}}; }

namespace {
bool parseInt(const std::string &text, long min, long &out) {
  char *end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || value < min)
    return false;
  out = value;
  return true;
}

bool parseDouble(const std::string &text, double &out) {
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !(value >= 0))
    return false;
  out = value;
  return true;
}
} // namespace

CommandLine parseCommandLine(int argc, char **argv) {
  CommandLine cl;
  SuiteOptions &suite = cl.suite;
  ChildOptions &child = cl.childOptions;
  std::vector<Shape> shapes;
  bool quick = false, repsGiven = false, budgetGiven = false;

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc) {
        cl.error = arg + " needs a value";
        return false;
      }
      out = argv[++i];
      return true;
    };
    auto bad = [&](const std::string &v) {
      cl.error = "bad value for " + arg + ": '" + v + "'";
      return cl;
    };
    std::string v;
    long n = 0;
    double x = 0;
    if (arg == "--help" || arg == "-h") {
      cl.help = true;
    } else if (arg == "--quick") {
      quick = true;
    } else if (arg == "--child") {
      if (!value(v))
        return cl;
      std::optional<Impl> impl = parseImpl(v);
      if (!impl)
        return bad(v);
      cl.child = true;
      child.impl = *impl;
    } else if (arg == "--lib") {
      if (!value(child.library))
        return cl;
    } else if (arg == "--shape") {
      if (!value(v))
        return cl;
      std::optional<Shape> shape = parseShape(v);
      if (!shape)
        return bad(v);
      shapes.push_back(*shape);
    } else if (arg == "--causal") {
      // `--causal` alone (as the parent passes it to a child) means yes.
      std::string which = "yes";
      if (i + 1 < argc && argv[i + 1][0] != '-')
        which = argv[++i];
      if (which == "yes")
        suite.causal = {true};
      else if (which == "no")
        suite.causal = {false};
      else if (which == "both")
        suite.causal = {false, true};
      else
        return bad(which);
      child.causal = which == "yes";
    } else if (arg == "--threads") {
      if (!value(v))
        return cl;
      suite.threads.clear();
      std::stringstream list(v);
      std::string item;
      while (std::getline(list, item, ',')) {
        if (!parseInt(item, 1, n) || n > 1024)
          return bad(v);
        suite.threads.push_back(unsigned(n));
      }
      if (suite.threads.empty())
        return bad(v);
      child.threads = suite.threads.front();
    } else if (arg == "--reps") {
      if (!value(v) || !parseInt(v, 1, n))
        return bad(v);
      suite.maxReps = child.maxReps = int(n);
      repsGiven = true;
    } else if (arg == "--min-reps") {
      if (!value(v) || !parseInt(v, 1, n))
        return bad(v);
      suite.minReps = child.minReps = int(n);
    } else if (arg == "--budget-ms") {
      if (!value(v) || !parseDouble(v, x))
        return bad(v);
      suite.budgetMs = child.budgetMs = x;
      budgetGiven = true;
    } else if (arg == "--rounds") {
      if (!value(v) || !parseInt(v, 1, n))
        return bad(v);
      suite.rounds = int(n);
    } else if (arg == "--retries") {
      if (!value(v) || !parseInt(v, 0, n))
        return bad(v);
      suite.retries = int(n);
    } else if (arg == "--busy") {
      if (!value(v) || !parseDouble(v, x))
        return bad(v);
      suite.busyThreshold = x;
    } else if (arg == "--quiet-wait") {
      if (!value(v) || !parseDouble(v, x))
        return bad(v);
      suite.quietWait = x;
    } else if (arg == "--unfused-budget-mb") {
      if (!value(v) || !parseDouble(v, x))
        return bad(v);
      suite.unfusedBudgetMiB = x;
    } else if (arg == "--no-unfused") {
      suite.runUnfused = false;
    } else if (arg == "--no-onednn") {
      suite.runOneDnn = false;
    } else if (arg == "--peak-only") {
      suite.peakOnly = true;
    } else if (arg == "--peak-trials") {
      if (!value(v) || !parseInt(v, 1, n))
        return bad(v);
      suite.peakTrials = int(n);
    } else if (arg == "--dynamic-seq") {
      suite.dynamicSeq = true;
    } else if (arg == "--work-dir") {
      if (!value(suite.workDir))
        return cl;
    } else {
      cl.error = "unknown argument '" + arg + "'";
      return cl;
    }
  }

  if (cl.child) {
    if (shapes.size() != 1)
      cl.error = "--child needs exactly one --shape";
    else
      child.shape = shapes.front();
    return cl;
  }
  if (quick) {
    if (!repsGiven)
      suite.maxReps = 20;
    if (!budgetGiven)
      suite.budgetMs = 250;
  }
  suite.shapes = !shapes.empty() ? shapes
                 : quick         ? quickShapes()
                                 : defaultShapes();
  if (suite.minReps > suite.maxReps)
    suite.minReps = suite.maxReps;
  return cl;
}

} // namespace bench
