//===- Generate.cpp - tfm-run --generate: greedy decoding -----------------===//
//
// The model's interface is the one docs/generation.md describes: inputs
// `input_ids: i64[batch, seq]`, `past: i64[batch]` (the tokens each
// sequence has cached) and caches, output `logits [batch, seq, vocab]`.
// Everything but the prompt is allocated here: the caches (zeros, their
// named dims bound by the prompt's batch), the offsets, and the next
// step's ids, taken greedily (the first largest logit, as torch.argmax).
//
//===----------------------------------------------------------------------===//

#include "Generate.h"

#include <algorithm>
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

using namespace tfm::run;

namespace {
/// A tensor whose data the runtime allocated.
struct Owned {
  tfm_tensor tensor{};
  Owned() = default;
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
  Owned(Owned &&other) noexcept : tensor(other.tensor) {
    other.tensor.data = nullptr;
  }
  Owned &operator=(Owned &&other) noexcept {
    std::swap(tensor, other.tensor);
    return *this;
  }
  ~Owned() { tfm_tensor_release_data(&tensor); }
};

/// An error for the user: the message, then exit code 2.
struct Failure {
  std::string message;
};

void check(tfm_status status, const char *what) {
  if (!status)
    return;
  std::string message = tfm_status_message(status);
  tfm_status_free(status);
  throw Failure{fmt::format("{}: {}", what, message)};
}

Owned allocate(tfm_dtype dtype, std::vector<int64_t> shape) {
  Owned owned;
  check(tfm_tensor_allocate(dtype, int32_t(shape.size()), shape.data(),
                            &owned.tensor),
        "allocating a tensor");
  return owned;
}

std::optional<size_t> findInput(const tfm_model *model, const char *name) {
  for (size_t i = 0; i < tfm_model_input_count(model); ++i)
    if (std::strcmp(tfm_model_input_name(model, i), name) == 0)
      return i;
  return std::nullopt;
}

/// The model's inputs as --generate feeds them.
struct Interface {
  size_t ids = 0, past = 0, logits = 0;
  std::vector<size_t> caches;
};

Interface readInterface(const tfm_model *model) {
  Interface in;
  std::optional<size_t> ids = findInput(model, "input_ids");
  std::optional<size_t> past = findInput(model, "past");
  if (!ids || !past)
    throw Failure{fmt::format(
        "--generate needs a decoder with a KV cache (docs/generation.md): "
        "inputs 'input_ids' and 'past', and caches; model '{}' has no '{}'",
        tfm_model_name(model), ids ? "past" : "input_ids")};
  in.ids = *ids;
  in.past = *past;
  if (tfm_model_input_dtype(model, in.ids) != TFM_DTYPE_I64 ||
      tfm_model_input_rank(model, in.ids) != 2)
    throw Failure{"--generate: 'input_ids' must be i64 [batch, seq]"};
  if (tfm_model_input_dtype(model, in.past) != TFM_DTYPE_I64 ||
      tfm_model_input_rank(model, in.past) != 1)
    throw Failure{"--generate: 'past' must be i64 [batch]"};
  for (size_t i = 0; i < tfm_model_input_count(model); ++i) {
    if (i == in.ids || i == in.past)
      continue;
    if (!tfm_model_input_is_cache(model, i))
      throw Failure{fmt::format(
          "--generate feeds 'input_ids', 'past' and the caches; the model's "
          "input '{}' is none of them",
          tfm_model_input_name(model, i))};
    in.caches.push_back(i);
  }
  if (in.caches.empty())
    throw Failure{"--generate needs a model with caches (docs/generation.md): "
                  "without one every step would recompute the sequence"};
  bool found = false;
  for (size_t o = 0; o < tfm_model_output_count(model); ++o)
    if (std::strcmp(tfm_model_output_name(model, o), "logits") == 0) {
      in.logits = o;
      found = true;
    }
  if (!found || tfm_model_output_rank(model, in.logits) != 3 ||
      tfm_model_output_dtype(model, in.logits) != TFM_DTYPE_F32)
    throw Failure{"--generate needs an output 'logits': f32 [batch, seq, "
                  "vocab]"};
  return in;
}

/// A cache of the model's declared shape with its symbols bound: the ids'
/// batch, and a named capacity (the dimension before the features) sized
/// for the `capacity` tokens this generation stores.
Owned allocateCache(const tfm_model *model, size_t index,
                    const char *batchSymbol, int64_t batch, int64_t capacity) {
  std::vector<int64_t> shape;
  int32_t rank = tfm_model_input_rank(model, index);
  for (int32_t d = 0; d < rank; ++d) {
    const char *symbol = nullptr;
    int64_t size = tfm_model_input_dim(model, index, d, &symbol);
    if (size < 0) {
      if (symbol && batchSymbol && std::strcmp(symbol, batchSymbol) == 0)
        size = batch;
      else if (d == rank - 2)
        size = capacity;
      else
        throw Failure{fmt::format(
            "--generate: cache '{}' has a dimension '{}' that only the "
            "caller can size",
            tfm_model_input_name(model, index), symbol ? symbol : "?")};
    }
    shape.push_back(size);
  }
  return allocate(tfm_model_input_dtype(model, index), std::move(shape));
}

double milliseconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

int generateGreedily(tfm_model *model, const GenerateOptions &options,
                     const tfm_exec *exec) {
  if (std::strcmp(tfm_model_device(model), "cpu") != 0)
    throw Failure{"--generate runs CPU artifacts (a GPU artifact: use its "
                  "entry point from the app, docs/gpu.md)"};
  Interface in = readInterface(model);
  Owned prompt;
  if (!options.promptIds.empty()) {
    prompt = allocate(TFM_DTYPE_I64, {int64_t(options.promptIds.size())});
    std::memcpy(prompt.tensor.data, options.promptIds.data(),
                options.promptIds.size() * sizeof(int64_t));
  } else {
    check(tfm_npy_read(options.promptPath.c_str(), &prompt.tensor),
          options.promptPath.c_str());
  }
  if (prompt.tensor.dtype != TFM_DTYPE_I64 ||
      (prompt.tensor.rank != 1 && prompt.tensor.rank != 2))
    throw Failure{fmt::format("{}: the prompt must be int64 [seq] or "
                              "[batch, seq] token ids",
                              options.promptPath)};
  int64_t batch = prompt.tensor.rank == 2 ? prompt.tensor.shape[0] : 1;
  int64_t length = prompt.tensor.shape[prompt.tensor.rank - 1];
  if (batch < 1 || length < 1)
    throw Failure{fmt::format("{}: an empty prompt", options.promptPath)};
  prompt.tensor.rank = 2;
  prompt.tensor.shape[0] = batch;
  prompt.tensor.shape[1] = length;

  const char *batchSymbol = nullptr;
  tfm_model_input_dim(model, in.ids, 0, &batchSymbol);
  size_t inputCount = tfm_model_input_count(model);
  size_t outputCount = tfm_model_output_count(model);
  std::vector<Owned> caches;
  std::vector<tfm_tensor> inputs(inputCount);
  for (size_t index : in.caches) {
    // A named capacity holds the prompt and every generated token but
    // the last (which is never fed back).
    caches.push_back(allocateCache(model, index, batchSymbol, batch,
                                   length + std::max<long>(options.tokens, 1)));
    inputs[index] = caches.back().tensor;
  }
  Owned past = allocate(TFM_DTYPE_I64, {batch});
  inputs[in.past] = past.tensor;

  // One run: outputs allocated for its shapes (prefill's, then decode's).
  std::vector<Owned> outputStorage;
  std::vector<tfm_tensor> outputs(outputCount);
  auto step = [&](const tfm_tensor &ids, const char *what) {
    inputs[in.ids] = ids;
    std::vector<tfm_tensor> shapes(outputCount);
    check(tfm_model_infer_output_shapes(model, inputs.data(), inputCount,
                                        shapes.data(), outputCount),
          what);
    if (outputStorage.empty() ||
        std::memcmp(shapes[in.logits].shape, outputs[in.logits].shape,
                    sizeof(int64_t) * TFM_MAX_RANK) != 0) {
      outputStorage.clear();
      for (size_t o = 0; o < outputCount; ++o) {
        outputStorage.push_back(
            allocate(shapes[o].dtype,
                     std::vector<int64_t>(shapes[o].shape,
                                          shapes[o].shape + shapes[o].rank)));
        outputs[o] = outputStorage.back().tensor;
      }
    }
    auto start = std::chrono::steady_clock::now();
    check(tfm_model_run_with_exec(model, inputs.data(), inputCount,
                                  outputs.data(), outputCount, exec),
          what);
    return milliseconds(std::chrono::steady_clock::now() - start);
  };
  // The first largest logit of each sequence's last position.
  auto greedy = [&](std::vector<int64_t> &next) {
    const tfm_tensor &logits = outputs[in.logits];
    int64_t seq = logits.shape[1], vocab = logits.shape[2];
    const float *data = static_cast<const float *>(logits.data);
    for (int64_t b = 0; b < batch; ++b) {
      const float *row = data + (b * seq + seq - 1) * vocab;
      int64_t best = 0;
      for (int64_t v = 1; v < vocab; ++v)
        if (row[v] > row[best])
          best = v;
      next[size_t(b)] = best;
    }
  };

  std::vector<std::vector<int64_t>> generated(static_cast<size_t>(batch));
  std::vector<int64_t> next(static_cast<size_t>(batch));
  // An id past the logits' vocabulary would index outside the embedding:
  // a tokenizer made for another model.
  {
    inputs[in.ids] = prompt.tensor;
    std::vector<tfm_tensor> shapes(outputCount);
    check(tfm_model_infer_output_shapes(model, inputs.data(), inputCount,
                                        shapes.data(), outputCount),
          "prefill");
    int64_t vocab = shapes[in.logits].shape[2];
    const auto *ids = static_cast<const int64_t *>(prompt.tensor.data);
    for (int64_t i = 0; i < batch * length; ++i)
      if (ids[i] < 0 || ids[i] >= vocab)
        throw Failure{fmt::format(
            "the prompt's token {} is id {}, outside the model's vocabulary "
            "[0, {}){}",
            i % length, ids[i], vocab,
            options.promptIds.empty() ? ""
                                      : " (a tokenizer of another model?)")};
  }
  if (options.onStart)
    options.onStart();
  double prefill = step(prompt.tensor, "prefill");
  if (!options.logitsPath.empty())
    check(tfm_npy_write(options.logitsPath.c_str(), &outputs[in.logits]),
          options.logitsPath.c_str());
  greedy(next);
  Owned ids = allocate(TFM_DTYPE_I64, {batch, 1});
  double decode = 0;
  for (long t = 0; t < options.tokens; ++t) {
    for (int64_t b = 0; b < batch; ++b)
      generated[size_t(b)].push_back(next[size_t(b)]);
    if (options.onToken)
      options.onToken(next[0]);
    if (t + 1 == options.tokens)
      break;
    auto *pastData = static_cast<int64_t *>(past.tensor.data);
    auto *idsData = static_cast<int64_t *>(ids.tensor.data);
    for (int64_t b = 0; b < batch; ++b) {
      pastData[b] = length + t;
      idsData[b] = next[size_t(b)];
    }
    std::string what =
        fmt::format("decode step {} (position {})", t + 1, length + t);
    decode += step(ids.tensor, what.c_str());
    greedy(next);
  }
  if (options.onFinish)
    options.onFinish();
  for (const std::vector<int64_t> &sequence : generated)
    fmt::print("{}\n", fmt::join(sequence, " "));
  long steps = options.tokens - 1;
  fmt::print("prefill: {:.3f} ms for {} token{} x {}; decode: {}\n", prefill,
             length, length == 1 ? "" : "s", batch,
             steps > 0 ? fmt::format("{:.3f} ms/token over {} steps",
                                     decode / double(steps), steps)
                       : std::string("no steps"));
  std::fflush(stdout);
  return 0;
}
} // namespace

int tfm::run::generate(tfm_model *model, const GenerateOptions &options,
                       const tfm_exec *exec) {
  try {
    return generateGreedily(model, options, exec);
  } catch (const Failure &failure) {
    std::fflush(stdout);
    fmt::print(stderr, "tfm-run: error: {}\n", failure.message);
    return 2;
  } catch (const std::runtime_error &error) {
    std::fflush(stdout);
    fmt::print(stderr, "tfm-run: error: {}\n", error.what());
    return 2;
  }
}
