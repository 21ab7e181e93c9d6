//===- OptionChecks.h - tfm-compile options that cannot work together -----===//
//
// Checked before anything is read, so that a wrong flag is reported
// whatever the stage asked for.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_DRIVER_OPTIONCHECKS_H
#define TFM_COMPILER_DRIVER_OPTIONCHECKS_H

#include "compiler/Driver/Driver.h"

#include <optional>
#include <string>

namespace mlir::tfm {

/// Whether `path` opens as a GGUF checkpoint.
bool isGgufFile(const std::string &path);

/// The first reason `options` cannot produce `emit` (an unknown --dtype,
/// a CPU-only option with --target cuda, a missing libdevice, ...), as the
/// message tfm-compile prints; nullopt when they can.
std::optional<std::string> findOptionError(const CompileOptions &options,
                                           EmitKind emit);

} // namespace mlir::tfm

#endif // TFM_COMPILER_DRIVER_OPTIONCHECKS_H
