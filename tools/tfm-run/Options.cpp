//===- Options.cpp - tfm-run's command line -------------------------------===//
//
// Part of tfm-run (tfm-run.cpp).
//
//===----------------------------------------------------------------------===//

#include "Options.h"
#include "Failure.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

using namespace tfm::run;

namespace {

const char *const kUsage =
    "usage: tfm-run ARTIFACT.so --input NAME=FILE.npy ...\n"
    "               [--output NAME=FILE.npy ...] [--expected NAME=FILE.npy "
    "...]\n"
    "               [--rtol R] [--atol A] [--atol-scaled] [--bench N]\n"
    "               [--flops F] [--threads N] [--weights FILE] [--quiet]\n"
    "       tfm-run ARTIFACT.so --tokenizer TOKENIZER --text TEXT ...\n"
    "       tfm-run ARTIFACT.so --generate N --tokenizer TOKENIZER --text "
    "TEXT\n"
    "\n"
    "Runs a model compiled by tfm-compile on .npy inputs and prints its "
    "outputs.\n"
    "  --input NAME=FILE     an input of the model (every input is required)\n"
    "  --output NAME=FILE    also write an output to a .npy file; for a cache\n"
    "                        input, its contents after the run\n"
    "  --expected NAME=FILE  compare an output with a .npy file; exit 1 on a\n"
    "                        mismatch (|out - exp| > atol + rtol * |exp|)\n"
    "  --rtol R, --atol A    tolerances for --expected (default 1e-4, 1e-5)\n"
    "  --atol-scaled         the absolute tolerance of each output is A times\n"
    "                        max(1, its largest |expected| value): for low\n"
    "                        precision, whose error grows with the values\n"
    "  --bench N             time N runs after one warm-up run\n"
    "  --flops F             with --bench, also print F / min time in "
    "GFLOP/s\n"
    "  --threads N           run the model's parallel work on N threads\n"
    "                        (default 1; 0: one per hardware thread)\n"
    "  --weights FILE        the weights of an artifact compiled with\n"
    "                        --weights-mode external (default: the file its\n"
    "                        manifest names, next to the artifact)\n"
    "A GPU artifact (tfm-compile --target cuda) runs on CUDA device 0: the\n"
    "inputs are copied in once, outputs copied back after the run, and\n"
    "--bench reports device time (events around each run).\n"
    "tfm-run --gpu-info prints CUDA device 0's name and architecture.\n"
    "  --quiet               do not print the output values\n"
    "  --generate N          greedy generation with a decoder compiled with\n"
    "                        a KV cache (docs/generation.md): give only\n"
    "                        --input input_ids=PROMPT.npy; tfm-run allocates\n"
    "                        the caches and tracks 'past', prints the N\n"
    "                        generated ids and the prefill and decode times;\n"
    "                        --output logits=FILE writes the prompt's logits;\n"
    "                        with --text TEXT (one) and --tokenizer instead "
    "of\n"
    "                        the .npy, prints the prompt's ids and the text,\n"
    "                        streamed as each token is chosen\n"
    "  --text TEXT           tokenize TEXT into the inputs input_ids,\n"
    "                        token_type_ids and attention_mask (those the\n"
    "                        model has and --input does not give); each\n"
    "                        --text is a row of the batch, padded\n"
    "  --tokenizer PATH      tokenizer.json, a checkpoint's directory holding\n"
    "                        one, or a .gguf file (its tokenizer.ggml.*);\n"
    "                        default: the artifact's own (tfm-compile\n"
    "                        --tokenizer)\n"
    "  --max-length N        truncate each text to N tokens (special tokens\n"
    "                        included; default: as the tokenizer says)\n"
    "A bf16 tensor is a uint16 ('<u2') .npy file of its bits, as\n"
    "a.view(np.uint16) gives for an ml_dtypes.bfloat16 array; --expected\n"
    "compares the decoded values, in double.\n";

/// More threads than this is surely a typo.
constexpr long kMaxThreads = 4096;

NamedFile parseNamedFile(const std::string &flag, const std::string &value) {
  size_t equals = value.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == value.size())
    fail(fmt::format("{} expects NAME=FILE.npy, got '{}'", flag, value));
  return {value.substr(0, equals), value.substr(equals + 1)};
}

double parseNumber(const std::string &flag, const std::string &value) {
  char *end = nullptr;
  double number = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !std::isfinite(number) || number < 0)
    fail(
        fmt::format("{} expects a non-negative number, got '{}'", flag, value));
  return number;
}

/// The offset of the first byte of `text` that does not belong to a
/// well-formed UTF-8 sequence (RFC 3629: no overlong forms, surrogates or
/// code points past U+10FFFF), or npos.
size_t firstInvalidUtf8(const std::string &text) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(text.data());
  size_t n = text.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = bytes[i];
    size_t length = c < 0x80                 ? 1
                    : c >= 0xC2 && c <= 0xDF ? 2
                    : c >= 0xE0 && c <= 0xEF ? 3
                    : c >= 0xF0 && c <= 0xF4 ? 4
                                             : 0;
    if (length == 0 || i + length > n)
      return i;
    // The second byte's range depends on the first (Unicode table 3-7).
    unsigned char low = 0x80, high = 0xBF;
    if (c == 0xE0)
      low = 0xA0;
    else if (c == 0xED)
      high = 0x9F;
    else if (c == 0xF0)
      low = 0x90;
    else if (c == 0xF4)
      high = 0x8F;
    for (size_t k = 1; k < length; ++k) {
      unsigned char b = bytes[i + k];
      if (b < (k == 1 ? low : 0x80) || b > (k == 1 ? high : 0xBF))
        return i;
    }
    i += length;
  }
  return std::string::npos;
}

} // namespace

Options tfm::run::parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      fmt::print("{}", kUsage);
      std::exit(0);
    }
    if (arg == "--quiet") {
      options.quiet = true;
      continue;
    }
    if (arg == "--atol-scaled") {
      options.atolScaled = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      if (!options.artifact.empty())
        fail(fmt::format("unexpected argument '{}' (the artifact is '{}')", arg,
                         options.artifact));
      options.artifact = arg;
      continue;
    }
    // Both "--flag value" and "--flag=value".
    std::string flag = arg, value;
    if (size_t equals = arg.find('='); equals != std::string::npos) {
      flag = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      fail(fmt::format("{} needs a value\n{}", flag, kUsage));
    }
    if (flag == "--input")
      options.inputs.push_back(parseNamedFile(flag, value));
    else if (flag == "--output")
      options.outputs.push_back(parseNamedFile(flag, value));
    else if (flag == "--expected")
      options.expected.push_back(parseNamedFile(flag, value));
    else if (flag == "--weights")
      options.weights = value;
    else if (flag == "--text")
      options.texts.push_back(value);
    else if (flag == "--tokenizer")
      options.tokenizer = value;
    else if (flag == "--max-length") {
      char *end = nullptr;
      options.maxLength = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || options.maxLength < 1)
        fail(fmt::format("--max-length expects a positive count, got '{}'",
                         value));
    } else if (flag == "--rtol")
      options.rtol = parseNumber(flag, value);
    else if (flag == "--atol")
      options.atol = parseNumber(flag, value);
    else if (flag == "--bench") {
      char *end = nullptr;
      options.bench = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || options.bench < 1)
        fail(fmt::format("--bench expects a positive count, got '{}'", value));
    } else if (flag == "--generate") {
      char *end = nullptr;
      options.generate = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || options.generate < 1 ||
          options.generate > 1000000)
        fail(fmt::format("--generate expects a token count from 1 to "
                         "1000000, got '{}'",
                         value));
    } else if (flag == "--flops")
      options.flops = parseNumber(flag, value);
    else if (flag == "--threads") {
      char *end = nullptr;
      options.threads = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || options.threads < 0 ||
          options.threads > kMaxThreads)
        fail(fmt::format("--threads expects a count from 0 to {}, got '{}'",
                         kMaxThreads, value));
    } else
      fail(fmt::format("unknown option '{}'\n{}", flag, kUsage));
  }
  if (options.artifact.empty())
    fail(fmt::format("no artifact given\n{}", kUsage));
  if (options.flops >= 0 && options.bench == 0)
    fail("--flops needs --bench");
  if (options.texts.empty() && !options.tokenizer.empty())
    fail("--tokenizer needs --text");
  for (size_t i = 0; i < options.texts.size(); ++i) {
    if (options.texts[i].empty())
      fail(fmt::format("--text {} is empty", i));
    if (size_t bad = firstInvalidUtf8(options.texts[i]);
        bad != std::string::npos)
      fail(fmt::format("--text {} is not valid UTF-8 (byte {}: 0x{:02x})", i,
                       bad, static_cast<unsigned char>(options.texts[i][bad])));
  }
  return options;
}

void tfm::run::fail(const std::string &message) {
  fmt::print(stderr, "tfm-run: error: {}\n", message);
  std::exit(kExitError);
}

void tfm::run::check(tfm_status status) {
  if (status) {
    std::string message = tfm_status_message(status);
    tfm_status_free(status);
    fail(message);
  }
}
