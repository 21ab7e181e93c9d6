//===- TestPasses.h - GPU test passes for tfm-opt ---------------*- C++ -*-===//
#ifndef TFM_COMPILER_CONVERSION_ATTENTIONTOGPU_TESTPASSES_H
#define TFM_COMPILER_CONVERSION_ATTENTIONTOGPU_TESTPASSES_H

namespace mlir::tfm {
/// tfm-test-serial-launch (TestSerialLaunch.cpp): only tfm-opt registers it.
void registerTestGPUPasses();
} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_ATTENTIONTOGPU_TESTPASSES_H
