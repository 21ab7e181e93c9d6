//===- GpuApi.cpp - The runtime's public GPU functions --------------------===//
#include "../Status.h"
#include "CudaDriver.h"

#include <fmt/format.h>

#include <cstring>

using namespace tfm::rt;
using namespace tfm::rt::cuda;

struct tfm_gpu_timer_t {
  CUevent start = nullptr;
  CUevent stop = nullptr;
};

namespace {
/// The driver, or the status saying why there is none (taking the pending
/// error, which is that reason).
const DriverApi *need(tfm_status &status) {
  const DriverApi *api = driver();
  if (!api)
    status = makeStatus(TFM_STATUS_RUNTIME_ERROR, takeError());
  return api;
}

/// The status for a failed driver call, taking the error it recorded.
tfm_status failed(CUresult result, const char *what) {
  if (check(result, what))
    return nullptr;
  return makeStatus(TFM_STATUS_RUNTIME_ERROR, takeError());
}
} // namespace

extern "C" {

tfm_status tfm_gpu_init(void) {
  tfm_status status = nullptr;
  need(status);
  return status;
}

tfm_status tfm_gpu_device_info(char *name, size_t name_size, int32_t *out_major,
                               int32_t *out_minor) {
  tfm_status status = nullptr;
  const DriverApi *api = need(status);
  if (!api)
    return status;
  CUdevice device;
  if ((status = failed(api->cuDeviceGet(&device, 0), "cuDeviceGet")))
    return status;
  if (name && name_size > 0) {
    if ((status = failed(
             api->cuDeviceGetName(name, static_cast<int>(name_size), device),
             "cuDeviceGetName")))
      return status;
    name[name_size - 1] = '\0';
  }
  int value = 0;
  if (out_major) {
    if ((status = failed(api->cuDeviceGetAttribute(
                             &value, kAttributeComputeCapabilityMajor, device),
                         "cuDeviceGetAttribute")))
      return status;
    *out_major = value;
  }
  if (out_minor) {
    if ((status = failed(api->cuDeviceGetAttribute(
                             &value, kAttributeComputeCapabilityMinor, device),
                         "cuDeviceGetAttribute")))
      return status;
    *out_minor = value;
  }
  return nullptr;
}

tfm_status tfm_gpu_alloc(size_t bytes, void **out_ptr) {
  if (!out_ptr)
    return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                      "tfm_gpu_alloc: out_ptr is NULL");
  *out_ptr = nullptr;
  tfm_status status = nullptr;
  const DriverApi *api = need(status);
  if (!api)
    return status;
  ScopedContext context(*api);
  CUdeviceptr ptr = 0;
  if ((status = failed(api->cuMemAlloc(&ptr, bytes ? bytes : 1),
                       "tfm_gpu_alloc: cuMemAlloc")))
    return status;
  *out_ptr = reinterpret_cast<void *>(ptr);
  return nullptr;
}

void tfm_gpu_free(void *ptr) {
  const DriverApi *api = driver();
  if (!api || !ptr)
    return;
  ScopedContext context(*api);
  api->cuMemFree(reinterpret_cast<CUdeviceptr>(ptr));
}

static tfm_status copy(const char *function, void *dst, const void *src,
                       size_t bytes) {
  if ((!dst || !src) && bytes > 0)
    return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                      fmt::format("{}: NULL buffer", function));
  tfm_status status = nullptr;
  const DriverApi *api = need(status);
  if (!api || bytes == 0)
    return status;
  ScopedContext context(*api);
  // Unified addressing: the driver tells host from device pointers.
  return failed(api->cuMemcpy(reinterpret_cast<CUdeviceptr>(dst),
                              reinterpret_cast<CUdeviceptr>(src), bytes),
                function);
}

tfm_status tfm_gpu_copy_to_device(void *device_dst, const void *host_src,
                                  size_t bytes) {
  return copy("tfm_gpu_copy_to_device", device_dst, host_src, bytes);
}

tfm_status tfm_gpu_copy_to_host(void *host_dst, const void *device_src,
                                size_t bytes) {
  return copy("tfm_gpu_copy_to_host", host_dst, device_src, bytes);
}

tfm_status tfm_gpu_take_error(void) {
  std::string error = takeError();
  if (error.empty())
    return nullptr;
  return makeStatus(TFM_STATUS_RUNTIME_ERROR, std::move(error));
}

int32_t tfm_gpu_status(void) { return hasError() ? TFM_GPU_ERROR_STATUS : 0; }

tfm_status tfm_gpu_timer_start(tfm_gpu_timer **out_timer) {
  if (!out_timer)
    return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                      "tfm_gpu_timer_start: out_timer is NULL");
  *out_timer = nullptr;
  tfm_status status = nullptr;
  const DriverApi *api = need(status);
  if (!api)
    return status;
  ScopedContext context(*api);
  auto timer = new (std::nothrow) tfm_gpu_timer_t;
  if (!timer)
    return makeStatus(TFM_STATUS_RUNTIME_ERROR, "out of memory");
  if ((status = failed(api->cuEventCreate(&timer->start, kEventDefault),
                       "cuEventCreate")) ||
      (status = failed(api->cuEventCreate(&timer->stop, kEventDefault),
                       "cuEventCreate")) ||
      (status = failed(api->cuEventRecord(timer->start, nullptr),
                       "cuEventRecord"))) {
    if (timer->start)
      api->cuEventDestroy(timer->start);
    if (timer->stop)
      api->cuEventDestroy(timer->stop);
    delete timer;
    return status;
  }
  *out_timer = timer;
  return nullptr;
}

tfm_status tfm_gpu_timer_stop(tfm_gpu_timer *timer, double *out_milliseconds) {
  if (!timer || !out_milliseconds) {
    if (timer) {
      if (const DriverApi *api = driver()) {
        api->cuEventDestroy(timer->start);
        api->cuEventDestroy(timer->stop);
      }
      delete timer;
    }
    return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                      "tfm_gpu_timer_stop: NULL argument");
  }
  tfm_status status = nullptr;
  const DriverApi *api = need(status);
  if (api) {
    ScopedContext context(*api);
    float ms = 0;
    if (!(status = failed(api->cuEventRecord(timer->stop, nullptr),
                          "cuEventRecord")) &&
        !(status = failed(api->cuEventSynchronize(timer->stop),
                          "cuEventSynchronize")) &&
        !(status =
              failed(api->cuEventElapsedTime(&ms, timer->start, timer->stop),
                     "cuEventElapsedTime")))
      *out_milliseconds = ms;
    api->cuEventDestroy(timer->start);
    api->cuEventDestroy(timer->stop);
  }
  delete timer;
  return status;
}

} // extern "C"
