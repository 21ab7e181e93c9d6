//===- Spawn.cpp - Run one measurement in a child process ----------------===//
//
// Peak memory is the child's own VmHWM, not the ru_maxrss that wait4 reports
// for it: Linux carries the parent's high-water mark into ru_maxrss across
// fork/vfork + exec (exec_mmap folds the old mm's hiwater_rss into the
// child's signal->maxrss), so a child of this parent, which holds compiled
// models and MLIR contexts, would report at least the parent's peak. VmHWM is
// the peak of the address space exec created, i.e. what ru_maxrss means for
// a process started from a small shell.
//
//===----------------------------------------------------------------------===//
#include "Spawn.h"

#include <cerrno>
#include <cstring>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace bench {

std::string selfExecutable() {
  char buffer[4096];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0)
    return {};
  buffer[n] = 0;
  return buffer;
}

namespace {

std::vector<std::string> childArguments(const std::string &executable,
                                        const ChildOptions &options) {
  std::vector<std::string> args = {executable,
                                   "--child",
                                   implName(options.impl),
                                   "--shape",
                                   options.shape.str(),
                                   "--threads",
                                   std::to_string(options.threads),
                                   "--min-reps",
                                   std::to_string(options.minReps),
                                   "--reps",
                                   std::to_string(options.maxReps),
                                   "--budget-ms",
                                   std::to_string(options.budgetMs)};
  if (options.causal)
    args.push_back("--causal");
  if (!options.library.empty()) {
    args.push_back("--lib");
    args.push_back(options.library);
  }
  return args;
}

void parseOutput(const std::string &output, ChildResult &result) {
  std::istringstream lines(output);
  std::string line;
  bool sawResult = false;
  while (std::getline(lines, line)) {
    if (line.rfind("error ", 0) == 0) {
      result.error = line.substr(6);
    } else if (line.rfind("result ", 0) == 0) {
      long reps = 0;
      if (std::sscanf(line.c_str(),
                      "result ms=%lf median_ms=%lf reps=%ld hwm_kb=%ld "
                      "others=%lf",
                      &result.ms, &result.medianMs, &reps, &result.peakKiB,
                      &result.others) == 5) {
        result.reps = int(reps);
        sawResult = true;
      }
    } else if (line.rfind("row ", 0) == 0) {
      std::istringstream fields(line.substr(4));
      RowId id{};
      fields >> id.b >> id.h >> id.s;
      std::vector<double> values;
      double x;
      while (fields >> x)
        values.push_back(x);
      result.rowIds.push_back(id);
      result.rows.push_back(std::move(values));
    }
  }
  result.ok = sawResult && result.error.empty();
  if (!sawResult && result.error.empty())
    result.error = "no result from the child";
}

} // namespace

ChildResult spawnChild(const std::string &executable,
                       const ChildOptions &options) {
  ChildResult result;
  std::vector<std::string> args = childArguments(executable, options);
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);

  int pipeFds[2];
  if (::pipe(pipeFds) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipeFds[1], 1);
  posix_spawn_file_actions_addclose(&actions, pipeFds[0]);
  posix_spawn_file_actions_addclose(&actions, pipeFds[1]);
  pid_t pid;
  int rc = posix_spawn(&pid, executable.c_str(), &actions, nullptr, argv.data(),
                       environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipeFds[1]);
  if (rc != 0) {
    ::close(pipeFds[0]);
    result.error = std::string("posix_spawn: ") + std::strerror(rc);
    return result;
  }

  std::string output;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(pipeFds[0], buffer, sizeof(buffer));
    if (n > 0)
      output.append(buffer, size_t(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  ::close(pipeFds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  parseOutput(output, result);
  if (WIFSIGNALED(status)) {
    result.ok = false;
    result.error = "child killed by signal " +
                   std::to_string(WTERMSIG(status)) + " (" +
                   strsignal(WTERMSIG(status)) + ")";
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && result.ok) {
    result.ok = false;
    result.error = "child exited with " + std::to_string(WEXITSTATUS(status));
  }
  return result;
}

} // namespace bench
