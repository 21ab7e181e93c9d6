//===- AllocationCounter.h - Allocations on this thread ---------*- C++ -*-===//
//
// The e2e binary defines malloc, calloc, realloc, free and the aligned
// allocators itself (AllocationCounter.cpp), forwarding to glibc's, so that
// every heap allocation of the process goes through them: from the tests,
// the runtime and the dlopened models alike. They count the allocations made
// on a thread between start() and stop(), which is how the workspace tests
// tell that a run allocated nothing.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TESTS_E2E_ALLOCATIONCOUNTER_H
#define TFM_TESTS_E2E_ALLOCATIONCOUNTER_H

#include <cstdint>

namespace e2e {

/// Counts the allocations (malloc, calloc, realloc, aligned_alloc,
/// posix_memalign, memalign) this thread makes while it lives.
class AllocationCounter {
public:
  AllocationCounter();
  ~AllocationCounter();
  AllocationCounter(const AllocationCounter &) = delete;
  AllocationCounter &operator=(const AllocationCounter &) = delete;
  /// Allocations so far.
  int64_t count() const;
  /// Whether the interposed allocator is the one in use (a sanitizer's, for
  /// one, would take its place): without it the counts mean nothing.
  static bool active();
};

} // namespace e2e

#endif // TFM_TESTS_E2E_ALLOCATIONCOUNTER_H
