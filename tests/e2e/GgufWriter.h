//===- GgufWriter.h - GGUF files of raw tensors for the tests ---*- C++ -*-===//
//
// The tests' own GGUF writer: version 3, no metadata, each tensor's bytes
// as given (so a test can write a malformed block or a wrong size), 32-byte
// aligned. The fixtures with metadata come from the `gguf` package
// (tests/reference/gguf); these are the files made on the fly.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TESTS_E2E_GGUFWRITER_H
#define TFM_TESTS_E2E_GGUFWRITER_H

#include <cstdint>
#include <string>
#include <vector>

namespace e2e {

struct GgufTensor {
  std::string name;
  uint32_t type;              ///< ggml type: 0 F32, 2 Q4_0, 8 Q8_0, ...
  std::vector<uint64_t> dims; ///< fastest first, as GGUF stores them
  std::vector<unsigned char> bytes;
};

/// Writes `tensors` to `path`, cut to its first `truncateTo` bytes.
void writeGguf(const std::string &path, const std::vector<GgufTensor> &tensors,
               size_t truncateTo = SIZE_MAX);

} // namespace e2e

#endif // TFM_TESTS_E2E_GGUFWRITER_H
