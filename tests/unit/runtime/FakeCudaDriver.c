/*===- FakeCudaDriver.c - A CUDA driver over host memory, for tests ------===*
 *
 * Loaded through TFM_CUDA_LIBRARY in place of libcuda.so.1, so that what
 * the runtime does with device memory can be checked on machines without a
 * GPU: "device" memory is malloc'ed host memory, copies are memcpy, kernels
 * do not run. It counts allocations, frees, synchronous copies (the
 * weights' uploads) and module loads and unloads, slows those copies down to
 * widen races, can fail the next allocation with CUDA_ERROR_OUT_OF_MEMORY, and
 * with FAKE_CUDA_TRACE set prints each allocation, free and copy on stderr.
 *
 *===----------------------------------------------------------------------===*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
};

static int allocs, frees, uploads, failNextAlloc, moduleLoads, moduleUnloads;
/* Room before each allocation for its size, keeping 16-byte alignment. */
static const size_t kHeader = 16;

static void trace(const char *what, size_t bytes) {
  if (getenv("FAKE_CUDA_TRACE"))
    fprintf(stderr, "fake-cuda: %s %zu bytes\n", what, bytes);
}

/* Control and counters, for the tests (found with dlsym). */
void fakeCudaCounts(int *outAllocs, int *outFrees, int *outUploads) {
  *outAllocs = __atomic_load_n(&allocs, __ATOMIC_SEQ_CST);
  *outFrees = __atomic_load_n(&frees, __ATOMIC_SEQ_CST);
  *outUploads = __atomic_load_n(&uploads, __ATOMIC_SEQ_CST);
}
void fakeCudaModuleCounts(int *outLoads, int *outUnloads) {
  *outLoads = __atomic_load_n(&moduleLoads, __ATOMIC_SEQ_CST);
  *outUnloads = __atomic_load_n(&moduleUnloads, __ATOMIC_SEQ_CST);
}
void fakeCudaFailNextAlloc(void) {
  __atomic_store_n(&failNextAlloc, 1, __ATOMIC_SEQ_CST);
}

CUresult cuGetErrorName(CUresult result, const char **name) {
  *name = result == kOutOfMemory ? "CUDA_ERROR_OUT_OF_MEMORY"
                                 : "CUDA_ERROR_INVALID_VALUE";
  return kSuccess;
}
CUresult cuGetErrorString(CUresult result, const char **text) {
  *text = result == kOutOfMemory ? "out of memory" : "invalid argument";
  return kSuccess;
}
CUresult cuInit(unsigned flags) { return flags ? kInvalidValue : kSuccess; }
CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return kSuccess;
}
CUresult cuDeviceGetName(char *name, int length, int device) {
  (void)device;
  snprintf(name, (size_t)length, "fake CUDA device");
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  *value = attribute == 75 ? 9 : 0;
  return kSuccess;
}
static int context;
CUresult cuDevicePrimaryCtxRetain(void **ctx, int device) {
  (void)device;
  *ctx = &context;
  return kSuccess;
}
CUresult cuCtxPushCurrent_v2(void *ctx) { return ctx ? kSuccess : 1; }
CUresult cuCtxPopCurrent_v2(void **ctx) {
  if (ctx)
    *ctx = &context;
  return kSuccess;
}
static int module;
CUresult cuModuleLoadData(void **out, const void *image) {
  (void)image;
  __atomic_add_fetch(&moduleLoads, 1, __ATOMIC_SEQ_CST);
  *out = &module;
  return kSuccess;
}
CUresult cuModuleUnload(void *m) {
  if (!m)
    return kInvalidValue;
  __atomic_add_fetch(&moduleUnloads, 1, __ATOMIC_SEQ_CST);
  return kSuccess;
}
static int function;
CUresult cuModuleGetFunction(void **out, void *m, const char *name) {
  (void)m;
  (void)name;
  *out = &function;
  return kSuccess;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz;
  (void)smem, (void)stream, (void)params, (void)extra;
  return kSuccess;
}
static int stream;
CUresult cuStreamCreate(void **out, unsigned flags) {
  (void)flags;
  *out = &stream;
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *s) { return s ? kSuccess : kInvalidValue; }
CUresult cuStreamSynchronize(void *s) {
  (void)s;
  return kSuccess;
}
CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) {
  (void)s, (void)e, (void)flags;
  return kSuccess;
}
static int event;
CUresult cuEventCreate(void **out, unsigned flags) {
  (void)flags;
  *out = &event;
  return kSuccess;
}
CUresult cuEventDestroy_v2(void *e) { return e ? kSuccess : kInvalidValue; }
CUresult cuEventRecord(void *e, void *s) {
  (void)e, (void)s;
  return kSuccess;
}
CUresult cuEventSynchronize(void *e) {
  (void)e;
  return kSuccess;
}
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  (void)start, (void)end;
  *ms = 0.0f;
  return kSuccess;
}
CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  if (bytes == 0)
    return kInvalidValue;
  if (__atomic_exchange_n(&failNextAlloc, 0, __ATOMIC_SEQ_CST))
    return kOutOfMemory;
  /* The size goes in front, for the trace of the free. */
  char *memory = malloc(kHeader + bytes);
  if (!memory)
    return kOutOfMemory;
  memcpy(memory, &bytes, sizeof bytes);
  __atomic_fetch_add(&allocs, 1, __ATOMIC_SEQ_CST);
  *ptr = (CUdeviceptr)(uintptr_t)(memory + kHeader);
  trace("cuMemAlloc", bytes);
  return kSuccess;
}
CUresult cuMemFree_v2(CUdeviceptr ptr) {
  char *memory = (char *)(uintptr_t)ptr - kHeader;
  size_t bytes;
  memcpy(&bytes, memory, sizeof bytes);
  __atomic_fetch_add(&frees, 1, __ATOMIC_SEQ_CST);
  trace("cuMemFree", bytes);
  free(memory);
  return kSuccess;
}
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  /* Slow, as an upload of real weights is: two runs starting together
   * would both upload without the runtime's lock. */
  struct timespec pause = {0, 2000000};
  nanosleep(&pause, NULL);
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  __atomic_fetch_add(&uploads, 1, __ATOMIC_SEQ_CST);
  trace("cuMemcpy", bytes);
  return kSuccess;
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       void *s) {
  (void)s;
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  trace("cuMemcpyAsync", bytes);
  return kSuccess;
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count,
                          void *s) {
  (void)s;
  uint32_t *p = (uint32_t *)(uintptr_t)dst;
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
  return kSuccess;
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                          void *s) {
  (void)s;
  uint16_t *p = (uint16_t *)(uintptr_t)dst;
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
  return kSuccess;
}
