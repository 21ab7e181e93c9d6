//===- CudaDriver.h - The CUDA driver API, loaded at first use --*- C++ -*-===//
//
// libcuda.so.1 is opened with dlopen the first time GPU code asks for it, so
// that artifacts and apps link and start on machines without a GPU or driver.
// Every failure is kept as the runtime's pending GPU error (the first one
// wins) until tfm_gpu_take_error or a model run picks it up.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_CUDA_CUDADRIVER_H
#define TFM_RUNTIME_CUDA_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace tfm::rt::cuda {

// The driver API's types, declared here so that the runtime builds without
// the CUDA toolkit.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

constexpr CUresult kSuccess = 0;
constexpr unsigned kStreamDefault = 0;
constexpr unsigned kEventDefault = 0;
constexpr int kAttributeComputeCapabilityMajor = 75;
constexpr int kAttributeComputeCapabilityMinor = 76;

/// The driver functions the runtime calls, resolved by name.
struct DriverApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpy)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
};

/// The loaded driver with device 0's primary context, or null after
/// recording why there is none (no libcuda.so.1, no device, a stub library).
/// Loads and initializes once; later calls return the same answer.
const DriverApi *driver();

/// The primary context that `driver()` retained.
CUcontext primaryContext();

/// Records `what` failing with `result` as the pending error, unless one is
/// pending already. Returns whether `result` is a success.
bool check(CUresult result, const char *what);

/// Records a pending error with this message, unless one is pending.
void recordError(std::string message);

/// Takes the pending error, clearing it; empty when there is none.
std::string takeError();

/// Whether an error is pending.
bool hasError();

/// Makes the primary context current on this thread for its lifetime: the
/// generated code calls the mgpu* functions from the app's threads.
class ScopedContext {
public:
  explicit ScopedContext(const DriverApi &api);
  ~ScopedContext();
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;

private:
  const DriverApi &api;
  bool pushed = false;
};

} // namespace tfm::rt::cuda

#endif // TFM_RUNTIME_CUDA_CUDADRIVER_H
