//===- OneDnnAttention.cpp - Unfused attention on oneDNN's sgemm ---------===//
#include "OneDnnAttention.h"
#include "Softmax.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <dlfcn.h>
#include <vector>

#ifdef TFM_BENCH_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

namespace bench {

#ifdef TFM_BENCH_HAVE_DNNL

namespace {

/// omp_set_num_threads / omp_get_max_threads of the OpenMP runtime oneDNN
/// brought in (libgomp for Debian's build), looked up so that this file does
/// not link an OpenMP runtime of its own (clang's libomp next to libgomp
/// would make two thread pools).
using SetThreadsFn = void (*)(int);
using GetThreadsFn = int (*)();
SetThreadsFn ompSetNumThreads() {
  static SetThreadsFn fn = reinterpret_cast<SetThreadsFn>(
      dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  return fn;
}

struct Job {
  Shape shape;
  bool causal;
  const float *q, *k, *v;
  float *y;
  std::atomic<bool> failed{false};
};

bool sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha,
           const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
           float *c, int64_t ldc) {
  return dnnl_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
         dnnl_success;
}

/// One (batch, head) pair, `head` = b * H + h: all query rows at once, or
/// (causal) blocks of kCausalBlock rows, each against the keys up to its last
/// row.
bool runHead(const Job &job, int64_t head, std::vector<float> &scores,
             std::vector<float> &sums) {
  const int64_t s = job.shape.s, d = job.shape.d;
  const int64_t offset = head * s * d;
  const float *q = job.q + offset, *k = job.k + offset, *v = job.v + offset;
  float *y = job.y + offset;
  const float scale = 1.0f / std::sqrt(float(d));
  const int64_t block = job.causal ? std::min(kCausalBlock, s) : s;
  scores.resize(size_t(block * s));
  sums.resize(size_t(block));
  for (int64_t r0 = 0; r0 < s; r0 += block) {
    int64_t rows = std::min(block, s - r0);
    int64_t cols = job.causal ? r0 + rows : s;
    float *p = scores.data();
    if (!sgemm('N', 'T', rows, cols, d, scale, q + r0 * d, d, k, d, 0.0f, p,
               cols))
      return false;
    for (int64_t i = 0; i < rows; ++i) {
      int64_t valid = job.causal ? r0 + i + 1 : cols;
      sums[i] = softmaxExpRow(p + i * cols, valid, cols);
    }
    float *out = y + r0 * d;
    if (!sgemm('N', 'N', rows, d, cols, 1.0f, p, cols, v, d, 0.0f, out, d))
      return false;
    for (int64_t i = 0; i < rows; ++i) {
      float inv = 1.0f / sums[i];
      for (int64_t j = 0; j < d; ++j)
        out[i * d + j] *= inv;
    }
  }
  return true;
}

void runHeads(void *args, int64_t begin, int64_t end) {
  auto &job = *static_cast<Job *>(args);
  thread_local std::vector<float> scores, sums;
  if (SetThreadsFn set = ompSetNumThreads())
    set(1);
  for (int64_t head = begin; head < end; ++head)
    if (!runHead(job, head, scores, sums))
      job.failed = true;
}

} // namespace

bool oneDnnAvailable() { return true; }

std::string oneDnnDescription() {
  const dnnl_version_t *version = dnnl_version();
  std::string runtime = version->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP"
                        : version->cpu_runtime == DNNL_RUNTIME_SEQ
                            ? "sequential"
                            : "other runtime";
  return "oneDNN " + std::to_string(version->major) + "." +
         std::to_string(version->minor) + "." + std::to_string(version->patch) +
         " (" + runtime + ")";
}

int oneDnnOmpThreads() {
  auto get = reinterpret_cast<GetThreadsFn>(
      dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  return get ? get() : -1;
}

bool oneDnnAttention(const Shape &shape, bool causal, const float *q,
                     const float *k, const float *v, float *y,
                     const tfm_exec *exec) {
  Job job;
  job.shape = shape;
  job.causal = causal;
  job.q = q;
  job.k = k;
  job.v = v;
  job.y = y;
  int64_t heads = shape.b * shape.h;
  if (exec && exec->parallel_for)
    exec->parallel_for(exec->context, heads, runHeads, &job);
  else
    runHeads(&job, 0, heads);
  return !job.failed;
}

#else // !TFM_BENCH_HAVE_DNNL

bool oneDnnAvailable() { return false; }
std::string oneDnnDescription() {
  return "oneDNN not found at configure time (apt-get install libdnnl-dev)";
}
int oneDnnOmpThreads() { return -1; }
bool oneDnnAttention(const Shape &, bool, const float *, const float *,
                     const float *, float *, const tfm_exec *) {
  return false;
}

#endif

} // namespace bench
