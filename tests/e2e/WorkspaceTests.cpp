//===- WorkspaceTests.cpp - Runs in the caller's workspace ----------------===//
//
// The _with_workspace entry points and tfm_model_run's reused workspaces
// (docs/artifact.md, docs/embedding.md): with a workspace of
// _workspace_size bytes a run allocates nothing, counted by the interposed
// malloc of AllocationCounter.cpp; results are those of a run without one
// and match the float64 reference; workspaces that cannot serve are refused
// with a status, never written out of bounds.
//
//===----------------------------------------------------------------------===//
#include "AllocationCounter.h"
#include "Fixture.h"
#include "Harness.h"
#include "Reference.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

using namespace e2e;
using ref::Array;

namespace {
struct Library {
  void *handle = nullptr;
  explicit Library(const std::string &path) {
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  ~Library() {
    if (handle)
      ::dlclose(handle);
  }
  template <typename Fn> Fn symbol(const char *name) const {
    return reinterpret_cast<Fn>(::dlsym(handle, name));
  }
};

/// A 64-byte aligned buffer of `bytes` followed by `guard` bytes of a known
/// pattern, which a run must leave alone.
struct Workspace {
  static constexpr unsigned char kPattern = 0xA5;
  unsigned char *data = nullptr;
  int64_t bytes, guard;
  Workspace(int64_t bytes, int64_t guard = 256) : bytes(bytes), guard(guard) {
    size_t total = size_t(bytes + guard + 63) / 64 * 64;
    data = static_cast<unsigned char *>(std::aligned_alloc(64, total));
    std::memset(data, kPattern, size_t(bytes + guard));
  }
  ~Workspace() { std::free(data); }
  Workspace(const Workspace &) = delete;
  Workspace &operator=(const Workspace &) = delete;
  bool guardIntact() const {
    for (int64_t i = bytes; i < bytes + guard; ++i)
      if (data[i] != kPattern)
        return false;
    return true;
  }
};

// Projections, attention and a linear layer: scratch for q, k, v, the
// attention and its projection, all sized by batch and seq.
const char *kSource = R"(
model ws
input x: f32[batch, seq, 8]
a = multi_head_attention(x, x, x, heads = 2)
y = linear(a, weight = "W", bias = "b")
output y
)";

const Fixture &fixture() {
  static const Fixture fx = [] {
    Random rng(7101);
    Weights w;
    w["in_proj_weight"] = rng.weight({24, 8});
    w["in_proj_bias"] = rng.weight({24});
    w["out_proj.weight"] = rng.weight({8, 8});
    w["out_proj.bias"] = rng.weight({8});
    w["W"] = rng.weight({5, 8});
    w["b"] = rng.weight({5});
    return makeFixture(kSource, w);
  }();
  return fx;
}

Array reference(const Fixture &fx, const HostTensor &x) {
  Array X = ref::fromTensor(x);
  Array inB = fx.w("in_proj_bias"), outB = fx.w("out_proj.bias"), b = fx.w("b");
  ref::MhaWeights mw = ref::MhaWeights::packed(fx.w("in_proj_weight"), &inB,
                                               fx.w("out_proj.weight"), &outB);
  return ref::linear(ref::multiHeadAttention(X, X, X, 2, mw), fx.w("W"), &b);
}

using SizeFn = int64_t (*)(int64_t, int64_t);
using RunFn = int32_t (*)(const float *, float *, int64_t, int64_t);
using RunWorkspaceFn = int32_t (*)(const float *, float *, int64_t, int64_t,
                                   void *, int64_t);

// Odd sizes: no dim is a multiple of a vector, a block or a cache line.
const std::pair<int64_t, int64_t> kDims[] = {{1, 1}, {2, 7}, {3, 33}, {1, 129}};
} // namespace

TEST_CASE("a run in a workspace of _workspace_size bytes allocates nothing",
          "[workspace]") {
  REQUIRE(AllocationCounter::active());
  const Fixture &fx = fixture();
  Library lib(fx.model->libraryPath());
  REQUIRE(lib.handle);
  auto size = lib.symbol<SizeFn>("tfm_ws_workspace_size");
  auto sizePacked =
      lib.symbol<tfm_workspace_size_fn>("tfm_ws_workspace_size_packed");
  auto run = lib.symbol<RunFn>("tfm_ws_run");
  auto runWorkspace = lib.symbol<RunWorkspaceFn>("tfm_ws_run_with_workspace");
  auto runPacked = lib.symbol<tfm_run_packed_workspace_fn>(
      "tfm_ws_run_packed_with_workspace");
  REQUIRE(size);
  REQUIRE(sizePacked);
  REQUIRE(run);
  REQUIRE(runWorkspace);
  REQUIRE(runPacked);

  int64_t largest = 0;
  for (auto [batch, seq] : kDims) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(uint32_t(batch * 1000 + seq));
      HostTensor x = rng.f32({batch, seq, 8});
      const float *xp = reinterpret_cast<const float *>(x.bytes.data());
      size_t count = size_t(batch * seq * 5);
      int64_t symbols[] = {batch, seq};

      int64_t bytes = size(batch, seq);
      INFO("workspace_size = " << bytes);
      CHECK(bytes > 0);
      CHECK(sizePacked(symbols) == bytes);
      largest = std::max(largest, bytes);

      // Without a workspace the run allocates its scratch itself: one block
      // per run. (The first call into the library also binds its symbols,
      // which allocates; the second shows the run alone.)
      std::vector<float> plain(count, NAN);
      REQUIRE(run(xp, plain.data(), batch, seq) == 0);
      int64_t plainAllocations;
      int32_t rc;
      {
        // Nothing but the call while counting: Catch's assertions allocate.
        AllocationCounter counter;
        rc = run(xp, plain.data(), batch, seq);
        plainAllocations = counter.count();
      }
      REQUIRE(rc == 0);
      CHECK(plainAllocations == 1);

      Workspace ws(bytes);
      std::vector<float> y(count, NAN);
      int64_t allocations;
      {
        AllocationCounter counter;
        rc = runWorkspace(xp, y.data(), batch, seq, ws.data, bytes);
        allocations = counter.count();
      }
      CHECK(rc == 0);
      CHECK(allocations == 0);
      CHECK(ws.guardIntact());
      CHECK(y == plain);
      E2E_CHECK_CLOSE(HostTensor::f32({batch, seq, 5}, y), reference(fx, x));

      // The packed form, and a second run in the same workspace.
      std::vector<float> y2(count, NAN);
      void *buffers[] = {const_cast<float *>(xp), y2.data()};
      {
        AllocationCounter counter;
        rc = runPacked(buffers, symbols, nullptr, ws.data, bytes);
        allocations = counter.count();
      }
      CHECK(rc == 0);
      CHECK(allocations == 0);
      CHECK(y2 == plain);

      // One byte short: refused before anything runs.
      std::vector<float> untouched(count, NAN);
      CHECK(runWorkspace(xp, untouched.data(), batch, seq, ws.data,
                         bytes - 1) == -4);
      CHECK(std::all_of(untouched.begin(), untouched.end(),
                        [](float v) { return std::isnan(v); }));
      CHECK(ws.guardIntact());
    }
  }

  SECTION("a workspace sized for larger dims serves smaller ones") {
    int64_t big = size(3, 129);
    for (auto [batch, seq] : kDims)
      CHECK(size(batch, seq) <= big);
    Workspace ws(big);
    Random rng(7102);
    HostTensor x = rng.f32({2, 7, 8});
    std::vector<float> y(2 * 7 * 5, NAN);
    int32_t rc;
    int64_t allocations;
    {
      AllocationCounter counter;
      rc = runWorkspace(reinterpret_cast<const float *>(x.bytes.data()),
                        y.data(), 2, 7, ws.data, big);
      allocations = counter.count();
    }
    CHECK(rc == 0);
    CHECK(allocations == 0);
    E2E_CHECK_CLOSE(HostTensor::f32({2, 7, 5}, y), reference(fx, x));
  }

  SECTION("workspaces the model cannot use are refused") {
    int64_t bytes = size(2, 7);
    Workspace ws(bytes + 64);
    std::vector<float> x(2 * 7 * 8, 0.5f), y(2 * 7 * 5, NAN);
    // NULL with a size, a negative size, a pointer off 64 bytes.
    CHECK(runWorkspace(x.data(), y.data(), 2, 7, nullptr, bytes) == -3);
    CHECK(runWorkspace(x.data(), y.data(), 2, 7, ws.data, -1) == -3);
    CHECK(runWorkspace(x.data(), y.data(), 2, 7, ws.data + 1, bytes) == -3);
    CHECK(runWorkspace(x.data(), y.data(), 2, 7, ws.data + 32, bytes) == -3);
    CHECK(
        std::all_of(y.begin(), y.end(), [](float v) { return std::isnan(v); }));
    // Bad dims come first, as in _run.
    CHECK(runWorkspace(x.data(), y.data(), -1, 7, ws.data, bytes) == -1);
    // NULL and 0: no workspace, the run allocates its own.
    int32_t rc;
    int64_t allocations;
    {
      AllocationCounter counter;
      rc = runWorkspace(x.data(), y.data(), 2, 7, nullptr, 0);
      allocations = counter.count();
    }
    CHECK(rc == 0);
    CHECK(allocations == 1);
  }

  SECTION("sizes for bad dims are negative") {
    CHECK(size(-1, 4) == -1);
    CHECK(size(4, -1) == -1);
    // Tensors too large to address: refused as the run entry points do.
    CHECK(size(int64_t(1) << 40, int64_t(1) << 40) == -1);
    CHECK(size(0, 0) >= 0);
    CHECK(size(0, 5) >= 0);
  }
}

TEST_CASE("a model without planned scratch needs no workspace", "[workspace]") {
  Random rng(7103);
  Weights w;
  w["W"] = rng.weight({3, 4});
  std::shared_ptr<Model> m = Model::build(R"(
model direct
input x: f32[n, 4]
y = linear(x, weight = "W")
output y
)",
                                          w);
  Library lib(m->libraryPath());
  REQUIRE(lib.handle);
  auto size = lib.symbol<int64_t (*)(int64_t)>("tfm_direct_workspace_size");
  auto runWorkspace =
      lib.symbol<int32_t (*)(const float *, float *, int64_t, void *, int64_t)>(
          "tfm_direct_run_with_workspace");
  REQUIRE(size);
  REQUIRE(runWorkspace);
  CHECK(size(17) == 0);
  CHECK(size(-2) == -1);
  HostTensor x = rng.f32({17, 4});
  std::vector<float> y(17 * 3, NAN);
  alignas(64) static unsigned char one[64];
  // The first call binds the library's symbols, which allocates.
  CHECK(runWorkspace(reinterpret_cast<const float *>(x.bytes.data()), y.data(),
                     17, one, 0) == 0);
  int32_t rc;
  int64_t allocations;
  {
    AllocationCounter counter;
    rc = runWorkspace(reinterpret_cast<const float *>(x.bytes.data()), y.data(),
                      17, nullptr, 0);
    allocations = counter.count();
  }
  CHECK(rc == 0);
  CHECK(allocations == 0);
  // The workspace is checked even when the model needs none.
  CHECK(runWorkspace(reinterpret_cast<const float *>(x.bytes.data()), y.data(),
                     17, nullptr, 64) == -3);
  Array W = ref::fromWeight(w["W"]);
  E2E_CHECK_CLOSE(HostTensor::f32({17, 3}, y),
                  ref::linear(ref::fromTensor(x), W));
}

namespace {
/// tfm_model_run on preallocated outputs, counting the allocations.
int64_t countedRun(const tfm_model *model, const HostTensor &x,
                   std::vector<float> &y, tfm_status_code_t &code) {
  tfm_tensor in = x.view();
  tfm_tensor out = {TFM_DTYPE_F32, 3, {x.shape[0], x.shape[1], 5}, y.data()};
  AllocationCounter counter;
  tfm_status status = tfm_model_run(model, &in, 1, &out, 1);
  int64_t allocations = counter.count();
  code = tfm_status_code(status);
  tfm_status_free(status);
  return allocations;
}
} // namespace

TEST_CASE("tfm_model_run allocates its workspace once per model",
          "[workspace]") {
  const Fixture &fx = fixture();
  const tfm_model *model = fx.model->handle();
  Random rng(7104);
  HostTensor small = rng.f32({2, 7, 8}), large = rng.f32({3, 33, 8});
  std::vector<float> ySmall(2 * 7 * 5, NAN), yLarge(3 * 33 * 5, NAN);
  tfm_status_code_t code;

  // The first run of these shapes may allocate (the workspace, the
  // runtime's arrays); the next ones reuse them.
  countedRun(model, small, ySmall, code);
  REQUIRE(code == TFM_STATUS_OK);
  CHECK(countedRun(model, small, ySmall, code) == 0);
  CHECK(code == TFM_STATUS_OK);
  E2E_CHECK_CLOSE(HostTensor::f32({2, 7, 5}, ySmall), reference(fx, small));

  // Larger shapes grow the workspace once; smaller ones fit in it.
  CHECK(countedRun(model, large, yLarge, code) >= 1);
  CHECK(code == TFM_STATUS_OK);
  CHECK(countedRun(model, large, yLarge, code) == 0);
  CHECK(countedRun(model, small, ySmall, code) == 0);
  CHECK(code == TFM_STATUS_OK);
  E2E_CHECK_CLOSE(HostTensor::f32({3, 33, 5}, yLarge), reference(fx, large));
}

TEST_CASE("tfm_model_run_with_workspace runs in the caller's memory",
          "[workspace]") {
  const Fixture &fx = fixture();
  const tfm_model *model = fx.model->handle();
  Random rng(7105);
  HostTensor x = rng.f32({3, 33, 8});
  tfm_tensor in = x.view();
  std::vector<float> y(3 * 33 * 5, NAN);
  tfm_tensor out = {TFM_DTYPE_F32, 3, {3, 33, 5}, y.data()};

  int64_t bytes = -1;
  REQUIRE(tfm_model_workspace_size(model, &in, 1, &bytes) == nullptr);
  Library lib(fx.model->libraryPath());
  REQUIRE(lib.handle);
  CHECK(bytes == lib.symbol<SizeFn>("tfm_ws_workspace_size")(3, 33));

  Workspace ws(bytes);
  {
    tfm_status status;
    int64_t allocations;
    {
      AllocationCounter counter;
      status = tfm_model_run_with_workspace(model, &in, 1, &out, 1, nullptr,
                                            ws.data, bytes);
      allocations = counter.count();
    }
    INFO(tfm_status_message(status));
    CHECK(status == nullptr);
    CHECK(allocations == 0);
    tfm_status_free(status);
  }
  CHECK(ws.guardIntact());
  E2E_CHECK_CLOSE(HostTensor::f32({3, 33, 5}, y), reference(fx, x));

  auto refused = [&](void *data, int64_t size, const char *says) {
    tfm_status status = tfm_model_run_with_workspace(model, &in, 1, &out, 1,
                                                     nullptr, data, size);
    INFO(tfm_status_message(status));
    CHECK(tfm_status_code(status) == TFM_STATUS_INVALID_ARGUMENT);
    CHECK_THAT(tfm_status_message(status), Catch::Contains(says));
    tfm_status_free(status);
  };
  refused(ws.data, bytes - 1, "needs");
  refused(ws.data + 8, bytes, "aligned");
  refused(nullptr, 64, "NULL");
  refused(ws.data, -64, "-64 bytes");
  // Over the output: the model would overwrite one with the other.
  Workspace outputs(int64_t(y.size() * sizeof(float)) + bytes);
  out.data = outputs.data;
  refused(outputs.data, bytes, "overlaps output 'y'");
  out.data = y.data();

  // NULL and 0 fall back to the model's own workspaces.
  tfm_status status =
      tfm_model_run_with_workspace(model, &in, 1, &out, 1, nullptr, nullptr, 0);
  CHECK(status == nullptr);
  tfm_status_free(status);
  CHECK(tfm_model_workspace_size(model, &in, 1, nullptr) != nullptr);
}
