//===- GemmTests.cpp - The packed GEMM against float64 --------------------===//
//
// Linear layers with constant weights run the register-tiled GEMM of
// convert-linear-to-cpu. These tests cover its edges against a float64
// reference: row counts below, at and past a micro-kernel and a row block,
// K past a chunk (Kc), N off the panel width, every epilogue, each vector
// width (SSE, AVX2, AVX-512 where the host runs it) and threads.
//
//===----------------------------------------------------------------------===//

#include "Fixture.h"
#include "Harness.h"
#include "Reference.h"
#include "ReferenceLayers.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace e2e;
using ref::Array;

namespace {
/// Runs every task on the calling thread, last first, while telling the
/// model it has `threads` threads: the GEMM sizes its tasks by that count.
struct ClaimedThreadsExec {
  explicit ClaimedThreadsExec(uint32_t threads) { exec.num_threads = threads; }
  tfm_exec exec{TFM_EXEC_ABI_VERSION, 1, &ClaimedThreadsExec::parallelFor,
                nullptr};
  static void parallelFor(void *, int64_t count, tfm_task_fn task, void *args) {
    for (int64_t i = count; i-- > 0;)
      task(args, i, i + 1);
  }
};

std::string gemmModel(int64_t k, int64_t n) {
  return "model gemm\n"
         "input x: f32[batch, seq, " +
         std::to_string(k) +
         "]\n"
         "input r: f32[batch, seq, " +
         std::to_string(n) +
         "]\n"
         "plain = linear(x, weight = \"W\", bias = \"b\")\n"
         "nobias = linear(x, weight = \"W\")\n"
         "relu_out = relu(linear(x, \"W\", \"b\"))\n"
         "gelu_out = gelu(linear(x, \"W\", \"b\"))\n"
         "tanh_out = gelu(linear(x, \"W\", \"b\"), approximate = \"tanh\")\n"
         "residual = r + gelu(linear(x, \"W\", \"b\"))\n"
         "output plain, nobias, relu_out, gelu_out, tanh_out, residual\n";
}

void checkGemm(const std::string &cpu, int64_t k, int64_t n,
               const std::vector<std::pair<int64_t, int64_t>> &shapes) {
  Random rng(static_cast<uint32_t>(k * 131 + n));
  Weights w;
  w["W"] = rng.weight({n, k});
  w["b"] = rng.weight({n});
  BuildOptions options;
  options.cpu = cpu;
  std::shared_ptr<Model> model = Model::build(gemmModel(k, n), w, options);
  Array W = ref::fromWeight(w["W"]), b = ref::fromWeight(w["b"]);
  // float32 sums of k products: the error grows like sqrt(k).
  double atol = 2e-6 * std::sqrt(double(k));
  Pool pool(2);
  // Thread counts change how the rows and columns split into tasks: none
  // (0 counts as 1), odd ones, and far more than there is work.
  ClaimedThreadsExec none(0), three(3), seven(7), many(1000);
  for (auto [batch, seq] : shapes) {
    for (const tfm_exec *exec :
         {(const tfm_exec *)nullptr, pool.exec(), (const tfm_exec *)&none.exec,
          (const tfm_exec *)&three.exec, (const tfm_exec *)&seven.exec,
          (const tfm_exec *)&many.exec}) {
      // Plain loops, not sections: Catch2 would rerun (and recompile) the
      // whole case for each section.
      {
        INFO(cpu << " K " << k << " N " << n << " batch " << batch << " seq "
                 << seq << " exec claiming " << (exec ? exec->num_threads : 0)
                 << " threads");
        HostTensor x = rng.f32({batch, seq, k}), r = rng.f32({batch, seq, n});
        RunResult out = model->runOk({x, r}, exec);
        Array X = ref::fromTensor(x), R = ref::fromTensor(r);
        Array y = ref::linear(X, W, &b);
        E2E_CHECK_CLOSE(out["plain"], y, 1e-5, atol);
        E2E_CHECK_CLOSE(out["nobias"], ref::linear(X, W), 1e-5, atol);
        E2E_CHECK_CLOSE(out["relu_out"], ref::relu(y), 1e-5, atol);
        E2E_CHECK_CLOSE(out["gelu_out"], ref::gelu(y), 1e-5, atol);
        E2E_CHECK_CLOSE(out["tanh_out"], ref::gelu(y, true), 1e-5, atol);
        E2E_CHECK_CLOSE(out["residual"], ref::add(R, ref::gelu(y)), 1e-5, atol);
      }
    }
  }
}
} // namespace

TEST_CASE("packed GEMM matches float64 at odd shapes on every vector width",
          "[gemm]") {
  // Rows: 1, a micro-kernel's tail, several micro-kernels, past a 48- and
  // 96-row group of the copied A tile; (batch, seq) flatten into them.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {
      {1, 1}, {1, 5}, {1, 7}, {2, 13}, {3, 43}, {1, 131}};
  for (const char *cpu : {"x86-64-v2", "x86-64-v3", "x86-64-v4"}) {
    if (!hostRuns(cpu))
      continue;
    // N below, at and past a panel (8, 16 or 32 columns); K of 1, odd, and
    // past one K chunk (256 floats with AVX2, 128 with AVX-512).
    checkGemm(cpu, 1, 1, shapes);
    checkGemm(cpu, 17, 7, shapes);
    checkGemm(cpu, 300, 33, shapes);
    checkGemm(cpu, 64, 64, shapes);
  }
}

TEST_CASE("packed GEMM on large inputs: threads agree with float64", "[gemm]") {
  // Big enough for several row blocks (288 rows with AVX-512, 144 with
  // AVX2), row groups and K chunks; N past the 512 KB column block limit.
  checkGemm("host", 520, 200, {{2, 150}, {1, 601}});
  checkGemm("host", 130, 1100, {{1, 300}});
}

TEST_CASE("portable artifact: every kernel variant matches float64", "[gemm]") {
  // The default build carries SSE, AVX2+FMA and AVX-512 variants of its
  // GEMM and attention kernels; TFM_CPU_LEVEL caps the one chosen, so each
  // variant this machine can run is checked. The level is cached per
  // loaded artifact, hence one fresh build per level.
  const char *source = R"(
model portable
input x: f32[batch, seq, 40]
h = linear(x, weight = "W1", bias = "b1")
a = sdpa(h, h, h)
y = x + gelu(linear(a, weight = "W2", bias = "b2"))
output y
)";
  Random rng(4242);
  Weights w;
  w["W1"] = rng.weight({24, 40});
  w["b1"] = rng.weight({24});
  w["W2"] = rng.weight({40, 24});
  w["b2"] = rng.weight({40});
  HostTensor x = rng.f32({2, 37, 40});
  Array X = ref::fromTensor(x);
  Array b1 = ref::fromWeight(w["b1"]), b2 = ref::fromWeight(w["b2"]);
  Array h = ref::linear(X, ref::fromWeight(w["W1"]), &b1);
  Array a = ref::sdpa(h, h, h);
  Array y =
      ref::add(X, ref::gelu(ref::linear(a, ref::fromWeight(w["W2"]), &b2)));
  BuildOptions options;
  options.cpu = "portable";
  // A level above what the host runs falls back to a lower variant: say so
  // instead of checking the lower one again under the higher's name.
  struct Level {
    const char *level, *kernels;
    bool runs;
  };
  for (const Level &l :
       {Level{"1", "SSE", true},
        Level{"2", "AVX2+FMA",
              __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")},
        Level{"3", "AVX-512",
              __builtin_cpu_supports("avx512f") &&
                  __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl")}}) {
    if (!l.runs) {
      WARN("skipped TFM_CPU_LEVEL=" << l.level << ": this host cannot run the "
                                    << l.kernels << " kernels");
      continue;
    }
    const char *level = l.level;
    INFO("TFM_CPU_LEVEL=" << level);
    setenv("TFM_CPU_LEVEL", level, 1);
    std::shared_ptr<Model> model = Model::build(source, w, options);
    RunResult out = model->runOk({x});
    unsetenv("TFM_CPU_LEVEL");
    E2E_CHECK_CLOSE(out["y"], y, 1e-5, 2e-5);
  }
}
