//===- Load.cpp - How busy the machine is --------------------------------===//
#include "Load.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace bench {

CpuTimes cpuTimes() {
  CpuTimes t;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0,
                     irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >>
      steal;
  t.machine = double(user + nice + system + irq + softirq + steal) /
              double(::sysconf(_SC_CLK_TCK));
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  t.self = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  return t;
}

double othersBusyCores(double seconds) {
  using Clock = std::chrono::steady_clock;
  CpuTimes before = cpuTimes();
  auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  CpuTimes after = cpuTimes();
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  return std::max(
      0.0,
      ((after.machine - before.machine) - (after.self - before.self)) / wall);
}

double waitForQuiet(double threshold, double maxSeconds) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  for (;;) {
    double busy = othersBusyCores(0.25);
    double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (busy <= threshold || waited >= maxSeconds)
      return busy;
  }
}

} // namespace bench
