//===- DecoderCheckpointTests.cpp - One llama.tfm, every format -----------===//
//
// examples/llama/llama.tfm, unedited, compiled against each checkpoint of
// tests/reference/decoders: tiny random transformers decoders (Llama with
// grouped-query attention, Qwen2 with q/k/v biases, Gemma 3 with five
// local layers in a sliding window and a global one, Qwen3 with QK-norm,
// Phi-3 with fused projections, partial rotary dims and a window, and with
// LongRoPE), each as transformers
// saves it (model.safetensors + config.json) and as llama.cpp's converter
// writes it (model.gguf). Checked against what transformers computed: the
// logits of a batch, and greedy generation run as a prefill then one
// decode step per token over the K/V caches, each step's logits against
// transformers' own cached decode step, and its tokens against
// `generate`'s.
//
//===----------------------------------------------------------------------===//
#include "DecoderFixtures.h"
#include "Harness.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

using namespace e2e;

namespace {
constexpr int64_t kCapacity = 1024;

/// The caches' positions: LongRoPE takes its short factors while the caches
/// hold no more than the original context (64 in phi3-longrope), as
/// transformers does for sequences that short; llama.tfm's default, 1024,
/// would take the long ones, as llama.cpp does for a context that long.
int64_t capacityOf(const std::string &arch) {
  return arch == "phi3-longrope" ? 64 : kCapacity;
}

BuildOptions buildOptions(const std::string &arch) {
  BuildOptions options;
  if (capacityOf(arch) != kCapacity)
    options.configOverrides = {"tfm.capacity=" +
                               std::to_string(capacityOf(arch))};
  return options;
}

std::shared_ptr<Model> example(const std::string &arch, const std::string &file,
                               const BuildOptions &options) {
  static std::map<std::string, std::shared_ptr<Model>> cache;
  std::string key = arch + "/" + file;
  for (const std::string &set : options.configOverrides)
    key += " --set " + set;
  std::shared_ptr<Model> &model = cache[key];
  if (!model)
    model = Model::buildFiles(sourceDir() + "/examples/llama/llama.tfm",
                              decoderFixtureDir(arch) + "/" + file, options);
  return model;
}

void checkClose(const std::vector<double> &got, const std::vector<double> &want,
                const std::string &what) {
  Comparison c = allClose(got, want, 1e-4, 1e-4);
  INFO(what << ": " << c.message);
  CHECK(c.ok);
}

/// Prefill of the batch [2, 7] at past 0: transformers' logits.
std::vector<double> batchLogits(const std::string &arch,
                                const std::string &file) {
  HostTensor input = decoderNpy(arch, "input_ids");
  int64_t batch = input.shape[0];
  std::vector<int64_t> shape = decoderCacheShape(arch, batch, capacityOf(arch));
  RunResult r =
      example(arch, file, buildOptions(arch))
          ->runOk(
              {input,
               HostTensor::i64({batch}, std::vector<int64_t>(size_t(batch), 0)),
               nanCache(shape), nanCache(shape)});
  HostTensor want = decoderNpy(arch, "logits");
  REQUIRE(r["logits"].shape == want.shape);
  std::vector<double> got = r["logits"].toDoubles();
  checkClose(got, want.toDoubles(), arch + " " + file + " logits");
  return got;
}

/// Greedy decoding over the caches: the prompt's prefill, then one token a
/// step at past = the tokens so far.
void checkGenerate(const std::string &arch, const std::string &file) {
  std::shared_ptr<Model> model = example(arch, file, buildOptions(arch));
  std::vector<int64_t> tokens = tokenIds(decoderNpy(arch, "generate_prompt"));
  std::vector<int64_t> expected = tokenIds(decoderNpy(arch, "generate_tokens"));
  HostTensor decode = decoderNpy(arch, "decode_logits");
  int64_t steps = decode.shape[0], vocab = decode.shape[1];
  REQUIRE(int64_t(expected.size()) == int64_t(tokens.size()) + steps);
  std::vector<double> want = decode.toDoubles();
  std::vector<int64_t> shape = decoderCacheShape(arch, 1, capacityOf(arch));
  std::vector<HostTensor> inputs = {
      HostTensor::i64({1, int64_t(tokens.size())}, tokens),
      HostTensor::i64({1}, {0}), nanCache(shape), nanCache(shape)};
  for (int64_t step = 0; step < steps; ++step) {
    RunResult r = model->runOk(inputs);
    std::vector<double> all = r["logits"].toDoubles();
    std::vector<double> last(all.end() - vocab, all.end());
    checkClose(last,
               std::vector<double>(want.begin() + step * vocab,
                                   want.begin() + (step + 1) * vocab),
               arch + " " + file + " decode step " + std::to_string(step));
    int64_t next =
        int64_t(std::max_element(last.begin(), last.end()) - last.begin());
    inputs[0] = HostTensor::i64({1, 1}, {next});
    inputs[1] = HostTensor::i64({1}, {int64_t(tokens.size())});
    tokens.push_back(next);
  }
  CHECK(tokens == expected);
}
} // namespace

TEST_CASE("decoders: one llama.tfm compiles transformers and GGUF "
          "checkpoints and matches transformers",
          "[decoders]") {
  for (const char *arch :
       {"llama", "qwen2", "gemma3", "qwen3", "phi3", "phi3-longrope"}) {
    DYNAMIC_SECTION(arch) {
      std::vector<double> hf = batchLogits(arch, "model.safetensors");
      std::vector<double> gguf = batchLogits(arch, "model.gguf");
      // The same f32 weights under the same names, the Q/K rows permuted
      // alike: the two artifacts compute the same operations.
      CHECK(hf == gguf);
      checkGenerate(arch, "model.safetensors");
      checkGenerate(arch, "model.gguf");
    }
  }
}

TEST_CASE("decoders: --set tfm.last_logits=true computes only each "
          "sequence's last logits, the same values",
          "[decoders]") {
  for (const char *arch : {"llama", "gemma3"}) {
    DYNAMIC_SECTION(arch) {
      HostTensor input = decoderNpy(arch, "input_ids");
      int64_t batch = input.shape[0], seq = input.shape[1];
      std::vector<int64_t> shape =
          decoderCacheShape(arch, batch, capacityOf(arch));
      BuildOptions last;
      last.configOverrides = {"tfm.last_logits=true"};
      std::vector<HostTensor> inputs = {
          input,
          HostTensor::i64({batch}, std::vector<int64_t>(size_t(batch), 0)),
          nanCache(shape), nanCache(shape)};
      RunResult r = example(arch, "model.gguf", last)->runOk(inputs);
      HostTensor want = decoderNpy(arch, "logits");
      int64_t vocab = want.shape[2];
      REQUIRE(r["logits"].shape == std::vector<int64_t>{batch, 1, vocab});
      std::vector<double> all = want.toDoubles(), lastRows;
      for (int64_t b = 0; b < batch; ++b)
        lastRows.insert(lastRows.end(),
                        all.begin() + ((b * seq) + seq - 1) * vocab,
                        all.begin() + (b * seq + seq) * vocab);
      checkClose(r["logits"].toDoubles(), lastRows,
                 std::string(arch) + " last logits");
      // A decode step (seq 1) keeps its one position.
      inputs[0] =
          HostTensor::i64({batch, 1}, std::vector<int64_t>(size_t(batch), 3));
      inputs[1] =
          HostTensor::i64({batch}, std::vector<int64_t>(size_t(batch), seq));
      CHECK(example(arch, "model.gguf", last)->runOk(inputs)["logits"].shape ==
            std::vector<int64_t>{batch, 1, vocab});
    }
  }
}

TEST_CASE("decoders: a sharded Gemma3ForConditionalGeneration checkpoint "
          "compiles as its text model",
          "[decoders]") {
  // gemma3-vlm holds gemma3's weights as Gemma 3 4B and larger are
  // published (shards, "language_model.model." names, a text_config that
  // leaves Gemma3TextConfig's defaults out): the same artifact, whether
  // --weights names the directory or the index.
  std::vector<double> text = batchLogits("gemma3", "model.safetensors");
  std::vector<double> vlm = batchLogits("gemma3", "../gemma3-vlm");
  CHECK(text == vlm);
  checkGenerate("gemma3", "../gemma3-vlm/model.safetensors.index.json");
}

namespace {
/// `model`'s logits of the batch prefill, then of the first sequence's
/// prefill and 6 decode steps over the caches. The steps feed `tokens`; an
/// empty `tokens` is filled with this model's greedy choices, so that a
/// second model runs the same sequence.
std::vector<std::vector<double>>
prefillAndDecode(Model &model, const std::string &arch,
                 std::vector<int64_t> &tokens) {
  HostTensor input = decoderNpy(arch, "input_ids");
  int64_t batch = input.shape[0], seq = input.shape[1];
  std::vector<int64_t> shape = decoderCacheShape(arch, batch, capacityOf(arch));
  std::vector<std::vector<double>> all;
  all.push_back(model
                    .runOk({input,
                            HostTensor::i64({batch}, std::vector<int64_t>(
                                                         size_t(batch), 0)),
                            nanCache(shape), nanCache(shape)})["logits"]
                    .toDoubles());
  std::vector<int64_t> batchIds = tokenIds(input);
  std::vector<int64_t> prompt(batchIds.begin(), batchIds.begin() + seq);
  shape = decoderCacheShape(arch, 1, capacityOf(arch));
  std::vector<HostTensor> inputs = {HostTensor::i64({1, seq}, prompt),
                                    HostTensor::i64({1}, {0}), nanCache(shape),
                                    nanCache(shape)};
  std::vector<int64_t> sequence = prompt;
  // The prompt's prefill, then 6 decode steps.
  for (size_t step = 0; step <= 6; ++step) {
    std::vector<double> logits = model.runOk(inputs)["logits"].toDoubles();
    int64_t vocab = int64_t(logits.size()) / inputs[0].shape[1];
    std::vector<double> last(logits.end() - vocab, logits.end());
    all.push_back(last);
    if (step == 6)
      break;
    if (tokens.size() <= step)
      tokens.push_back(
          int64_t(std::max_element(last.begin(), last.end()) - last.begin()));
    inputs[0] = HostTensor::i64({1, 1}, {tokens[step]});
    inputs[1] = HostTensor::i64({1}, {int64_t(sequence.size())});
    sequence.push_back(tokens[step]);
  }
  return all;
}
} // namespace

TEST_CASE("decoders: Qwen2 and Gemma 3 GGUF files of 4/5/8-bit blocks run "
          "in their blocks and match the same file dequantized",
          "[decoders]") {
  // model-q.gguf: Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 linear layers, the token
  // embedding in Q8_0 gathered row by row and multiplied as the tied LM
  // head (Gemma scales it by sqrt(hidden) first), norms, biases and
  // ffn_down (rows of 48) in F32. Against the same file compiled with
  // --keep-fp32 '*' (every weight dequantized to f32, which e2e.decoders
  // checks against transformers on f32 weights): the blocks' inputs are
  // rounded per block of 32 (llama.cpp's Q8 activations), which moves
  // these logits (standard deviation 0.12: a small embedding, tied) by up
  // to 1.25e-2 (measured, AVX-512 host); 3e-2 absolute is allowed. A wrong
  // block scale, offset or nibble moves them by the order of the logits
  // themselves.
  for (const char *arch : {"qwen2", "gemma3"}) {
    DYNAMIC_SECTION(arch) {
      std::string weights = decoderFixtureDir(arch) + "/model-q.gguf";
      std::string source = sourceDir() + "/examples/llama/llama.tfm";
      std::shared_ptr<Model> blocks = Model::buildFiles(source, weights);
      BuildOptions f32;
      f32.keepFp32 = {"*"};
      std::shared_ptr<Model> dequantized =
          Model::buildFiles(source, weights, f32);
      std::vector<int64_t> tokens;
      std::vector<std::vector<double>> want =
          prefillAndDecode(*dequantized, arch, tokens);
      std::vector<std::vector<double>> got =
          prefillAndDecode(*blocks, arch, tokens);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        INFO((i == 0   ? std::string("batch prefill")
              : i == 1 ? std::string("prompt prefill")
                       : "decode step " + std::to_string(i - 2)));
        Comparison c = allClose(got[i], want[i], 0, 3e-2);
        INFO(c.message);
        CHECK(c.ok);
      }
      // The dequantized weights are the file's, not a copy of the f32
      // checkpoint's: 4-bit weights move the logits visibly.
      Comparison exact =
          allClose(want[0], decoderNpy(arch, "logits").toDoubles(), 1e-4, 1e-4);
      CHECK_FALSE(exact.ok);
    }
  }
}
