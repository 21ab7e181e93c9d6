//===- TestModel.cpp - A hand-written artifact for loader tests -*- C++ -*-===//
//
// Built as a shared library standing in for tfm-compile's output: z = x + y on
// f32[seq, 2]. With TFM_TEST_NO_METADATA it lacks tfm_artifact_metadata, to
// test loading a library that is not an artifact.
//
//===----------------------------------------------------------------------===//

#include <cstdint>

#define TFM_TEST_EXPORT extern "C" __attribute__((visibility("default")))

#ifndef TFM_TEST_NO_METADATA
TFM_TEST_EXPORT const char *tfm_artifact_metadata(void) {
  return R"({
    "abi": 1,
    "model": "add",
    "entry": "tfm_add_run_packed",
    "symbols": ["seq"],
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["seq", 2]},
               {"name": "y", "dtype": "f32", "shape": ["seq", 2]}],
    "outputs": [{"name": "z", "dtype": "f32", "shape": ["seq", 2]}]
  })";
}
#endif

/// seq == 7 makes the model fail, so tests can see a run-time error.
constexpr int64_t kFailingSeq = 7;

TFM_TEST_EXPORT int32_t tfm_add_run_packed(void *const *buffers,
                                           const int64_t *symbols, void *exec) {
  (void)exec;
  if (!symbols || symbols[0] == kFailingSeq)
    return 3;
  const float *x = static_cast<const float *>(buffers[0]);
  const float *y = static_cast<const float *>(buffers[1]);
  float *z = static_cast<float *>(buffers[2]);
  for (int64_t i = 0; i < symbols[0] * 2; ++i)
    z[i] = x[i] + y[i];
  return 0;
}
