//===- GpuTest.cpp - The GPU runtime without a usable CUDA driver ---------===//
//
// ctest runs these with TFM_CUDA_LIBRARY naming a library that is not there
// ([gpu-nodriver]) or the toolkit's stub libcuda ([gpu-stub]), so that they
// check the same thing on machines with and without a GPU: every entry
// point fails cleanly, with a message, and nothing crashes. [gpu-fake]
// runs with FakeCudaDriver.c, a driver over host memory, to check what the
// runtime does with device memory. The tags are hidden because each needs
// its own process (the driver loads once).
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>

// What the host code of a GPU artifact calls (MgpuWrappers.cpp).
extern "C" {
void *mgpuModuleLoad(void *data, uint64_t size);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate();
void mgpuStreamSynchronize(void *stream);
void mgpuStreamDestroy(void *stream);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
void mgpuMemFree(void *ptr, void *stream);
void mgpuModuleUnload(void *module);
void *tfmGpuConstant(void **slot, const void *host, uint64_t bytes);
void tfmGpuReleaseConstants(void **slots, uint64_t count);
}

namespace {
/// As a GPU artifact does, the kernels are registered before main runs.
char kNotAModule[] = "not a cubin";
void *const loadedAtStartup = mgpuModuleLoad(kNotAModule, sizeof kNotAModule);

std::string message(tfm_status status) {
  std::string text = status ? tfm_status_message(status) : "";
  tfm_status_free(status);
  return text;
}

void checkEveryEntryPointFails(const std::string &expected) {
  INFO("TFM_CUDA_LIBRARY=" << std::getenv("TFM_CUDA_LIBRARY"));
  // Loading an artifact touches no driver (its constructor runs under the
  // dynamic loader's lock): nothing failed yet.
  CHECK(loadedAtStartup != nullptr);
  CHECK(tfm_gpu_status() == 0);
  // The first kernel lookup finds no driver: the failure is pending until
  // someone takes it.
  CHECK(mgpuModuleGetFunction(loadedAtStartup, "kernel") == nullptr);
  CHECK(tfm_gpu_status() == TFM_GPU_ERROR_STATUS);
  CHECK_THAT(message(tfm_gpu_take_error()), Catch::Contains(expected));
  CHECK(tfm_gpu_take_error() == nullptr);
  CHECK(tfm_gpu_status() == 0);

  tfm_status status = tfm_gpu_init();
  CHECK(tfm_status_code(status) == TFM_STATUS_RUNTIME_ERROR);
  CHECK_THAT(message(status), Catch::Contains(expected));
  // The same answer every time, not only the first.
  CHECK_THAT(message(tfm_gpu_init()), Catch::Contains(expected));

  void *ptr = &ptr;
  status = tfm_gpu_alloc(64, &ptr);
  CHECK(ptr == nullptr);
  CHECK_THAT(message(status), Catch::Contains(expected));
  float host[4] = {};
  CHECK_THAT(message(tfm_gpu_copy_to_host(host, host, sizeof host)),
             Catch::Contains(expected));
  int32_t major = -1;
  CHECK_THAT(message(tfm_gpu_device_info(nullptr, 0, &major, nullptr)),
             Catch::Contains(expected));
  CHECK(major == -1);
  tfm_gpu_timer *timer = nullptr;
  CHECK_THAT(message(tfm_gpu_timer_start(&timer)), Catch::Contains(expected));
  CHECK(timer == nullptr);
  tfm_gpu_free(nullptr);

  // A weight's first upload fails with the reason as the run's status, and
  // leaves its slot empty; unloading the artifact then touches nothing.
  tfm_status_free(tfm_gpu_take_error());
  void *slots[2] = {};
  CHECK(tfmGpuConstant(&slots[0], host, sizeof host) == nullptr);
  CHECK(slots[0] == nullptr);
  CHECK(tfm_gpu_status() == TFM_GPU_ERROR_STATUS);
  CHECK_THAT(message(tfm_gpu_take_error()), Catch::Contains(expected));
  tfmGpuReleaseConstants(slots, 2);
  CHECK(tfm_gpu_status() == 0);
  // An uploaded weight is the slot's pointer, without a call to the driver.
  slots[1] = host;
  CHECK(tfmGpuConstant(&slots[1], nullptr, sizeof host) == host);
  CHECK(tfm_gpu_status() == 0);

  // What a model run does: a null stream, no memory, launches skipped, and
  // a status for the entry point to return.
  void *stream = mgpuStreamCreate();
  CHECK(stream == nullptr);
  void *buffer = mgpuMemAlloc(256, stream, false);
  CHECK(buffer == nullptr);
  mgpuMemcpy(buffer, host, sizeof host, stream);
  void *function = mgpuModuleGetFunction(loadedAtStartup, "kernel");
  CHECK(function == nullptr);
  void *params[] = {&buffer};
  mgpuLaunchKernel(function, 1, 1, 1, 128, 1, 1, 0, stream, params, nullptr, 1);
  mgpuStreamSynchronize(stream);
  mgpuMemFree(buffer, stream);
  mgpuStreamDestroy(stream);
  mgpuModuleUnload(loadedAtStartup);
  CHECK(tfm_gpu_status() == TFM_GPU_ERROR_STATUS);
  CHECK_THAT(message(tfm_gpu_take_error()), Catch::Contains(expected));
}
} // namespace

TEST_CASE("GPU calls fail cleanly without a CUDA driver", "[.][gpu-nodriver]") {
  checkEveryEntryPointFails("no CUDA driver: cannot load");
}

TEST_CASE("GPU calls fail cleanly with the toolkit's stub driver",
          "[.][gpu-stub]") {
  checkEveryEntryPointFails("failed to initialize");
}

TEST_CASE("null arguments to the GPU functions", "[.][gpu-nodriver]") {
  CHECK(tfm_status_code(tfm_gpu_alloc(4, nullptr)) ==
        TFM_STATUS_INVALID_ARGUMENT);
  CHECK(tfm_status_code(tfm_gpu_copy_to_device(nullptr, nullptr, 4)) ==
        TFM_STATUS_INVALID_ARGUMENT);
  CHECK(tfm_status_code(tfm_gpu_timer_start(nullptr)) ==
        TFM_STATUS_INVALID_ARGUMENT);
  double ms;
  CHECK(tfm_status_code(tfm_gpu_timer_stop(nullptr, &ms)) ==
        TFM_STATUS_INVALID_ARGUMENT);
  tfm_gpu_take_error();
}

namespace {
/// The fake driver's counters (FakeCudaDriver.c), from the library that
/// TFM_CUDA_LIBRARY names: the runtime has loaded it, dlopen shares it.
struct FakeDriver {
  void (*counts)(int *, int *, int *) = nullptr;
  void (*failNextAlloc)() = nullptr;
  void (*moduleCounts)(int *, int *) = nullptr;

  FakeDriver() {
    void *handle = ::dlopen(std::getenv("TFM_CUDA_LIBRARY"), RTLD_NOW);
    REQUIRE(handle);
    counts = reinterpret_cast<void (*)(int *, int *, int *)>(
        ::dlsym(handle, "fakeCudaCounts"));
    failNextAlloc =
        reinterpret_cast<void (*)()>(::dlsym(handle, "fakeCudaFailNextAlloc"));
    moduleCounts = reinterpret_cast<void (*)(int *, int *)>(
        ::dlsym(handle, "fakeCudaModuleCounts"));
    REQUIRE(counts);
    REQUIRE(failNextAlloc);
    REQUIRE(moduleCounts);
  }
  int moduleLoads() const {
    int loads, unloads;
    moduleCounts(&loads, &unloads);
    return loads;
  }
  int moduleUnloads() const {
    int loads, unloads;
    moduleCounts(&loads, &unloads);
    return unloads;
  }
  int allocs() const { return get(0); }
  int frees() const { return get(1); }
  int uploads() const { return get(2); }
  int get(int which) const {
    int values[3];
    counts(&values[0], &values[1], &values[2]);
    return values[which];
  }
};
} // namespace

TEST_CASE("weights are uploaded once, by one of the runs starting together",
          "[.][gpu-fake]") {
  FakeDriver fake;
  tfm_status_free(tfm_gpu_take_error());
  int allocs = fake.allocs(), uploads = fake.uploads();
  std::vector<float> weight(1024);
  for (size_t i = 0; i < weight.size(); ++i)
    weight[i] = static_cast<float>(i);
  float other[3] = {1, 2, 3};
  void *slots[3] = {};

  // Eight runs of one artifact start at once, all reading weight 0.
  std::vector<void *> seen(8);
  std::vector<std::thread> runs;
  for (size_t t = 0; t < seen.size(); ++t)
    runs.emplace_back([&, t] {
      seen[t] = tfmGpuConstant(&slots[0], weight.data(),
                               weight.size() * sizeof(float));
    });
  for (std::thread &run : runs)
    run.join();
  CHECK(fake.allocs() == allocs + 1);
  CHECK(fake.uploads() == uploads + 1);
  REQUIRE(slots[0] != nullptr);
  for (void *device : seen)
    CHECK(device == slots[0]);
  // The fake's device memory is host memory: the copy is the weight.
  CHECK(std::memcmp(slots[0], weight.data(), weight.size() * sizeof(float)) ==
        0);

  // Later runs get the same copy; another weight has its own.
  CHECK(tfmGpuConstant(&slots[0], weight.data(), 4) == slots[0]);
  CHECK(tfmGpuConstant(&slots[2], other, sizeof other) != nullptr);
  CHECK(fake.allocs() == allocs + 2);
  CHECK(fake.uploads() == uploads + 2);
  CHECK(tfm_gpu_status() == 0);

  // Unloading the artifact frees what its slots hold, and empties them.
  int frees = fake.frees();
  tfmGpuReleaseConstants(slots, 3);
  CHECK(fake.frees() == frees + 2);
  CHECK(slots[0] == nullptr);
  CHECK(slots[2] == nullptr);
  tfmGpuReleaseConstants(slots, 3);
  CHECK(fake.frees() == frees + 2);
  CHECK(tfm_gpu_status() == 0);
}

TEST_CASE("an artifact's kernels load into the driver at their first "
          "lookup, once",
          "[.][gpu-fake]") {
  FakeDriver fake;
  tfm_status_free(tfm_gpu_take_error());
  int loads = fake.moduleLoads(), unloads = fake.moduleUnloads();
  char image[] = "kernels";
  void *module = mgpuModuleLoad(image, sizeof image);
  REQUIRE(module != nullptr);
  CHECK(fake.moduleLoads() == loads);

  // Eight runs starting at once look up their kernels.
  std::vector<void *> functions(8);
  std::vector<std::thread> runs;
  for (size_t t = 0; t < functions.size(); ++t)
    runs.emplace_back(
        [&, t] { functions[t] = mgpuModuleGetFunction(module, "kernel"); });
  for (std::thread &run : runs)
    run.join();
  CHECK(fake.moduleLoads() == loads + 1);
  for (void *function : functions)
    CHECK(function != nullptr);
  mgpuModuleUnload(module);
  CHECK(fake.moduleUnloads() == unloads + 1);

  // An artifact unloaded before any run leaves nothing in the driver.
  mgpuModuleUnload(mgpuModuleLoad(image, sizeof image));
  CHECK(fake.moduleLoads() == loads + 1);
  CHECK(fake.moduleUnloads() == unloads + 1);
  CHECK(tfm_gpu_status() == 0);
}

TEST_CASE("a failed upload is the run's status, and a later run retries",
          "[.][gpu-fake]") {
  FakeDriver fake;
  tfm_status_free(tfm_gpu_take_error());
  float weight[4] = {1, 2, 3, 4};
  void *slot = nullptr;
  fake.failNextAlloc();
  CHECK(tfmGpuConstant(&slot, weight, sizeof weight) == nullptr);
  CHECK(slot == nullptr);
  CHECK(tfm_gpu_status() == TFM_GPU_ERROR_STATUS);
  CHECK_THAT(message(tfm_gpu_take_error()),
             Catch::Contains("allocating GPU memory for the weights "
                             "(cuMemAlloc) failed: CUDA_ERROR_OUT_OF_MEMORY"));
  // While an error is pending (the run goes on to its status) nothing
  // more is uploaded.
  fake.failNextAlloc();
  CHECK(tfmGpuConstant(&slot, weight, sizeof weight) == nullptr);
  void *other = nullptr;
  CHECK(tfmGpuConstant(&other, weight, sizeof weight) == nullptr);
  CHECK(other == nullptr);
  tfm_status_free(tfm_gpu_take_error());

  void *device = tfmGpuConstant(&slot, weight, sizeof weight);
  CHECK(device != nullptr);
  CHECK(slot == device);
  CHECK(tfm_gpu_status() == 0);
  tfmGpuReleaseConstants(&slot, 1);
  CHECK(slot == nullptr);
}
