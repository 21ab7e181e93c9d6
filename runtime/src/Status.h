//===- Status.h - Building tfm_status values --------------------*- C++ -*-===//
//
// Internal helpers shared by the C API entry points: constructing statuses and
// keeping C++ exceptions from crossing the C boundary.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_STATUS_H
#define TFM_RUNTIME_STATUS_H

#include "tfm/runtime.h"

#include <exception>
#include <new>
#include <string>

namespace tfm::rt {

/// Creates a status; returns a static out-of-memory status if even that fails.
tfm_status makeStatus(tfm_status_code_t code, std::string message) noexcept;

/// The status for an exception that reached a C API boundary.
tfm_status statusFromException(const char *function) noexcept;

/// Runs `body` (returning tfm_status) and turns any exception into a status,
/// since no exception may escape the C API.
template <typename Body>
tfm_status guard(const char *function, Body &&body) noexcept {
  try {
    return body();
  } catch (...) {
    return statusFromException(function);
  }
}

} // namespace tfm::rt

#endif // TFM_RUNTIME_STATUS_H
