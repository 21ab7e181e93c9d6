//===- DecoderFixtures.h - tests/reference/decoders' files -------*- C++
//-*-===//
//
// What the decoder tests (DecoderCheckpointTests.cpp,
// DecoderQuantFixtureTests.cpp) read from a fixture
// folder, and the K/V caches examples/llama/llama.tfm takes for it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TESTS_E2E_DECODERFIXTURES_H
#define TFM_TESTS_E2E_DECODERFIXTURES_H

#include "Harness.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

namespace e2e {

/// tests/reference/decoders/<folder>.
inline std::string decoderFixtureDir(const std::string &folder) {
  return sourceDir() + "/tests/reference/decoders/" + folder;
}

/// <folder>/<name>.npy.
inline HostTensor decoderNpy(const std::string &folder,
                             const std::string &name) {
  return HostTensor::readNpy(decoderFixtureDir(folder) + "/" + name + ".npy");
}

/// A tensor of token ids as integers.
inline std::vector<int64_t> tokenIds(const HostTensor &t) {
  std::vector<int64_t> out;
  for (double v : t.toDoubles())
    out.push_back(int64_t(v));
  return out;
}

/// The cache shape [L, batch, G, capacity, D] the folder's config.json
/// implies.
inline std::vector<int64_t> decoderCacheShape(const std::string &folder,
                                              int64_t batch, int64_t capacity) {
  std::ifstream in(decoderFixtureDir(folder) + "/config.json");
  REQUIRE(in.good());
  nlohmann::json c = nlohmann::json::parse(in);
  int64_t heads = c.at("num_attention_heads");
  int64_t headDim = c.value("head_dim", int64_t(c.at("hidden_size")) / heads);
  return {c.at("num_hidden_layers"), batch, c.at("num_key_value_heads"),
          capacity, headDim};
}

/// Caches full of NaN: attention that read a row never written would show.
inline HostTensor nanCache(const std::vector<int64_t> &shape) {
  return HostTensor::f32(
      shape, std::vector<float>(size_t(elementCount(shape)), std::nanf("")));
}

} // namespace e2e

#endif // TFM_TESTS_E2E_DECODERFIXTURES_H
