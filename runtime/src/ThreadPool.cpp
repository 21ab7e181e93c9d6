//===- ThreadPool.cpp - A thread pool behind tfm_exec -----------*- C++ -*-===//
//
// tfm_thread_pool: num_threads - 1 workers plus the thread that calls
// parallel_for. A call posts a Job that lives on the caller's stack; threads
// that join it claim task indices one at a time from an atomic counter until
// the range is used up. The caller then withdraws the job, so that late
// workers no longer join, and waits for the ones that did to finish their
// last task. Calls on one pool take turns (runMutex).
//
//===----------------------------------------------------------------------===//

#include "Status.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

using namespace tfm::rt;

namespace {

/// How long an idle worker polls for the next job before it sleeps.
constexpr std::chrono::microseconds kSpinTime{100};

/// Polls `done` for up to kSpinTime; the caller then sleeps on its
/// condition variable if it must.
template <typename Predicate> void spinUntil(Predicate done) {
  auto until = std::chrono::steady_clock::now() + kSpinTime;
  for (unsigned i = 1; !done(); ++i) {
    if (i % 64 == 0 && std::chrono::steady_clock::now() > until)
      return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

/// One parallel_for call.
struct Job {
  tfm_task_fn task;
  void *args;
  int64_t count;
  /// Tasks handed out at once: a few chunks per thread balance uneven tasks
  /// while keeping the shared counter off the path of small ones (a row of
  /// a layer norm).
  int64_t grain;
  /// The next task index to hand out; may run past `count`.
  std::atomic<int64_t> next{0};
  /// Workers inside runTasks for this job; changed under the pool's mutex,
  /// read by the spinning caller without it.
  std::atomic<uint32_t> active{0};
};

/// The pool whose tasks this thread is running, to run nested calls inline.
thread_local const tfm_thread_pool_t *currentPool = nullptr;

} // namespace

struct tfm_thread_pool_t {
  explicit tfm_thread_pool_t(uint32_t numThreads);
  ~tfm_thread_pool_t();

  void startWorkers();
  void parallelFor(int64_t count, tfm_task_fn task, void *args);
  void runTasks(Job &job);
  void workerLoop();

  tfm_exec exec{};
  uint32_t numThreads;
  std::vector<std::thread> workers;

  /// Serialises parallel_for calls.
  std::mutex runMutex;
  /// Guards job, generation, stopping and Job::active.
  std::mutex mutex;
  /// Workers wait here for a job (or for stopping).
  std::condition_variable wake;
  /// The caller waits here for the workers inside its job.
  std::condition_variable done;
  Job *job = nullptr;
  /// Counts posted jobs (the first is 1), so that a worker joins each job at
  /// most once.
  uint64_t generation = 0;
  bool stopping = false;
  /// `generation` and `stopping` for workers spinning outside the mutex.
  std::atomic<uint64_t> posted{0};
  std::atomic<bool> stopRequested{false};
};

namespace {

void poolParallelFor(void *context, int64_t count, tfm_task_fn task,
                     void *args) noexcept {
  static_cast<tfm_thread_pool_t *>(context)->parallelFor(count, task, args);
}

} // namespace

tfm_thread_pool_t::tfm_thread_pool_t(uint32_t numThreads)
    : numThreads(numThreads) {
  exec.abi_version = TFM_EXEC_ABI_VERSION;
  exec.num_threads = numThreads;
  exec.parallel_for = poolParallelFor;
  exec.context = this;
}

tfm_thread_pool_t::~tfm_thread_pool_t() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
    stopRequested.store(true, std::memory_order_release);
  }
  wake.notify_all();
  for (std::thread &worker : workers)
    worker.join();
}

void tfm_thread_pool_t::startWorkers() {
  workers.reserve(numThreads - 1);
  for (uint32_t i = 1; i < numThreads; ++i)
    workers.emplace_back([this] { workerLoop(); });
}

void tfm_thread_pool_t::runTasks(Job &job) {
  const tfm_thread_pool_t *outer = currentPool;
  currentPool = this;
  for (int64_t i = job.next.fetch_add(job.grain, std::memory_order_relaxed);
       i < job.count;
       i = job.next.fetch_add(job.grain, std::memory_order_relaxed))
    job.task(job.args, i, std::min(i + job.grain, job.count));
  currentPool = outer;
}

void tfm_thread_pool_t::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex);
  // Not `generation`: a job may have been posted before this thread got here.
  uint64_t seen = 0;
  auto ready = [&] { return stopping || (job && generation != seen); };
  for (;;) {
    if (!ready()) {
      // A model posts its ops' jobs back to back, and waking a sleeping
      // thread costs more than many of them take: spin a little first.
      lock.unlock();
      spinUntil([&] {
        return posted.load(std::memory_order_acquire) != seen ||
               stopRequested.load(std::memory_order_acquire);
      });
      lock.lock();
    }
    wake.wait(lock, ready);
    if (stopping)
      return;
    seen = generation;
    Job &current = *job;
    ++current.active;
    lock.unlock();
    runTasks(current);
    lock.lock();
    // The caller may only be waiting once it has withdrawn the job.
    if (--current.active == 0 && job != &current)
      done.notify_one();
  }
}

void tfm_thread_pool_t::parallelFor(int64_t count, tfm_task_fn task,
                                    void *args) {
  if (count <= 0 || !task)
    return;
  // Nothing to share, or a task of this pool calling back into it: the
  // workers may all be busy (or waiting for this very thread), so run here.
  if (count == 1 || workers.empty() || currentPool == this) {
    task(args, 0, count);
    return;
  }

  std::lock_guard<std::mutex> turn(runMutex);
  int64_t grain = std::max<int64_t>(1, count / (4 * int64_t(numThreads)));
  Job current{task, args, count, grain};
  {
    std::lock_guard<std::mutex> lock(mutex);
    job = &current;
    ++generation;
    posted.store(generation, std::memory_order_release);
  }
  // The caller takes a task too, so count - 1 workers suffice.
  if (static_cast<uint64_t>(count - 1) >= workers.size())
    wake.notify_all();
  else
    for (int64_t i = 1; i < count; ++i)
      wake.notify_one();

  runTasks(current);

  std::unique_lock<std::mutex> lock(mutex);
  job = nullptr;
  if (current.active != 0) {
    // The workers' last tasks usually end within microseconds of ours.
    lock.unlock();
    spinUntil(
        [&] { return current.active.load(std::memory_order_acquire) == 0; });
    lock.lock();
  }
  done.wait(lock, [&] { return current.active == 0; });
}

extern "C" {

tfm_status tfm_thread_pool_create(uint32_t num_threads,
                                  tfm_thread_pool **out_pool) {
  const char *function = "tfm_thread_pool_create";
  return guard(function, [&]() -> tfm_status {
    if (!out_pool)
      return makeStatus(
          TFM_STATUS_INVALID_ARGUMENT,
          fmt::format("{}: argument 'out_pool' is NULL", function));
    *out_pool = nullptr;
    if (num_threads == 0)
      num_threads = std::max(1u, std::thread::hardware_concurrency());
    auto pool = std::make_unique<tfm_thread_pool_t>(num_threads);
    try {
      pool->startWorkers();
    } catch (const std::system_error &e) {
      // The destructor joins the workers that did start.
      return makeStatus(TFM_STATUS_IO_ERROR,
                        fmt::format("{}: cannot start {} worker threads: {}",
                                    function, num_threads - 1, e.what()));
    }
    *out_pool = pool.release();
    return nullptr;
  });
}

void tfm_thread_pool_release(tfm_thread_pool *pool) { delete pool; }

const tfm_exec *tfm_thread_pool_exec(tfm_thread_pool *pool) {
  return pool ? &pool->exec : nullptr;
}

} // extern "C"
