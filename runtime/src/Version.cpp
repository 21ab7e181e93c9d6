//===- Version.cpp - The runtime's release and API version ------*- C++ -*-===//
//
// TFM_VERSION_STRING comes from the project's version in CMake, so that the
// string an app prints names the release it actually linked.
//
//===----------------------------------------------------------------------===//

#include "tfm/runtime.h"

#ifndef TFM_VERSION_STRING
#error "the build defines TFM_VERSION_STRING (runtime/CMakeLists.txt)"
#endif

extern "C" {

const char *tfm_version(void) { return TFM_VERSION_STRING; }

int32_t tfm_api_version(void) { return TFM_API_VERSION; }

} // extern "C"
