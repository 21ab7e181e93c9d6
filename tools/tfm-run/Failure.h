//===- Failure.h - How tfm-run reports errors -------------------*- C++ -*-===//
//
// Exit codes: 0 success, 1 an output does not match --expected, 2 any other
// error (usage, files, the model).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TFM_RUN_FAILURE_H
#define TFM_TOOLS_TFM_RUN_FAILURE_H

#include "tfm/runtime.h"

#include <string>

namespace tfm::run {

constexpr int kExitMismatch = 1;
constexpr int kExitError = 2;

/// Reports an error and exits: tfm-run has nothing to clean up that the OS
/// does not.
[[noreturn]] void fail(const std::string &message);

/// fail()s with a failed status's message.
void check(tfm_status status);

} // namespace tfm::run

#endif // TFM_TOOLS_TFM_RUN_FAILURE_H
