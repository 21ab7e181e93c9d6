//===- tfm-run.cpp - Run a compiled model on .npy files ---------*- C++ -*-===//
//
// tfm-run ARTIFACT.so --input NAME=FILE.npy ... [--output NAME=FILE.npy ...]
//         [--expected NAME=FILE.npy ...] [--rtol R] [--atol A] [--bench N]
//         [--flops F] [--threads N] [--weights FILE] [--quiet]
// tfm-run ARTIFACT.so --tokenizer TOKENIZER --text "..." [--text "..."]
//         [--max-length N] ...
// tfm-run ARTIFACT.so --generate N (--input input_ids=PROMPT.npy |
//         --tokenizer TOKENIZER --text "...") [--threads N] [--quiet]
//
// Exit codes: 0 success, 1 an output does not match --expected, 2 any other
// error (usage, files, the model).
//
//===----------------------------------------------------------------------===//

#include "DeviceTensors.h"
#include "Generate.h"
#include "tfm/runtime.h"
#include "tfm/tokenizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

constexpr int kExitMismatch = 1;
constexpr int kExitError = 2;
// numpy's print options: summarise above 1000 elements, showing 3 at each
// edge, and wrap lines at 75 columns.
constexpr int64_t kSummaryThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 75;

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

/// Reports an error and exits: tfm-run has nothing to clean up that the OS
/// does not.
[[noreturn]] void fail(const std::string &message) {
  fmt::print(stderr, "tfm-run: error: {}\n", message);
  std::exit(kExitError);
}

void check(tfm_status status) {
  if (status) {
    std::string message = tfm_status_message(status);
    tfm_status_free(status);
    fail(message);
  }
}

/// A tensor whose data the runtime allocated.
struct OwnedTensor {
  tfm_tensor tensor{};
  OwnedTensor() = default;
  OwnedTensor(const OwnedTensor &) = delete;
  OwnedTensor &operator=(const OwnedTensor &) = delete;
  ~OwnedTensor() { tfm_tensor_release_data(&tensor); }
};

struct ModelDeleter {
  void operator()(tfm_model *model) const { tfm_model_release(model); }
};
using ModelPtr = std::unique_ptr<tfm_model, ModelDeleter>;

struct PoolDeleter {
  void operator()(tfm_thread_pool *pool) const {
    tfm_thread_pool_release(pool);
  }
};
using PoolPtr = std::unique_ptr<tfm_thread_pool, PoolDeleter>;

/// More threads than this is surely a typo.
constexpr long kMaxThreads = 4096;

struct NamedFile {
  std::string name;
  std::string path;
};

struct Options {
  std::string artifact;
  std::vector<NamedFile> inputs, outputs, expected;
  double rtol = 1e-4;
  double atol = 1e-5;
  long bench = 0;
  /// Floating-point operations per run, for --bench; negative: not given.
  double flops = -1;
  /// 0: one per hardware thread.
  long threads = 1;
  /// External weights; empty: the artifact's own (or the file next to it).
  std::string weights;
  bool quiet = false;
  /// --atol-scaled: atol times max(1, the output's largest |expected|).
  bool atolScaled = false;
  /// --generate N: tokens to generate greedily (0: a plain run).
  long generate = 0;
  /// --text rows, the --tokenizer to encode them with, --max-length.
  std::vector<std::string> texts;
  std::string tokenizer;
  long maxLength = -1;
};

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

Options parseOptions(int argc, char **argv) {
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

std::string describe(const tfm_tensor &tensor) {
  std::string dims;
  for (int32_t d = 0; d < tensor.rank; ++d)
    dims += fmt::format("{}{}", d ? ", " : "", tensor.shape[d]);
  return fmt::format("{}[{}]", tfm_dtype_name(tensor.dtype), dims);
}

double valueAt(const tfm_tensor &tensor, int64_t index) {
  switch (tensor.dtype) {
  case TFM_DTYPE_F32:
    return static_cast<const float *>(tensor.data)[index];
  case TFM_DTYPE_F64:
    return static_cast<const double *>(tensor.data)[index];
  case TFM_DTYPE_I32:
    return static_cast<const int32_t *>(tensor.data)[index];
  case TFM_DTYPE_I64:
    return static_cast<double>(
        static_cast<const int64_t *>(tensor.data)[index]);
  case TFM_DTYPE_BOOL:
    return static_cast<const unsigned char *>(tensor.data)[index] ? 1 : 0;
  case TFM_DTYPE_F16:
    return tfm_f16_to_f32(static_cast<const uint16_t *>(tensor.data)[index]);
  case TFM_DTYPE_BF16:
    return tfm_bf16_to_f32(static_cast<const uint16_t *>(tensor.data)[index]);
  case TFM_DTYPE_I8:
    return static_cast<const int8_t *>(tensor.data)[index];
  case TFM_DTYPE_U8:
    return static_cast<const uint8_t *>(tensor.data)[index];
  case TFM_DTYPE_INVALID:
    break;
  }
  return 0;
}

/// How numpy spells a dtype in a .npy file, as tfm_npy_read maps them.
const char *npyDescr(tfm_dtype dtype) {
  switch (dtype) {
  case TFM_DTYPE_F32:
    return "'<f4'";
  case TFM_DTYPE_F64:
    return "'<f8'";
  case TFM_DTYPE_I32:
    return "'<i4'";
  case TFM_DTYPE_I64:
    return "'<i8'";
  case TFM_DTYPE_BOOL:
    return "'|b1'";
  case TFM_DTYPE_F16:
    return "'<f2'";
  case TFM_DTYPE_BF16:
    return "'<u2', read as the bits of bf16";
  case TFM_DTYPE_I8:
    return "'|i1'";
  case TFM_DTYPE_U8:
    return "'|u1'";
  case TFM_DTYPE_INVALID:
    break;
  }
  return "?";
}

/// "f32[seq, 2]": input `index` as the model declares it.
std::string describeInput(const tfm_model *model, size_t index) {
  std::string dims;
  for (int32_t d = 0; d < tfm_model_input_rank(model, index); ++d) {
    const char *symbol = nullptr;
    int64_t size = tfm_model_input_dim(model, index, d, &symbol);
    dims += fmt::format("{}{}", d ? ", " : "",
                        symbol ? std::string(symbol) : std::to_string(size));
  }
  return fmt::format("{}[{}]",
                     tfm_dtype_name(tfm_model_input_dtype(model, index)), dims);
}

/// Prints a tensor the way numpy does with precision=4, floatmode='fixed'
/// (bools as True and False).
class TensorPrinter {
public:
  explicit TensorPrinter(const tfm_tensor &tensor) : tensor(tensor) {}

  std::string print() {
    int64_t count = tfm_tensor_element_count(&tensor);
    if (count == 0)
      return "[]";
    bool summarise = count > kSummaryThreshold;
    // The indices shown along each dim; -1 stands for "...".
    shown.resize(tensor.rank);
    strides.assign(tensor.rank, 1);
    for (int32_t d = tensor.rank - 1; d >= 0; --d) {
      int64_t size = tensor.shape[d];
      if (d + 1 < tensor.rank)
        strides[d] = strides[d + 1] * tensor.shape[d + 1];
      for (int64_t i = 0; i < size; ++i) {
        if (summarise && size > 2 * kEdgeItems && i == kEdgeItems) {
          shown[d].push_back(-1);
          i = size - kEdgeItems;
        }
        shown[d].push_back(i);
      }
    }
    chooseFormat(0, 0);
    return block(0, 0, "");
  }

private:
  std::string element(int64_t index) const {
    double value = valueAt(tensor, index);
    switch (tensor.dtype) {
    case TFM_DTYPE_I32:
    case TFM_DTYPE_I64:
    case TFM_DTYPE_I8:
    case TFM_DTYPE_U8:
      return fmt::format("{}", static_cast<int64_t>(value));
    case TFM_DTYPE_BOOL:
      // numpy pads True to the width of False inside arrays, not alone.
      return value != 0 ? (tensor.rank ? " True" : "True") : "False";
    default:
      return scientific ? fmt::format("{:.4e}", value)
                        : fmt::format("{:.4f}", value);
    }
  }

  /// Like numpy, switches to scientific notation when fixed would hide
  /// digits or the magnitudes differ by more than 1000x, and pads every
  /// element to the width of the widest shown one.
  void chooseFormat(int32_t dim, int64_t offset) {
    if (dim == tensor.rank) {
      double magnitude = std::fabs(valueAt(tensor, offset));
      if (std::isfinite(magnitude) && magnitude != 0) {
        minMagnitude = std::min(minMagnitude, magnitude);
        maxMagnitude = std::max(maxMagnitude, magnitude);
      }
      return;
    }
    for (int64_t i : shown[dim])
      if (i >= 0)
        chooseFormat(dim + 1, offset + i * strides[dim]);
    if (dim != 0)
      return;
    scientific =
        maxMagnitude > 0 && (maxMagnitude >= 1e8 || minMagnitude < 1e-4 ||
                             maxMagnitude / minMagnitude > 1e3);
    measure(0, 0);
  }

  void measure(int32_t dim, int64_t offset) {
    if (dim == tensor.rank) {
      width = std::max(width, element(offset).size());
      return;
    }
    for (int64_t i : shown[dim])
      if (i >= 0)
        measure(dim + 1, offset + i * strides[dim]);
  }

  std::string block(int32_t dim, int64_t offset, const std::string &indent) {
    if (dim == tensor.rank)
      return fmt::format("{:>{}}", element(offset), width);
    std::string out = "[";
    std::string childIndent = indent + " ";
    bool innermost = dim + 1 == tensor.rank;
    // The line starts with one bracket or space per enclosing dim.
    size_t column = indent.size() + 1;
    for (size_t k = 0; k < shown[dim].size(); ++k) {
      int64_t i = shown[dim][k];
      std::string child =
          i < 0 ? "..."
                : block(dim + 1, offset + i * strides[dim], childIndent);
      if (k > 0 && innermost) {
        // Wrap long rows, leaving room for the closing brackets.
        if (column + 1 + child.size() + dim + 1 > kLineWidth) {
          out += "\n" + childIndent;
          column = childIndent.size();
        } else {
          out += " ";
          ++column;
        }
      } else if (k > 0) {
        out += std::string(tensor.rank - dim - 1, '\n') + childIndent;
      }
      out += child;
      column += child.size();
    }
    return out + "]";
  }

  const tfm_tensor &tensor;
  std::vector<std::vector<int64_t>> shown;
  std::vector<int64_t> strides;
  double minMagnitude = INFINITY, maxMagnitude = 0;
  bool scientific = false;
  size_t width = 0;
};

/// Compares with numpy.allclose's rule; returns true when every element is
/// close. NaN is never close, equal infinities are.
bool compare(const std::string &name, const tfm_tensor &actual,
             const tfm_tensor &expected, double rtol, double atol,
             bool atolScaled) {
  bool sameShape = actual.rank == expected.rank;
  for (int32_t d = 0; sameShape && d < actual.rank; ++d)
    sameShape = actual.shape[d] == expected.shape[d];
  if (!sameShape) {
    fmt::print("{}: shape {} but expected {}: MISMATCH\n", name,
               describe(actual), describe(expected));
    return false;
  }
  double maxAbs = 0, maxRel = 0;
  bool close = true;
  int64_t count = tfm_tensor_element_count(&actual);
  if (atolScaled) {
    double largest = 1;
    for (int64_t i = 0; i < count; ++i)
      largest = std::max(largest, std::fabs(valueAt(expected, i)));
    atol *= largest;
  }
  for (int64_t i = 0; i < count; ++i) {
    double a = valueAt(actual, i), e = valueAt(expected, i);
    if (a == e)
      continue;
    double diff = std::fabs(a - e);
    if (std::isnan(diff))
      diff = INFINITY;
    close = close && diff <= atol + rtol * std::fabs(e);
    maxAbs = std::max(maxAbs, diff);
    maxRel = std::max(maxRel, e == 0 ? INFINITY : diff / std::fabs(e));
  }
  fmt::print("{}: max abs err {:.1e}, max rel err {:.1e} (rtol {:g}, atol "
             "{:g}): {}\n",
             name, maxAbs, maxRel, rtol, atol, close ? "ok" : "MISMATCH");
  return close;
}

/// The index of `name` among the model's inputs or outputs, or a failure
/// that lists the names it could have been.
size_t findTensor(const tfm_model *model, bool input, const std::string &name,
                  const char *flag) {
  size_t count =
      input ? tfm_model_input_count(model) : tfm_model_output_count(model);
  std::string names;
  for (size_t i = 0; i < count; ++i) {
    const char *candidate = input ? tfm_model_input_name(model, i)
                                  : tfm_model_output_name(model, i);
    if (name == candidate)
      return i;
    names += fmt::format("{}{}", i ? ", " : "", candidate);
  }
  fail(fmt::format("{}: model '{}' has no {} '{}' (its {}s: {})", flag,
                   tfm_model_name(model), input ? "input" : "output", name,
                   input ? "input" : "output", names));
}

/// What tfm_model_run checks for host models: a GPU model's runs cannot
/// read their (device) inputs, so tfm-run checks the host copies.
void checkBools(const tfm_model *model, const std::vector<tfm_tensor> &inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype != TFM_DTYPE_BOOL)
      continue;
    const auto *data = static_cast<const unsigned char *>(inputs[i].data);
    int64_t bytes = tfm_tensor_byte_size(&inputs[i]);
    for (int64_t b = 0; b < bytes; ++b)
      if (data[b] > 1)
        fail(fmt::format("input '{}': bool element {} is the byte {}, not 0 "
                         "or 1",
                         tfm_model_input_name(model, i), b, int(data[b])));
  }
}

double milliseconds(std::chrono::steady_clock::duration duration) {
  return std::chrono::duration<double, std::milli>(duration).count();
}

struct TokenizerDeleter {
  void operator()(tfm_tokenizer *t) const { tfm_tokenizer_release(t); }
};

using TokenizerPtr = std::unique_ptr<tfm_tokenizer, TokenizerDeleter>;

/// The tokenizer of --text: --tokenizer's (a .gguf file's tokenizer.ggml.*,
/// else a tokenizer.json or the directory holding one), owned by `owner`;
/// without --tokenizer, the one compiled into the artifact (tfm-compile
/// --tokenizer), owned by the model.
const tfm_tokenizer *loadTokenizer(const Options &options,
                                   const tfm_model *model,
                                   TokenizerPtr &owner) {
  const std::string &path = options.tokenizer;
  if (path.empty()) {
    const tfm_tokenizer *embedded = nullptr;
    tfm_status status = tfm_model_tokenizer(model, &embedded);
    if (tfm_status_code(status) == TFM_STATUS_NOT_FOUND) {
      tfm_status_free(status);
      fail(fmt::format("--text needs --tokenizer (a tokenizer.json, its "
                       "directory or a .gguf file): model '{}' was compiled "
                       "without tfm-compile --tokenizer",
                       tfm_model_name(model)));
    }
    check(status);
    return embedded;
  }
  tfm_tokenizer *raw = nullptr;
  bool gguf = path.size() > 5 && path.compare(path.size() - 5, 5, ".gguf") == 0;
  check(gguf ? tfm_tokenizer_load_gguf(path.c_str(), &raw)
             : tfm_tokenizer_load_json(path.c_str(), &raw));
  owner.reset(raw);
  return raw;
}

/// The model inputs of --text: input_ids, token_type_ids and attention_mask
/// ([texts, longest]), indexed as those names; others stay empty.
void tokenize(const Options &options, const tfm_model *model,
              std::vector<OwnedTensor> &inputs, std::vector<bool> &given) {
  TokenizerPtr owner;
  const tfm_tokenizer *tokenizer = loadTokenizer(options, model, owner);
  tfm_encode_options encode;
  tfm_tokenizer_default_encode_options(tokenizer, &encode);
  if (options.maxLength > 0)
    encode.max_length = options.maxLength;
  std::vector<const char *> texts;
  for (const std::string &t : options.texts)
    texts.push_back(t.c_str());
  OwnedTensor ids, types, mask;
  check(tfm_tokenizer_encode_batch(tokenizer, texts.data(), nullptr,
                                   texts.size(), &encode, &ids.tensor,
                                   &types.tensor, &mask.tensor));
  const char *names[] = {"input_ids", "token_type_ids", "attention_mask"};
  OwnedTensor *made[] = {&ids, &types, &mask};
  bool used = false;
  for (size_t i = 0; i < tfm_model_input_count(model); ++i)
    for (int k = 0; k < 3; ++k)
      if (!given[i] &&
          names[k] == std::string(tfm_model_input_name(model, i))) {
        std::swap(inputs[i].tensor, made[k]->tensor);
        given[i] = true;
        used = used || k == 0;
      }
  if (!used)
    fail(fmt::format("--text: model '{}' has no input 'input_ids' to take "
                     "the token ids",
                     tfm_model_name(model)));
  if (!options.quiet) {
    for (size_t i = 0; i < tfm_model_input_count(model); ++i) {
      if (std::string(tfm_model_input_name(model, i)) != "input_ids")
        continue;
      const tfm_tensor &x = inputs[i].tensor;
      const auto *data = static_cast<const int64_t *>(x.data);
      for (int64_t r = 0; r < x.shape[0]; ++r) {
        std::string row;
        for (int64_t c = 0; c < x.shape[1]; ++c) {
          row += fmt::format("{}{}", c ? " " : "", data[r * x.shape[1] + c]);
        }
        fmt::print("tokens {}: [{}]\n", r, row);
      }
    }
  }
}

} // namespace

/// tfm-run --gpu-info: device 0's name and compute capability, or why there
/// is no usable GPU (exit 2).
int printGpuInfo() {
  char name[256];
  int32_t major = 0, minor = 0;
  check(tfm_gpu_device_info(name, sizeof name, &major, &minor));
  fmt::print("{}: sm_{}{}\n", name, major, minor);
  return 0;
}

struct DecodeStreamDeleter {
  void operator()(tfm_decode_stream *s) const { tfm_decode_stream_release(s); }
};
using DecodeStreamPtr = std::unique_ptr<tfm_decode_stream, DecodeStreamDeleter>;

/// A failed status as an exception: for the calls made while generating,
/// which tfm::run::generate reports.
void throwIfFailed(tfm_status status) {
  if (!status)
    return;
  std::string message = tfm_status_message(status);
  tfm_status_free(status);
  throw std::runtime_error(message);
}

/// Prints the text that `id` completes (possibly nothing: part of a UTF-8
/// character stays in the stream until the rest comes).
void printStep(tfm_decode_stream *stream, int64_t id) {
  const char *text = nullptr;
  size_t size = 0;
  throwIfFailed(tfm_decode_stream_step(stream, id, &text, &size));
  fmt::print("{}", std::string_view(text, size));
}

/// The prompt's ids: the one --text with the tokenizer's special tokens
/// (Llama's <s>), truncated to --max-length when given.
std::vector<int64_t> encodePrompt(const tfm_tokenizer *tokenizer,
                                  const Options &options) {
  tfm_encode_options encode;
  tfm_tokenizer_default_encode_options(tokenizer, &encode);
  if (options.maxLength > 0)
    encode.max_length = options.maxLength;
  // Padding would feed pad ids as if they were the prompt.
  encode.pad_to_length = 0;
  encode.pad_to_multiple_of = 0;
  tfm_encoding encoding{};
  const std::string &text = options.texts.front();
  check(tfm_tokenizer_encode(tokenizer, text.data(), text.size(), nullptr, 0,
                             &encode, &encoding));
  std::vector<int64_t> ids(encoding.ids, encoding.ids + encoding.length);
  tfm_encoding_release(&encoding);
  if (ids.empty())
    fail("--text: the prompt has no tokens");
  return ids;
}

/// --generate: only the prompt is the user's (--input input_ids=...), and
/// --output names the prompt step's logits.
int runGenerate(tfm_model *model, const Options &options) {
  tfm::run::GenerateOptions generate;
  generate.tokens = options.generate;
  generate.quiet = options.quiet;
  for (const NamedFile &input : options.inputs) {
    if (input.name != "input_ids")
      fail(fmt::format("--generate takes only --input input_ids=PROMPT.npy "
                       "(tfm-run feeds '{}' itself)",
                       input.name));
    if (!options.texts.empty())
      fail("--generate takes the prompt from --text or from --input "
           "input_ids=PROMPT.npy, not both");
    generate.promptPath = input.path;
  }
  TokenizerPtr owner;
  const tfm_tokenizer *tokenizer = nullptr;
  DecodeStreamPtr stream;
  if (!options.texts.empty()) {
    if (options.texts.size() != 1)
      fail("--generate takes one --text (the prompt)");
    tokenizer = loadTokenizer(options, model, owner);
    generate.promptIds = encodePrompt(tokenizer, options);
    generate.promptPath = "--text";
    tfm_decode_stream *rawStream = nullptr;
    check(tfm_decode_stream_create(tokenizer, /*skip_special_tokens=*/1,
                                   &rawStream));
    stream.reset(rawStream);
    // The prompt goes through the stream too: the continuation is then
    // spaced as the whole text decodes (a SentencePiece word's leading
    // space is kept), and the printed line is the text so far.
    generate.onStart = [&] {
      if (!options.quiet)
        fmt::print("tokens: [{}]\n", fmt::join(generate.promptIds, " "));
      fmt::print("text: ");
      for (int64_t id : generate.promptIds)
        printStep(stream.get(), id);
      std::fflush(stdout);
    };
    generate.onToken = [&](int64_t id) {
      printStep(stream.get(), id);
      std::fflush(stdout);
    };
    generate.onFinish = [&] {
      const char *text = nullptr;
      size_t size = 0;
      throwIfFailed(tfm_decode_stream_finish(stream.get(), &text, &size));
      fmt::print("{}\n", std::string_view(text, size));
    };
  }
  if (generate.promptPath.empty())
    fail("--generate needs the prompt: --input input_ids=PROMPT.npy, or "
         "--text TEXT with --tokenizer");
  for (const NamedFile &output : options.outputs) {
    if (output.name != "logits")
      fail(fmt::format("--generate writes only --output logits=FILE (the "
                       "prompt's), not '{}'",
                       output.name));
    generate.logitsPath = output.path;
  }
  if (!options.expected.empty() || options.bench > 0)
    fail("--generate takes neither --expected nor --bench");
  PoolPtr pool;
  if (options.threads != 1) {
    tfm_thread_pool *rawPool = nullptr;
    check(tfm_thread_pool_create(static_cast<uint32_t>(options.threads),
                                 &rawPool));
    pool.reset(rawPool);
  }
  return tfm::run::generate(model, generate, tfm_thread_pool_exec(pool.get()));
}

int main(int argc, char **argv) {
  if (argc == 2 && std::strcmp(argv[1], "--gpu-info") == 0)
    return printGpuInfo();
  Options options = parseOptions(argc, argv);

  tfm_model *rawModel = nullptr;
  check(tfm_model_load_with_weights(
      options.artifact.c_str(),
      options.weights.empty() ? nullptr : options.weights.c_str(), &rawModel));
  ModelPtr model(rawModel);

  if (options.generate > 0)
    return runGenerate(model.get(), options);

  size_t inputCount = tfm_model_input_count(model.get());
  std::vector<OwnedTensor> inputFiles(inputCount);
  std::vector<bool> given(inputCount, false);
  for (const NamedFile &input : options.inputs) {
    size_t index = findTensor(model.get(), true, input.name, "--input");
    if (given[index])
      fail(fmt::format("--input: '{}' is given twice", input.name));
    given[index] = true;
    check(tfm_npy_read(input.path.c_str(), &inputFiles[index].tensor));
    // Said here, where the file is known: a '<u2' file reads as bf16, which
    // the runtime's own message could not explain.
    tfm_dtype dtype = inputFiles[index].tensor.dtype;
    if (dtype != tfm_model_input_dtype(model.get(), index))
      fail(fmt::format("input '{}': {} holds {} (numpy {}) but the model "
                       "expects {}",
                       input.name, input.path, tfm_dtype_name(dtype),
                       npyDescr(dtype), describeInput(model.get(), index)));
  }
  if (!options.texts.empty())
    tokenize(options, model.get(), inputFiles, given);
  std::string missing, all;
  for (size_t i = 0; i < inputCount; ++i) {
    const char *name = tfm_model_input_name(model.get(), i);
    all += fmt::format("{}{}", i ? ", " : "", name);
    if (!given[i])
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", name);
  }
  if (!missing.empty())
    fail(fmt::format("missing --input for {} (model '{}' takes: {})", missing,
                     tfm_model_name(model.get()), all));

  std::vector<tfm_tensor> inputs;
  for (const OwnedTensor &input : inputFiles)
    inputs.push_back(input.tensor);
  size_t outputCount = tfm_model_output_count(model.get());
  std::vector<OwnedTensor> outputFiles(outputCount);
  std::vector<tfm_tensor> outputs(outputCount);
  check(tfm_model_infer_output_shapes(model.get(), inputs.data(), inputCount,
                                      outputs.data(), outputCount));
  for (size_t o = 0; o < outputCount; ++o) {
    check(tfm_tensor_allocate(outputs[o].dtype, outputs[o].rank,
                              outputs[o].shape, &outputFiles[o].tensor));
    outputs[o] = outputFiles[o].tensor;
  }
  // Resolve the names of --output and --expected before the (maybe long) run.
  std::vector<std::pair<size_t, std::string>> writes, comparisons, cacheWrites;
  for (const NamedFile &output : options.outputs) {
    // A cache is an input the run updates: --output writes it afterwards.
    bool isCache = false;
    for (size_t i = 0; i < inputCount; ++i)
      if (output.name == tfm_model_input_name(model.get(), i) &&
          tfm_model_input_is_cache(model.get(), i)) {
        cacheWrites.emplace_back(i, output.path);
        isCache = true;
      }
    if (!isCache)
      writes.emplace_back(
          findTensor(model.get(), false, output.name, "--output"), output.path);
  }
  for (const NamedFile &expected : options.expected)
    comparisons.emplace_back(
        findTensor(model.get(), false, expected.name, "--expected"),
        expected.path);

  // One thread needs no pool: the model runs serially, exec = NULL.
  PoolPtr pool;
  if (options.threads != 1) {
    tfm_thread_pool *rawPool = nullptr;
    check(tfm_thread_pool_create(static_cast<uint32_t>(options.threads),
                                 &rawPool));
    pool.reset(rawPool);
  }
  const tfm_exec *exec = tfm_thread_pool_exec(pool.get());
  uint32_t threads = exec ? exec->num_threads : 1;

  // A GPU model reads and writes device memory: mirrors of the tensors.
  bool cuda = std::strcmp(tfm_model_device(model.get()), "cuda") == 0;
  tfm::run::DeviceTensors device;
  if (cuda) {
    checkBools(model.get(), inputs);
    check(device.create(inputs, outputs));
  }
  auto runOnce = [&](double *deviceMilliseconds) {
    if (!cuda) {
      check(tfm_model_run_with_exec(model.get(), inputs.data(), inputCount,
                                    outputs.data(), outputCount, exec));
      return;
    }
    check(device.run(model.get(), deviceMilliseconds));
  };
  double deviceMilliseconds = 0;
  runOnce(&deviceMilliseconds);
  if (cuda)
    check(device.copyOutputs(outputs));

  if (!options.quiet) {
    for (size_t o = 0; o < outputCount; ++o)
      fmt::print("{}: {}\n{}\n", tfm_model_output_name(model.get(), o),
                 describe(outputs[o]), TensorPrinter(outputs[o]).print());
  }
  for (const auto &[index, path] : writes)
    check(tfm_npy_write(path.c_str(), &outputs[index]));
  for (const auto &[index, path] : cacheWrites) {
    // The run appended to the device's copy of the cache.
    if (cuda)
      check(device.copyInput(index, inputs[index]));
    check(tfm_npy_write(path.c_str(), &inputs[index]));
  }
  bool allClose = true;
  for (const auto &[index, path] : comparisons) {
    OwnedTensor expected;
    check(tfm_npy_read(path.c_str(), &expected.tensor));
    allClose &= compare(tfm_model_output_name(model.get(), index),
                        outputs[index], expected.tensor, options.rtol,
                        options.atol, options.atolScaled);
  }

  if (options.bench > 0) {
    using Clock = std::chrono::steady_clock;
    // The run above was the warm-up.
    std::vector<double> times;
    for (long i = 0; i < options.bench; ++i) {
      Clock::time_point start = Clock::now();
      runOnce(&deviceMilliseconds);
      times.push_back(cuda ? deviceMilliseconds
                           : milliseconds(Clock::now() - start));
    }
    std::sort(times.begin(), times.end());
    double median =
        times.size() % 2
            ? times[times.size() / 2]
            : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
    std::string rate;
    if (options.flops >= 0)
      rate = fmt::format(", {:.2f} GFLOP/s",
                         options.flops / (times.front() * 1e6));
    if (cuda)
      fmt::print("bench: {} runs on the GPU, device time min {:.4f} ms, "
                 "median {:.4f} ms{}\n",
                 options.bench, times.front(), median, rate);
    else
      fmt::print("bench: {} runs on {} thread{}, min {:.4f} ms, median "
                 "{:.4f} ms{}\n",
                 options.bench, threads, threads == 1 ? "" : "s", times.front(),
                 median, rate);
  }
  std::fflush(stdout);
  return allClose ? 0 : kExitMismatch;
}
