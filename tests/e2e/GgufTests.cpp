//===- GgufTests.cpp - Models compiled from GGUF weights ------------------===//
//
// A Llama decoder compiled with --weights llama.gguf (the gguf package's
// writer and quantizers made it: tests/reference/gguf/generate.py), its
// weights in eight ggml types, run as prefill then decode steps over its
// K/V caches against a float64 forward pass on the same dequantized
// weights. The reader's dequantization is checked bit for bit against the
// gguf package in runtime.gguf; here it is the whole path from the file to
// the model's logits. Then the errors a user meets with GGUF files.
//
// Weights of linear layers in Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and
// Q6_K run as such (their blocks kept, the input quantized per block of 32,
// 16 for Q6_K): those layers differ from f32 on the dequantized weights by
// the input's rounding, which the tolerances below state; compiled with
// --keep-fp32 '*' every layer is f32 and the decoder matches float64 to
// 1e-4. llama-kquant.gguf is the same decoder at hidden 256 in K-quants (a
// Q4_K_M-like mix). LowPrecisionGemmTests and KQuantTests check the block
// GEMMs themselves to f32 rounding on the quantized operands.
//
//===----------------------------------------------------------------------===//
#include "GgufWriter.h"
#include "Harness.h"
#include "Reference.h"
#include "ReferenceDecoder.h"
#include "tfm/gguf.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

using namespace e2e;
using ref::Array;

namespace {
constexpr int64_t kLayers = 2, kKvHeads = 2, kVocab = 40;

/// A Llama decoder fixture of generate.py: its file and its sizes.
struct Decoder {
  const char *file;
  int64_t hidden, heads, headDim;
};
/// Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, F16, BF16 and F32 weights.
constexpr Decoder kLlama{"llama.gguf", 64, 4, 16};
/// llama.gguf's decoder in F32 with a Llama 3.1 file's rope_freqs.weight.
constexpr Decoder kLlamaRopeFreqs{"llama-rope-freqs.gguf", 64, 4, 16};
/// K-quants as a Q4_K_M file mixes them: Q4_K, Q5_K and Q6_K.
constexpr Decoder kLlamaKQuant{"llama-kquant.gguf", 256, 4, 64};

std::string fixtures() { return sourceDir() + "/tests/reference/gguf/"; }

/// The f32 values the compiler binds for `name`, dequantized by the reader.
Array dequantized(const tfm::GgufFile &file, const std::string &name) {
  const tfm::GgufTensor *tensor = file.findTensor(name);
  if (!tensor)
    throw std::runtime_error("no tensor " + name + " in the fixture");
  std::vector<float> values(size_t(tensor->elementCount()));
  if (!tfm::ggufDequantize(tensor->type, tensor->data, tensor->elementCount(),
                           values.data()))
    throw std::runtime_error("cannot dequantize " + name);
  return ref::fromFloats(tensor->shape, values);
}

std::vector<std::vector<double>>
referenceLogits(const Decoder &decoder, const tfm::GgufFile &file,
                const std::vector<int64_t> &ids) {
  ref::LlamaConfig config{
      kLayers,         decoder.hidden, decoder.heads, kKvHeads,
      decoder.headDim, kVocab,         1e-5,          {}};
  config.rope.pairs = true;
  // Llama 3.1 and later: the file's divisors of the inverse frequencies.
  if (file.findTensor("rope_freqs.weight"))
    for (double f : dequantized(file, "rope_freqs.weight").data)
      config.rope.freqFactors.push_back(f);
  auto weight = [&](ref::LlamaWeight which, int layer) {
    using W = ref::LlamaWeight;
    std::string p = "blk." + std::to_string(layer) + ".";
    switch (which) {
    case W::Embedding:
      return dequantized(file, "token_embd.weight");
    case W::FinalNorm:
      return dequantized(file, "output_norm.weight");
    case W::LmHead:
      return dequantized(file, "output.weight");
    case W::AttentionNorm:
      return dequantized(file, p + "attn_norm.weight");
    case W::Query:
      return dequantized(file, p + "attn_q.weight");
    case W::Key:
      return dequantized(file, p + "attn_k.weight");
    case W::Value:
      return dequantized(file, p + "attn_v.weight");
    case W::Output:
      return dequantized(file, p + "attn_output.weight");
    case W::FeedForwardNorm:
      return dequantized(file, p + "ffn_norm.weight");
    case W::Gate:
      return dequantized(file, p + "ffn_gate.weight");
    case W::Up:
      return dequantized(file, p + "ffn_up.weight");
    case W::Down:
      return dequantized(file, p + "ffn_down.weight");
    }
    throw std::logic_error("unknown Llama weight");
  };
  return ref::llamaLogits(config, weight, ids);
}

constexpr const char *kLinearSource = R"(
model m
input x: f32[batch, 32]
y = linear(x, weight = "w")
output y
)";
} // namespace

namespace {
/// How far the logits may be from float64 on the dequantized weights.
struct Tolerance {
  double rtol, atol;
};
/// Every layer in f32 (--keep-fp32 '*'): f32 rounding.
constexpr Tolerance kF32Tolerance{1e-4, 1e-4};
/// attn_q (Q8_0), attn_k and ffn_down (Q4_0), attn_v (Q4_1), attn_output
/// (Q5_0) and ffn_gate (Q5_1) run in their blocks: their inputs rounded to
/// 1/254 of each block's largest value move the logits by up to 8.6e-2 over
/// the 11 positions (measured; 6.1e-2 at CPU levels 2 and 5 when Q8_0 and
/// Q4_0 alone ran in blocks); 0.1 absolute and 5e-2 relative are allowed. A
/// wrong block scale or nibble moves them by far more; the block GEMMs
/// themselves are checked to f32 rounding on their quantized operands in
/// LowPrecisionGemmTests.
constexpr Tolerance kBlockTolerance{5e-2, 1e-1};
/// llama-kquant.gguf: every linear layer (14, and the Q6_K head) runs in
/// its K-quant blocks, their inputs rounded per block of 32 (16 for Q6_K):
/// the logits move by up to 7.1e-2 over the 11 positions (measured at the
/// host's CPU level); 0.1 absolute and 5e-2 relative are allowed. Compiled
/// with --keep-fp32 '*' the same file matches to 1e-4, and a block's scale
/// or minimum taken from the wrong sub-block moves the logits by far more.
constexpr Tolerance kKQuantTolerance{5e-2, 1e-1};

/// Runs `model` (inputs: ids, past, k/v caches of `capacity` positions)
/// over the `decoder` fixture as a prefill of 7 tokens, then 4 greedy
/// decode steps, each against the float64 forward pass of the whole
/// sequence so far.
void checkDecoder(const std::string &modelPath, int64_t capacity,
                  const BuildOptions &options, Tolerance tolerance,
                  const Decoder &decoder = kLlama) {
  std::string error;
  std::unique_ptr<tfm::GgufFile> file =
      tfm::GgufFile::open(fixtures() + decoder.file, error);
  REQUIRE(file);
  std::shared_ptr<Model> model =
      Model::buildFiles(modelPath, fixtures() + decoder.file, options);
  Random rng(9001);
  std::vector<int64_t> tokens = rng.ids(7, 0, kVocab - 1);
  int64_t headDim = decoder.headDim;
  std::vector<int64_t> cacheShape = {kLayers, 1, kKvHeads, capacity, headDim};
  // NaN in every unwritten row: attention reading one would show.
  std::vector<float> nan(size_t(kLayers * kKvHeads * capacity * headDim),
                         std::nanf(""));
  std::vector<HostTensor> inputs = {
      HostTensor::i64({1, 7}, tokens), HostTensor::i64({1}, {0}),
      HostTensor::f32(cacheShape, nan), HostTensor::f32(cacheShape, nan)};
  RunResult r = model->runOk(inputs);
  std::vector<std::vector<double>> want =
      referenceLogits(decoder, *file, tokens);
  std::vector<double> got = r["logits"].toDoubles();
  for (int64_t t = 0; t < 7; ++t) {
    INFO("prefill position " << t);
    Comparison c = allClose(std::vector<double>(got.begin() + t * kVocab,
                                                got.begin() + (t + 1) * kVocab),
                            want[size_t(t)], tolerance.rtol, tolerance.atol);
    INFO(c.message);
    CHECK(c.ok);
  }
  for (int step = 0; step < 4; ++step) {
    const std::vector<double> &last = want.back();
    int64_t next =
        int64_t(std::max_element(last.begin(), last.end()) - last.begin());
    inputs[0] = HostTensor::i64({1, 1}, {next});
    inputs[1] = HostTensor::i64({1}, {int64_t(tokens.size())});
    tokens.push_back(next);
    r = model->runOk(inputs);
    want = referenceLogits(decoder, *file, tokens);
    INFO("decode step " << step << " at position " << tokens.size() - 1);
    Comparison c = allClose(r["logits"].toDoubles(), want.back(),
                            tolerance.rtol, tolerance.atol);
    INFO(c.message);
    CHECK(c.ok);
  }
}
} // namespace

TEST_CASE("a Llama decoder compiled from a GGUF file of quantized weights "
          "matches float64 on the dequantized weights, prefill and decode",
          "[gguf]") {
  {
    INFO("attn_q in Q8_0, attn_k and ffn_down in Q4_0, attn_v in Q4_1, "
         "attn_output in Q5_0, ffn_gate in Q5_1: each in its blocks");
    checkDecoder(fixtures() + "llama.tfm", 24, BuildOptions(), kBlockTolerance);
  }
  BuildOptions f32;
  f32.keepFp32 = {"*"};
  INFO("every layer in f32 (--keep-fp32 '*')");
  checkDecoder(fixtures() + "llama.tfm", 24, f32, kF32Tolerance);
}

TEST_CASE("examples/llama/llama.tfm sizes itself from the GGUF metadata and "
          "matches float64, prefill and decode",
          "[gguf]") {
  checkDecoder(sourceDir() + "/examples/llama/llama.tfm", 1024, BuildOptions(),
               kBlockTolerance);
}

TEST_CASE("examples/llama/llama.tfm applies a Llama 3.1 GGUF file's "
          "rope_freqs divisors and matches float64, prefill and decode",
          "[gguf]") {
  // Factors 1.74 and 8 over the frequencies: without them the rotations at
  // the test's positions differ by radians, not by rounding.
  checkDecoder(sourceDir() + "/examples/llama/llama.tfm", 1024, BuildOptions(),
               kF32Tolerance, kLlamaRopeFreqs);
}

TEST_CASE("a Llama decoder of K-quants (Q4_K, Q5_K, Q6_K as a Q4_K_M file "
          "mixes them) runs in their blocks and matches float64 on the "
          "dequantized weights, prefill and decode",
          "[gguf]") {
  {
    INFO("every linear layer in its blocks, the Q6_K token embedding in f32");
    checkDecoder(sourceDir() + "/examples/llama/llama.tfm", 1024,
                 BuildOptions(), kKQuantTolerance, kLlamaKQuant);
  }
  BuildOptions f32;
  f32.keepFp32 = {"*"};
  INFO("every layer in f32 (--keep-fp32 '*')");
  checkDecoder(sourceDir() + "/examples/llama/llama.tfm", 1024, f32,
               kF32Tolerance, kLlamaKQuant);
}

TEST_CASE("GGUF weights: a linear layer over each quantized type matches "
          "float64 on the dequantized weight, at odd batch sizes",
          "[gguf]") {
  // types.gguf holds t.<TYPE> [3, 512] in every type the reader converts.
  std::string error;
  std::unique_ptr<tfm::GgufFile> file =
      tfm::GgufFile::open(fixtures() + "types.gguf", error);
  REQUIRE(file);
  for (const char *type : {"Q4_0", "Q8_0", "Q4_K", "Q6_K", "BF16"}) {
    std::string name = std::string("t.") + type;
    INFO("weight " << name);
    std::string source = "model m\ninput x: f32[batch, 512]\n"
                         "y = linear(x, weight = \"" +
                         name + "\")\noutput y\n";
    std::string dir = makeTempDir();
    TempDirGuard guard(dir);
    std::ofstream(dir + "/m.tfm") << source;
    std::shared_ptr<Model> model =
        Model::buildFiles(dir + "/m.tfm", fixtures() + "types.gguf");
    Array w = dequantized(*file, name);
    Random rng(9002);
    for (int64_t batch : {1, 5}) {
      HostTensor x = rng.f32({batch, 512});
      RunResult r = model->runOk({x});
      Array want = ref::linear(ref::fromTensor(x), w);
      // The block types run as such: each input is rounded to its block's
      // grid (blocks of 32, 16 for Q6_K), half a step (max |x| over the
      // block / 254) at most, which moves an output by at most the sum over
      // k of that times |W[n, k]|.
      std::vector<double> rounding(want.data.size(), 0.0);
      if (std::string(type) != "BF16") {
        int64_t block = std::string(type) == "Q6_K" ? 16 : 32;
        std::vector<double> xs = x.toDoubles();
        for (int64_t i = 0; i < batch; ++i)
          for (int64_t n = 0; n < 3; ++n)
            for (int64_t k0 = 0; k0 < 512; k0 += block) {
              double largest = 0, weights = 0;
              for (int64_t k = k0; k < k0 + block; ++k) {
                largest = std::max(largest, std::fabs(xs[size_t(i * 512 + k)]));
                weights += std::fabs(w.data[size_t(n * 512 + k)]);
              }
              rounding[size_t(i * 3 + n)] += largest / 254 * weights;
            }
      }
      Comparison c =
          allClose(r["y"].toDoubles(), want.data, 1e-4, 1e-4, &rounding);
      INFO("batch " << batch << ": " << c.message);
      CHECK(c.ok);
    }
  }
}

TEST_CASE("GGUF weights: an unsupported type, a wrong shape and a truncated "
          "file are clear errors",
          "[gguf][errors]") {
  std::string dir = makeTempDir();
  TempDirGuard guard(dir);
  std::ofstream(dir + "/m.tfm") << kLinearSource;

  SECTION("a type the compiler does not convert") {
    // Q2_K: 256 elements in 84 bytes; any bits are a valid block.
    writeGguf(dir + "/w.gguf",
              {{"w", 10, {256, 4}, std::vector<unsigned char>(4 * 84, 0)}});
    CompileResult c = compileFiles(dir + "/m.tfm", dir + "/w.gguf");
    INFO(c.diagnostics);
    CHECK_FALSE(c.ok);
    CHECK_THAT(c.diagnostics, Catch::Contains("weight 'w' has type Q2_K in") &&
                                  Catch::Contains("does not support yet") &&
                                  Catch::Contains("Q4_K") &&
                                  Catch::Contains("m.tfm:4"));
  }
  SECTION("a weight of another shape than the model needs") {
    std::vector<unsigned char> block(34, 0); // one Q8_0 block of 32
    std::vector<unsigned char> bytes;
    for (int i = 0; i < 6; ++i)
      bytes.insert(bytes.end(), block.begin(), block.end());
    writeGguf(dir + "/w.gguf", {{"w", 8, {64, 3}, bytes}});
    std::ofstream(dir + "/m2.tfm")
        << "model m\ninput x: f32[batch, 32]\n"
           "y = linear(x, weight = \"w\")\noutput y\n";
    CompileResult c = compileFiles(dir + "/m2.tfm", dir + "/w.gguf");
    INFO(c.diagnostics);
    CHECK_FALSE(c.ok);
    CHECK_THAT(c.diagnostics,
               Catch::Contains("m2.tfm:3") && Catch::Contains("[3, 64]"));
  }
  SECTION("a truncated file") {
    writeGguf(dir + "/w.gguf",
              {{"w", 0, {32, 4}, std::vector<unsigned char>(4 * 32 * 4, 0)}},
              200);
    CompileResult c = compileFiles(dir + "/m.tfm", dir + "/w.gguf");
    INFO(c.diagnostics);
    CHECK_FALSE(c.ok);
    CHECK_THAT(c.diagnostics, Catch::Contains("w.gguf"));
  }
  SECTION("the F32 file of the right shape compiles, as a control") {
    std::vector<float> values(4 * 32);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = float(i % 7) - 3;
    std::vector<unsigned char> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    writeGguf(dir + "/w.gguf", {{"w", 0, {32, 4}, bytes}});
    std::shared_ptr<Model> model =
        Model::buildFiles(dir + "/m.tfm", dir + "/w.gguf");
    std::vector<float> x(32, 1.0f);
    RunResult r = model->runOk({HostTensor::f32({1, 32}, x)});
    std::vector<double> y = r["y"].toDoubles();
    REQUIRE(y.size() == 4);
    for (int o = 0; o < 4; ++o) {
      double sum = 0;
      for (int i = 0; i < 32; ++i)
        sum += values[size_t(o * 32 + i)];
      CHECK(y[size_t(o)] == Approx(sum));
    }
  }
}
