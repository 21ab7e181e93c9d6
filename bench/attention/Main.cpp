//===- Main.cpp - tfm-bench-attention entry point ------------------------===//
//
// Without --child: the suite (Suite.cpp). With --child IMPL: one measurement
// (Child.cpp), as the suite runs it in a fresh process.
//
//===----------------------------------------------------------------------===//
#include "Child.h"
#include "Options.h"
#include "Spawn.h"
#include "Suite.h"

#include <cstdio>

int main(int argc, char **argv) {
  bench::CommandLine cl = bench::parseCommandLine(argc, argv);
  if (cl.help) {
    std::fputs(bench::kUsage, stdout);
    return 0;
  }
  if (!cl.error.empty()) {
    std::fprintf(stderr, "tfm-bench-attention: %s\n\n%s", cl.error.c_str(),
                 bench::kUsage);
    return 2;
  }
  if (cl.child)
    return bench::runChild(cl.childOptions);
  std::string self = bench::selfExecutable();
  if (self.empty()) {
    std::fprintf(stderr, "tfm-bench-attention: cannot find /proc/self/exe\n");
    return 1;
  }
  return bench::runSuite(cl.suite, self);
}
