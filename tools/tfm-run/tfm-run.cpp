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
#include "Failure.h"
#include "Generate.h"
#include "Options.h"
#include "TensorText.h"
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

using namespace tfm::run;

namespace {

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
                 describe(outputs[o]), formatTensor(outputs[o]));
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
