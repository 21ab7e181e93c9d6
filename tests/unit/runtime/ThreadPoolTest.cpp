//===- ThreadPoolTest.cpp - tfm_thread_pool and tfm_exec --------*- C++ -*-===//
//
// The pool's parallel_for, and models run with an exec: an in-process entry
// point and the test artifact both split their rows into tasks.
//
//===----------------------------------------------------------------------===//

#include "tfm/runtime.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

struct PoolDeleter {
  void operator()(tfm_thread_pool *pool) const {
    tfm_thread_pool_release(pool);
  }
};
using PoolPtr = std::unique_ptr<tfm_thread_pool, PoolDeleter>;

PoolPtr makePool(uint32_t threads) {
  tfm_thread_pool *pool = nullptr;
  tfm_status status = tfm_thread_pool_create(threads, &pool);
  INFO(tfm_status_message(status));
  tfm_status_free(status);
  REQUIRE(status == nullptr);
  REQUIRE(pool);
  return PoolPtr(pool);
}

/// Counts how often parallel_for ran each index, and how it split the range.
struct Coverage {
  explicit Coverage(int64_t count)
      : hits(static_cast<size_t>(count > 0 ? count : 0)) {}
  std::vector<std::atomic<int>> hits;
  std::atomic<int> calls{0};
  std::atomic<int> badRanges{0};

  static void task(void *opaque, int64_t begin, int64_t end) {
    auto &self = *static_cast<Coverage *>(opaque);
    ++self.calls;
    if (begin < 0 || end <= begin ||
        end > static_cast<int64_t>(self.hits.size())) {
      ++self.badRanges;
      return;
    }
    for (int64_t i = begin; i < end; ++i)
      ++self.hits[static_cast<size_t>(i)];
  }

  /// Whether every index ran exactly once.
  bool exact() const {
    if (badRanges != 0)
      return false;
    for (const std::atomic<int> &hit : hits)
      if (hit != 1)
        return false;
    return true;
  }
};

void parallelFor(const tfm_exec *exec, int64_t count, tfm_task_fn task,
                 void *args) {
  exec->parallel_for(exec->context, count, task, args);
}

} // namespace

TEST_CASE("parallel_for runs every index exactly once", "[threads]") {
  for (uint32_t threads : {1u, 2u, 4u}) {
    PoolPtr pool = makePool(threads);
    const tfm_exec *exec = tfm_thread_pool_exec(pool.get());
    REQUIRE(exec);
    CHECK(exec->abi_version == TFM_EXEC_ABI_VERSION);
    CHECK(exec->num_threads == threads);
    REQUIRE(exec->parallel_for);
    for (int64_t count : {0, 1, 7, 1000}) {
      // Twice, so that the second call finds the workers back at rest.
      for (int round = 0; round < 2; ++round) {
        INFO("threads " << threads << ", count " << count << ", round "
                        << round);
        Coverage coverage(count);
        parallelFor(exec, count, Coverage::task, &coverage);
        CHECK(coverage.exact());
        if (count == 0)
          CHECK(coverage.calls == 0);
      }
    }
  }
}

TEST_CASE("parallel_for runs small ranges on the calling thread", "[threads]") {
  PoolPtr pool = makePool(4);
  const tfm_exec *exec = tfm_thread_pool_exec(pool.get());
  struct Record {
    std::thread::id thread;
    int calls = 0;
  } record;
  auto task = [](void *opaque, int64_t, int64_t) {
    auto &self = *static_cast<Record *>(opaque);
    self.thread = std::this_thread::get_id();
    ++self.calls;
  };
  parallelFor(exec, 1, task, &record);
  CHECK(record.calls == 1);
  CHECK(record.thread == std::this_thread::get_id());
  parallelFor(exec, -5, task, &record);
  parallelFor(exec, 0, task, &record);
  CHECK(record.calls == 1);
  // A NULL task is ignored rather than called.
  parallelFor(exec, 3, nullptr, &record);
}

TEST_CASE("parallel_for runs tasks on several threads at once", "[threads]") {
  PoolPtr pool = makePool(2);
  // Each task waits until two threads have arrived, which only happens if a
  // worker takes a task while the caller is in the other one.
  struct Meeting {
    std::mutex mutex;
    std::set<std::thread::id> threads;
    std::atomic<int> met{0};
  } meeting;
  auto task = [](void *opaque, int64_t, int64_t) {
    auto &self = *static_cast<Meeting *>(opaque);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(self.mutex);
        self.threads.insert(std::this_thread::get_id());
        if (self.threads.size() == 2) {
          ++self.met;
          return;
        }
      }
      if (std::chrono::steady_clock::now() > deadline)
        return;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  };
  parallelFor(tfm_thread_pool_exec(pool.get()), 2, task, &meeting);
  CHECK(meeting.threads.size() == 2);
  CHECK(meeting.met == 2);
}

TEST_CASE("parallel_for may be called from several threads at once",
          "[threads]") {
  PoolPtr pool = makePool(4);
  const tfm_exec *exec = tfm_thread_pool_exec(pool.get());
  constexpr int kCallers = 3, kRounds = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < kRounds; ++round) {
        Coverage coverage(17 + c + round % 5);
        parallelFor(exec, static_cast<int64_t>(coverage.hits.size()),
                    Coverage::task, &coverage);
        if (!coverage.exact())
          ++failures;
      }
    });
  for (std::thread &caller : callers)
    caller.join();
  CHECK(failures == 0);
}

TEST_CASE("a nested parallel_for runs on the calling thread", "[threads]") {
  PoolPtr pool = makePool(3);
  struct Nest {
    const tfm_exec *exec;
    Coverage inner{6 * 5};
  } nest{tfm_thread_pool_exec(pool.get())};
  auto outer = [](void *opaque, int64_t begin, int64_t end) {
    auto &self = *static_cast<Nest *>(opaque);
    for (int64_t i = begin; i < end; ++i) {
      // Covers [5i, 5i + 5) of inner, through an offset.
      struct Shifted {
        Coverage *inner;
        int64_t offset;
      } shifted{&self.inner, 5 * i};
      parallelFor(
          self.exec, 5,
          [](void *args, int64_t b, int64_t e) {
            auto &s = *static_cast<Shifted *>(args);
            Coverage::task(s.inner, s.offset + b, s.offset + e);
          },
          &shifted);
    }
  };
  parallelFor(nest.exec, 6, outer, &nest);
  CHECK(nest.inner.exact());
}

TEST_CASE("thread pools are created and released", "[threads]") {
  SECTION("0 threads means one per hardware thread") {
    PoolPtr pool = makePool(0);
    unsigned hardware = std::thread::hardware_concurrency();
    CHECK(tfm_thread_pool_exec(pool.get())->num_threads ==
          (hardware ? hardware : 1u));
  }
  SECTION("NULL arguments") {
    tfm_status status = tfm_thread_pool_create(2, nullptr);
    CHECK(tfm_status_code(status) == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(std::string(tfm_status_message(status)) ==
          "tfm_thread_pool_create: argument 'out_pool' is NULL");
    tfm_status_free(status);
    CHECK(tfm_thread_pool_exec(nullptr) == nullptr);
    tfm_thread_pool_release(nullptr);
  }
  SECTION("release right after create, and after use") {
    for (int i = 0; i < 20; ++i) {
      PoolPtr pool = makePool(4);
      if (i % 2) {
        Coverage coverage(9);
        parallelFor(tfm_thread_pool_exec(pool.get()), 9, Coverage::task,
                    &coverage);
        CHECK(coverage.exact());
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Models run with an exec
//===----------------------------------------------------------------------===//

namespace {

/// y[i, j] = x[i, j] * 2 + i on f32[n, 4], one task per row when given an
/// exec, the way generated code does it.
const char *const kRowsMetadata = R"({
  "abi": 1,
  "model": "rows",
  "entry": "tfm_rows_run_packed",
  "symbols": ["n"],
  "inputs": [{"name": "x", "dtype": "f32", "shape": ["n", 4]}],
  "outputs": [{"name": "y", "dtype": "f32", "shape": ["n", 4]}]
})";

std::atomic<int> rowsEntryCalls{0};
std::atomic<int> rowsEntryParallelCalls{0};

struct RowsArgs {
  const float *x;
  float *y;
};

void rowsTask(void *opaque, int64_t begin, int64_t end) {
  const RowsArgs &args = *static_cast<const RowsArgs *>(opaque);
  for (int64_t i = begin; i < end; ++i)
    for (int64_t j = 0; j < 4; ++j)
      args.y[i * 4 + j] = args.x[i * 4 + j] * 2 + static_cast<float>(i);
}

int32_t rowsEntry(void *const *buffers, const int64_t *symbols,
                  const tfm_exec *exec) {
  ++rowsEntryCalls;
  RowsArgs args{static_cast<const float *>(buffers[0]),
                static_cast<float *>(buffers[1])};
  if (exec && exec->parallel_for) {
    ++rowsEntryParallelCalls;
    exec->parallel_for(exec->context, symbols[0], rowsTask, &args);
  } else {
    rowsTask(&args, 0, symbols[0]);
  }
  return 0;
}

struct ModelPtr {
  ModelPtr(tfm_run_packed_fn entry, const char *metadata) {
    tfm_status status = tfm_model_create_from_symbols(metadata, entry, &model);
    INFO(tfm_status_message(status));
    tfm_status_free(status);
    REQUIRE(model);
  }
  explicit ModelPtr(const char *path) {
    tfm_status status = tfm_model_load(path, &model);
    INFO(tfm_status_message(status));
    tfm_status_free(status);
    REQUIRE(model);
  }
  ~ModelPtr() { tfm_model_release(model); }
  tfm_model *model = nullptr;
};

tfm_tensor view(int64_t rows, int64_t cols, float *data) {
  tfm_tensor tensor{};
  tensor.dtype = TFM_DTYPE_F32;
  tensor.rank = 2;
  tensor.shape[0] = rows;
  tensor.shape[1] = cols;
  tensor.data = data;
  return tensor;
}

/// Runs the rows model on n rows; returns the status code and fills `y`.
tfm_status_code_t runRows(const tfm_model *model, const std::vector<float> &x,
                          std::vector<float> &y, const tfm_exec *exec) {
  int64_t rows = static_cast<int64_t>(x.size() / 4);
  y.assign(x.size(), -1.0f);
  tfm_tensor input = view(rows, 4, const_cast<float *>(x.data()));
  tfm_tensor output = view(rows, 4, y.data());
  tfm_status status =
      tfm_model_run_with_exec(model, &input, 1, &output, 1, exec);
  tfm_status_code_t code = tfm_status_code(status);
  tfm_status_free(status);
  return code;
}

std::vector<float> ramp(size_t size) {
  std::vector<float> values(size);
  for (size_t i = 0; i < size; ++i)
    values[i] = static_cast<float>(i % 97) * 0.25f - 3.0f;
  return values;
}

/// A bring-your-own exec: runs the range backwards in chunks of 3 on the
/// calling thread, to show that any split of the range is correct.
void backwardsParallelFor(void *context, int64_t count, tfm_task_fn task,
                          void *args) {
  ++*static_cast<int *>(context);
  for (int64_t end = count; end > 0; end -= 3)
    task(args, end > 3 ? end - 3 : 0, end);
}

} // namespace

TEST_CASE("a model runs the same with and without a pool", "[threads]") {
  ModelPtr rows(rowsEntry, kRowsMetadata);
  std::vector<float> x = ramp(1000 * 4), serial, parallel;
  REQUIRE(runRows(rows.model, x, serial, nullptr) == TFM_STATUS_OK);
  CHECK(serial[4 * 999 + 3] == x[4 * 999 + 3] * 2 + 999);
  for (uint32_t threads : {1u, 2u, 4u}) {
    INFO("threads " << threads);
    PoolPtr pool = makePool(threads);
    int parallelBefore = rowsEntryParallelCalls;
    REQUIRE(runRows(rows.model, x, parallel,
                    tfm_thread_pool_exec(pool.get())) == TFM_STATUS_OK);
    CHECK(rowsEntryParallelCalls == parallelBefore + 1);
    CHECK(parallel == serial);
  }
}

TEST_CASE("tfm_model_run_with_exec checks and passes on its exec",
          "[threads]") {
  ModelPtr rows(rowsEntry, kRowsMetadata);
  std::vector<float> x = ramp(10 * 4), serial, y;
  REQUIRE(runRows(rows.model, x, serial, nullptr) == TFM_STATUS_OK);

  SECTION("tfm_model_run passes no exec") {
    int parallelBefore = rowsEntryParallelCalls;
    y.assign(x.size(), 0);
    tfm_tensor input = view(10, 4, x.data());
    tfm_tensor output = view(10, 4, y.data());
    tfm_status status = tfm_model_run(rows.model, &input, 1, &output, 1);
    CHECK(status == nullptr);
    tfm_status_free(status);
    CHECK(rowsEntryParallelCalls == parallelBefore);
    CHECK(y == serial);
  }
  SECTION("a NULL parallel_for is serial") {
    tfm_exec exec{TFM_EXEC_ABI_VERSION, 1, nullptr, nullptr};
    CHECK(runRows(rows.model, x, y, &exec) == TFM_STATUS_OK);
    CHECK(y == serial);
  }
  SECTION("a caller's own parallel_for") {
    int calls = 0;
    tfm_exec exec{TFM_EXEC_ABI_VERSION, 1, backwardsParallelFor, &calls};
    CHECK(runRows(rows.model, x, y, &exec) == TFM_STATUS_OK);
    CHECK(calls == 1);
    CHECK(y == serial);
  }
  SECTION("a wrong abi_version") {
    int entryBefore = rowsEntryCalls;
    tfm_exec exec{2, 1, backwardsParallelFor, nullptr};
    y.assign(x.size(), 0);
    tfm_tensor input = view(10, 4, x.data());
    tfm_tensor output = view(10, 4, y.data());
    tfm_status status =
        tfm_model_run_with_exec(rows.model, &input, 1, &output, 1, &exec);
    CHECK(tfm_status_code(status) == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(std::string(tfm_status_message(status)) ==
          "tfm_model_run_with_exec: exec has abi_version 2 but this runtime "
          "supports 1");
    tfm_status_free(status);
    CHECK(rowsEntryCalls == entryBefore);
  }
  SECTION("argument errors name tfm_model_run_with_exec") {
    tfm_status status =
        tfm_model_run_with_exec(nullptr, nullptr, 0, nullptr, 0, nullptr);
    CHECK(std::string(tfm_status_message(status)) ==
          "tfm_model_run_with_exec: argument 'model' is NULL");
    tfm_status_free(status);
  }
}

TEST_CASE("runs on several threads share one model and one pool", "[threads]") {
  ModelPtr rows(rowsEntry, kRowsMetadata);
  PoolPtr pool = makePool(3);
  const tfm_exec *exec = tfm_thread_pool_exec(pool.get());
  std::vector<float> x = ramp(257 * 4), serial;
  REQUIRE(runRows(rows.model, x, serial, nullptr) == TFM_STATUS_OK);
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&, c] {
      std::vector<float> y;
      for (int round = 0; round < 50; ++round)
        // One caller runs serially, next to the pooled ones.
        if (runRows(rows.model, x, y, c == 0 ? nullptr : exec) !=
                TFM_STATUS_OK ||
            y != serial)
          ++failures;
    });
  for (std::thread &caller : callers)
    caller.join();
  CHECK(failures == 0);
}

TEST_CASE("the shared-library artifact runs on a pool", "[threads][load]") {
  ModelPtr add(TFM_TEST_MODEL);
  std::vector<float> x = ramp(300 * 2), y = ramp(300 * 2);
  for (float &value : y)
    value *= -0.5f;
  std::vector<float> z(x.size(), 0);
  tfm_tensor inputs[2] = {view(300, 2, x.data()), view(300, 2, y.data())};
  tfm_tensor output = view(300, 2, z.data());
  PoolPtr pool = makePool(2);
  tfm_status status = tfm_model_run_with_exec(add.model, inputs, 2, &output, 1,
                                              tfm_thread_pool_exec(pool.get()));
  INFO(tfm_status_message(status));
  CHECK(status == nullptr);
  tfm_status_free(status);
  bool correct = true;
  for (size_t i = 0; i < z.size(); ++i)
    correct = correct && z[i] == x[i] + y[i];
  CHECK(correct);
}
