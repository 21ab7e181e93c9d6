//===- DecoderQuantFixtureTests.cpp - Decoder GGUF files of every type ----===//
//
// examples/llama/llama.tfm, unedited, compiled against the F16 and
// quantized GGUF files of tests/reference/decoders (Llama with
// grouped-query attention, Qwen2, Gemma 3): model-f16.gguf (2-D weights
// F16), model-q.gguf (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1) and
// <arch>-kquant/model.gguf (a Q4_K_M-like mix of Q4_K, Q5_K and Q6_K over
// rows of whole 256-blocks). The references are float64 transformers
// forward passes on each file's own weights as `gguf.quants.dequantize`
// reads them (generate.py): the batch's logits, and greedy decoding after
// a prompt, each step's logits. Each file runs as one portable artifact at
// CPU level 1 (SSE) and at the host's own level: the batch prefill, then
// the prompt's prefill and one decode step per token over the K/V caches,
// fed the reference's tokens so that every step compares the same
// sequence; the decode steps against tfm's own prefill of the whole
// sequence; and tfm's greedy choices against the reference's wherever the
// reference's top-2 margin is wider than what tfm may differ by. The
// quantized files also against float64 with the block layers' inputs
// rounded to 8 bits as tfm rounds them, and compiled with --keep-fp32 '*'.
//
//===----------------------------------------------------------------------===//
#include "DecoderFixtures.h"
#include "Harness.h"
#include "LowPrecisionHarness.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

using namespace e2e;

namespace {
constexpr int64_t kCapacity = 1024;

double stddev(const std::vector<double> &v) {
  double mean = 0, sq = 0;
  for (double x : v)
    mean += x;
  mean /= double(v.size());
  for (double x : v)
    sq += (x - mean) * (x - mean);
  return std::sqrt(sq / double(v.size()));
}

double maxAbsDiff(const std::vector<double> &a, const std::vector<double> &b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

/// One GGUF file of the fixtures and its float64 references
/// (<stem>.logits.npy, .decode_logits.npy, .generate_tokens.npy).
struct QuantFixture {
  std::string folder; ///< under tests/reference/decoders
  std::string stem;   ///< the file without .gguf
  /// The bound on |tfm - float64| over all logits, as a fraction of the
  /// reference batch logits' standard deviation (see the test cases).
  double tolerance;
  /// Whether the file holds blocks that --keep-fp32 '*' dequantizes.
  bool blocks;
};

/// What one run of the fixture through tfm gives.
struct Outputs {
  std::vector<double> batch;              ///< [2, 7, vocab]
  std::vector<std::vector<double>> steps; ///< each step's last logits
  std::vector<double> recomputed;         ///< the whole sequence's
  std::vector<int64_t> greedy;            ///< tfm's argmax per step
};

std::vector<double> lastRow(const std::vector<double> &all, int64_t vocab) {
  return std::vector<double>(all.end() - vocab, all.end());
}

int64_t argmax(const std::vector<double> &v) {
  return int64_t(std::max_element(v.begin(), v.end()) - v.begin());
}

/// The batch prefill; the prompt's prefill and a decode step for each but
/// the last of the reference's tokens; the prefill of the whole sequence.
Outputs runFixture(const Model &model, const std::string &folder,
                   const std::vector<int64_t> &reference) {
  Outputs out;
  HostTensor input = decoderNpy(folder, "input_ids");
  int64_t batch = input.shape[0];
  std::vector<int64_t> shape = decoderCacheShape(folder, batch, kCapacity);
  out.batch =
      model
          .runOk(
              {input,
               HostTensor::i64({batch}, std::vector<int64_t>(size_t(batch), 0)),
               nanCache(shape), nanCache(shape)})["logits"]
          .toDoubles();
  std::vector<int64_t> prompt = tokenIds(decoderNpy(folder, "generate_prompt"));
  int64_t promptLength = int64_t(prompt.size());
  int64_t steps = int64_t(reference.size()) - promptLength;
  shape = decoderCacheShape(folder, 1, kCapacity);
  std::vector<HostTensor> inputs = {HostTensor::i64({1, promptLength}, prompt),
                                    HostTensor::i64({1}, {0}), nanCache(shape),
                                    nanCache(shape)};
  int64_t vocab = 0;
  for (int64_t step = 0; step < steps; ++step) {
    std::vector<double> all = model.runOk(inputs)["logits"].toDoubles();
    vocab = int64_t(all.size()) / inputs[0].shape[1];
    out.steps.push_back(lastRow(all, vocab));
    out.greedy.push_back(argmax(out.steps.back()));
    int64_t position = promptLength + step;
    inputs[0] = HostTensor::i64({1, 1}, {reference[size_t(position)]});
    inputs[1] = HostTensor::i64({1}, {position});
  }
  // The sequence without its last token, at once into fresh caches.
  std::vector<int64_t> sequence(reference.begin(), reference.end() - 1);
  std::vector<double> all =
      model
          .runOk({HostTensor::i64({1, int64_t(sequence.size())}, sequence),
                  HostTensor::i64({1}, {0}), nanCache(shape),
                  nanCache(shape)})["logits"]
          .toDoubles();
  out.recomputed.assign(all.end() - steps * vocab, all.end());
  return out;
}

/// tfm against the float64 forward whose block layers round their inputs
/// as tfm's GEMM does (<stem>.q8act.*), row by row (each position's
/// logits: the batch's 14 and the 8 steps'). On the same operands only f32
/// rounding remains (measured <= 1.5e-6 x std), except where an input lies
/// within f32 rounding of a rounding boundary (x / d next to k + 1/2) and
/// tfm's and float64's roundings differ by one step: that row and the later
/// ones of its sequence move, measured up to 0.035 x std (level 1, whose f32
/// sums are ordered otherwise, meets more of them than the host's). So at least
/// half the rows must be within 1e-4 x std, which a wrong input block size
/// or scale (or truncating instead of rounding) would break in every row, and
/// every row within 0.05 x std.
void checkRoundedInputs(const QuantFixture &f, const Outputs &got,
                        int64_t vocab, double sd, const std::string &what) {
  std::vector<double> want =
      decoderNpy(f.folder, f.stem + ".q8act.logits").toDoubles();
  std::vector<double> wantSteps =
      decoderNpy(f.folder, f.stem + ".q8act.decode_logits").toDoubles();
  want.insert(want.end(), wantSteps.begin(), wantSteps.end());
  std::vector<double> all = got.batch;
  for (const std::vector<double> &s : got.steps)
    all.insert(all.end(), s.begin(), s.end());
  REQUIRE(all.size() == want.size());
  int64_t rows = int64_t(all.size()) / vocab, moved = 0;
  double worst = 0, worstExact = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double e = maxAbsDiff(std::vector<double>(all.begin() + r * vocab,
                                              all.begin() + (r + 1) * vocab),
                          std::vector<double>(want.begin() + r * vocab,
                                              want.begin() + (r + 1) * vocab));
    worst = std::max(worst, e);
    if (e > 1e-4 * sd)
      ++moved;
    else
      worstExact = std::max(worstExact, e);
  }
  UNSCOPED_INFO(what << " vs float64 on tfm's rounded inputs: "
                     << worstExact / sd << " x std on " << rows - moved
                     << " of " << rows << " rows, the others up to "
                     << worst / sd << " x std");
  CHECK(2 * moved <= rows);
  CHECK(worst <= 0.05 * sd);
}

void checkFixture(const QuantFixture &f) {
  std::string file = decoderFixtureDir(f.folder) + "/" + f.stem + ".gguf";
  BuildOptions options;
  options.cpu = "portable";
  std::shared_ptr<Model> model = Model::buildFiles(
      sourceDir() + "/examples/llama/llama.tfm", file, options);
  std::vector<double> wantBatch =
      decoderNpy(f.folder, f.stem + ".logits").toDoubles();
  HostTensor decode = decoderNpy(f.folder, f.stem + ".decode_logits");
  int64_t steps = decode.shape[0], vocab = decode.shape[1];
  std::vector<double> wantSteps = decode.toDoubles();
  std::vector<int64_t> reference =
      tokenIds(decoderNpy(f.folder, f.stem + ".generate_tokens"));
  double sd = stddev(wantBatch), bound = f.tolerance * sd;
  for (int level : {1, lowp::hostCpuLevel()}) {
    lowp::CpuLevelScope scope(level);
    std::shared_ptr<Model> copy = model->reload();
    Outputs got = runFixture(*copy, f.folder, reference);
    std::string what = f.folder + "/" + f.stem +
                       ".gguf at TFM_CPU_LEVEL=" + std::to_string(level);
    double worst = maxAbsDiff(got.batch, wantBatch);
    REQUIRE(int64_t(got.steps.size()) == steps);
    for (int64_t s = 0; s < steps; ++s) {
      std::vector<double> want(wantSteps.begin() + s * vocab,
                               wantSteps.begin() + (s + 1) * vocab);
      worst = std::max(worst, maxAbsDiff(got.steps[size_t(s)], want));
      // A greedy choice the reference makes by more than twice the bound
      // is one tfm must make too.
      std::vector<double> sorted = want;
      std::sort(sorted.rbegin(), sorted.rend());
      if (sorted[0] - sorted[1] > 2 * bound) {
        INFO(what << " decode step " << s << ": margin "
                  << sorted[0] - sorted[1]);
        CHECK(got.greedy[size_t(s)] == argmax(want));
      }
    }
    std::vector<double> stepsFlat;
    for (const std::vector<double> &s : got.steps)
      stepsFlat.insert(stepsFlat.end(), s.begin(), s.end());
    double recompute = maxAbsDiff(stepsFlat, got.recomputed);
    if (f.blocks)
      checkRoundedInputs(f, got, vocab, sd, what);
    // Measured figures, for the README (ctest -V, or -s).
    UNSCOPED_INFO(what << ": max |tfm - float64| " << worst << " = "
                       << worst / sd << " x std " << sd << " (bound "
                       << f.tolerance << " x std); decode vs recompute "
                       << recompute / sd << " x std");
    CHECK(worst <= bound);
    CHECK(recompute <= bound);
  }
  if (!f.blocks)
    return;
  // The same file with every weight dequantized to f32 at compile time
  // (--keep-fp32 '*') and f32 activations: tfm's dequantization against the
  // gguf package's, with nothing but f32 rounding between them.
  options.keepFp32 = {"*"};
  std::shared_ptr<Model> f32 = Model::buildFiles(
      sourceDir() + "/examples/llama/llama.tfm", file, options);
  Outputs got = runFixture(*f32, f.folder, reference);
  double worst = maxAbsDiff(got.batch, wantBatch);
  for (int64_t s = 0; s < steps; ++s) {
    std::vector<double> want(wantSteps.begin() + s * vocab,
                             wantSteps.begin() + (s + 1) * vocab);
    worst = std::max(worst, maxAbsDiff(got.steps[size_t(s)], want));
    std::vector<double> sorted = want;
    std::sort(sorted.rbegin(), sorted.rend());
    if (sorted[0] - sorted[1] > 2e-4 * sd)
      CHECK(got.greedy[size_t(s)] == argmax(want));
  }
  UNSCOPED_INFO(f.folder << "/" << f.stem << ".gguf with --keep-fp32 '*': "
                         << "max |tfm - float64| " << worst / sd << " x std");
  CHECK(worst <= 1e-4 * sd);
}
} // namespace

TEST_CASE("decoders: F16 GGUF files of Llama, Qwen2 and Gemma 3 match a "
          "float64 forward on their F16 weights at CPU levels 1 and host",
          "[quantdecoders]") {
  // F16 weights are exact in f32 and tfm multiplies f32 activations by
  // them, so tfm differs from float64 only by f32 rounding: measured up to
  // 3.9e-6 x std; 1e-4 x std is allowed. The F16 rounding itself moves the
  // logits by about 5e-3 x std from the f32 checkpoint's: checked too, so
  // that the references are seen to be the F16 file's.
  for (const char *arch : {"llama", "qwen2", "gemma3"}) {
    DYNAMIC_SECTION(arch) {
      checkFixture({arch, "model-f16", 1e-4, false});
      std::vector<double> f16 =
          decoderNpy(arch, "model-f16.logits").toDoubles();
      std::vector<double> f32 = decoderNpy(arch, "logits").toDoubles();
      double moved = maxAbsDiff(f16, f32) / stddev(f32);
      CHECK(moved > 1e-3);
      CHECK(moved < 2e-2);
    }
  }
}

TEST_CASE("decoders: Q8_0/Q4_0/Q4_1/Q5_0/Q5_1 and Q4_K/Q5_K/Q6_K GGUF files "
          "of Llama, Qwen2 and Gemma 3 match a float64 forward on their "
          "dequantized weights at CPU levels 1 and host",
          "[quantdecoders]") {
  // tfm multiplies quantized weights by activations it rounds to 8 bits
  // per block of 32 (16 for Q6_K), as llama.cpp does: each dot product
  // carries a relative error of up to about 1/254 of its block's largest
  // input, which the layers compound, and these tiny models (hidden 32, or
  // 256 with 4-bit weights) amplify. Measured on an AMX host at levels 1
  // and 6: 0.05-0.16 x the reference logits' standard deviation (llama's
  // model-q the most: an untied Q8_0 head over a 32-wide hidden state);
  // 0.25 x std is allowed. That alone could hide a small error in a block
  // kernel, so tfm is also held to the float64 forward that rounds the
  // block layers' inputs as tfm does (checkRoundedInputs: most rows to
  // f32 rounding), and each file is compiled with --keep-fp32 '*' (f32
  // weights dequantized at compile time, f32 activations) to match the
  // plain float64 reference within 1e-4 x std (measured 2-7e-6): tfm reads
  // every block as the gguf package does. Against the f32 checkpoint the
  // files' weights move the logits by 0.6-1.1 x std.
  for (const char *arch : {"llama", "qwen2", "gemma3"}) {
    DYNAMIC_SECTION(arch << " model-q.gguf") {
      checkFixture({arch, "model-q", 0.25, true});
    }
    DYNAMIC_SECTION(arch << "-kquant/model.gguf") {
      checkFixture({std::string(arch) + "-kquant", "model", 0.25, true});
    }
  }
}
