//===- Status.cpp - tfm_status objects --------------------------*- C++ -*-===//

#include "Status.h"

#include <fmt/format.h>

struct tfm_status_t {
  tfm_status_code_t code;
  std::string message;
};

namespace {
// Returned when allocating a status fails; tfm_status_free must not free it.
// The short message fits std::string's inline buffer, so this never allocates.
tfm_status_t outOfMemoryStatus{TFM_STATUS_IO_ERROR, "out of memory"};
} // namespace

namespace tfm::rt {

tfm_status makeStatus(tfm_status_code_t code, std::string message) noexcept {
  tfm_status status = new (std::nothrow) tfm_status_t{code, std::move(message)};
  return status ? status : &outOfMemoryStatus;
}

tfm_status statusFromException(const char *function) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc &) {
    return &outOfMemoryStatus;
  } catch (const std::exception &e) {
    try {
      return makeStatus(
          TFM_STATUS_RUNTIME_ERROR,
          fmt::format("{}: internal error: {}", function, e.what()));
    } catch (...) {
      return &outOfMemoryStatus;
    }
  } catch (...) {
    try {
      return makeStatus(TFM_STATUS_RUNTIME_ERROR,
                        fmt::format("{}: internal error", function));
    } catch (...) {
      return &outOfMemoryStatus;
    }
  }
}

} // namespace tfm::rt

extern "C" {

tfm_status_code_t tfm_status_code(tfm_status status) {
  return status ? status->code : TFM_STATUS_OK;
}

const char *tfm_status_message(tfm_status status) {
  return status ? status->message.c_str() : "OK";
}

void tfm_status_free(tfm_status status) {
  if (status != &outOfMemoryStatus)
    delete status;
}

const char *tfm_status_code_name(tfm_status_code_t code) {
  switch (code) {
  case TFM_STATUS_OK:
    return "OK";
  case TFM_STATUS_INVALID_ARGUMENT:
    return "INVALID_ARGUMENT";
  case TFM_STATUS_NOT_FOUND:
    return "NOT_FOUND";
  case TFM_STATUS_IO_ERROR:
    return "IO_ERROR";
  case TFM_STATUS_FORMAT_ERROR:
    return "FORMAT_ERROR";
  case TFM_STATUS_SHAPE_MISMATCH:
    return "SHAPE_MISMATCH";
  case TFM_STATUS_RUNTIME_ERROR:
    return "RUNTIME_ERROR";
  }
  return "UNKNOWN";
}

} // extern "C"
