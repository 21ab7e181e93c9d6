//===- TestModel.cpp - A hand-written artifact for loader tests -*- C++ -*-===//
//
// Built as a shared library standing in for tfm-compile's output: z = x + y on
// f32[seq, 2]. Like generated code it owns no threads: given an exec with a
// parallel_for, it hands it one task per row. With TFM_TEST_NO_METADATA it
// lacks tfm_artifact_metadata, to test loading a library that is not an
// artifact. With TFM_TEST_BOOL_MODEL it is another model, with bool tensors.
//
//===----------------------------------------------------------------------===//

#include <cstdint>

// What a generated header declares; artifacts do not include tfm/runtime.h.
#include "tfm/exec.h"

#define TFM_TEST_EXPORT extern "C" __attribute__((visibility("default")))

#ifdef TFM_TEST_BOOL_MODEL
// With TFM_TEST_BOOL_MODEL: a model with bool tensors, for tfm-run's bool
// printing: y = m ? 0 : x, k = !m and any = any(m).
TFM_TEST_EXPORT const char *tfm_artifact_metadata(void) {
  return R"({
    "abi": 1,
    "model": "mask",
    "entry": "tfm_mask_run_packed",
    "symbols": ["n"],
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["n"]},
               {"name": "m", "dtype": "bool", "shape": ["n"]}],
    "outputs": [{"name": "y", "dtype": "f32", "shape": ["n"]},
                {"name": "k", "dtype": "bool", "shape": ["n"]},
                {"name": "any", "dtype": "bool", "shape": []}]
  })";
}

TFM_TEST_EXPORT int32_t tfm_mask_run_packed(void *const *buffers,
                                            const int64_t *symbols,
                                            const tfm_exec *) {
  const float *x = static_cast<const float *>(buffers[0]);
  const unsigned char *m = static_cast<const unsigned char *>(buffers[1]);
  float *y = static_cast<float *>(buffers[2]);
  unsigned char *k = static_cast<unsigned char *>(buffers[3]);
  unsigned char *any = static_cast<unsigned char *>(buffers[4]);
  *any = 0;
  for (int64_t i = 0; i < symbols[0]; ++i) {
    y[i] = m[i] ? 0.0f : x[i];
    k[i] = !m[i];
    *any |= m[i];
  }
  return 0;
}
#elif !defined(TFM_TEST_NO_METADATA)
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

#ifndef TFM_TEST_BOOL_MODEL
namespace {

/// seq == 7 makes the model fail, so tests can see a run-time error.
constexpr int64_t kFailingSeq = 7;

struct AddArgs {
  const float *x, *y;
  float *z;
};

/// Rows [begin, end).
void addRows(void *opaque, int64_t begin, int64_t end) {
  const AddArgs &args = *static_cast<const AddArgs *>(opaque);
  for (int64_t i = begin * 2; i < end * 2; ++i)
    args.z[i] = args.x[i] + args.y[i];
}

} // namespace

TFM_TEST_EXPORT int32_t tfm_add_run_packed(void *const *buffers,
                                           const int64_t *symbols,
                                           const tfm_exec *exec) {
  if (!symbols || symbols[0] == kFailingSeq)
    return 3;
  AddArgs args{static_cast<const float *>(buffers[0]),
               static_cast<const float *>(buffers[1]),
               static_cast<float *>(buffers[2])};
  if (exec && exec->parallel_for)
    exec->parallel_for(exec->context, symbols[0], addRows, &args);
  else
    addRows(&args, 0, symbols[0]);
  return 0;
}
#endif
