/* bench/models helper, built by run.sh with `cc -O3 -march=native`.
 *
 *   helper peak SECONDS TRIALS THREADS
 *       FMA-throughput loop (the approach of bench/attention/Peak.cpp):
 *       independent accumulators in vector registers, acc = acc * a + b, one
 *       FMA per accumulator per iteration. Prints one JSON line:
 *       {"isa": ..., "single": best 1-thread GFLOP/s, "single_min": slowest,
 *        "all": best GFLOP/s of THREADS threads together}
 *
 *   helper lowp-peak SECONDS TRIALS
 *       The same loop for the low-precision dot-product instructions, one
 *       thread, zmm: `vdpbf16ps` (AVX512-BF16; 32 bf16 pairs per instruction,
 *       2 flops a pair: 64 flops) and `vpdpbusd` (AVX512-VNNI; 64 u8 x s8
 *       products summed by fours into 16 int32: 128 int ops). Each function
 *       is compiled for its own extension (__attribute__((target(...))), not
 *       -m flags of the whole file) and runs only where the CPU reports it
 *       (__builtin_cpu_supports); otherwise its entry says why it was skipped.
 *       Prints one JSON line:
 *       {"bf16": {"gflops": best, "min": slowest, ...} | {"skipped": why},
 *        "vnni": {"gops": best, "min": slowest, ...} | {"skipped": why}}
 *
 *   helper amx-peak SECONDS TRIALS
 *       AMX tile throughput, one thread: 4 independent 16 x 16 C tiles, each
 *       `tdpbf16ps` (16 x 16 x 32 bf16: 16384 flops) or `tdpbusd` (16 x 16 x
 *       64 u8 x s8: 32768 int ops) per iteration from two tiles loaded once.
 *       Asks Linux for the tile state first (arch_prctl(ARCH_REQ_XCOMP_PERM,
 *       XFEATURE_XTILEDATA)); skipped, saying why, where the CPU or the OS
 *       has no AMX. Prints one JSON line:
 *       {"bf16": {"gflops": best, "min": slowest, ...} | {"skipped": why},
 *        "int8": {"gops": best, "min": slowest, ...} | {"skipped": why}}
 *
 *   helper bandwidth MIB TRIALS THREADS
 *       Memory read bandwidth, the bound of a decode step (which reads every
 *       weight once): MIB MiB (default 1024, far past the caches), split
 *       into THREADS contiguous parts, each read by one thread with 64-byte
 *       vector loads into four independent sums (what a GEMV's weight
 *       stream does), TRIALS times after one pass that faults the pages
 *       in. Prints one JSON line: {"single": best 1-thread GB/s,
 *       "single_min": slowest, "all": best GB/s of THREADS threads} (GB =
 *       1e9 bytes, as bench/decode's GB/s columns).
 *
 *   helper rss CMD ARGS...
 *       Runs CMD as a child and, after it exits, prints
 *       "helper-rss: maxrss_kib=N status=S cpu_s=C" on stderr, N being the
 *       child's ru_maxrss from wait4 and C its user + system CPU time. This
 * process is small, so the child's figure is its own: on Linux ru_maxrss
 * carries the hiwater of the process that forked and exec'd (a big Python
 * parent would otherwise show through, see bench/README.md, "Peak memory").
 * Exits with the child's status.
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile float kA = 0.999999f;
static volatile float kB = 1e-7f;
static volatile float sink;

#if defined(__AVX512F__)
#define ISA "AVX-512"
#define NACC 16
#define LANES 16
typedef __m512 vec;
#define SET1 _mm512_set1_ps
#define FMADD _mm512_fmadd_ps
#define ADD _mm512_add_ps
static float hsum(vec v) { return _mm512_reduce_add_ps(v); }
#elif defined(__AVX2__) && defined(__FMA__)
#define ISA "AVX2+FMA"
#define NACC 12
#define LANES 8
typedef __m256 vec;
#define SET1 _mm256_set1_ps
#define FMADD _mm256_fmadd_ps
#define ADD _mm256_add_ps
static float hsum(vec v) {
  float l[8];
  _mm256_storeu_ps(l, v);
  float t = 0;
  for (int i = 0; i < 8; ++i)
    t += l[i];
  return t;
}
#else
#define ISA "none"
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#ifdef NACC
/* Runs `iters` iterations; returns FLOPs done. */
__attribute__((noinline)) static double fma_loop(long iters) {
  vec a = SET1(kA), b = SET1(kB);
  vec acc[NACC];
  for (int j = 0; j < NACC; ++j)
    acc[j] = SET1((float)j * 1e-3f);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < NACC; ++j)
      acc[j] = FMADD(acc[j], a, b);
  }
  vec s = acc[0];
  for (int j = 1; j < NACC; ++j)
    s = ADD(s, acc[j]);
  sink = hsum(s);
  return (double)iters * NACC * LANES * 2;
}

static double trial(double seconds) {
  double flops = 0, t0 = now(), el;
  do {
    flops += fma_loop(1 << 20);
    el = now() - t0;
  } while (el < seconds);
  return flops / el * 1e-9;
}

struct arg {
  double seconds, rate;
};
static void *thread_main(void *p) {
  struct arg *a = p;
  a->rate = trial(a->seconds);
  return NULL;
}
#endif

static int peak(int argc, char **argv) {
  double seconds = argc > 2 ? atof(argv[2]) : 0.2;
  int trials = argc > 3 ? atoi(argv[3]) : 5;
  int threads = argc > 4 ? atoi(argv[4]) : 2;
#ifdef NACC
  double best = 0, worst = 1e30, all = 0;
  fma_loop(1 << 16);
  for (int t = 0; t < trials; ++t) {
    double r = trial(seconds);
    if (r > best)
      best = r;
    if (r < worst)
      worst = r;
  }
  if (threads < 1)
    threads = 1;
  for (int t = 0; t < trials; ++t) {
    pthread_t th[64];
    struct arg args[64];
    int n = threads > 64 ? 64 : threads;
    for (int i = 0; i < n; ++i) {
      args[i].seconds = seconds;
      pthread_create(&th[i], NULL, thread_main, &args[i]);
    }
    double total = 0;
    for (int i = 0; i < n; ++i) {
      pthread_join(th[i], NULL);
      total += args[i].rate;
    }
    if (total > all)
      all = total;
  }
  printf("{\"isa\": \"%s\", \"accumulators\": %d, \"single\": %.2f, "
         "\"single_min\": %.2f, \"all\": %.2f, \"threads\": %d, "
         "\"trials\": %d}\n",
         ISA, NACC, best, worst, all, threads, trials);
#else
  printf("{\"isa\": \"none\", \"single\": 0, \"single_min\": 0, \"all\": 0}\n");
#endif
  return 0;
}

/* Low-precision peaks: 16 independent zmm accumulators (latency 5-6 cycles
 * x up to 2 per cycle needs at least 12), each updated once per iteration
 * from two loop-invariant sources. Named variables, not an array: with an
 * array GCC 12 kept some accumulators in memory (a store and a reload per
 * iteration) in the VNNI loop. */
#define LP_NACC 16
#define LP_DECL(T, INIT)                                                       \
  T c0 = INIT(0), c1 = INIT(1), c2 = INIT(2), c3 = INIT(3), c4 = INIT(4),      \
    c5 = INIT(5), c6 = INIT(6), c7 = INIT(7), c8 = INIT(8), c9 = INIT(9),      \
    c10 = INIT(10), c11 = INIT(11), c12 = INIT(12), c13 = INIT(13),            \
    c14 = INIT(14), c15 = INIT(15)
#define LP_STEP(OP, A, B)                                                      \
  c0 = OP(c0, A, B);                                                           \
  c1 = OP(c1, A, B);                                                           \
  c2 = OP(c2, A, B);                                                           \
  c3 = OP(c3, A, B);                                                           \
  c4 = OP(c4, A, B);                                                           \
  c5 = OP(c5, A, B);                                                           \
  c6 = OP(c6, A, B);                                                           \
  c7 = OP(c7, A, B);                                                           \
  c8 = OP(c8, A, B);                                                           \
  c9 = OP(c9, A, B);                                                           \
  c10 = OP(c10, A, B);                                                         \
  c11 = OP(c11, A, B);                                                         \
  c12 = OP(c12, A, B);                                                         \
  c13 = OP(c13, A, B);                                                         \
  c14 = OP(c14, A, B);                                                         \
  c15 = OP(c15, A, B)
#define LP_SUM(ADD)                                                            \
  ADD(ADD(ADD(ADD(c0, c1), ADD(c2, c3)), ADD(ADD(c4, c5), ADD(c6, c7))),       \
      ADD(ADD(ADD(c8, c9), ADD(c10, c11)), ADD(ADD(c12, c13), ADD(c14, c15))))
static volatile int kBits =
    0x3a833a83; /* two bf16 ~1e-3: no overflow, no denormals */
static volatile int kBytes = 0x01010101;
static volatile int isink;

#define BF16_INIT(j) _mm512_set1_ps((float)(j) * 1e-3f)
__attribute__((target("avx512f,avx512bf16"),
               noinline)) static double bf16_loop(long iters) {
  __m512bh a = (__m512bh)_mm512_set1_epi32(kBits);
  __m512bh b = (__m512bh)_mm512_set1_epi32(kBits);
  LP_DECL(__m512, BF16_INIT);
  for (long i = 0; i < iters; ++i) {
    LP_STEP(_mm512_dpbf16_ps, a, b);
  }
  sink = _mm512_reduce_add_ps(LP_SUM(_mm512_add_ps));
  return (double)iters * LP_NACC * 64; /* 32 pairs x (mul + add) */
}

#define VNNI_INIT(j) _mm512_set1_epi32(j)
__attribute__((target("avx512f,avx512vnni"),
               noinline)) static double vnni_loop(long iters) {
  __m512i a = _mm512_set1_epi32(kBytes), b = _mm512_set1_epi32(kBytes);
  LP_DECL(__m512i, VNNI_INIT);
  for (long i = 0; i < iters; ++i) {
    LP_STEP(_mm512_dpbusd_epi32, a, b);
  }
  isink = _mm512_reduce_add_epi32(LP_SUM(_mm512_add_epi32));
  return (double)iters * LP_NACC * 128; /* 64 products + 64 adds */
}

/* best and slowest of `trials` trials of `seconds`, in G(FL)OP/s */
static void lp_trials(double (*loop)(long), double seconds, int trials,
                      double *best, double *worst) {
  *best = 0;
  *worst = 1e30;
  loop(1 << 14);
  for (int t = 0; t < trials; ++t) {
    double ops = 0, t0 = now(), el;
    do {
      ops += loop(1 << 18);
      el = now() - t0;
    } while (el < seconds);
    double r = ops / el * 1e-9;
    if (r > *best)
      *best = r;
    if (r < *worst)
      *worst = r;
  }
}

static int lowp_peak(int argc, char **argv) {
  double seconds = argc > 2 ? atof(argv[2]) : 0.2;
  int trials = argc > 3 ? atoi(argv[3]) : 5;
  double best, worst;
  __builtin_cpu_init();
  printf("{\"bf16\": ");
  if (!__builtin_cpu_supports("avx512f") ||
      !__builtin_cpu_supports("avx512bf16")) {
    printf("{\"skipped\": \"the CPU does not report avx512_bf16 (cpuid)\"}");
  } else {
    lp_trials(bf16_loop, seconds, trials, &best, &worst);
    printf("{\"instruction\": \"vdpbf16ps zmm\", \"accumulators\": %d, "
           "\"flops_per_instruction\": 64, \"gflops\": %.2f, \"min\": %.2f}",
           LP_NACC, best, worst);
  }
  printf(", \"vnni\": ");
  if (!__builtin_cpu_supports("avx512f") ||
      !__builtin_cpu_supports("avx512vnni")) {
    printf("{\"skipped\": \"the CPU does not report avx512_vnni (cpuid)\"}");
  } else {
    lp_trials(vnni_loop, seconds, trials, &best, &worst);
    printf("{\"instruction\": \"vpdpbusd zmm\", \"accumulators\": %d, "
           "\"ops_per_instruction\": 128, \"gops\": %.2f, \"min\": %.2f}",
           LP_NACC, best, worst);
  }
  printf(", \"trials\": %d, \"seconds\": %.2f}\n", trials, seconds);
  return 0;
}

#if defined(__x86_64__)
/* The tile configuration: palette 1, tiles 0-5 of 16 rows x 64 bytes. */
struct tile_config {
  unsigned char palette, start;
  unsigned char reserved[14];
  unsigned short colsb[16];
  unsigned char rows[16];
};
static unsigned char amx_a[16 * 64] __attribute__((aligned(64)));
static unsigned char amx_b[16 * 64] __attribute__((aligned(64)));
static float amx_c[16 * 16] __attribute__((aligned(64)));

__attribute__((target("amx-tile"), noinline)) static void amx_configure(void) {
  struct tile_config config;
  memset(&config, 0, sizeof config);
  config.palette = 1;
  for (int t = 0; t < 6; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  /* GCC 12 drops the stores above otherwise: it does not see ldtilecfg
   * read them. */
  __asm__ volatile("" : : "r"(&config) : "memory");
  _tile_loadconfig(&config);
}

#define AMX_LOOP(NAME, TARGET, DOT, OPS)                                       \
  __attribute__((target(TARGET), noinline)) static double NAME(long iters) {   \
    _tile_zero(0);                                                             \
    _tile_zero(1);                                                             \
    _tile_zero(2);                                                             \
    _tile_zero(3);                                                             \
    _tile_loadd(4, amx_a, 64);                                                 \
    _tile_loadd(5, amx_b, 64);                                                 \
    for (long i = 0; i < iters; ++i) {                                         \
      DOT(0, 4, 5);                                                            \
      DOT(1, 4, 5);                                                            \
      DOT(2, 4, 5);                                                            \
      DOT(3, 4, 5);                                                            \
    }                                                                          \
    _tile_stored(0, amx_c, 64);                                                \
    _tile_stored(1, amx_c, 64);                                                \
    _tile_stored(2, amx_c, 64);                                                \
    _tile_stored(3, amx_c, 64);                                                \
    return (double)iters * 4 * (OPS);                                          \
  }
AMX_LOOP(amx_bf16_loop, "amx-tile,amx-bf16", _tile_dpbf16ps, 16.0 * 16 * 32 * 2)
AMX_LOOP(amx_int8_loop, "amx-tile,amx-int8", _tile_dpbusd, 16.0 * 16 * 64 * 2)

static int amx_peak(int argc, char **argv) {
  double seconds = argc > 2 ? atof(argv[2]) : 0.2;
  int trials = argc > 3 ? atoi(argv[3]) : 5;
  double best, worst;
  __builtin_cpu_init();
  const char *why = NULL;
  if (!__builtin_cpu_supports("amx-tile") ||
      !__builtin_cpu_supports("amx-bf16") ||
      !__builtin_cpu_supports("amx-int8"))
    why = "the CPU does not report amx_tile, amx_bf16 and amx_int8 (cpuid)";
  else if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */,
                   18 /* XFEATURE_XTILEDATA */) != 0)
    why = "Linux refused the tile data state (arch_prctl)";
  if (why) {
    printf("{\"bf16\": {\"skipped\": \"%s\"}, \"int8\": {\"skipped\": "
           "\"%s\"}}\n",
           why, why);
    return 0;
  }
  for (int i = 0; i < 16 * 64; ++i) {
    amx_a[i] = i % 2 ? 0x3a : 0x83; /* bf16 ~1e-3 pairs; small u8 */
    amx_b[i] = i % 2 ? 0x3a : 0x01;
  }
  amx_configure();
  lp_trials(amx_bf16_loop, seconds, trials, &best, &worst);
  printf("{\"bf16\": {\"instruction\": \"tdpbf16ps\", \"accumulators\": 4, "
         "\"flops_per_instruction\": 16384, \"gflops\": %.2f, \"min\": "
         "%.2f}",
         best, worst);
  amx_configure();
  lp_trials(amx_int8_loop, seconds, trials, &best, &worst);
  printf(", \"int8\": {\"instruction\": \"tdpbusd\", \"accumulators\": 4, "
         "\"ops_per_instruction\": 32768, \"gops\": %.2f, \"min\": %.2f}",
         best, worst);
  printf(", \"trials\": %d, \"seconds\": %.2f}\n", trials, seconds);
  return 0;
}
#endif

static int rss(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: helper rss CMD ARGS...\n");
    return 2;
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 2;
  }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  if (wait4(pid, &status, 0, &ru) < 0) {
    perror("wait4");
    return 2;
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
               ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
  fprintf(stderr, "helper-rss: maxrss_kib=%ld status=%d cpu_s=%.3f\n",
          ru.ru_maxrss, code, cpu);
  return code;
}

/* The memory read bandwidth (see the top of the file). */
struct read_arg {
  const unsigned char *base;
  size_t bytes;
  double seconds;
  long long sum;
};

static void *read_part(void *p) {
  struct read_arg *a = p;
  double start = now();
#if defined(__AVX512F__)
  __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i + 256 <= a->bytes; i += 256) {
    s0 = _mm512_add_epi64(s0, _mm512_load_si512(a->base + i));
    s1 = _mm512_add_epi64(s1, _mm512_load_si512(a->base + i + 64));
    s2 = _mm512_add_epi64(s2, _mm512_load_si512(a->base + i + 128));
    s3 = _mm512_add_epi64(s3, _mm512_load_si512(a->base + i + 192));
  }
  a->sum = _mm512_reduce_add_epi64(
      _mm512_add_epi64(_mm512_add_epi64(s0, s1), _mm512_add_epi64(s2, s3)));
#else
  long long s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const long long *w = (const long long *)a->base;
  for (size_t i = 0; i + 4 <= a->bytes / 8; i += 4) {
    s0 += w[i];
    s1 += w[i + 1];
    s2 += w[i + 2];
    s3 += w[i + 3];
  }
  a->sum = s0 + s1 + s2 + s3;
#endif
  a->seconds = now() - start;
  return NULL;
}

/* GB/s of `threads` threads reading `bytes` from `base` together. */
static double read_trial(const unsigned char *base, size_t bytes, int threads) {
  pthread_t th[64];
  struct read_arg args[64];
  size_t part = bytes / (size_t)threads / 256 * 256;
  double start = now();
  for (int i = 0; i < threads; ++i) {
    args[i].base = base + (size_t)i * part;
    args[i].bytes = part;
    pthread_create(&th[i], NULL, read_part, &args[i]);
  }
  long long sum = 0;
  for (int i = 0; i < threads; ++i) {
    pthread_join(th[i], NULL);
    sum += args[i].sum;
  }
  double seconds = now() - start;
  isink += (int)sum;
  return (double)part * threads / seconds / 1e9;
}

static int bandwidth(int argc, char **argv) {
  size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 1024;
  int trials = argc > 3 ? atoi(argv[3]) : 5;
  int threads = argc > 4 ? atoi(argv[4]) : 2;
  if (threads < 1)
    threads = 1;
  if (threads > 64)
    threads = 64;
  size_t bytes = mib << 20;
  unsigned char *base = aligned_alloc(64, bytes);
  if (!base) {
    fprintf(stderr, "helper bandwidth: cannot allocate %zu MiB\n", mib);
    return 1;
  }
  /* Distinct values on every page (a zero page would be shared). */
  for (size_t i = 0; i < bytes; i += 4096)
    memset(base + i, (int)(i >> 12), 4096);
  double best = 0, worst = 1e30, all = 0;
  read_trial(base, bytes, 1);
  for (int t = 0; t < trials; ++t) {
    double r = read_trial(base, bytes, 1);
    best = r > best ? r : best;
    worst = r < worst ? r : worst;
    double a = read_trial(base, bytes, threads);
    all = a > all ? a : all;
  }
  printf("{\"single\": %.2f, \"single_min\": %.2f, \"all\": %.2f, "
         "\"threads\": %d, \"mib\": %zu, \"trials\": %d}\n",
         best, worst, all, threads, mib, trials);
  free(base);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "peak") == 0)
    return peak(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "lowp-peak") == 0)
    return lowp_peak(argc, argv);
#if defined(__x86_64__)
  if (argc >= 2 && strcmp(argv[1], "amx-peak") == 0)
    return amx_peak(argc, argv);
#endif
  if (argc >= 2 && strcmp(argv[1], "rss") == 0)
    return rss(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "bandwidth") == 0)
    return bandwidth(argc, argv);
  fprintf(
      stderr,
      "usage: helper peak [SECONDS TRIALS THREADS] | helper lowp-peak [SECONDS "
      "TRIALS] | helper amx-peak [SECONDS TRIALS] | helper bandwidth [MIB "
      "TRIALS THREADS] | helper rss CMD ARGS...\n");
  return 2;
}
