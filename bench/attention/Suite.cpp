//===- Suite.cpp - The benchmark table -----------------------------------===//
//
// For every shape and causal flavour the parent compiles the model twice
// (fused and unfused) with compileModel; then, for every thread count, it
// runs one child per implementation (no-op, fused, oneDNN, unfused) and
// reports progress on stderr. The FMA peak is sampled at the start and
// before every shape; the table, using the best peak reading, and a summary
// against the targets of issue 3 are printed at the end.
//
//===----------------------------------------------------------------------===//
#include "Suite.h"
#include "Inputs.h"
#include "Load.h"
#include "Models.h"
#include "OneDnnAttention.h"
#include "Peak.h"
#include "Softmax.h"
#include "Spawn.h"
#include "Table.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

namespace bench {

namespace {

constexpr double kCheckTolerance = 1e-4;
/// Measurements whose timed runs took longer than this are not repeated.
constexpr double kMaxRetryMs = 3000;

struct Measurement {
  bool attempted = false;
  /// Why there is no number ("" when ok).
  std::string missing;
  ChildResult result;
  bool ok() const { return attempted && result.ok; }
};

struct Row {
  Shape shape;
  bool causal = false;
  unsigned threads = 1;
  Measurement noop, fused, unfused, onednn;
  double fusedErr = -1;
  std::string check;
};

std::string cpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos)
        return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "unknown CPU";
}

std::string now() {
  std::time_t t = std::time(nullptr);
  char buffer[64];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d %H:%M:%S %Z",
                std::localtime(&t));
  return buffer;
}

/// Runs `options` `rounds` times, and again (up to `retries` more times)
/// while the fastest run so far was disturbed by other processes; keeps the
/// fastest run and the largest peak memory seen.
Measurement measure(const std::string &executable, const ChildOptions &options,
                    int rounds, int retries, double busyThreshold,
                    double quietWait) {
  Measurement m;
  m.attempted = true;
  long peak = -1;
  for (int round = 0;; ++round) {
    if (round >= rounds) {
      // Slow measurements (the unfused path at large S) are not repeated:
      // a repeat costs seconds, and their ratios are far from 1 anyway.
      bool disturbed = m.result.others > busyThreshold;
      bool slow = m.result.ms * m.result.reps > kMaxRetryMs;
      if (!disturbed || slow || round >= rounds + retries)
        break;
      std::fprintf(stderr, "  other processes used %.2f cores; again\n",
                   m.result.others);
    }
    if (quietWait > 0)
      waitForQuiet(busyThreshold, quietWait);
    ChildResult r = spawnChild(executable, options);
    if (!r.ok) {
      m.result = r;
      m.missing = r.error;
      return m;
    }
    peak = std::max(peak, r.peakKiB);
    if (round == 0 || r.ms < m.result.ms)
      m.result = r;
  }
  m.result.peakKiB = peak;
  return m;
}

/// Largest relative row error of `a` against `b`.
double maxRowError(const std::vector<std::vector<double>> &a,
                   const std::vector<std::vector<double>> &b) {
  double worst = 0;
  if (a.size() != b.size())
    return 1e300;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, rowError(a[i], b[i]));
  return worst;
}

/// Fills row.fusedErr and row.check.
void checkOutputs(Row &row, const std::vector<std::vector<double>> &reference) {
  struct Named {
    const char *name;
    const Measurement *m;
  };
  std::vector<Named> ran;
  for (Named n : {Named{"fused", &row.fused}, Named{"unfused", &row.unfused},
                  Named{"oneDNN", &row.onednn}})
    if (n.m->ok())
      ran.push_back(n);
  if (ran.empty()) {
    row.check = "-";
    return;
  }
  std::string worstPair;
  double worst = 0;
  for (size_t i = 0; i < ran.size(); ++i) {
    double e = maxRowError(ran[i].m->result.rows, reference);
    if (ran[i].m == &row.fused)
      row.fusedErr = e;
    if (e > worst) {
      worst = e;
      worstPair = std::string(ran[i].name) + " vs f64";
    }
    for (size_t j = 0; j < ran.size(); ++j) {
      if (i == j)
        continue;
      double p = maxRowError(ran[i].m->result.rows, ran[j].m->result.rows);
      if (p > worst) {
        worst = p;
        worstPair = std::string(ran[i].name) + " vs " + ran[j].name;
      }
    }
  }
  row.check = worst <= kCheckTolerance
                  ? "ok"
                  : format("WARN %s %.1e", worstPair.c_str(), worst);
}

std::string msCell(const Measurement &m) {
  return m.ok() ? format("%.3f", m.result.ms) : "-";
}

std::string ratioCell(const Measurement &other, const Measurement &fused) {
  if (!other.ok() || !fused.ok() || fused.result.ms <= 0)
    return "-";
  return format("%.2fx", other.result.ms / fused.result.ms);
}

std::string memCell(const Measurement &m, const Measurement &noop) {
  if (!m.ok() || !noop.ok() || m.result.peakKiB < 0 || noop.result.peakKiB < 0)
    return "-";
  return format("%.1f", double(m.result.peakKiB - noop.result.peakKiB) / 1024);
}

double memMiB(const Measurement &m, const Measurement &noop) {
  return double(m.result.peakKiB - noop.result.peakKiB) / 1024;
}

/// The most CPU (in cores) other processes used during the row's fused and
/// oneDNN measurements (the unfused path's, at ~100x, matter less and are not
/// repeated when slow); "-" when both timed phases were too short to tell.
std::string busyCell(const Row &row) {
  double busy = -1;
  for (const Measurement *m : {&row.fused, &row.onednn})
    if (m->ok())
      busy = std::max(busy, m->result.others);
  return busy < 0 ? "-" : format("%.2f", busy);
}

struct Notes {
  std::vector<std::string> lines;
  /// The footnote marker for `text`, adding it once.
  std::string mark(const std::string &text) {
    auto it = std::find(lines.begin(), lines.end(), text);
    size_t index = it - lines.begin();
    if (it == lines.end())
      lines.push_back(text);
    return "[" + std::to_string(index + 1) + "]";
  }
};

/// " (busy)" when other processes used more than `threshold` cores during
/// one of `ms`' measurements.
std::string busyMark(double threshold,
                     std::initializer_list<const Measurement *> ms) {
  for (const Measurement *m : ms)
    if (m->ok() && m->result.others > threshold)
      return " (busy)";
  return "";
}

void printSummary(const std::vector<Row> &rows, const FmaPeak &peak,
                  double busy) {
  std::printf(
      "\nAgainst the targets of issue 3 (\"(busy)\": other processes "
      "used more than %.2f cores during a measurement it rests on):\n\n",
      busy);
  // 1. >= 75 % of the single-core peak on one thread at S >= 1024, D = 64.
  std::printf("- fused, 1 thread, S >= 1024, D = 64 (target >= 75%% of the "
              "%.1f GFLOP/s peak):",
              peak.singleCore);
  for (const Row &r : rows)
    if (r.threads == 1 && r.shape.s >= 1024 && r.shape.d == 64 && r.fused.ok())
      std::printf(" %s%s %.0f%%%s;", r.shape.str().c_str(),
                  r.causal ? " causal" : "",
                  attentionFlops(r.shape, r.causal) /
                      (r.fused.result.ms * 1e6) / peak.singleCore * 100,
                  busyMark(busy, {&r.fused}).c_str());
  std::printf("\n");
  // 2. >= 1.8x on two threads.
  std::printf("- fused, 2 threads vs 1 thread (target >= 1.8x):");
  for (const Row &r2 : rows) {
    if (r2.threads != 2 || !r2.fused.ok())
      continue;
    for (const Row &r1 : rows)
      if (r1.threads == 1 && r1.shape == r2.shape && r1.causal == r2.causal &&
          r1.fused.ok())
        std::printf(" %s%s %.2fx%s;", r2.shape.str().c_str(),
                    r2.causal ? " causal" : "",
                    r1.fused.result.ms / r2.fused.result.ms,
                    busyMark(busy, {&r1.fused, &r2.fused}).c_str());
  }
  std::printf("\n");
  // 3. Ahead of oneDNN everywhere.
  int ahead = 0, compared = 0;
  std::string behind;
  for (const Row &r : rows) {
    if (!r.fused.ok() || !r.onednn.ok())
      continue;
    ++compared;
    double ratio = r.onednn.result.ms / r.fused.result.ms;
    if (ratio > 1)
      ++ahead;
    else
      behind += format(" %s%s %ut (%.2fx%s);", r.shape.str().c_str(),
                       r.causal ? " causal" : "", r.threads, ratio,
                       busyMark(busy, {&r.fused, &r.onednn}).c_str());
  }
  std::printf("- fused ahead of the oneDNN baseline in %d of %d rows%s%s\n",
              ahead, compared,
              behind.empty() ? "" : "; behind at:", behind.c_str());
  // 4. Peak memory linear in S.
  std::printf("- fused peak memory above the no-op run, 1 thread, "
              "non-causal, D = 64 (MiB; per head in parentheses):");
  for (const Row &r : rows)
    if (r.threads == 1 && !r.causal && r.shape.d == 64 && r.shape.b == 1 &&
        r.fused.ok() && r.noop.ok()) {
      double mib = memMiB(r.fused, r.noop);
      std::printf(" S=%lld H=%lld: %.1f (%.2f);", (long long)r.shape.s,
                  (long long)r.shape.h, mib, mib / double(r.shape.h));
    }
  std::printf("\n");
}

} // namespace

int runSuite(const SuiteOptions &options, const std::string &executable) {
  auto wallStart = std::chrono::steady_clock::now();
  if (options.peakOnly) {
    FmaPeak peak;
    sampleFmaPeak(peak, options.peakSeconds, options.peakTrials,
                  options.peakTrials, 2);
    std::printf("%s FMA peak: %.1f GFLOP/s on 1 thread (slowest trial %.1f), "
                "%.1f GFLOP/s on %u threads; others busy %.2f cores\n",
                peak.isa.c_str(), peak.singleCore, peak.slowestSingle,
                peak.allThreads, peak.threads, othersBusyCores(0.5));
    return 0;
  }
  // oneDNN's OpenMP runtime reads this in every child (see
  // OneDnnAttention.h); nothing else in the benchmark uses OpenMP.
  ::setenv("OMP_NUM_THREADS", "1", 1);

  std::string workDir = options.workDir;
  bool removeWorkDir = false;
  if (workDir.empty()) {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/tfm-bench-attention.XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back(0);
    if (!::mkdtemp(buffer.data())) {
      std::fprintf(stderr, "error: cannot create %s\n", pattern.c_str());
      return 1;
    }
    workDir = buffer.data();
    removeWorkDir = true;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(workDir, ec);
  }

  unsigned maxThreads = 1;
  for (unsigned t : options.threads)
    maxThreads = std::max(maxThreads, t);
  const unsigned peakThreads = std::max(2u, maxThreads);
  if (options.quietWait > 0)
    waitForQuiet(options.busyThreshold, options.quietWait);
  std::fprintf(stderr, "measuring the FMA peak...\n");
  FmaPeak peak;
  sampleFmaPeak(peak, options.peakSeconds, options.peakTrials,
                options.peakTrials, peakThreads);
  std::fprintf(stderr, "  %.1f GFLOP/s on 1 thread, %.1f on %u\n",
               peak.singleCore, peak.allThreads, peak.threads);
  const bool fusionChoice = canChooseFusion();
  const std::string date = now();

  Table table({{"B,H,S,D", 11, false},
               {"causal", 6, false},
               {"thr", 3},
               {"fused ms", 9},
               {"GFLOP/s", 7},
               {"% peak", 6},
               {"mem MiB", 7},
               {"unfused ms", 10},
               {"unf/fused", 9},
               {"unf MiB", 7},
               {"oneDNN ms", 9},
               {"oneDNN/fused", 12},
               {"err vs f64", 10},
               {"busy", 4},
               {"check", 5, false}});

  Notes notes;
  std::vector<Row> rows;
  bool failed = false;

  for (const Shape &shape : options.shapes) {
    if (&shape != &options.shapes.front()) {
      if (options.quietWait > 0)
        waitForQuiet(options.busyThreshold, options.quietWait);
      sampleFmaPeak(peak, options.peakSeconds, 2, 1, peakThreads);
    }
    for (bool causal : options.causal) {
      const std::string label =
          shape.str() + (causal ? " causal" : " non-causal");
      // Compile.
      std::fprintf(stderr, "%s: compiling fused...\n", label.c_str());
      CompiledModel fused =
          compileAttention(workDir, shape, causal, true, options.dynamicSeq);
      std::fprintf(stderr, "  %s in %.1f s\n", fused.ok ? "ok" : "FAILED",
                   fused.seconds);
      CompiledModel unfused;
      std::string unfusedMissing;
      double scoresMiB = 4.0 * double(shape.b * shape.h) * double(shape.s) *
                         double(shape.s) / (1 << 20);
      if (!options.runUnfused) {
        unfusedMissing = "unfused path not requested (--no-unfused)";
      } else if (!fusionChoice) {
        unfusedMissing = "unfused path unavailable: this build's "
                         "CompileOptions has no fuseAttention";
      } else if (scoresMiB > options.unfusedBudgetMiB) {
        unfusedMissing = format("unfused path skipped: its B*H*S*S scores "
                                "alone are %.0f MiB, over the "
                                "--unfused-budget-mb of %.0f MiB",
                                scoresMiB, options.unfusedBudgetMiB);
      } else {
        std::fprintf(stderr, "%s: compiling unfused...\n", label.c_str());
        unfused =
            compileAttention(workDir, shape, causal, false, options.dynamicSeq);
        std::fprintf(stderr, "  %s in %.1f s\n", unfused.ok ? "ok" : "FAILED",
                     unfused.seconds);
        if (!unfused.ok)
          unfusedMissing = "unfused compile failed: " + unfused.error;
      }

      std::vector<std::vector<double>> reference;
      for (const RowId &id : checkRows(shape))
        reference.push_back(referenceRow(shape, causal, id));

      for (unsigned threads : options.threads) {
        Row row;
        row.shape = shape;
        row.causal = causal;
        row.threads = threads;
        ChildOptions child;
        child.shape = shape;
        child.causal = causal;
        child.threads = threads;
        child.minReps = options.minReps;
        child.maxReps = options.maxReps;
        child.budgetMs = options.budgetMs;
        auto run = [&](Impl impl, const std::string &library) {
          std::fprintf(stderr, "%s, %u thread(s): %s\n", label.c_str(), threads,
                       implName(impl));
          child.impl = impl;
          child.library = library;
          if (impl == Impl::Noop)
            return measure(executable, child, 1, 0, 0, 0);
          return measure(executable, child, options.rounds, options.retries,
                         options.busyThreshold, options.quietWait);
        };

        row.noop = run(Impl::Noop, fused.ok ? fused.libraryPath : "");
        if (fused.ok)
          row.fused = run(Impl::Fused, fused.libraryPath);
        else
          row.fused.missing = "fused compile failed: " + fused.error;
        if (!options.runOneDnn)
          row.onednn.missing = "oneDNN baseline not requested (--no-onednn)";
        else if (!oneDnnAvailable())
          row.onednn.missing = oneDnnDescription();
        else
          row.onednn = run(Impl::OneDnn, "");
        if (unfusedMissing.empty())
          row.unfused = run(Impl::Unfused, unfused.libraryPath);
        else
          row.unfused.missing = unfusedMissing;

        checkOutputs(row, reference);
        if (!row.fused.ok() || row.check.rfind("WARN", 0) == 0)
          failed = true;

        std::fprintf(stderr,
                     "  %s, %u thread(s) -> fused %s ms, unfused %s ms, "
                     "oneDNN %s ms, check %s, busy %s\n",
                     label.c_str(), threads, msCell(row.fused).c_str(),
                     msCell(row.unfused).c_str(), msCell(row.onednn).c_str(),
                     row.check.c_str(), busyCell(row).c_str());
        rows.push_back(std::move(row));
      }
    }
  }

  // The table comes last, so that its "% peak" uses the best peak reading
  // of the whole run.
  std::printf("# tfm attention benchmark\n\n");
  std::printf("- date: %s\n", date.c_str());
  std::printf("- CPU: %s, %u hardware threads\n", cpuModel().c_str(),
              std::thread::hardware_concurrency());
  std::printf("- FMA peak (%s, %d independent accumulators, fp32): %.1f "
              "GFLOP/s on 1 thread, %.1f GFLOP/s on %u threads together "
              "(best of %d and %d trials of %.1f s spread over the run; the "
              "slowest single-thread trial read %.1f)\n",
              peak.isa.c_str(), peak.accumulators, peak.singleCore,
              peak.allThreads, peak.threads, peak.singleTrials, peak.allTrials,
              options.peakSeconds, peak.slowestSingle);
  std::printf("- oneDNN baseline: %s; dnnl_sgemm on 1 OpenMP thread per "
              "call, (b, h) pairs spread over the thread pool; softmax %s\n",
              oneDnnDescription().c_str(), softmaxIsa());
  std::printf("- timing: min of %d..%d timed runs (stop after %.0f ms) after "
              "one warm-up, %d round(s), every measurement in a fresh "
              "process, repeated up to %d times while other processes used "
              "more than %.2f cores (column busy), after waiting up to %.0f s "
              "for that; %s dims\n\n",
              options.minReps, options.maxReps, options.budgetMs,
              options.rounds, options.retries, options.busyThreshold,
              options.quietWait, options.dynamicSeq ? "S dynamic" : "static");
  std::fflush(stdout);

  table.printHeader(stdout);
  for (const Row &row : rows) {
    auto withNote = [&](std::string cell, const Measurement &m) {
      if (cell == "-" && !m.missing.empty())
        cell = "-" + notes.mark(m.missing);
      return cell;
    };
    double gflops = 0;
    if (row.fused.ok())
      gflops =
          attentionFlops(row.shape, row.causal) / (row.fused.result.ms * 1e6);
    table.printRow(
        stdout,
        {row.shape.str(), row.causal ? "yes" : "no",
         std::to_string(row.threads), withNote(msCell(row.fused), row.fused),
         row.fused.ok() ? format("%.1f", gflops) : "-",
         row.fused.ok() && peak.singleCore > 0
             ? format("%.0f", gflops / peak.singleCore * 100)
             : "-",
         memCell(row.fused, row.noop),
         withNote(msCell(row.unfused), row.unfused),
         ratioCell(row.unfused, row.fused), memCell(row.unfused, row.noop),
         withNote(msCell(row.onednn), row.onednn),
         ratioCell(row.onednn, row.fused),
         row.fusedErr >= 0 ? format("%.1e", row.fusedErr) : "-", busyCell(row),
         row.check});
  }

  if (!notes.lines.empty()) {
    std::printf("\n");
    for (size_t i = 0; i < notes.lines.size(); ++i)
      std::printf("[%zu] %s\n", i + 1, notes.lines[i].c_str());
  }
  printSummary(rows, peak, options.busyThreshold);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              wallStart)
                    .count();
  std::printf("\nTotal time: %.0f s.\n", wall);
  std::fflush(stdout);

  if (removeWorkDir) {
    std::error_code ec;
    std::filesystem::remove_all(workDir, ec);
  } else {
    std::fprintf(stderr, "models kept in %s\n", workDir.c_str());
  }
  return failed ? 1 : 0;
}

} // namespace bench
