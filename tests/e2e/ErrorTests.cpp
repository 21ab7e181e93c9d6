//===- ErrorTests.cpp - Run-time and compile-time error paths -------------===//
//
// Bad inputs to a compiled model give a status (never a crash), and malformed
// models make compileModel fail with a diagnostic and produce no library.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"
#include "Reference.h"

#include <catch2/catch.hpp>

#include <limits>

#include <fstream>

using namespace e2e;

//===----------------------------------------------------------------------===//
// Run-time errors
//===----------------------------------------------------------------------===//

namespace {
std::shared_ptr<Model> checksModel() {
  static std::shared_ptr<Model> model = [] {
    Random rng(4001);
    Weights w;
    w["W"] = rng.weight({4, 4});
    return Model::build(R"(
model checks
input x: f32[seq, 4]
input y: f32[seq, 4]
input ids: i64[n]
z = linear(x, weight = "W") + y
e = embedding(ids, weight = "W")
output z, e
)",
                        w);
  }();
  return model;
}

HostTensor idsOf(int64_t n) {
  return HostTensor::i64({n}, std::vector<int64_t>(size_t(n), 1));
}
} // namespace

TEST_CASE("run-time shape and dtype errors are statuses", "[errors]") {
  std::shared_ptr<Model> m = checksModel();
  Random rng(4002);
  HostTensor ids = idsOf(2);

  SECTION("a good run works") {
    RunResult r = m->run({rng.f32({3, 4}), rng.f32({3, 4}), ids});
    CHECK(r.ok());
    CHECK(r["z"].shape == std::vector<int64_t>{3, 4});
    CHECK(r["e"].shape == std::vector<int64_t>{2, 4});
  }
  SECTION("wrong rank") {
    RunResult r = m->run({rng.f32({1, 3, 4}), rng.f32({3, 4}), ids});
    INFO(r.message);
    CHECK(r.code == TFM_STATUS_SHAPE_MISMATCH);
    CHECK_THAT(r.message, Catch::Contains("x"));
  }
  SECTION("rank 1 instead of 2") {
    RunResult r = m->run({rng.f32({3, 4}), rng.f32({12}), ids});
    INFO(r.message);
    CHECK(r.code == TFM_STATUS_SHAPE_MISMATCH);
  }
  SECTION("wrong static dim") {
    RunResult r = m->run({rng.f32({3, 5}), rng.f32({3, 4}), ids});
    INFO(r.message);
    CHECK(r.code == TFM_STATUS_SHAPE_MISMATCH);
  }
  SECTION("inconsistent symbolic dims") {
    RunResult r = m->run({rng.f32({3, 4}), rng.f32({5, 4}), ids});
    INFO(r.message);
    CHECK(r.code == TFM_STATUS_SHAPE_MISMATCH);
    CHECK_THAT(r.message, Catch::Contains("seq"));
  }
  SECTION("wrong dtype: f64 for f32") {
    HostTensor x = HostTensor::f64({3, 4}, std::vector<double>(12, 0.5));
    RunResult r = m->run({x, rng.f32({3, 4}), ids});
    INFO(r.message);
    CHECK(r.code == TFM_STATUS_INVALID_ARGUMENT);
  }
  SECTION("wrong dtype: bf16 bits for f32") {
    HostTensor x = HostTensor::bf16({3, 4}, std::vector<float>(12, 0.5f));
    RunResult r = m->run({x, rng.f32({3, 4}), ids});
    INFO(r.message);
    CHECK(r.code == TFM_STATUS_INVALID_ARGUMENT);
    CHECK(r.message ==
          "input 'x': dtype is bf16 but the model expects f32[seq, 4]");
  }
  SECTION("wrong dtype: i32 ids for i64") {
    RunResult r = m->run({rng.f32({3, 4}), rng.f32({3, 4}),
                          HostTensor::i32({2}, std::vector<int32_t>{1, 2})});
    INFO(r.message);
    CHECK(r.code == TFM_STATUS_INVALID_ARGUMENT);
  }
  SECTION("too few inputs") {
    RunResult r = m->run({rng.f32({3, 4}), rng.f32({3, 4})});
    INFO(r.message);
    CHECK(r.code == TFM_STATUS_INVALID_ARGUMENT);
  }
  SECTION("negative dim") {
    HostTensor x = rng.f32({3, 4});
    x.shape = {-3, 4};
    RunResult r = m->run({x, rng.f32({3, 4}), ids});
    INFO(r.message);
    CHECK_FALSE(r.ok());
  }
  SECTION("an output view of the wrong shape") {
    HostTensor x = rng.f32({3, 4}), y = rng.f32({3, 4});
    tfm_tensor in[3] = {x.view(), y.view(), ids.view()};
    HostTensor z = HostTensor::zeros(TFM_DTYPE_F32, {4, 4});
    HostTensor e = HostTensor::zeros(TFM_DTYPE_F32, {2, 4});
    tfm_tensor out[2] = {z.view(), e.view()};
    tfm_status status = tfm_model_run(m->handle(), in, 3, out, 2);
    INFO(tfm_status_message(status));
    CHECK(tfm_status_code(status) == TFM_STATUS_SHAPE_MISMATCH);
    tfm_status_free(status);
  }
  SECTION("an output that overlaps an input") {
    HostTensor x = rng.f32({3, 4}), y = rng.f32({3, 4});
    HostTensor e = HostTensor::zeros(TFM_DTYPE_F32, {2, 4});
    tfm_tensor in[3] = {x.view(), y.view(), ids.view()};
    tfm_tensor out[2] = {x.view(), e.view()};
    tfm_status status = tfm_model_run(m->handle(), in, 3, out, 2);
    INFO(tfm_status_message(status));
    CHECK(tfm_status_code(status) == TFM_STATUS_INVALID_ARGUMENT);
    tfm_status_free(status);
  }
  // After any of the above, the model still runs correctly.
  HostTensor x = rng.f32({2, 4}), y = rng.f32({2, 4});
  RunResult r = m->runOk({x, y, ids});
  CHECK(r["z"].shape == std::vector<int64_t>{2, 4});
  CHECK(allFinite(r["z"].toDoubles()));
}

TEST_CASE("embedding ids out of range are a run-time error, never an "
          "out-of-bounds read",
          "[errors]") {
  // The lookup clamps ids into [0, num - 1] (EmbeddingToLinalg.cpp) so that
  // a bad id never reads outside the table, and tfm.check_index makes the
  // model return status 1, which the runtime reports as RUNTIME_ERROR.
  Random rng(4003);
  Weights w;
  w["E"] = rng.weight({5, 3});
  std::shared_ptr<Model> m = Model::build(R"(
model bad_ids
input ids: i64[n]
e = embedding(ids, weight = "E")
output e
)",
                                          w);
  for (int64_t bad : {int64_t(-1), int64_t(5), int64_t(1000000),
                      int64_t(-1000000), std::numeric_limits<int64_t>::min(),
                      std::numeric_limits<int64_t>::max()}) {
    DYNAMIC_SECTION("id " << bad) {
      RunResult r = m->run({HostTensor::i64({5}, {0, 4, bad, 3, 2})});
      CHECK(r.code == TFM_STATUS_RUNTIME_ERROR);
      CHECK_FALSE(r.message.empty());
    }
  }
  // In range, including both ends, the same library runs fine.
  std::vector<int64_t> ids = {0, 4, 1, 3, 2};
  RunResult r = m->runOk({HostTensor::i64({5}, ids)});
  E2E_CHECK_CLOSE(r["e"], ref::embedding({5}, ids, ref::fromWeight(w["E"])),
                  0.0, 0.0);
}

TEST_CASE("scratch that cannot be allocated is a status, never a wild write",
          "[errors]") {
  // Zero-sized inputs and output, but an [n, m] product in between: its size
  // comes from the run-time dims alone (issue 8: D4, D5).
  std::shared_ptr<Model> m = Model::build(R"(
model scratch
input a: f32[n, k]
input b: f32[k, m]
input c: f32[m, j]
y = (a @ b) @ c
output y
)",
                                          {});
  auto inputs = [](int64_t n, int64_t k, int64_t mm, int64_t j) {
    return std::vector<HostTensor>{HostTensor::zeros(TFM_DTYPE_F32, {n, k}),
                                   HostTensor::zeros(TFM_DTYPE_F32, {k, mm}),
                                   HostTensor::zeros(TFM_DTYPE_F32, {mm, j})};
  };
  SECTION("a size that does not fit in 64 bits") {
    RunResult r = m->run(inputs(int64_t(1) << 40, 0, int64_t(1) << 40, 0));
    INFO(r.message);
    CHECK(r.code == TFM_STATUS_RUNTIME_ERROR);
    CHECK_THAT(r.message, Catch::Contains("scratch memory"));
  }
  SECTION("a size no allocator can give") {
    // 4 TB: representable, refused by malloc (or by the 2^56 cap).
    RunResult r = m->run(inputs(int64_t(1) << 20, 0, int64_t(1) << 20, 0));
    INFO(r.message);
    CHECK(r.code == TFM_STATUS_RUNTIME_ERROR);
    CHECK_THAT(r.message, Catch::Contains("scratch memory"));
  }
  SECTION("the same model runs where the scratch fits") {
    Random rng(4005);
    HostTensor a = rng.f32({3, 2}), b = rng.f32({2, 5}), c = rng.f32({5, 4});
    RunResult r = m->runOk({a, b, c});
    ref::Array expected =
        ref::matmul(ref::matmul(ref::fromTensor(a), ref::fromTensor(b)),
                    ref::fromTensor(c));
    E2E_CHECK_CLOSE(r["y"], expected, 1e-5, 1e-6);
  }
}

TEST_CASE("loading a missing or bogus library fails cleanly", "[errors]") {
  tfm_model *model = nullptr;
  tfm_status status = tfm_model_load(
      (std::string(TFM_E2E_TMPDIR) + "/no-such.so").c_str(), &model);
  CHECK(status != nullptr);
  CHECK(model == nullptr);
  tfm_status_free(status);

  // A compile result that is not a library.
  CompileResult c =
      compileSource("model m\ninput x: f32[2]\ny = x * 2\noutput y\n");
  TempDirGuard guard(c.dir);
  REQUIRE(c.ok);
  std::string bogus = c.dir + "/bogus.so";
  std::ofstream(bogus) << "not an ELF file";
  status = tfm_model_load(bogus.c_str(), &model);
  INFO(tfm_status_message(status));
  CHECK(status != nullptr);
  CHECK(model == nullptr);
  tfm_status_free(status);
}

//===----------------------------------------------------------------------===//
// Compile-time errors
//===----------------------------------------------------------------------===//

namespace {
/// Compiles `source` (with `weights`), expects failure, no library, and a
/// diagnostic containing `expected`.
void expectCompileError(const std::string &source, const std::string &expected,
                        const Weights &weights = {}) {
  CompileResult c = compileSource(source, weights);
  TempDirGuard guard(c.dir);
  INFO("source:\n" << source << "\ndiagnostics:\n" << c.diagnostics);
  CHECK_FALSE(c.ok);
  CHECK_FALSE(fileExists(c.libraryPath));
  CHECK_THAT(c.diagnostics, Catch::Contains("error"));
  CHECK_THAT(c.diagnostics,
             Catch::Contains(expected, Catch::CaseSensitive::No));
}

Weights someWeights() {
  Random rng(4004);
  Weights w;
  w["W"] = rng.weight({5, 4});
  w["b"] = rng.weight({5});
  return w;
}
} // namespace

TEST_CASE("malformed models fail to compile with a diagnostic", "[errors]") {
  SECTION("syntax: unclosed call") {
    expectCompileError("model m\ninput x: f32[seq, 4]\n"
                       "y = linear(x, weight = \"W\"\noutput y\n",
                       "expected", someWeights());
  }
  SECTION("syntax: unclosed string") {
    expectCompileError("model m\ninput x: f32[seq, 4]\n"
                       "y = linear(x, weight = \"W)\noutput y\n",
                       "string", someWeights());
  }
  SECTION("empty file") { expectCompileError("", "empty"); }
  SECTION("no output") {
    expectCompileError("model m\ninput x: f32[seq, 4]\ny = x * 2\n", "output");
  }
  SECTION("unknown value") {
    expectCompileError("model m\ninput x: f32[seq, 4]\ny = x + z\noutput y\n",
                       "unknown value 'z'");
  }
  SECTION("unknown function") {
    expectCompileError(
        "model m\ninput x: f32[seq, 4]\ny = swish(x)\noutput y\n",
        "unknown function 'swish'");
  }
  SECTION("unknown weight") {
    expectCompileError("model m\ninput x: f32[seq, 4]\n"
                       "y = linear(x, weight = \"nope\")\noutput y\n",
                       "unknown weight 'nope'", someWeights());
  }
  SECTION("linear: in-features mismatch") {
    expectCompileError("model m\ninput x: f32[seq, 6]\n"
                       "y = linear(x, weight = \"W\")\noutput y\n",
                       "features", someWeights());
  }
  SECTION("linear: bias of the wrong size") {
    Weights w = someWeights();
    w["b"] = Weight{{4}, std::vector<float>(4, 0.f), {}};
    expectCompileError(
        "model m\ninput x: f32[seq, 4]\n"
        "y = linear(x, weight = \"W\", bias = \"b\")\noutput y\n",
        "bias", w);
  }
  SECTION("matmul: contracted dims differ") {
    expectCompileError("model m\ninput a: f32[seq, 3]\ninput b: f32[4, 5]\n"
                       "y = a @ b\noutput y\n",
                       "matmul");
  }
  SECTION("matmul: symbolic dims differ") {
    expectCompileError("model m\ninput a: f32[s, t]\ninput b: f32[u, 5]\n"
                       "y = a @ b\noutput y\n",
                       "mismatched");
  }
  SECTION("add: shapes do not broadcast") {
    expectCompileError("model m\ninput a: f32[seq, 3]\ninput b: f32[seq, 4]\n"
                       "y = a + b\noutput y\n",
                       "broadcast");
  }
  SECTION("softmax: dim out of range") {
    expectCompileError("model m\ninput a: f32[seq, 3]\n"
                       "y = softmax(a, dim = 2)\noutput y\n",
                       "out of range");
  }
  SECTION("multi_head_attention: heads do not divide the embedding") {
    Random rng(4005);
    Weights w;
    w["in_proj_weight"] = rng.weight({24, 8});
    w["out_proj.weight"] = rng.weight({8, 8});
    expectCompileError(
        "model m\ninput x: f32[seq, 8]\n"
        "y = multi_head_attention(x, x, x, heads = 3, bias = false)\n"
        "output y\n",
        "divisible", w);
  }
  SECTION("multi_head_attention: wrong in_proj shape") {
    Random rng(4006);
    Weights w;
    w["in_proj_weight"] = rng.weight({16, 8});
    w["out_proj.weight"] = rng.weight({8, 8});
    expectCompileError(
        "model m\ninput x: f32[seq, 8]\n"
        "y = multi_head_attention(x, x, x, heads = 2, bias = false)\n"
        "output y\n",
        "in_proj_weight", w);
  }
  SECTION("concat along a symbolic dim") {
    expectCompileError("model m\ninput a: f32[seq, 3]\n"
                       "y = concat(a, a, dim = 0)\noutput y\n",
                       "symbolic");
  }
  SECTION("sdpa: key and value lengths differ") {
    expectCompileError("model m\ninput q: f32[s, 4]\ninput k: f32[t, 4]\n"
                       "input v: f32[u, 4]\ny = sdpa(q, k, v)\noutput y\n",
                       "sequence length");
  }
  SECTION("an output named like an input") {
    expectCompileError("model m\ninput x: f32[seq, 4]\noutput x\n",
                       "name of an input");
  }
  SECTION("an output named like a dimension") {
    expectCompileError(
        "model m\ninput x: f32[seq, 4]\nseq = x * 2\noutput seq\n",
        "dimension");
  }
  SECTION("name defined twice") {
    expectCompileError("model m\ninput x: f32[seq, 4]\ny = x * 2\ny = x * 3\n"
                       "output y\n",
                       "already defined");
  }
  SECTION("param declared differently from the weights file") {
    expectCompileError("model m\nparam \"W\": f32[4, 5]\ninput x: f32[seq, 4]\n"
                       "y = linear(x, weight = \"W\")\noutput y\n",
                       "declared differently", someWeights());
  }
  SECTION("a missing weights file") {
    CompileResult ok =
        compileSource("model m\ninput x: f32[2]\ny = x * 2\noutput y\n");
    TempDirGuard okGuard(ok.dir);
    REQUIRE(ok.ok);
    CompileResult c =
        compileFiles(ok.modelPath, ok.dir + "/missing.safetensors");
    TempDirGuard guard(c.dir);
    INFO(c.diagnostics);
    CHECK_FALSE(c.ok);
    CHECK_THAT(c.diagnostics, Catch::Contains("missing.safetensors"));
  }
  SECTION("a corrupt weights file") {
    CompileResult ok =
        compileSource("model m\ninput x: f32[2]\ny = x * 2\noutput y\n");
    TempDirGuard okGuard(ok.dir);
    REQUIRE(ok.ok);
    std::string bad = ok.dir + "/bad.safetensors";
    std::ofstream(bad, std::ios::binary)
        << std::string("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10);
    CompileResult c = compileFiles(ok.modelPath, bad);
    TempDirGuard guard(c.dir);
    INFO(c.diagnostics);
    CHECK_FALSE(c.ok);
    CHECK_THAT(c.diagnostics, Catch::Contains("bad.safetensors"));
  }
}
