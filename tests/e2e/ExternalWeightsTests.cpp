//===- ExternalWeightsTests.cpp - --weights-mode external -------*- C++ -*-===//
//
// A model compiled with external weights computes what the embedded one does
// (both against the float64 reference), its artifact holds no weight bytes,
// and the runtime refuses weights files the model was not compiled with (a
// wrong shape, dtype or content, a truncated file, another model's file)
// with a message naming the tensor.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"
#include "Reference.h"

#include "tfm/safetensors.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <sys/stat.h>

using namespace e2e;
using ref::Array;

namespace {
// An embedding table (read by index, unpacked), attention and a linear
// layer (packed), so that the sidecar holds both kinds of constants.
const char *kSource = R"(
model xw
input ids: i64[batch, seq]
e = embedding(ids, weight = "E")
a = multi_head_attention(e, e, e, heads = 2)
y = linear(a, weight = "W", bias = "b")
output y
)";

constexpr int64_t kVocab = 37, kDim = 16, kOut = 9;

Weights makeWeights(uint32_t seed, int64_t outRows = kOut) {
  Random rng(seed);
  Weights w;
  w["E"] = rng.weight({kVocab, kDim});
  w["in_proj_weight"] = rng.weight({3 * kDim, kDim});
  w["in_proj_bias"] = rng.weight({3 * kDim});
  w["out_proj.weight"] = rng.weight({kDim, kDim});
  w["out_proj.bias"] = rng.weight({kDim});
  w["W"] = rng.weight({outRows, kDim});
  w["b"] = rng.weight({outRows});
  return w;
}

Array reference(const Weights &weights, int64_t batch, int64_t seq,
                const std::vector<int64_t> &ids) {
  auto w = [&](const char *name) { return ref::fromWeight(weights.at(name)); };
  Array e = ref::embedding({batch, seq}, ids, w("E"));
  Array inB = w("in_proj_bias"), outB = w("out_proj.bias"), b = w("b");
  ref::MhaWeights mw = ref::MhaWeights::packed(w("in_proj_weight"), &inB,
                                               w("out_proj.weight"), &outB);
  return ref::linear(ref::multiHeadAttention(e, e, e, 2, mw), w("W"), &b);
}

int64_t fileSize(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 ? int64_t(info.st_size) : -1;
}

/// A compiled external-weights model, not loaded.
struct Compiled {
  CompileResult result;
  TempDirGuard guard;
  explicit Compiled(const Weights &weights, bool external = true)
      : result(compileSource(kSource, weights,
                             [&] {
                               BuildOptions options;
                               options.externalWeights = external;
                               return options;
                             }())),
        guard(result.dir) {
    INFO(result.diagnostics);
    REQUIRE(result.ok);
  }
};

/// Loads `artifact` with `weights`; returns the status code and message.
std::pair<tfm_status_code_t, std::string> load(const std::string &artifact,
                                               const std::string &weights) {
  tfm_model *model = nullptr;
  tfm_status status = tfm_model_load_with_weights(
      artifact.c_str(), weights.empty() ? nullptr : weights.c_str(), &model);
  std::pair<tfm_status_code_t, std::string> result{
      tfm_status_code(status),
      status ? tfm_status_message(status) : std::string()};
  tfm_status_free(status);
  tfm_model_release(model);
  return result;
}

/// Rewrites the safetensors file `from` to `to`, letting `edit` change each
/// entry (and its bytes, in `data`) first.
void rewrite(const std::string &from, const std::string &to,
             const std::function<void(tfm::SafeTensorWriteEntry &,
                                      std::vector<char> &)> &edit,
             const std::map<std::string, std::string> &metadata = {}) {
  std::string error;
  auto file = tfm::SafeTensorsFile::open(from, error);
  REQUIRE(file);
  std::vector<std::vector<char>> datas;
  std::vector<tfm::SafeTensorWriteEntry> entries;
  datas.reserve(file->entries().size());
  for (const tfm::SafeTensorEntry &e : file->entries()) {
    const char *bytes = static_cast<const char *>(e.data);
    datas.emplace_back(bytes, bytes + e.byteSize);
    entries.push_back({e.name, e.dtype, e.shape, nullptr});
    edit(entries.back(), datas.back());
    entries.back().data = datas.back().data();
  }
  REQUIRE(tfm::writeSafeTensors(
      to, entries, error, metadata.empty() ? file->metadata() : metadata));
}
} // namespace

TEST_CASE("external weights compute what embedded weights do",
          "[weights][artifact]") {
  Weights weights = makeWeights(9101);
  std::shared_ptr<Model> embedded = Model::build(kSource, weights);
  BuildOptions options;
  options.externalWeights = true;
  std::shared_ptr<Model> external = Model::build(kSource, weights, options);
  Random rng(9102);
  // Odd shapes: nothing a multiple of a vector or a block.
  for (auto [batch, seq] :
       {std::pair<int64_t, int64_t>{1, 1}, {2, 7}, {3, 33}}) {
    CAPTURE(batch, seq);
    std::vector<int64_t> ids = rng.ids(batch * seq, 0, kVocab - 1);
    HostTensor input = HostTensor::i64({batch, seq}, ids);
    RunResult a = embedded->runOk({input});
    RunResult b = external->runOk({input});
    Array want = reference(weights, batch, seq, ids);
    E2E_CHECK_CLOSE(b["y"], want);
    E2E_CHECK_CLOSE(a["y"], want);
    // The same code over the same bytes: the same results, bit for bit.
    CHECK(a["y"].bytes == b["y"].bytes);
  }
}

TEST_CASE("an external-weights artifact holds no weight bytes",
          "[weights][artifact]") {
  // 4096 x 16 floats of W alone: 256 KiB, packed; far more than the code
  // that the two modes compile differently.
  Weights weights = makeWeights(9103, /*outRows=*/4096);
  int64_t weightBytes = 0;
  for (const auto &[name, w] : weights)
    weightBytes += int64_t(w.data.size() * sizeof(float));
  Compiled embedded(weights, /*external=*/false);
  Compiled external(weights);
  int64_t embeddedSize = fileSize(embedded.result.libraryPath);
  int64_t externalSize = fileSize(external.result.libraryPath);
  int64_t sidecarSize = fileSize(external.result.sidecarPath);
  CAPTURE(weightBytes, embeddedSize, externalSize, sidecarSize);
  CHECK(embeddedSize - externalSize >= weightBytes * 95 / 100);
  CHECK(sidecarSize >= weightBytes);
  // No weight is in the library: not the packed W's first panel, not E.
  std::ifstream in(external.result.libraryPath, std::ios::binary);
  std::string library((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
  const std::vector<float> &table = weights.at("E").data;
  std::string needle(reinterpret_cast<const char *>(table.data()),
                     table.size() * sizeof(float));
  CHECK(library.find(needle) == std::string::npos);
}

TEST_CASE("a weights file the model was not compiled with is refused",
          "[weights][errors]") {
  Weights weights = makeWeights(9104);
  Compiled compiled(weights);
  const std::string &artifact = compiled.result.libraryPath;
  const std::string &sidecar = compiled.result.sidecarPath;
  std::string bad = compiled.result.dir + "/bad.safetensors";

  SECTION("the right file loads, by default from next to the artifact") {
    CHECK(load(artifact, "").first == TFM_STATUS_OK);
    CHECK(load(artifact, sidecar).first == TFM_STATUS_OK);
  }
  SECTION("a tensor of another shape") {
    rewrite(sidecar, bad,
            [](tfm::SafeTensorWriteEntry &e, std::vector<char> &) {
              if (e.name == "E")
                e.shape = {kDim, kVocab};
            });
    auto [code, message] = load(artifact, bad);
    CHECK(code == TFM_STATUS_FORMAT_ERROR);
    CHECK_THAT(message,
               Catch::Contains("tensor 'E' has shape [16, 37], but "
                               "the model was compiled with [37, 16]"));
  }
  SECTION("a tensor of another dtype") {
    rewrite(sidecar, bad,
            [](tfm::SafeTensorWriteEntry &e, std::vector<char> &) {
              if (e.name == "E")
                e.dtype = "I32";
            });
    auto [code, message] = load(artifact, bad);
    CHECK(code == TFM_STATUS_FORMAT_ERROR);
    CHECK_THAT(message, Catch::Contains("tensor 'E' is I32, but the model was "
                                        "compiled with F32"));
  }
  SECTION("one changed bit") {
    rewrite(sidecar, bad,
            [](tfm::SafeTensorWriteEntry &e, std::vector<char> &data) {
              if (e.name == "W.packed")
                data[data.size() / 2] ^= 1;
            });
    auto [code, message] = load(artifact, bad);
    CHECK(code == TFM_STATUS_FORMAT_ERROR);
    CHECK_THAT(message, Catch::Contains("tensor 'W.packed' is not the one the "
                                        "model was compiled with"));
  }
  SECTION("a missing tensor") {
    rewrite(sidecar, bad,
            [](tfm::SafeTensorWriteEntry &e, std::vector<char> &) {
              if (e.name == "E")
                e.name = "F";
            });
    auto [code, message] = load(artifact, bad);
    CHECK(code == TFM_STATUS_FORMAT_ERROR);
    CHECK_THAT(message, Catch::Contains("has no tensor 'E'"));
  }
  SECTION("another model's file") {
    rewrite(sidecar, bad,
            [](tfm::SafeTensorWriteEntry &, std::vector<char> &) {},
            {{"model", "other"}});
    auto [code, message] = load(artifact, bad);
    CHECK(code == TFM_STATUS_FORMAT_ERROR);
    CHECK_THAT(message, Catch::Contains("holds the weights of model 'other', "
                                        "not of 'xw'"));
  }
  SECTION("a truncated file") {
    std::ifstream in(sidecar, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    std::ofstream(bad, std::ios::binary) << bytes.substr(0, bytes.size() - 3);
    auto [code, message] = load(artifact, bad);
    CHECK(code == TFM_STATUS_FORMAT_ERROR);
    CHECK_THAT(message, Catch::Contains("end past the data section"));
  }
  SECTION("no file") {
    std::remove(sidecar.c_str());
    auto [code, message] = load(artifact, "");
    CHECK(code == TFM_STATUS_NOT_FOUND);
    CHECK_THAT(message, Catch::Contains("model.weights.safetensors"));
  }
  SECTION("a weights file for an artifact with embedded weights") {
    Compiled embedded(weights, /*external=*/false);
    auto [code, message] = load(embedded.result.libraryPath, sidecar);
    CHECK(code == TFM_STATUS_INVALID_ARGUMENT);
    CHECK_THAT(message, Catch::Contains("weights are embedded"));
  }
}

TEST_CASE("external weights through the generated entry points",
          "[weights][artifact]") {
  Weights weights = makeWeights(9105);
  Compiled compiled(weights);
  void *library =
      ::dlopen(compiled.result.libraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(library);
  using RunFn = int32_t (*)(const int64_t *, float *, int64_t, int64_t);
  using ManifestFn = const char *(*)();
  auto run = reinterpret_cast<RunFn>(::dlsym(library, "tfm_xw_run"));
  auto manifest =
      reinterpret_cast<ManifestFn>(::dlsym(library, "tfm_xw_weights_manifest"));
  auto bind = reinterpret_cast<tfm_bind_weights_fn>(
      ::dlsym(library, "tfm_xw_bind_weights"));
  REQUIRE((run && manifest && bind));
  const int64_t batch = 2, seq = 5;
  std::vector<int64_t> ids(batch * seq, 3);
  std::vector<float> y(batch * seq * kOut);
  // Unbound: refused before anything is read.
  CHECK(run(ids.data(), y.data(), batch, seq) == -6);

  tfm_weights *mapped = nullptr;
  tfm_status status = tfm_weights_open(compiled.result.sidecarPath.c_str(),
                                       manifest(), &mapped);
  INFO((status ? tfm_status_message(status) : ""));
  REQUIRE(status == nullptr);
  // A size or an alignment that is not the file's is refused.
  CHECK(bind(tfm_weights_data(mapped), tfm_weights_size(mapped) - 1) == -3);
  CHECK(bind(static_cast<const char *>(tfm_weights_data(mapped)) + 4,
             tfm_weights_size(mapped)) == -3);
  REQUIRE(bind(tfm_weights_data(mapped), tfm_weights_size(mapped)) == 0);
  REQUIRE(run(ids.data(), y.data(), batch, seq) == 0);
  Array want = reference(weights, batch, seq, ids);
  E2E_CHECK_CLOSE(HostTensor::f32({batch, seq, kOut}, y), want);
  // Unbinding makes runs refuse again.
  CHECK(bind(nullptr, 0) == 0);
  CHECK(run(ids.data(), y.data(), batch, seq) == -6);
  tfm_weights_release(mapped);
  ::dlclose(library);
}

// Weights of 4 KiB and more are bound as resource blobs: F32 ones over the
// mapped file, F16/BF16 ones widened once into a blob of their own. An
// embedding table (read in place) and a linear weight (packed) of each kind,
// in both weights modes.
TEST_CASE("large F16 and BF16 weights are widened once, in both modes",
          "[weights][layers]") {
  Random rng(9106);
  const int64_t vocab = 50, dim = 40, out = 70;
  std::vector<_Float16> table, weight;
  std::vector<uint16_t> bias;
  std::vector<float> tableValues, weightValues, biasValues;
  for (float v : rng.uniform(vocab * dim)) {
    float exact = std::round(v * 256.0f) / 256.0f; // 10 significant bits
    table.push_back(static_cast<_Float16>(exact));
    tableValues.push_back(exact);
  }
  for (float v : rng.uniform(out * dim)) {
    float exact = std::round(v * 64.0f) / 64.0f;
    weight.push_back(static_cast<_Float16>(exact));
    weightValues.push_back(exact);
  }
  for (float v : rng.uniform(out)) {
    float exact = std::round(v * 64.0f) / 64.0f;
    uint32_t bits;
    std::memcpy(&bits, &exact, sizeof(bits));
    bias.push_back(static_cast<uint16_t>(bits >> 16));
    biasValues.push_back(exact);
  }
  std::string dir = makeTempDir();
  TempDirGuard guard(dir);
  std::string error;
  REQUIRE(tfm::writeSafeTensors(dir + "/half.safetensors",
                                {{"E", "F16", {vocab, dim}, table.data()},
                                 {"W", "F16", {out, dim}, weight.data()},
                                 {"b", "BF16", {out}, bias.data()}},
                                error));
  std::ofstream(dir + "/half.tfm")
      << "model half\ninput ids: i64[seq]\n"
      << "y = linear(embedding(ids, weight = \"E\"), weight = \"W\", "
         "bias = \"b\")\noutput y\n";
  Array E = ref::fromFloats({vocab, dim}, tableValues);
  Array W = ref::fromFloats({out, dim}, weightValues);
  Array b = ref::fromFloats({out}, biasValues);
  for (bool external : {false, true}) {
    DYNAMIC_SECTION((external ? "external" : "embedded")) {
      BuildOptions options;
      options.externalWeights = external;
      std::shared_ptr<Model> model = Model::buildFiles(
          dir + "/half.tfm", dir + "/half.safetensors", options);
      for (int64_t seq : {1, 9}) {
        std::vector<int64_t> ids = rng.ids(seq, 0, vocab - 1);
        RunResult r = model->runOk({HostTensor::i64({seq}, ids)});
        E2E_CHECK_CLOSE(r["y"],
                        ref::linear(ref::embedding({seq}, ids, E), W, &b));
      }
    }
  }
}
