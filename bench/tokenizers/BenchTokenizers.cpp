//===- BenchTokenizers.cpp - tfm's tokenizer speed on a text file ---------===//
//
// tfm-bench-tokenizers TOKENIZER CORPUS [--repeat N]
//
// Encodes every line of CORPUS (UTF-8, one text per line) with the tokenizer
// (a tokenizer.json, its directory, or a .gguf file) through the public C API
// (tfm_tokenizer_encode, special tokens added, no padding), on the calling
// thread, N times (default 3), and prints one JSON line: lines, bytes,
// tokens, the best and median seconds over the runs, tokens/s and MB/s of
// the best run, and an FNV-1a hash of all the ids (with each line's count),
// which bench/tokenizers/run.py compares with the `tokenizers` package's.
//
//===----------------------------------------------------------------------===//

#include "tfm/tokenizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {
[[noreturn]] void fail(const std::string &message) {
  fmt::print(stderr, "tfm-bench-tokenizers: error: {}\n", message);
  std::exit(2);
}

void check(tfm_status status) {
  if (!status)
    return;
  std::string message = tfm_status_message(status);
  tfm_status_free(status);
  fail(message);
}

/// FNV-1a over 64-bit values.
struct Hash {
  uint64_t value = 1469598103934665603ull;
  void add(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      value ^= (v >> (8 * i)) & 0xff;
      value *= 1099511628211ull;
    }
  }
};
} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    fail("usage: tfm-bench-tokenizers TOKENIZER CORPUS [--repeat N]");
  std::string tokenizerPath = argv[1], corpusPath = argv[2];
  long repeat = 3;
  for (int i = 3; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = std::strtol(argv[++i], nullptr, 10);
    else
      fail(fmt::format("unknown argument '{}'", argv[i]));
  }
  if (repeat < 1)
    fail("--repeat needs a positive count");

  std::ifstream file(corpusPath, std::ios::binary);
  if (!file)
    fail(fmt::format("cannot open {}", corpusPath));
  std::vector<std::string> lines;
  size_t bytes = 0;
  for (std::string line; std::getline(file, line);) {
    bytes += line.size();
    lines.push_back(std::move(line));
  }

  tfm_tokenizer *tokenizer = nullptr;
  bool gguf = tokenizerPath.size() > 5 &&
              tokenizerPath.compare(tokenizerPath.size() - 5, 5, ".gguf") == 0;
  check(gguf ? tfm_tokenizer_load_gguf(tokenizerPath.c_str(), &tokenizer)
             : tfm_tokenizer_load_json(tokenizerPath.c_str(), &tokenizer));
  tfm_encode_options options;
  tfm_tokenizer_default_encode_options(tokenizer, &options);
  options.max_length = 0; // Time the whole text, as the package does.
  options.pad_to_length = 0;
  options.pad_to_multiple_of = 0;

  std::vector<double> seconds;
  uint64_t tokens = 0;
  Hash hash;
  for (long r = 0; r < repeat; ++r) {
    uint64_t count = 0;
    Hash h;
    auto start = std::chrono::steady_clock::now();
    for (const std::string &line : lines) {
      tfm_encoding encoding{};
      check(tfm_tokenizer_encode(tokenizer, line.data(), line.size(), nullptr,
                                 0, &options, &encoding));
      count += uint64_t(encoding.length);
      if (r == 0) {
        h.add(uint64_t(encoding.length));
        for (int64_t i = 0; i < encoding.length; ++i)
          h.add(uint64_t(encoding.ids[i]));
      }
      tfm_encoding_release(&encoding);
    }
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
    if (r == 0) {
      tokens = count;
      hash = h;
    }
  }
  tfm_tokenizer_release(tokenizer);
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  double best = sorted.front(), median = sorted[sorted.size() / 2];
  fmt::print("{{\"lines\": {}, \"bytes\": {}, \"tokens\": {}, \"best_s\": "
             "{:.6f}, \"median_s\": {:.6f}, \"tokens_per_s\": {:.1f}, "
             "\"mb_per_s\": {:.3f}, \"hash\": \"{:016x}\"}}\n",
             lines.size(), bytes, tokens, best, median, double(tokens) / best,
             double(bytes) / best / 1e6, hash.value);
  return 0;
}
