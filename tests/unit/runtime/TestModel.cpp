//===- TestModel.cpp - A hand-written artifact for loader tests -*- C++ -*-===//
//
// Built as a shared library standing in for tfm-compile's output: z = x + y on
// f32[seq, 2]. Like generated code it owns no threads: given an exec with a
// parallel_for, it hands it one task per row. With TFM_TEST_NO_METADATA it
// lacks tfm_artifact_metadata, to test loading a library that is not an
// artifact. With TFM_TEST_BOOL_MODEL it is another model, with bool tensors,
// and with TFM_TEST_HALF_MODEL one with f16, bf16, i8 and u8 tensors.
//
//===----------------------------------------------------------------------===//

#include <cstdint>

// What a generated header declares; artifacts do not include tfm/runtime.h.
#include "tfm/exec.h"

#define TFM_TEST_EXPORT extern "C" __attribute__((visibility("default")))

#if defined(TFM_TEST_HALF_MODEL)
// With TFM_TEST_HALF_MODEL: a model with 8- and 16-bit tensors, for tfm-run's
// reading, printing, writing and comparing of them. Bit operations only, so
// that the results are exact: y = x (bf16), g = -h (f16, the sign flipped),
// r = -q (i8, wrapping) and u = q + 128 (u8).
TFM_TEST_EXPORT const char *tfm_artifact_metadata(void) {
  return R"({
    "abi": 1,
    "model": "half",
    "entry": "tfm_half_run_packed",
    "symbols": ["n"],
    "inputs": [{"name": "x", "dtype": "bf16", "shape": ["n"]},
               {"name": "h", "dtype": "f16", "shape": ["n"]},
               {"name": "q", "dtype": "i8", "shape": ["n"]}],
    "outputs": [{"name": "y", "dtype": "bf16", "shape": ["n"]},
                {"name": "g", "dtype": "f16", "shape": ["n"]},
                {"name": "r", "dtype": "i8", "shape": ["n"]},
                {"name": "u", "dtype": "u8", "shape": ["n"]}]
  })";
}

TFM_TEST_EXPORT int32_t tfm_half_run_packed(void *const *buffers,
                                            const int64_t *symbols,
                                            const tfm_exec *) {
  const auto *x = static_cast<const uint16_t *>(buffers[0]);
  const auto *h = static_cast<const uint16_t *>(buffers[1]);
  const auto *q = static_cast<const int8_t *>(buffers[2]);
  auto *y = static_cast<uint16_t *>(buffers[3]);
  auto *g = static_cast<uint16_t *>(buffers[4]);
  auto *r = static_cast<int8_t *>(buffers[5]);
  auto *u = static_cast<uint8_t *>(buffers[6]);
  for (int64_t i = 0; i < symbols[0]; ++i) {
    y[i] = x[i];
    g[i] = static_cast<uint16_t>(h[i] ^ 0x8000);
    r[i] = static_cast<int8_t>(-static_cast<int>(q[i]));
    u[i] = static_cast<uint8_t>(q[i] + 128);
  }
  return 0;
}
#elif defined(TFM_TEST_BOOL_MODEL)
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

#if !defined(TFM_TEST_BOOL_MODEL) && !defined(TFM_TEST_HALF_MODEL)
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
