//===- AllocationCounter.cpp - An interposed, counting malloc -------------===//
//
// Defining malloc and friends in the executable makes the dynamic linker
// bind every module's calls to them, the model libraries the tests dlopen
// included. Each forwards to glibc's implementation (__libc_malloc, ...), so
// the heap is glibc's and memory from either side may be freed by the
// other. Only a thread-local flag and counter are touched besides: no
// allocation, no lock, nothing that could recurse.
//
//===----------------------------------------------------------------------===//
#include "AllocationCounter.h"

// A sanitizer brings its own malloc, which these would replace (and the
// sanitizer's bookkeeping with it): under one, nothing is interposed, active()
// says so and the [workspace] tests that need the counts are not run.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TFM_NO_INTERPOSED_MALLOC
#endif
#endif

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>

extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *pointer, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
void __libc_free(void *pointer);
}

namespace {
thread_local bool counting = false;
thread_local int64_t allocations = 0;
// Set by the first interposed call: proof that this malloc is the one used.
std::atomic<bool> interposed{false};

[[maybe_unused]] inline void note() {
  interposed.store(true, std::memory_order_relaxed);
  if (counting)
    ++allocations;
}
} // namespace

#ifndef TFM_NO_INTERPOSED_MALLOC
extern "C" {
void *malloc(size_t size) {
  note();
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  note();
  return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
  note();
  return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
  note();
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  note();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
  note();
  if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0)
    return EINVAL;
  void *pointer = __libc_memalign(alignment, size);
  if (!pointer)
    return ENOMEM;
  *out = pointer;
  return 0;
}
} // extern "C"
#endif

namespace e2e {
AllocationCounter::AllocationCounter() {
  allocations = 0;
  counting = true;
}
AllocationCounter::~AllocationCounter() { counting = false; }
int64_t AllocationCounter::count() const { return allocations; }
bool AllocationCounter::active() {
  // An allocation the compiler cannot elide, through the interposed malloc.
  void *volatile probe = malloc(1);
  free(probe);
  return interposed.load(std::memory_order_relaxed);
}
} // namespace e2e
