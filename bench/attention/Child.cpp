//===- Child.cpp - Measure one configuration in this process -------------===//
#include "Child.h"
#include "Inputs.h"
#include "Load.h"
#include "OneDnnAttention.h"

#include "tfm/runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace bench {

long peakRssKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::atol(line.c_str() + 6);
  return -1;
}

namespace {

int fail(const std::string &message) {
  std::printf("error %s\n", message.c_str());
  std::fflush(stdout);
  return 1;
}

int fail(const std::string &what, tfm_status status) {
  std::string message = what + ": " + tfm_status_message(status);
  tfm_status_free(status);
  return fail(message);
}

} // namespace

int runChild(const ChildOptions &options) {
  const Shape &shape = options.shape;
  const int64_t dims[4] = {shape.b, shape.h, shape.s, shape.d};

  // Inputs and the output, touched so that the no-op run counts them too.
  tfm_tensor tensors[4] = {};
  for (tfm_tensor &t : tensors)
    if (tfm_status status = tfm_tensor_allocate(TFM_DTYPE_F32, 4, dims, &t))
      return fail("allocate", status);
  for (int i = 0; i < 3; ++i)
    fillInput(Tensor(i), shape, static_cast<float *>(tensors[i].data));
  std::memset(tensors[3].data, 0, size_t(shape.elements()) * sizeof(float));

  tfm_thread_pool *pool = nullptr;
  if (tfm_status status = tfm_thread_pool_create(options.threads, &pool))
    return fail("thread pool", status);
  const tfm_exec *exec = tfm_thread_pool_exec(pool);

  tfm_model *model = nullptr;
  if (!options.library.empty())
    if (tfm_status status = tfm_model_load(options.library.c_str(), &model))
      return fail("load " + options.library, status);

  const float *q = static_cast<const float *>(tensors[0].data);
  const float *k = static_cast<const float *>(tensors[1].data);
  const float *v = static_cast<const float *>(tensors[2].data);
  float *y = static_cast<float *>(tensors[3].data);

  std::string error;
  auto runOnce = [&]() -> bool {
    switch (options.impl) {
    case Impl::Noop:
      return true;
    case Impl::Fused:
    case Impl::Unfused:
      if (!model) {
        error = "no model library";
        return false;
      }
      if (tfm_status status = tfm_model_run_with_exec(model, tensors, 3,
                                                      tensors + 3, 1, exec)) {
        error = std::string("run: ") + tfm_status_message(status);
        tfm_status_free(status);
        return false;
      }
      return true;
    case Impl::OneDnn:
      if (!oneDnnAttention(shape, options.causal, q, k, v, y, exec)) {
        error = oneDnnAvailable() ? "dnnl_sgemm failed" : oneDnnDescription();
        return false;
      }
      return true;
    }
    return false;
  };

  // Warm-up (page faults, first touch of scratch), then timed runs. A
  // warm-up slower than the budget counts as a timed run and lowers the
  // minimum to 2, so that very slow configurations do not take minutes.
  using Clock = std::chrono::steady_clock;
  std::vector<double> times;
  double others = 0;
  if (options.impl != Impl::Noop) {
    auto start = Clock::now();
    if (!runOnce())
      return fail(error);
    double warmMs =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    int minReps = options.minReps;
    double total = 0;
    if (warmMs > options.budgetMs) {
      times.push_back(warmMs);
      total = warmMs;
      minReps = std::min(minReps, 2);
    }
    CpuTimes before = cpuTimes();
    auto timedStart = Clock::now();
    while (int(times.size()) < options.maxReps &&
           (int(times.size()) < minReps || total < options.budgetMs)) {
      start = Clock::now();
      if (!runOnce())
        return fail(error);
      double ms =
          std::chrono::duration<double, std::milli>(Clock::now() - start)
              .count();
      times.push_back(ms);
      total += ms;
    }
    CpuTimes after = cpuTimes();
    double wall =
        std::chrono::duration<double>(Clock::now() - timedStart).count();
    // CPU time of other processes (and the hypervisor) while we ran, in
    // cores; /proc/stat counts in clock ticks of 10 ms, so phases shorter
    // than 0.2 s say -1 (unknown).
    if (wall < 0.2)
      others = -1; // too short to read from clock ticks
    else
      others = std::max(
          0.0, ((after.machine - before.machine) - (after.self - before.self)) /
                   wall);
  }
  long hwm = peakRssKiB();

  double minMs = 0, medianMs = 0;
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    minMs = times.front();
    medianMs = times[times.size() / 2];
  }
  std::printf("result ms=%.6f median_ms=%.6f reps=%zu hwm_kb=%ld others=%.3f\n",
              minMs, medianMs, times.size(), hwm, others);
  if (options.impl != Impl::Noop) {
    for (const RowId &row : checkRows(shape)) {
      std::printf("row %lld %lld %lld", (long long)row.b, (long long)row.h,
                  (long long)row.s);
      const float *out =
          y + ((row.b * shape.h + row.h) * shape.s + row.s) * shape.d;
      for (int64_t j = 0; j < shape.d; ++j)
        std::printf(" %.9g", double(out[j]));
      std::printf("\n");
    }
  }
  std::fflush(stdout);

  tfm_model_release(model);
  tfm_thread_pool_release(pool);
  for (tfm_tensor &t : tensors)
    tfm_tensor_release_data(&t);
  return 0;
}

} // namespace bench
