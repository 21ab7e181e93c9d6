//===- MgpuWrappers.cpp - What MLIR's gpu-to-llvm host code calls ---------===//
//
// The mgpu* functions that the host side of a GPU artifact calls, with the
// signatures MLIR 22's gpu-to-llvm lowering and its `#gpu.select_object`
// translation emit (mgpuModuleLoad runs from a global constructor; the
// driver is first touched at the first kernel lookup). Each is
// a no-op returning null while the driver is missing or an error is pending,
// so that a machine without a GPU gets a status from the run, not a crash.
// Next to them, tfmGpuConstant and tfmGpuReleaseConstants keep an artifact's
// weights on the device from their first use until it is unloaded
// (tfm-gpu-device-buffers emits the calls).
//
//===----------------------------------------------------------------------===//
#include "CudaDriver.h"

#include <fmt/format.h>

#include <mutex>

using namespace tfm::rt::cuda;

namespace {
/// The driver, unless it is missing or an earlier call failed: work after a
/// failed allocation or launch would only read or write through null.
const DriverApi *usable() {
  const DriverApi *api = driver();
  return api && !hasError() ? api : nullptr;
}

CUmodule loadModule(const DriverApi &api, const void *data) {
  ScopedContext context(api);
  CUmodule module = nullptr;
  // The driver takes a cubin, a fatbin (picking the cubin for this GPU or
  // JIT-compiling its PTX) or PTX text alike.
  check(api.cuModuleLoadData(&module, data), "loading the GPU kernels");
  return module;
}

/// A kernel image, loaded into the driver at its first kernel lookup rather
/// than by mgpuModuleLoad: that runs in the artifact's global constructor,
/// under the dynamic loader's lock, where cuInit (and a PTX JIT) must not
/// run. Tools that load libraries from the driver's initialization
/// deadlock there: ncu hung every tfm-run of a model on an H200.
struct LazyModule {
  explicit LazyModule(const void *image) : image(image) {}
  const void *image;
  std::once_flag once;
  CUmodule module = nullptr;
};

/// Serializes first uploads, so that two runs starting at once upload a
/// weight once. Taken only while a slot is empty: once per weight per
/// loaded artifact. Never destroyed, as the pending error: an artifact's
/// destructor may run after this file's statics are gone.
std::mutex &uploadMutex() {
  static std::mutex *mutex = new std::mutex;
  return *mutex;
}
} // namespace

extern "C" {

void *mgpuModuleLoad(void *data, uint64_t /*size*/) {
  return new LazyModule(data);
}

void *mgpuModuleLoadJIT(void *data, int32_t /*optLevel*/) {
  return new LazyModule(data);
}

void mgpuModuleUnload(void *handle) {
  auto *lazy = static_cast<LazyModule *>(handle);
  if (!lazy)
    return;
  // Never looked up, or a failed load: nothing in the driver to unload.
  if (const DriverApi *api = driver(); api && lazy->module)
    api->cuModuleUnload(lazy->module);
  delete lazy;
}

void *mgpuModuleGetFunction(void *handle, const char *name) {
  const DriverApi *api = driver();
  if (!api || !handle)
    return nullptr;
  auto *lazy = static_cast<LazyModule *>(handle);
  // Runs starting together on several threads load it once.
  std::call_once(lazy->once,
                 [&] { lazy->module = loadModule(*api, lazy->image); });
  if (!lazy->module) {
    recordError(fmt::format("GPU kernel {}: its module did not load", name));
    return nullptr;
  }
  CUfunction function = nullptr;
  check(api->cuModuleGetFunction(&function, lazy->module, name),
        "cuModuleGetFunction");
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void *stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  const DriverApi *api = usable();
  if (!api || !function)
    return;
  // An empty grid (a dynamic dim of 0) launches nothing; the driver would
  // call it an invalid value.
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return;
  ScopedContext context(*api);
  check(api->cuLaunchKernel(static_cast<CUfunction>(function), gridX, gridY,
                            gridZ, blockX, blockY, blockZ, sharedBytes,
                            static_cast<CUstream>(stream), params, extra),
        "cuLaunchKernel");
}

void *mgpuStreamCreate() {
  const DriverApi *api = driver();
  if (!api)
    return nullptr;
  ScopedContext context(*api);
  CUstream stream = nullptr;
  // A blocking stream orders with the legacy default stream, on which the
  // app's (and tfm-run's) timing events and copies are recorded.
  check(api->cuStreamCreate(&stream, kStreamDefault), "cuStreamCreate");
  return stream;
}

void mgpuStreamDestroy(void *stream) {
  if (const DriverApi *api = driver(); api && stream)
    check(api->cuStreamDestroy(static_cast<CUstream>(stream)),
          "cuStreamDestroy");
}

void mgpuStreamSynchronize(void *stream) {
  if (const DriverApi *api = driver(); api && stream) {
    ScopedContext context(*api);
    // Errors of the kernels themselves (a bad address) surface here.
    check(api->cuStreamSynchronize(static_cast<CUstream>(stream)),
          "running the GPU kernels");
  }
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  if (const DriverApi *api = usable(); api && stream && event)
    check(api->cuStreamWaitEvent(static_cast<CUstream>(stream),
                                 static_cast<CUevent>(event), 0),
          "cuStreamWaitEvent");
}

void *mgpuEventCreate() {
  const DriverApi *api = driver();
  if (!api)
    return nullptr;
  ScopedContext context(*api);
  CUevent event = nullptr;
  check(api->cuEventCreate(&event, kEventDefault), "cuEventCreate");
  return event;
}

void mgpuEventDestroy(void *event) {
  if (const DriverApi *api = driver(); api && event)
    check(api->cuEventDestroy(static_cast<CUevent>(event)), "cuEventDestroy");
}

void mgpuEventSynchronize(void *event) {
  if (const DriverApi *api = driver(); api && event)
    check(api->cuEventSynchronize(static_cast<CUevent>(event)),
          "cuEventSynchronize");
}

void mgpuEventRecord(void *event, void *stream) {
  if (const DriverApi *api = driver(); api && event)
    check(api->cuEventRecord(static_cast<CUevent>(event),
                             static_cast<CUstream>(stream)),
          "cuEventRecord");
}

void *mgpuMemAlloc(uint64_t bytes, void * /*stream*/, bool isHostShared) {
  const DriverApi *api = usable();
  if (!api)
    return nullptr;
  if (isHostShared) {
    recordError("host-shared GPU allocations are not supported");
    return nullptr;
  }
  ScopedContext context(*api);
  CUdeviceptr ptr = 0;
  // cuMemAlloc refuses 0 bytes; an empty tensor still needs an address.
  if (!check(api->cuMemAlloc(&ptr, bytes ? bytes : 1),
             "allocating GPU memory (cuMemAlloc)"))
    return nullptr;
  return reinterpret_cast<void *>(ptr);
}

void mgpuMemFree(void *ptr, void *stream) {
  const DriverApi *api = driver();
  if (!api || !ptr)
    return;
  ScopedContext context(*api);
  // Kernels queued on the stream may still read the buffer.
  if (stream)
    check(api->cuStreamSynchronize(static_cast<CUstream>(stream)),
          "running the GPU kernels");
  check(api->cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)), "cuMemFree");
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  const DriverApi *api = usable();
  if (!api || bytes == 0)
    return;
  ScopedContext context(*api);
  check(api->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                           reinterpret_cast<CUdeviceptr>(src), bytes,
                           static_cast<CUstream>(stream)),
        "cuMemcpyAsync");
}

void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream) {
  const DriverApi *api = usable();
  if (!api || count == 0)
    return;
  ScopedContext context(*api);
  check(api->cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              static_cast<CUstream>(stream)),
        "cuMemsetD32Async");
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  const DriverApi *api = usable();
  if (!api || count == 0)
    return;
  ScopedContext context(*api);
  check(api->cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              static_cast<CUstream>(stream)),
        "cuMemsetD16Async");
}

/// The device copy of `bytes` bytes of weights at `host`, cached in `*slot`
/// (one of the artifact's own slots, null until the first upload). The copy
/// is synchronous and complete before the slot is published, so runs on
/// any thread and any stream may read it; the run's stream is not needed.
/// Returns null, with the error pending for the run's status, when the
/// driver is missing, an error is pending, or the upload fails (the slot
/// stays empty and a later run tries again).
void *tfmGpuConstant(void **slot, const void *host, uint64_t bytes) {
  if (void *device = __atomic_load_n(slot, __ATOMIC_ACQUIRE))
    return device;
  std::lock_guard<std::mutex> lock(uploadMutex());
  if (void *device = __atomic_load_n(slot, __ATOMIC_ACQUIRE))
    return device; // Another run uploaded it while this one waited.
  const DriverApi *api = usable();
  if (!api)
    return nullptr;
  ScopedContext context(*api);
  CUdeviceptr ptr = 0;
  // cuMemAlloc refuses 0 bytes; an empty weight still needs an address.
  if (!check(api->cuMemAlloc(&ptr, bytes ? bytes : 1),
             "allocating GPU memory for the weights (cuMemAlloc)"))
    return nullptr;
  // cuMemcpy from pageable memory may return before the DMA ends: the
  // synchronization makes the copy complete before other streams see it.
  if (!check(api->cuMemcpy(ptr, reinterpret_cast<CUdeviceptr>(host), bytes),
             "copying the weights to the GPU (cuMemcpy)") ||
      !check(api->cuStreamSynchronize(nullptr),
             "copying the weights to the GPU")) {
    api->cuMemFree(ptr);
    return nullptr;
  }
  void *device = reinterpret_cast<void *>(ptr);
  __atomic_store_n(slot, device, __ATOMIC_RELEASE);
  return device;
}

/// Frees the device copies in `slots[0..count)` and empties them: the
/// artifact's global destructor, when it is unloaded (dlclose, exit). Runs
/// of the artifact must have returned. Errors are not recorded: at exit the
/// driver may be shut down already, and nobody would take them.
void tfmGpuReleaseConstants(void **slots, uint64_t count) {
  bool any = false;
  for (uint64_t i = 0; i < count && !any; ++i)
    any = slots[i] != nullptr;
  // Nothing uploaded (no driver, never run): the driver is not touched.
  if (!any)
    return;
  const DriverApi *api = driver();
  if (!api)
    return;
  std::lock_guard<std::mutex> lock(uploadMutex());
  bool pushed = api->cuCtxPushCurrent(primaryContext()) == kSuccess;
  for (uint64_t i = 0; i < count; ++i) {
    if (slots[i])
      api->cuMemFree(reinterpret_cast<CUdeviceptr>(slots[i]));
    slots[i] = nullptr;
  }
  if (pushed)
    api->cuCtxPopCurrent(nullptr);
}

void mgpuSetDefaultDevice(int32_t device) {
  if (device != 0)
    recordError(
        fmt::format("GPU device {} requested; tfm uses device 0", device));
}

} // extern "C"
