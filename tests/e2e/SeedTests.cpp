//===- SeedTests.cpp - The seed models against PyTorch golden data --------===//
//
// For each folder of examples/seeds: compile model.tfm with
// weights.safetensors, run it on the committed input .npy files (named after
// the model's inputs) and compare every output that has a same-named .npy
// file in the folder. The notebooks print 4 decimals, hence atol 6e-5.
//
// A missing model.tfm is a failure, not a skip.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace e2e;

namespace {
struct Seed {
  const char *folder;
  /// The model's inputs, in order (each has a <name>.npy).
  std::vector<std::string> inputs;
  /// Outputs the model must produce and that must match their .npy file.
  std::vector<std::string> required;
};

void checkSeed(const Seed &seed) {
  std::string dir = seedDir(seed.folder);
  std::string modelPath = dir + "/model.tfm";
  std::string weightsPath = dir + "/weights.safetensors";
  INFO("seed folder " << dir);
  {
    INFO(modelPath << " does not exist: every seed needs its model file");
    REQUIRE(fileExists(modelPath));
  }
  REQUIRE(fileExists(weightsPath));

  std::shared_ptr<Model> model = Model::buildFiles(modelPath, weightsPath);
  CHECK(model->inputNames() == seed.inputs);

  std::map<std::string, HostTensor> inputs;
  for (const std::string &name : model->inputNames()) {
    std::string path = dir + "/" + name + ".npy";
    INFO("input '" << name << "' needs " << path);
    REQUIRE(fileExists(path));
    inputs[name] = HostTensor::readNpy(path);
  }
  RunResult result = model->runOkNamed(inputs);

  std::vector<std::string> compared;
  for (size_t i = 0; i < result.names.size(); ++i) {
    const std::string &name = result.names[i];
    std::string path = dir + "/" + name + ".npy";
    if (!fileExists(path))
      continue;
    HostTensor expected = HostTensor::readNpy(path);
    Comparison c = allClose(result.outputs[i], expected.shape,
                            expected.toDoubles(), /*rtol=*/0.0,
                            /*atol=*/6e-5);
    INFO("output '" << name << "' vs " << path << ": " << c.message);
    CHECK(c.ok);
    compared.push_back(name);
  }
  for (const std::string &name : seed.required) {
    INFO("output '" << name << "' must exist and be compared; compared: "
                    << compared.size() << " outputs");
    CHECK(std::find(compared.begin(), compared.end(), name) != compared.end());
  }
}
} // namespace

TEST_CASE("seed 000_self_attention matches PyTorch", "[seeds]") {
  checkSeed({"000_self_attention", {"x"}, {"y"}});
}

TEST_CASE("seed 001_embedding_attention matches PyTorch", "[seeds]") {
  checkSeed({"001_embedding_attention", {"tokens"}, {"context"}});
}

TEST_CASE("seed 002_numpy_attention matches numpy", "[seeds]") {
  checkSeed({"002_numpy_attention", {"x"}, {"y"}});
}

TEST_CASE("seed 003_multi_head matches PyTorch", "[seeds]") {
  checkSeed({"003_multi_head", {"x"}, {"y"}});
}

TEST_CASE("seed 004_multi_headed matches PyTorch", "[seeds]") {
  checkSeed({"004_multi_headed", {"x"}, {"attn"}});
}
