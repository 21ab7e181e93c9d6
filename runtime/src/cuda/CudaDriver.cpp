//===- CudaDriver.cpp - The CUDA driver API, loaded at first use ----------===//
#include "CudaDriver.h"

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

#include <dlfcn.h>
#include <sys/stat.h>

namespace tfm::rt::cuda {
namespace {

/// The pending error. Constructed on first use: the artifact's constructor
/// that loads its kernels may run before this file's static initializers.
struct PendingError {
  std::mutex mutex;
  std::string message;
};
PendingError &pending() {
  // Never destroyed: at exit the artifact's destructor still unloads its
  // module, after this file's statics would be gone.
  static PendingError *error = new PendingError;
  return *error;
}

struct Loaded {
  DriverApi api{};
  CUcontext context = nullptr;
  bool ok = false;
  /// Why there is no usable driver, when !ok.
  std::string failure;
};

/// The name of a driver error, as cuGetErrorName gives it.
std::string errorName(const DriverApi &api, CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (api.cuGetErrorName)
    api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString)
    api.cuGetErrorString(result, &text);
  return fmt::format("{} ({}{}{})", name ? name : "CUDA error", result,
                     text ? ": " : "", text ? text : "");
}

const Loaded &load() {
  static Loaded loaded = [] {
    Loaded l;
    // An override for tests and unusual installs (the toolkit's stub
    // library, a driver outside the loader's path).
    const char *path = std::getenv("TFM_CUDA_LIBRARY");
    if (!path || !*path) {
      path = "libcuda.so.1";
    } else if (struct stat info;
               ::stat(path, &info) == 0 && !S_ISREG(info.st_mode)) {
      // dlopen of a FIFO blocks until a writer appears (a bare name like
      // the default is looked up by the loader and never stat'ed here).
      l.failure = fmt::format("no CUDA driver: cannot load {} (not a regular "
                              "file)",
                              path);
      return l;
    }
    void *handle = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *reason = ::dlerror();
      l.failure = (fmt::format(
          "no CUDA driver: cannot load {} ({}); GPU artifacts need an NVIDIA "
          "GPU and its driver",
          path, reason ? reason : "unknown error"));
      return l;
    }
    // Never closed: kernels and contexts outlive every caller.
    bool missing = false;
    auto resolve = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          ::dlsym(handle, name));
      if (!fn && !missing) {
        missing = true;
        l.failure = (fmt::format("{}: the CUDA driver has no {}", path, name));
      }
    };
    DriverApi &a = l.api;
    resolve(a.cuGetErrorName, "cuGetErrorName");
    resolve(a.cuGetErrorString, "cuGetErrorString");
    resolve(a.cuInit, "cuInit");
    resolve(a.cuDeviceGetCount, "cuDeviceGetCount");
    resolve(a.cuDeviceGet, "cuDeviceGet");
    resolve(a.cuDeviceGetName, "cuDeviceGetName");
    resolve(a.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    resolve(a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    // The _v2 names are the current ABI of these functions (cuda.h maps the
    // plain names onto them).
    resolve(a.cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    resolve(a.cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    resolve(a.cuModuleLoadData, "cuModuleLoadData");
    resolve(a.cuModuleUnload, "cuModuleUnload");
    resolve(a.cuModuleGetFunction, "cuModuleGetFunction");
    resolve(a.cuLaunchKernel, "cuLaunchKernel");
    resolve(a.cuStreamCreate, "cuStreamCreate");
    resolve(a.cuStreamDestroy, "cuStreamDestroy_v2");
    resolve(a.cuStreamSynchronize, "cuStreamSynchronize");
    resolve(a.cuStreamWaitEvent, "cuStreamWaitEvent");
    resolve(a.cuEventCreate, "cuEventCreate");
    resolve(a.cuEventDestroy, "cuEventDestroy_v2");
    resolve(a.cuEventRecord, "cuEventRecord");
    resolve(a.cuEventSynchronize, "cuEventSynchronize");
    resolve(a.cuEventElapsedTime, "cuEventElapsedTime");
    resolve(a.cuMemAlloc, "cuMemAlloc_v2");
    resolve(a.cuMemFree, "cuMemFree_v2");
    resolve(a.cuMemcpy, "cuMemcpy");
    resolve(a.cuMemcpyAsync, "cuMemcpyAsync");
    resolve(a.cuMemsetD32Async, "cuMemsetD32Async");
    resolve(a.cuMemsetD16Async, "cuMemsetD16Async");
    if (missing)
      return l;
    if (CUresult r = a.cuInit(0); r != kSuccess) {
      l.failure = (fmt::format("the CUDA driver ({}) failed to initialize: {}",
                               path, errorName(a, r)));
      return l;
    }
    int count = 0;
    if (CUresult r = a.cuDeviceGetCount(&count); r != kSuccess || count == 0) {
      l.failure =
          (r != kSuccess ? fmt::format("no CUDA device: {}", errorName(a, r))
                         : std::string("no CUDA device: the driver sees none"));
      return l;
    }
    CUdevice device;
    if (CUresult r = a.cuDeviceGet(&device, 0); r != kSuccess) {
      l.failure = "cuDeviceGet failed: " + errorName(a, r);
      return l;
    }
    if (CUresult r = a.cuDevicePrimaryCtxRetain(&l.context, device);
        r != kSuccess) {
      l.failure = "cuDevicePrimaryCtxRetain failed: " + errorName(a, r);
      return l;
    }
    l.ok = true;
    return l;
  }();
  return loaded;
}

} // namespace

const DriverApi *driver() {
  const Loaded &l = load();
  if (!l.ok) {
    // Every caller learns why, not only the first.
    recordError(l.failure);
    return nullptr;
  }
  return &l.api;
}

CUcontext primaryContext() { return load().context; }

bool check(CUresult result, const char *what) {
  if (result == kSuccess)
    return true;
  recordError(
      fmt::format("{} failed: {}", what, errorName(load().api, result)));
  return false;
}

void recordError(std::string message) {
  PendingError &error = pending();
  std::lock_guard<std::mutex> lock(error.mutex);
  if (error.message.empty())
    error.message = std::move(message);
}

std::string takeError() {
  PendingError &error = pending();
  std::lock_guard<std::mutex> lock(error.mutex);
  std::string message = std::move(error.message);
  error.message.clear();
  return message;
}

bool hasError() {
  PendingError &error = pending();
  std::lock_guard<std::mutex> lock(error.mutex);
  return !error.message.empty();
}

ScopedContext::ScopedContext(const DriverApi &api) : api(api) {
  pushed = check(api.cuCtxPushCurrent(primaryContext()), "cuCtxPushCurrent");
}

ScopedContext::~ScopedContext() {
  if (pushed)
    check(api.cuCtxPopCurrent(nullptr), "cuCtxPopCurrent");
}

} // namespace tfm::rt::cuda
