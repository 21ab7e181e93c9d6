//===- ReferenceTests.cpp - Compare with PyTorch reference fixtures ------===//
//
// tests/reference/manifest.json lists fixtures generated with PyTorch by
// tests/reference/generate.py: per fixture a folder with model.tfm, the
// module's state_dict as weights.safetensors, its inputs and the outputs
// PyTorch computed, as .npy files. Each fixture becomes its own Catch2 test
// case, "reference: <name>" tagged [reference], registered when the program
// starts, with two sections: the model compiled with attention fusion on and
// off. Both must reproduce every output within the manifest's tolerances. A
// fixture that does not compile fails; none is skipped. With fusion on, the
// compiler's remarks must also say that every attention chain was fused
// ("attention": "fused" in the manifest), or, where the model outputs the
// attention weights ("unfused"), that it was not.
//
// Run one fixture:   tfm-e2e-tests "reference: sdpa_causal_rect_*"
// Run one group:     tfm-e2e-tests "[ref-mha_cross]"
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <deque>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>

using namespace e2e;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string referenceDir() { return sourceDir() + "/tests/reference"; }

json readManifest() {
  std::string path = referenceDir() + "/manifest.json";
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot open " + path);
  json manifest = json::parse(in);
  if (!manifest.is_object() || !manifest.contains("fixtures") ||
      !manifest["fixtures"].is_array())
    throw std::runtime_error(path + " has no \"fixtures\" array");
  return manifest;
}

std::string dtypeName(tfm_dtype dtype) { return tfm_dtype_name(dtype); }

/// Compiles the fixture in `dir` with fusion on or off, runs it on its inputs
/// and compares every output with the expected one.
void checkFixture(const json &fixture, bool fuse) {
  std::string name = fixture.at("name");
  std::string dir = referenceDir() + "/" + name;
  double defaultRtol = fixture.value("rtol", 1e-4);
  double defaultAtol = fixture.value("atol", 1e-5);

  std::map<std::string, HostTensor> inputs;
  for (const json &input : fixture.at("inputs")) {
    std::string inputName = input.at("name");
    HostTensor tensor =
        HostTensor::readNpy(dir + "/" + input.at("file").get<std::string>());
    INFO("input " << inputName);
    REQUIRE(dtypeName(tensor.dtype) == input.at("dtype").get<std::string>());
    REQUIRE(tensor.shape == input.at("shape").get<std::vector<int64_t>>());
    inputs.emplace(inputName, std::move(tensor));
  }

  BuildOptions options;
  options.fuseAttention = fuse;
  // "fused": every attention chain must end in the fused op; "unfused": the
  // model outputs attention weights, which keeps its chain unfused.
  std::string attention = fixture.value("attention", std::string());
  options.remarks = fuse && !attention.empty();
  std::string weights;
  if (fixture.contains("weights") && !fixture["weights"].is_null())
    weights = dir + "/" + fixture["weights"].get<std::string>();
  // Throws with the compiler's diagnostics if the model does not compile.
  std::shared_ptr<Model> model = Model::buildFiles(
      dir + "/" + fixture.value("model", std::string("model.tfm")), weights,
      options);
  if (options.remarks) {
    const std::string &remarks = model->diagnostics();
    bool fused =
        remarks.find("remark: fused attention chain") != std::string::npos ||
        remarks.find("remark: lowered to tfm.attention") != std::string::npos;
    bool notFused = remarks.find("attention not fused") != std::string::npos;
    INFO(name << ": expected attention " << attention
              << "; the compiler said:\n"
              << remarks);
    if (attention == "fused")
      CHECK((fused && !notFused));
    else
      CHECK(notFused);
  }
  RunResult result = model->runOkNamed(inputs);

  for (const json &output : fixture.at("outputs")) {
    std::string outputName = output.at("name");
    HostTensor expected =
        HostTensor::readNpy(dir + "/" + output.at("file").get<std::string>());
    double rtol = output.value("rtol", defaultRtol);
    double atol = output.value("atol", defaultAtol);
    const HostTensor &got = result[outputName];
    Comparison c =
        allClose(got, expected.shape, expected.toDoubles(), rtol, atol);
    INFO(name << " (fusion " << (fuse ? "on" : "off") << "), output "
              << outputName << ": " << c.message);
    CHECK(c.ok);
  }
}

/// One registered test case per fixture.
class FixtureTest : public Catch::ITestInvoker {
public:
  explicit FixtureTest(json fixture) : fixture(std::move(fixture)) {}
  void invoke() const override {
    SECTION("fusion on") { checkFixture(fixture, true); }
    SECTION("fusion off") { checkFixture(fixture, false); }
  }

private:
  json fixture;
};

/// Reports a manifest that cannot be read as a failing test, so that it is
/// not mistaken for a suite with nothing to run.
class BrokenManifestTest : public Catch::ITestInvoker {
public:
  explicit BrokenManifestTest(std::string message)
      : message(std::move(message)) {}
  void invoke() const override { FAIL(message); }

private:
  std::string message;
};

/// Test names and tags must outlive the registry's copies being made.
std::deque<std::string> &names() {
  static std::deque<std::string> storage;
  return storage;
}

void registerOne(Catch::ITestInvoker *invoker, std::string name,
                 std::string tags) {
  names().push_back(std::move(name));
  const std::string &nameRef = names().back();
  names().push_back(std::move(tags));
  const std::string &tagsRef = names().back();
  Catch::AutoReg(invoker, CATCH_INTERNAL_LINEINFO, "",
                 Catch::NameAndTags(nameRef, tagsRef));
}

bool registerFixtures() {
  try {
    json manifest = readManifest();
    std::set<std::string> seen;
    for (const json &fixture : manifest["fixtures"]) {
      std::string name = fixture.at("name");
      if (!seen.insert(name).second)
        throw std::runtime_error("fixture '" + name + "' is listed twice");
      std::string tags = "[reference]";
      if (fixture.contains("group"))
        tags += "[ref-" + fixture["group"].get<std::string>() + "]";
      registerOne(new FixtureTest(fixture), "reference: " + name, tags);
    }
  } catch (const std::exception &e) {
    registerOne(new BrokenManifestTest(std::string("tests/reference/"
                                                   "manifest.json: ") +
                                       e.what()),
                "reference: manifest", "[reference]");
  }
  return true;
}

const bool registered = registerFixtures();

} // namespace

TEST_CASE("reference fixtures are complete", "[reference]") {
  (void)registered;
  json manifest = readManifest();
  std::set<std::string> listed;
  for (const json &fixture : manifest["fixtures"]) {
    std::string name = fixture.at("name");
    listed.insert(name);
    std::string dir = referenceDir() + "/" + name;
    INFO("fixture " << name);
    CHECK(fileExists(dir + "/" + fixture.value("model", "model.tfm")));
    if (!fixture.at("weights").is_null())
      CHECK(fileExists(dir + "/" + fixture["weights"].get<std::string>()));
    CHECK(!fixture.at("inputs").empty());
    CHECK(!fixture.at("outputs").empty());
    for (const char *kind : {"inputs", "outputs"})
      for (const json &file : fixture.at(kind)) {
        std::string path = dir + "/" + file.at("file").get<std::string>();
        INFO(path);
        REQUIRE(fileExists(path));
        HostTensor tensor = HostTensor::readNpy(path);
        CHECK(dtypeName(tensor.dtype) == file.at("dtype").get<std::string>());
        CHECK(tensor.shape == file.at("shape").get<std::vector<int64_t>>());
        // Expected outputs are finite: the generator zeroes the rows PyTorch
        // leaves NaN (fully masked queries), as tfm defines them.
        if (std::string(kind) == "outputs")
          CHECK(allFinite(tensor.toDoubles()));
      }
  }
  // Every folder with a model.tfm is in the manifest.
  for (const fs::directory_entry &entry :
       fs::directory_iterator(referenceDir())) {
    if (!entry.is_directory() ||
        !fileExists(entry.path().string() + "/model.tfm"))
      continue;
    INFO("folder " << entry.path().filename().string());
    CHECK(listed.count(entry.path().filename().string()) == 1);
  }
  CHECK(listed.size() >= 100);
}
