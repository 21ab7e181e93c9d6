//===- Registration.h - The dialects tfm's tools load -----------*- C++ -*-===//
//
// One registry for tfm-compile and tfm-opt, so that IR printed by one always
// parses in the other and a pass behaves the same under both.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_REGISTRATION_REGISTRATION_H
#define TFM_COMPILER_REGISTRATION_REGISTRATION_H

namespace mlir {
class DialectRegistry;
namespace tfm {

/// Every upstream dialect and extension, the tfm dialect, and the external
/// interface models tfm's pipelines rely on (bufferization of tfm ops).
void registerAllDialects(DialectRegistry &registry);

} // namespace tfm
} // namespace mlir

#endif // TFM_COMPILER_REGISTRATION_REGISTRATION_H
