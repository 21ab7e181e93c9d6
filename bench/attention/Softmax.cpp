//===- Softmax.cpp - Vectorized stable softmax rows for the baseline -----===//
//
// exp(r) for r <= 0 as 2^n · p(f): n = round(r · log2 e), f = r - n · ln 2
// (ln 2 split in two for accuracy), p the Cephes degree-7 polynomial, about
// 1 ulp on [-ln2/2, ln2/2]. Inputs below -87 flush to 0 as expf would
// underflow. The kernels carry target attributes and are picked at run time.
//
//===----------------------------------------------------------------------===//
#include "Softmax.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace bench {
namespace {

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kC[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                        4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
constexpr float kMinArg = -87.3f;

__attribute__((target("avx512f"))) inline __m512 exp512(__m512 x) {
  __mmask16 tiny = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kMinArg), _CMP_LT_OQ);
  x = _mm512_max_ps(x, _mm512_set1_ps(kMinArg));
  __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kC[0]);
  for (int i = 1; i < 6; ++i)
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC[i]));
  __m512 r2 = _mm512_mul_ps(r, r);
  p = _mm512_fmadd_ps(p, r2, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_maskz_scalef_ps(~tiny, p, n);
}

__attribute__((target("avx512f"))) float expRow512(float *row, int64_t valid,
                                                   int64_t n) {
  __m512 vmax = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + 16 <= valid; i += 16)
    vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(row + i));
  __mmask16 tail = __mmask16((1u << (valid - i)) - 1);
  if (i < valid)
    vmax = _mm512_mask_max_ps(vmax, tail, vmax,
                              _mm512_maskz_loadu_ps(tail, row + i));
  __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
  __m512 sum = _mm512_setzero_ps();
  for (i = 0; i + 16 <= valid; i += 16) {
    __m512 e = exp512(_mm512_sub_ps(_mm512_loadu_ps(row + i), m));
    _mm512_storeu_ps(row + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (i < valid) {
    __m512 e = _mm512_maskz_mov_ps(
        tail, exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, row + i), m)));
    _mm512_mask_storeu_ps(row + i, tail, e);
    sum = _mm512_add_ps(sum, e);
  }
  std::fill(row + valid, row + n, 0.0f);
  return _mm512_reduce_add_ps(sum);
}

__attribute__((target("avx2,fma"))) inline __m256 exp256(__m256 x) {
  __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(kMinArg), _CMP_LT_OQ);
  x = _mm256_max_ps(x, _mm256_set1_ps(kMinArg));
  __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kC[0]);
  for (int i = 1; i < 6; ++i)
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC[i]));
  __m256 r2 = _mm256_mul_ps(r, r);
  p = _mm256_fmadd_ps(p, r2, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^n by building the exponent field; n >= -126 after the clamp.
  __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  __m256 e = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  return _mm256_andnot_ps(tiny, e);
}

__attribute__((target("avx2,fma"))) float expRow256(float *row, int64_t valid,
                                                    int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  __m256 vmax = _mm256_set1_ps(m);
  int64_t i = 0;
  for (; i + 8 <= valid; i += 8)
    vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(row + i));
  float lanes[8];
  _mm256_storeu_ps(lanes, vmax);
  for (float x : lanes)
    m = std::max(m, x);
  for (; i < valid; ++i)
    m = std::max(m, row[i]);
  __m256 vm = _mm256_set1_ps(m);
  __m256 vsum = _mm256_setzero_ps();
  for (i = 0; i + 8 <= valid; i += 8) {
    __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(row + i), vm));
    _mm256_storeu_ps(row + i, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  _mm256_storeu_ps(lanes, vsum);
  float sum = 0;
  for (float x : lanes)
    sum += x;
  for (; i < valid; ++i) {
    row[i] = std::exp(row[i] - m);
    sum += row[i];
  }
  std::fill(row + valid, row + n, 0.0f);
  return sum;
}

float expRowScalar(float *row, int64_t valid, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < valid; ++i)
    m = std::max(m, row[i]);
  float sum = 0;
  for (int64_t i = 0; i < valid; ++i) {
    row[i] = std::exp(row[i] - m);
    sum += row[i];
  }
  std::fill(row + valid, row + n, 0.0f);
  return sum;
}

using ExpRow = float (*)(float *, int64_t, int64_t);

struct Dispatch {
  ExpRow fn;
  const char *isa;
};

Dispatch pick() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return {expRow512, "AVX-512"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {expRow256, "AVX2"};
  return {expRowScalar, "scalar"};
}

const Dispatch &dispatch() {
  static const Dispatch d = pick();
  return d;
}

} // namespace

float softmaxExpRow(float *row, int64_t valid, int64_t n) {
  return dispatch().fn(row, valid, n);
}

const char *softmaxIsa() { return dispatch().isa; }

} // namespace bench
