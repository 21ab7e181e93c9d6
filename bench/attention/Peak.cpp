//===- Peak.cpp - A register-resident FMA loop -----------------*- C++ -*-===//
//
// The loop keeps kAcc independent accumulators in vector registers and
// updates each with one FMA per iteration (acc = acc * a + b), so that the
// FMA units are never waiting on a result: with a latency of 4 cycles and two
// FMA pipes, 8 chains are enough; 16 leave a margin. The values converge to
// b / (1 - a) = 0.1, far from denormals and overflow. The kernels carry target
// attributes, so this file needs no -m flags and the binary still runs (on
// the AVX2 path) on a CPU without AVX-512.
//
//===----------------------------------------------------------------------===//
#include "Peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace bench {
namespace {

volatile float kA = 0.999999f;
volatile float kB = 1e-7f;
volatile float sink;

constexpr int kAcc512 = 16;
constexpr int kAcc256 = 12;

/// Runs `iterations` iterations; returns FLOPs done.
__attribute__((target("avx512f"), noinline)) double
fmaLoop512(long iterations) {
  __m512 a = _mm512_set1_ps(kA), b = _mm512_set1_ps(kB);
  __m512 acc[kAcc512];
  for (int j = 0; j < kAcc512; ++j)
    acc[j] = _mm512_set1_ps(float(j) * 1e-3f);
  for (long i = 0; i < iterations; ++i) {
#pragma clang loop unroll(full)
    for (int j = 0; j < kAcc512; ++j)
      acc[j] = _mm512_fmadd_ps(acc[j], a, b);
  }
  __m512 sum = acc[0];
  for (int j = 1; j < kAcc512; ++j)
    sum = _mm512_add_ps(sum, acc[j]);
  sink = _mm512_reduce_add_ps(sum);
  return double(iterations) * kAcc512 * 16 * 2;
}

__attribute__((target("avx2,fma"), noinline)) double
fmaLoop256(long iterations) {
  __m256 a = _mm256_set1_ps(kA), b = _mm256_set1_ps(kB);
  __m256 acc[kAcc256];
  for (int j = 0; j < kAcc256; ++j)
    acc[j] = _mm256_set1_ps(float(j) * 1e-3f);
  for (long i = 0; i < iterations; ++i) {
#pragma clang loop unroll(full)
    for (int j = 0; j < kAcc256; ++j)
      acc[j] = _mm256_fmadd_ps(acc[j], a, b);
  }
  __m256 sum = acc[0];
  for (int j = 1; j < kAcc256; ++j)
    sum = _mm256_add_ps(sum, acc[j]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  float total = 0;
  for (float x : lanes)
    total += x;
  sink = total;
  return double(iterations) * kAcc256 * 8 * 2;
}

using Loop = double (*)(long);

/// GFLOP/s of one trial of about `seconds`.
double trial(Loop loop, double seconds) {
  using Clock = std::chrono::steady_clock;
  const long chunk = 1 << 20;
  double flops = 0;
  auto start = Clock::now();
  double elapsed = 0;
  do {
    flops += loop(chunk);
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  return flops / elapsed * 1e-9;
}

} // namespace

void sampleFmaPeak(FmaPeak &peak, double seconds, int singleTrials,
                   int allTrials, unsigned threads) {
  Loop loop = nullptr;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    peak.isa = "AVX-512";
    peak.accumulators = kAcc512;
    loop = fmaLoop512;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    peak.isa = "AVX2";
    peak.accumulators = kAcc256;
    loop = fmaLoop256;
  } else {
    peak.isa = "none";
    return;
  }
  loop(1 << 16); // warm up (clocks, AVX-512 license)
  for (int t = 0; t < singleTrials; ++t) {
    double rate = trial(loop, seconds);
    peak.singleCore = std::max(peak.singleCore, rate);
    peak.slowestSingle =
        peak.singleTrials == 0 ? rate : std::min(peak.slowestSingle, rate);
    ++peak.singleTrials;
  }

  peak.threads = std::max(1u, threads);
  for (int t = 0; t < allTrials; ++t) {
    std::vector<double> rates(peak.threads);
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < peak.threads; ++i)
      pool.emplace_back([&, i] { rates[i] = trial(loop, seconds); });
    for (auto &thread : pool)
      thread.join();
    double total = 0;
    for (double r : rates)
      total += r;
    peak.allThreads = std::max(peak.allThreads, total);
    ++peak.allTrials;
  }
}

} // namespace bench
