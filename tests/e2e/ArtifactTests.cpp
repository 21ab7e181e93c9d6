//===- ArtifactTests.cpp - The compiled artifact's ABI (docs/artifact.md) -===//
//
// The typed and packed entry points and the metadata symbols of a .so called
// directly (not through the runtime), static-only models, concurrent runs,
// re-running one library at alternating shapes, and the generated C header.
//
//===----------------------------------------------------------------------===//
#include "Fixture.h"
#include "Harness.h"
#include "Reference.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

using namespace e2e;
using ref::Array;

namespace {
/// A dlopen handle that closes itself.
struct Library {
  void *handle = nullptr;
  explicit Library(const std::string &path) {
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  ~Library() {
    if (handle)
      ::dlclose(handle);
  }
  void *symbol(const char *name) const { return ::dlsym(handle, name); }
};

const char *kTypedSource = R"(
model typed
input x: f32[batch, seq, 4]
input ids: i64[seq]
y = linear(x, weight = "W", bias = "b")
e = embedding(ids, weight = "E")
s = softmax(x, dim = 1)
output y, e, s
)";

const Fixture &typedFixture() {
  static const Fixture fx = [] {
    Random rng(5001);
    Weights w;
    w["W"] = rng.weight({3, 4});
    w["b"] = rng.weight({3});
    w["E"] = rng.weight({9, 4});
    return makeFixture(kTypedSource, w);
  }();
  return fx;
}
} // namespace

TEST_CASE("the typed and packed entry points agree with tfm_model_run",
          "[artifact]") {
  const Fixture &fx = typedFixture();
  Library lib(fx.model->libraryPath());
  INFO(::dlerror());
  REQUIRE(lib.handle);

  // Metadata: the model's own accessor and tfm_artifact_metadata agree.
  using MetadataFn = const char *(*)();
  auto modelMetadata =
      reinterpret_cast<MetadataFn>(lib.symbol("tfm_typed_metadata"));
  auto artifactMetadata =
      reinterpret_cast<MetadataFn>(lib.symbol("tfm_artifact_metadata"));
  REQUIRE(modelMetadata);
  REQUIRE(artifactMetadata);
  CHECK(std::string(modelMetadata()) == artifactMetadata());
  CHECK_THAT(std::string(modelMetadata()),
             Catch::Contains("\"entry\"") &&
                 Catch::Contains("tfm_typed_run_packed") &&
                 Catch::Contains("\"batch\"") && Catch::Contains("\"seq\""));
  CHECK(tfm_model_symbol_count(fx.model->handle()) == 2);
  CHECK(std::string(tfm_model_symbol_name(fx.model->handle(), 0)) == "batch");
  CHECK(std::string(tfm_model_symbol_name(fx.model->handle(), 1)) == "seq");

  // tfm_typed_run(x, ids, y, e, s, batch, seq): inputs, outputs, symbols.
  using TypedFn = int32_t (*)(const float *, const int64_t *, float *, float *,
                              float *, int64_t, int64_t);
  using PackedFn = tfm_run_packed_fn;
  auto typed = reinterpret_cast<TypedFn>(lib.symbol("tfm_typed_run"));
  auto packed = reinterpret_cast<PackedFn>(lib.symbol("tfm_typed_run_packed"));
  REQUIRE(typed);
  REQUIRE(packed);

  for (auto [batch, seq] :
       {std::pair<int64_t, int64_t>{1, 1}, {2, 5}, {3, 40}}) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(static_cast<uint32_t>(batch * 100 + seq));
      HostTensor x = rng.f32({batch, seq, 4});
      std::vector<int64_t> idValues = rng.ids(seq, 0, 8);
      HostTensor ids = HostTensor::i64({seq}, idValues);
      RunResult viaRuntime = fx.model->runOk({x, ids});

      std::vector<float> y(size_t(batch * seq * 3), NAN),
          e(size_t(seq * 4), NAN), s(size_t(batch * seq * 4), NAN);
      const float *xp = reinterpret_cast<const float *>(x.bytes.data());
      CHECK(typed(xp, idValues.data(), y.data(), e.data(), s.data(), batch,
                  seq) == 0);
      CHECK(HostTensor::f32({batch, seq, 3}, y).bytes == viaRuntime["y"].bytes);
      CHECK(HostTensor::f32({seq, 4}, e).bytes == viaRuntime["e"].bytes);
      CHECK(HostTensor::f32({batch, seq, 4}, s).bytes == viaRuntime["s"].bytes);

      std::vector<float> y2(y.size(), NAN), e2(e.size(), NAN),
          s2(s.size(), NAN);
      void *buffers[] = {const_cast<float *>(xp), idValues.data(), y2.data(),
                         e2.data(), s2.data()};
      int64_t symbols[] = {batch, seq};
      CHECK(packed(buffers, symbols, nullptr) == 0);
      CHECK(y2 == y);
      CHECK(e2 == e);
      CHECK(s2 == s);

      Array X = ref::fromTensor(x), b = fx.w("b");
      E2E_CHECK_CLOSE(viaRuntime["y"], ref::linear(X, fx.w("W"), &b));
      E2E_CHECK_CLOSE(viaRuntime["e"],
                      ref::embedding({seq}, idValues, fx.w("E")), 0.0, 0.0);
      E2E_CHECK_CLOSE(viaRuntime["s"], ref::softmax(X, 1));
    }
  }
}

TEST_CASE("the entry points refuse negative and overflowing dims",
          "[artifact]") {
  // Descriptors built from such values made the model write out of bounds
  // (heap corruption); docs/artifact.md documents the status -1.
  const Fixture &fx = typedFixture();
  Library lib(fx.model->libraryPath());
  REQUIRE(lib.handle);
  using TypedFn = int32_t (*)(const float *, const int64_t *, float *, float *,
                              float *, int64_t, int64_t);
  auto typed = reinterpret_cast<TypedFn>(lib.symbol("tfm_typed_run"));
  auto packed =
      reinterpret_cast<tfm_run_packed_fn>(lib.symbol("tfm_typed_run_packed"));
  REQUIRE(typed);
  REQUIRE(packed);
  std::vector<float> x(64, 1.0f), y(64, NAN), e(64, NAN), s(64, NAN);
  std::vector<int64_t> ids(16, 0);
  const int64_t huge = int64_t(1) << 62;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, -1},
                            {-1, 4},
                            {-1, -1},
                            {huge, 4},
                            {4, huge},
                            {int64_t(1) << 31, int64_t(1) << 31}}) {
    INFO("batch " << batch << " seq " << seq);
    CHECK(typed(x.data(), ids.data(), y.data(), e.data(), s.data(), batch,
                seq) == -1);
    void *buffers[] = {x.data(), ids.data(), y.data(), e.data(), s.data()};
    int64_t symbols[] = {batch, seq};
    CHECK(packed(buffers, symbols, nullptr) == -1);
  }
  // Nothing was written.
  for (const std::vector<float> *out : {&y, &e, &s})
    CHECK(std::all_of(out->begin(), out->end(),
                      [](float v) { return std::isnan(v); }));
  // Zero is a valid size.
  CHECK(typed(x.data(), ids.data(), y.data(), e.data(), s.data(), 0, 0) == 0);
}

TEST_CASE("a model with only static dims", "[artifact]") {
  Random rng(5002);
  Weights w;
  w["in_proj_weight"] = rng.weight({12, 4});
  w["in_proj_bias"] = rng.weight({12});
  w["out_proj.weight"] = rng.weight({4, 4});
  w["out_proj.bias"] = rng.weight({4});
  std::shared_ptr<Model> m = Model::build(R"(
model static_only
input x: f32[2, 5, 4]
y = multi_head_attention(x, x, x, heads = 2)
z = softmax(x @ transpose(x) / sqrt(4))
output y, z
)",
                                          w);
  CHECK(tfm_model_symbol_count(m->handle()) == 0);
  HostTensor x = rng.f32({2, 5, 4});
  RunResult r = m->runOk({x});
  Array X = ref::fromTensor(x);
  Array inB = ref::fromWeight(w["in_proj_bias"]),
        outB = ref::fromWeight(w["out_proj.bias"]);
  ref::MhaWeights mw =
      ref::MhaWeights::packed(ref::fromWeight(w["in_proj_weight"]), &inB,
                              ref::fromWeight(w["out_proj.weight"]), &outB);
  E2E_CHECK_CLOSE(r["y"], ref::multiHeadAttention(X, X, X, 2, mw));
  E2E_CHECK_CLOSE(
      r["z"],
      ref::softmax(ref::scale(ref::matmul(X, ref::transpose(X, -2, -1)), 0.5),
                   -1));
  // A different static shape is rejected.
  CHECK(m->run({rng.f32({2, 6, 4})}).code == TFM_STATUS_SHAPE_MISMATCH);
}

TEST_CASE("one library re-run at alternating shapes is deterministic",
          "[artifact]") {
  static const Fixture fx = [] {
    Random rng(5003);
    Weights w;
    w["in_proj_weight"] = rng.weight({24, 8});
    w["out_proj.weight"] = rng.weight({8, 8});
    w["in_proj_bias"] = rng.weight({24});
    w["out_proj.bias"] = rng.weight({8});
    return makeFixture(R"(
model alternating
input x: f32[batch, seq, 8]
y = multi_head_attention(x, x, x, heads = 2)
output y
)",
                       w);
  }();
  Array inB = fx.w("in_proj_bias"), outB = fx.w("out_proj.bias");
  ref::MhaWeights mw = ref::MhaWeights::packed(fx.w("in_proj_weight"), &inB,
                                               fx.w("out_proj.weight"), &outB);
  std::map<std::pair<int64_t, int64_t>, std::vector<unsigned char>> first;
  const std::pair<int64_t, int64_t> order[] = {
      {1, 300}, {2, 1}, {1, 300}, {3, 7}, {2, 1}, {3, 7}, {1, 300}};
  for (auto [batch, seq] : order) {
    INFO("batch " << batch << " seq " << seq);
    Random rng(static_cast<uint32_t>(batch * 1000 + seq));
    HostTensor x = rng.f32({batch, seq, 8});
    RunResult r = fx.model->runOk({x});
    auto key = std::make_pair(batch, seq);
    if (!first.count(key)) {
      first[key] = r["y"].bytes;
      Array X = ref::fromTensor(x);
      E2E_CHECK_CLOSE(r["y"], ref::multiHeadAttention(X, X, X, 2, mw));
    } else {
      CHECK(r["y"].bytes == first[key]);
    }
  }
}

TEST_CASE("concurrent runs on one model", "[artifact]") {
  static const Fixture fx = [] {
    Random rng(5004);
    Weights w;
    w["Wq"] = rng.weight({8, 6});
    w["Wk"] = rng.weight({8, 6});
    w["Wv"] = rng.weight({5, 6});
    return makeFixture(R"(
model concurrent
input x: f32[seq, 6]
y = sdpa(linear(x, weight = "Wq"), linear(x, weight = "Wk"), linear(x, weight = "Wv"))
output y
)",
                       w);
  }();
  const int64_t seqs[] = {1, 17, 120, 300};
  std::vector<HostTensor> inputs;
  for (int64_t seq : seqs) {
    Random rng(static_cast<uint32_t>(seq));
    inputs.push_back(rng.f32({seq, 6}));
  }
  const int rounds = 6;
  std::vector<std::vector<RunResult>> results(std::size(seqs));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < std::size(seqs); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < rounds; ++i)
        results[t].push_back(fx.model->run({inputs[t]}));
    });
  for (std::thread &t : threads)
    t.join();
  for (size_t t = 0; t < std::size(seqs); ++t) {
    INFO("thread " << t << " seq " << seqs[t]);
    Array X = ref::fromTensor(inputs[t]);
    Array y = ref::sdpa(ref::linear(X, fx.w("Wq")), ref::linear(X, fx.w("Wk")),
                        ref::linear(X, fx.w("Wv")));
    for (int i = 0; i < rounds; ++i) {
      INFO("round " << i << ": " << results[t][size_t(i)].message);
      REQUIRE(results[t][size_t(i)].ok());
      E2E_CHECK_CLOSE(results[t][size_t(i)]["y"], y);
    }
  }
}

//===----------------------------------------------------------------------===//
// The generated header
//===----------------------------------------------------------------------===//

namespace {
/// Compiles `source` to a library and a header, then compiles a C file that
/// includes the header and uses its macros and declarations with the C
/// compiler (and, as C++, with the C++ compiler). Returns the compilers'
/// output, empty when both succeed.
struct HeaderCheck {
  bool compiled = false;
  std::string diagnostics;
  /// The C/C++ compilers' complaints, empty when the header is fine.
  std::string problems;
};

HeaderCheck checkHeader(const std::string &source, const std::string &use,
                        const Weights &weights = {}) {
  BuildOptions options;
  options.header = true;
  CompileResult c = compileSource(source, weights, options);
  HeaderCheck result;
  result.compiled = c.ok;
  result.diagnostics = c.diagnostics;
  if (!c.ok) {
    removeTempDir(c.dir);
    return result;
  }
  std::string file = c.dir + "/use.c";
  std::ofstream(file) << "#include \"" << c.headerPath << "\"\n"
                      << "int use(void);\n"
                      << "int use(void) {\n"
                      << use << "\n  return 0;\n}\n";
  std::string out = c.dir + "/cc.txt";
  std::string problems;
  for (const std::string &cmd :
       {std::string(TFM_C_COMPILER) +
            " -std=c99 -Wall -Wextra -pedantic -Werror -fsyntax-only " + file,
        std::string(TFM_CXX_COMPILER) +
            " -x c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only " + file}) {
    int rc = std::system((cmd + " > " + out + " 2>&1").c_str());
    if (rc != 0) {
      std::ifstream in(out);
      std::stringstream ss;
      ss << in.rdbuf();
      problems += "$ " + cmd + "\n" + ss.str();
    }
  }
  if (!problems.empty()) {
    std::ifstream in(c.headerPath);
    std::stringstream ss;
    ss << in.rdbuf();
    problems += "\nheader:\n" + ss.str();
  }
  removeTempDir(c.dir);
  result.problems = problems;
  return result;
}

/// A model whose names would clash in C must either compile to a header
/// that C and C++ accept, or be rejected with a diagnostic about the names.
void checkClash(const std::string &source) {
  HeaderCheck h = checkHeader(source, "");
  INFO("compiled: " << h.compiled << "\ndiagnostics:\n"
                    << h.diagnostics << "\nheader problems:\n"
                    << h.problems);
  if (h.compiled)
    CHECK(h.problems.empty());
  else
    CHECK_THAT(h.diagnostics, Catch::Contains("name"));
}
} // namespace

TEST_CASE("the generated header compiles as C99 and C++", "[artifact]") {
  HeaderCheck h = checkHeader(
      R"(
model hdr
input ids: i64[batch, seq]
input mask: f32[batch, seq, 4]
p = softmax(mask, dim = -1)
q = mask * 2
output p, q
)",
      "  int64_t n = TFM_HDR_MASK_COUNT(2, 3) + TFM_HDR_P_RANK;\n"
      "  int32_t (*run)(const int64_t *, const float *, float *, float *,"
      " int64_t, int64_t) = tfm_hdr_run;\n"
      "  const char *(*meta)(void) = tfm_hdr_metadata;\n"
      "  (void)n; (void)run; (void)tfm_hdr_run_packed; (void)meta;");
  INFO(h.diagnostics << h.problems);
  REQUIRE(h.compiled);
  CHECK(h.problems.empty());
}

TEST_CASE("the generated header passes bf16 and f16 as uint16_t, i8 as "
          "int8_t",
          "[header]") {
  // A function pointer of the wrong type does not compile (-Werror in C).
  HeaderCheck h = checkHeader(
      R"(
model half
input x: bf16[seq, 4]
input h: f16[seq, 4]
input q: i8[seq]
y = x * 2
g = cast(h, f32) + 1
r = -q
output y, g, r
)",
      "  int32_t (*run)(const uint16_t *, const uint16_t *, const int8_t *,"
      " uint16_t *, float *, int8_t *, int64_t) = tfm_half_run;\n"
      "  int64_t n = TFM_HALF_X_COUNT(3) + TFM_HALF_R_RANK;\n"
      "  (void)run; (void)n;");
  INFO(h.diagnostics << h.problems);
  REQUIRE(h.compiled);
  CHECK(h.problems.empty());
}

TEST_CASE("the generated header survives names that clash in C", "[header]") {
  // Valid-looking .tfm names that a naive header turns into invalid C: a
  // symbol that is also a tensor name (two parameters called `n`), tensors
  // named like C/C++ keywords, and names that differ only in case (the same
  // _RANK/_COUNT macros). Each must give a usable header or a clean error.
  SECTION("a symbol named like an input") {
    checkClash("model clash1\ninput n: f32[n, 2]\ny = n * 2\noutput y\n");
  }
  SECTION("inputs named like C and C++ keywords") {
    checkClash(
        "model clash2\ninput int: f32[seq, 2]\ninput default: f32[seq, 2]\n"
        "input new: f32[seq, 2]\ny = int + default + new\noutput y\n");
  }
  SECTION("an output named like a C keyword") {
    checkClash("model clash4\ninput x: f32[seq, 2]\nregister = x * 2\n"
               "output register\n");
  }
  SECTION("names that differ only in case") {
    checkClash(
        "model clash3\ninput x: f32[seq, 2]\nX = transpose(x)\noutput X\n");
  }
  SECTION("names reserved in C or taken by <stdint.h>") {
    for (const char *name :
         {"_Bool", "int64_t", "size_t", "private", "and", "typeof", "NULL",
          "INT64_MAX", "__x", "TFM_EXEC_DEFINED", "uint8_t"}) {
      DYNAMIC_SECTION(name) {
        checkClash(std::string("model clash5\ninput ") + name +
                   ": f32[seq, 2]\ny = relu(" + name + ")\noutput y\n");
      }
    }
  }
  SECTION("a symbol and tensors whose C names would collide") {
    // int64_t becomes int64_t_, which must not land on the input int64_t_.
    checkClash("model clash6\ninput int64_t: f32[seq, 2]\n"
               "input int64_t_: f32[seq, 2]\ny = int64_t + int64_t_\n"
               "output y\n");
  }
}

TEST_CASE("weight names cannot inject code into the generated header",
          "[header]") {
  // The weight's name lands in the comment that lists the run-time checks.
  const std::string name = "x */ int tfm_injected(void) { return 42; } /* y";
  // Braces are doubled in the model's string: `{...}` interpolates.
  const std::string spelled =
      "x */ int tfm_injected(void) {{ return 42; }} /* y";
  Weights w;
  w[name] = Random(5010).weight({6, 4});
  HeaderCheck h = checkHeader("model inj\ninput t: i64[seq]\n"
                              "y = embedding(t, weight = \"" +
                                  spelled + "\")\noutput y\n",
                              "  return tfm_injected();", w);
  INFO(h.diagnostics);
  REQUIRE(h.compiled);
  // The use of tfm_injected must fail: it was not declared.
  CHECK_THAT(h.problems, Catch::Contains("tfm_injected"));
}

//===----------------------------------------------------------------------===//
// Parallel work through tfm_exec
//===----------------------------------------------------------------------===//

namespace {
/// A parallel_for that runs one index at a time, last first, on the calling
/// thread, and counts the tasks it ran.
struct ReverseExec {
  std::atomic<int64_t> tasks{0};
  tfm_exec exec{TFM_EXEC_ABI_VERSION, 1, &ReverseExec::parallelFor, this};
  static void parallelFor(void *context, int64_t count, tfm_task_fn task,
                          void *args) {
    auto *self = static_cast<ReverseExec *>(context);
    for (int64_t i = count; i-- > 0;) {
      task(args, i, i + 1);
      ++self->tasks;
    }
  }
};

/// A parallel_for that starts one std::thread per chunk of 3 indices.
struct ThreadPerChunkExec {
  tfm_exec exec{TFM_EXEC_ABI_VERSION, 4, &ThreadPerChunkExec::parallelFor,
                this};
  static void parallelFor(void *, int64_t count, tfm_task_fn task, void *args) {
    std::vector<std::thread> threads;
    for (int64_t b = 0; b < count; b += 3)
      threads.emplace_back([=] { task(args, b, std::min(count, b + 3)); });
    for (std::thread &t : threads)
      t.join();
  }
};

} // namespace

TEST_CASE("runs on a thread pool or any parallel_for match serial runs",
          "[threads][both]") {
  static const char *source = R"(
model threaded
input x: f32[batch, seq, 16]
input mem: f32[batch, mseq, 16]
mha = multi_head_attention(x, x, x, heads = 4, weights = "mha")
cross = multi_head_attention(x, mem, mem, heads = 2, weights = "mha")
q = linear(x, weight = "Wq")
k = linear(x, weight = "Wk")
v = linear(x, weight = "Wv")
chain = softmax(q @ transpose(k, -2, -1) / sqrt(24), dim = -1) @ v
s = sdpa(q, linear(mem, weight = "Wk"), linear(mem, weight = "Wv"), scale = 0.1)
output mha, cross, chain, s
)";
  static const Weights weights = [] {
    Random rng(5005);
    Weights w;
    w["mha.in_proj_weight"] = rng.weight({48, 16});
    w["mha.in_proj_bias"] = rng.weight({48});
    w["mha.out_proj.weight"] = rng.weight({16, 16});
    w["mha.out_proj.bias"] = rng.weight({16});
    w["Wq"] = rng.weight({24, 16});
    w["Wk"] = rng.weight({24, 16});
    w["Wv"] = rng.weight({28, 16});
    return w;
  }();
  // Unfused and fused: only the fused attention kernels hand work to
  // parallel_for.
  auto build = [&](bool fuse) {
    BuildOptions options;
    options.fuseAttention = fuse;
    return Model::build(source, weights, options);
  };
  static const std::shared_ptr<Model> models[] = {build(false), build(true)};
  auto w = [&](const std::string &name) {
    return ref::fromWeight(weights.at(name));
  };
  Array inB = w("mha.in_proj_bias"), outB = w("mha.out_proj.bias");
  ref::MhaWeights mw = ref::MhaWeights::packed(w("mha.in_proj_weight"), &inB,
                                               w("mha.out_proj.weight"), &outB);
  Pool pool2(2), pool4(4);
  struct Shape {
    int64_t batch, seq, mseq;
  };
  const Shape shapes[] = {{1, 1, 1}, {3, 17, 5}, {2, 130, 70}, {1, 1031, 9}};
  for (Shape sh : shapes) {
    DYNAMIC_SECTION("batch " << sh.batch << " seq " << sh.seq << " mseq "
                             << sh.mseq) {
      Random rng(
          static_cast<uint32_t>(sh.batch * 1000003 + sh.seq * 101 + sh.mseq));
      HostTensor x = rng.f32({sh.batch, sh.seq, 16}),
                 mem = rng.f32({sh.batch, sh.mseq, 16});
      Array X = ref::fromTensor(x), M = ref::fromTensor(mem);
      Array q = ref::linear(X, w("Wq"));
      std::map<std::string, Array> expected = {
          {"mha", ref::multiHeadAttention(X, X, X, 4, mw)},
          {"cross", ref::multiHeadAttention(X, M, M, 2, mw)},
          {"chain",
           ref::sdpa(q, ref::linear(X, w("Wk")), ref::linear(X, w("Wv")))},
          {"s", ref::sdpa(q, ref::linear(M, w("Wk")), ref::linear(M, w("Wv")),
                          0.1)}};

      for (size_t m = 0; m < std::size(models); ++m) {
        INFO((m ? "fused" : "unfused"));
        RunResult serial = models[m]->runOk({x, mem});
        for (const auto &[name, ref] : expected)
          E2E_CHECK_CLOSE(serial[name], ref);

        ReverseExec reverse;
        ThreadPerChunkExec chunks;
        tfm_exec nullFor{TFM_EXEC_ABI_VERSION, 1, nullptr, nullptr};
        const std::pair<const char *, const tfm_exec *> execs[] = {
            {"pool of 2", pool2.exec()},
            {"pool of 4", pool4.exec()},
            {"reverse single-index parallel_for", &reverse.exec},
            {"thread per chunk of 3", &chunks.exec},
            {"NULL parallel_for", &nullFor}};
        for (auto [name, exec] : execs) {
          INFO("exec: " << name);
          RunResult r = models[m]->runOk({x, mem}, exec);
          // Tasks write disjoint parts of the outputs (docs/artifact.md), so
          // the split cannot change a single bit.
          for (const auto &[out, ref] : expected) {
            INFO("output " << out);
            CHECK(r[out].bytes == serial[out].bytes);
          }
        }
        if (m == 1) {
          INFO("the fused model never called parallel_for");
          CHECK(reverse.tasks.load() > 0);
        }
      }
    }
  }
}

TEST_CASE("an exec with the wrong abi_version is rejected", "[threads]") {
  const Fixture &fx = typedFixture();
  tfm_exec bad{TFM_EXEC_ABI_VERSION + 1, 1, nullptr, nullptr};
  Random rng(5006);
  RunResult r =
      fx.model->run({rng.f32({1, 2, 4}), HostTensor::i64({2}, {0, 1})}, &bad);
  INFO(r.message);
  CHECK(r.code == TFM_STATUS_INVALID_ARGUMENT);
}
