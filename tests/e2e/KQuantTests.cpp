//===- KQuantTests.cpp - GGUF K-quants and the other kept block types -----===//
//
// Linear layers over GGUF Q4_K, Q5_K, Q6_K, Q4_1, Q5_0 and Q5_1 weights run
// in the file's blocks (tfm-pack-linear, the typed GEMM's block-quantized
// i8 path). The blocks are random bytes with finite f16 scales of very
// different magnitudes per row and super-block (so that a scale or minimum
// applied to the wrong block shows), plus an all-zero block. The reference
// is float64 on the weights as the runtime's ggufDequantize gives them
// (bit for bit the gguf package's) and on the input quantized per block of
// 32 (16 for Q6_K) as tfm.packed_linear documents; the bound is what f32
// arithmetic may add. Every CPU level the host runs, plain and fused
// layers, dynamic batch and sequence, a pool of threads. Then the
// artifact's size, a NaN or infinite f16 scale (a clean error), and a token
// embedding of each type gathered quantized, bit for bit the dequantized
// table. The K-quant Llama decoder is in GgufTests.cpp.
//
//===----------------------------------------------------------------------===//

#include "GgufWriter.h"
#include "Harness.h"
#include "LowPrecisionHarness.h"
#include "Reference.h"

#include "tfm/gguf.h"
#include "tfm/runtime.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

using namespace e2e;
using namespace e2e::lowp;
using ref::Array;

namespace {

struct BlockType {
  const char *name;
  uint32_t ggml;      ///< the GGUF type
  int64_t superBlock; ///< k per stored block
  int64_t bytes;      ///< bytes per stored block
  int64_t inputBlock; ///< k per input scale in the GEMM (16 for Q6_K)
  /// Per weight in the artifact: q (a byte, or a nibble and a bit per high
  /// bit), and the scales (and offsets) as the file has them: an f16 per
  /// block of 32, or a K-quant's byte per sub-block and f16 per super-block
  /// of 256.
  double packedBytes;
};

const BlockType kQ8_0{"Q8_0", 8, 32, 34, 32, 1.0 + 2.0 / 32},
    kQ4_0{"Q4_0", 2, 32, 18, 32, 0.5 + 2.0 / 32},
    kQ4_1{"Q4_1", 3, 32, 20, 32, 0.5 + 4.0 / 32},
    kQ5_0{"Q5_0", 6, 32, 22, 32, 0.625 + 2.0 / 32},
    kQ5_1{"Q5_1", 7, 32, 24, 32, 0.625 + 4.0 / 32},
    kQ4_K{"Q4_K", 12, 256, 144, 32, 0.5 + 2.0 / 32 + 4.0 / 256},
    kQ5_K{"Q5_K", 13, 256, 176, 32, 0.625 + 2.0 / 32 + 4.0 / 256},
    kQ6_K{"Q6_K", 14, 256, 210, 16, 0.75 + 1.0 / 16 + 2.0 / 256};

void putHalf(unsigned char *p, float value) {
  uint16_t bits = tfm_f32_to_f16(value);
  p[0] = uint8_t(bits & 0xff);
  p[1] = uint8_t(bits >> 8);
}

float getHalf(const unsigned char *p) {
  return tfm_f16_to_f32(uint16_t(p[0] | p[1] << 8));
}

/// A weight [N, K] of `type`'s blocks: random bytes, f16 scales (and
/// minimums) of a magnitude that changes with the row and block; the block
/// of row 0 at `zeroBlock` has zero scales.
std::vector<unsigned char> makeBlocks(const BlockType &type, int64_t n,
                                      int64_t k, uint32_t seed) {
  static const float magnitudes[] = {1.0f, 0.001f, 7.0f, 0.3f, 40.0f};
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> unit(0.5f, 1.0f);
  int64_t perRow = k / type.superBlock;
  std::vector<unsigned char> out(size_t(n * perRow * type.bytes));
  for (int64_t row = 0; row < n; ++row)
    for (int64_t b = 0; b < perRow; ++b) {
      unsigned char *p = out.data() + (row * perRow + b) * type.bytes;
      for (int64_t i = 0; i < type.bytes; ++i)
        p[i] = uint8_t(byte(gen));
      float magnitude = magnitudes[(row * 3 + b) % 5];
      if (row == 0 && b == perRow / 2)
        magnitude = 0.0f;
      // Values reach about `magnitude`: d times the largest q (and the
      // K-quants' 6-bit or 8-bit sub-block scales).
      switch (type.ggml) {
      case 8: // Q8_0: d, 32 bytes
        putHalf(p, magnitude * unit(gen) / 127);
        break;
      case 2: // Q4_0: d, 16 bytes
        putHalf(p, magnitude * unit(gen) / 8);
        break;
      case 3: // Q4_1: d, m, 16 bytes
      case 7: // Q5_1: d, m, qh, 16 bytes
        putHalf(p, magnitude * unit(gen) / 31);
        putHalf(p + 2, -magnitude * unit(gen) / 2);
        break;
      case 6: // Q5_0: d, qh, 16 bytes
        putHalf(p, magnitude * unit(gen) / 16);
        break;
      case 12: // Q4_K, Q5_K: d, dmin, scales, (qh), qs
      case 13:
        putHalf(p, magnitude * unit(gen) / (63 * 31));
        putHalf(p + 2, magnitude * unit(gen) / (63 * 2));
        break;
      case 14: // Q6_K: ql, qh, 16 int8 scales, d
        putHalf(p + 208, magnitude * unit(gen) / (127 * 32));
        break;
      }
    }
  return out;
}

/// Each input block's scale and offset, read from the blocks with the
/// format's own layout (for the bound): [N, K / inputBlock].
struct BlockTerms {
  std::vector<double> scale, offset;
};

BlockTerms blockTerms(const BlockType &type,
                      const std::vector<unsigned char> &bytes, int64_t n,
                      int64_t k) {
  BlockTerms t;
  int64_t perRow = k / type.superBlock;
  for (int64_t row = 0; row < n; ++row)
    for (int64_t b = 0; b < perRow; ++b) {
      const unsigned char *p = bytes.data() + (row * perRow + b) * type.bytes;
      switch (type.ggml) {
      case 3:
      case 7:
        t.scale.push_back(getHalf(p));
        t.offset.push_back(getHalf(p + 2));
        break;
      case 8:
      case 2:
      case 6:
        t.scale.push_back(getHalf(p));
        t.offset.push_back(0.0);
        break;
      case 12:
      case 13: {
        double d = getHalf(p), dmin = getHalf(p + 2);
        const unsigned char *s = p + 4;
        for (int j = 0; j < 8; ++j) {
          int sc =
              j < 4 ? s[j] & 63 : (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
          int mn = j < 4 ? s[j + 4] & 63 : (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
          t.scale.push_back(d * sc);
          t.offset.push_back(-dmin * mn);
        }
        break;
      }
      case 14: {
        double d = getHalf(p + 208);
        for (int j = 0; j < 16; ++j) {
          t.scale.push_back(d * int8_t(p[192 + j]));
          t.offset.push_back(0.0);
        }
        break;
      }
      }
    }
  return t;
}

/// y = x W^T with W the file's dequantized values and x quantized per
/// block of `inputBlock` as tfm.packed_linear documents (llama.cpp's
/// quantize_row_q8_0: d = max|x| / 127 in f32, q = round(x (1 / d)) to
/// nearest even, 0 for a zero block).
///
/// Bound: per block the kernel's i32 sum of q_x q_w is exact; it is
/// scaled by the f32 product of the scales (two roundings), the offset
/// term o d_x sum(q_x) adds two more, each added into an f32 accumulator
/// (one rounding of the partial sum Y_b); and the dequantized W the
/// reference uses differs from s q + o by its own two roundings. All are
/// within u d_x sum_t |q_x| (|w_t| + 2 |o|) or u |Y_b| each: 4 u times
/// their sum over the blocks is allowed. A scale or offset of the wrong
/// block, or an input rounded another way (one step of q is 1/127 of the
/// block's largest value), is far outside it.
Expected blockReference(const std::vector<float> &x, int64_t m, int64_t k,
                        const std::vector<float> &w, const BlockTerms &terms,
                        int64_t n, int64_t inputBlock) {
  Expected e{Array({m, n}), std::vector<double>(size_t(m * n))};
  int64_t blocks = k / inputBlock;
  for (int64_t i = 0; i < m; ++i) {
    std::vector<float> xScale(static_cast<size_t>(blocks));
    std::vector<int32_t> xq(static_cast<size_t>(k));
    for (int64_t b = 0; b < blocks; ++b) {
      const float *row = x.data() + i * k + b * inputBlock;
      float amax = 0.0f;
      for (int64_t t = 0; t < inputBlock; ++t)
        amax = std::max(amax, std::fabs(row[t]));
      float d = amax / 127.0f;
      float inverse = d != 0.0f ? 1.0f / d : 0.0f;
      xScale[size_t(b)] = d;
      for (int64_t t = 0; t < inputBlock; ++t)
        xq[size_t(b * inputBlock + t)] = int32_t(
            std::clamp(std::nearbyint(row[t] * inverse), -127.0f, 127.0f));
    }
    for (int64_t j = 0; j < n; ++j) {
      double y = 0, bound = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        double offset = terms.offset[size_t(j * blocks + b)];
        double sum = 0, size = 0;
        for (int64_t t = b * inputBlock; t < (b + 1) * inputBlock; ++t) {
          double q = xq[size_t(t)], wt = w[size_t(j * k + t)];
          sum += q * wt;
          size += std::fabs(q) * (std::fabs(wt) + 2 * std::fabs(offset));
        }
        y += double(xScale[size_t(b)]) * sum;
        bound += double(xScale[size_t(b)]) * size + std::fabs(y);
      }
      e.value.data[size_t(i * n + j)] = y;
      e.bound[size_t(i * n + j)] = 4 * kUnit * bound;
    }
  }
  return e;
}

std::shared_ptr<Model> buildModel(const std::string &dir, const BlockType &type,
                                  const std::vector<unsigned char> &blocks,
                                  const std::vector<float> &b, int64_t k,
                                  int64_t n, const BuildOptions &options) {
  std::vector<unsigned char> bias(b.size() * 4);
  std::memcpy(bias.data(), b.data(), bias.size());
  writeGguf(dir + "/w.gguf",
            {{"W", type.ggml, {uint64_t(k), uint64_t(n)}, blocks},
             {"b", 0, {uint64_t(n)}, bias}});
  std::string ks = std::to_string(k), ns = std::to_string(n);
  std::ofstream(dir + "/m.tfm")
      << "model kquant\ninput x: f32[batch, seq, " << ks
      << "]\ninput r: f32[batch, seq, " << ns
      << "]\nplain = linear(x, weight = \"W\")\n"
         "fused = r + gelu(linear(x, weight = \"W\", bias = \"b\"))\n"
         "output plain, fused\n";
  return Model::buildFiles(dir + "/m.tfm", dir + "/w.gguf", options);
}

void checkShape(const BlockType &type, int64_t k, int64_t n) {
  uint32_t seed = uint32_t(k * 131 + n * 7 + type.ggml);
  std::vector<unsigned char> blocks = makeBlocks(type, n, k, seed);
  std::vector<float> w(size_t(n * k));
  REQUIRE(tfm::ggufDequantize(type.ggml, blocks.data(), n * k, w.data()));
  BlockTerms terms = blockTerms(type, blocks, n, k);
  Random rng(seed);
  std::vector<float> b = rng.uniform(n);
  std::string dir = makeTempDir();
  TempDirGuard guard(dir);
  BuildOptions options;
  options.cpu = "portable";
  options.remarks = true;
  std::shared_ptr<Model> model =
      buildModel(dir, type, blocks, b, k, n, options);
  INFO(model->diagnostics());
  CHECK(model->diagnostics().find("linear layer 'W' [" + std::to_string(n) +
                                  ", " + std::to_string(k) + "] runs in " +
                                  type.name + " (the file's blocks") !=
        std::string::npos);
  // Rows: decode (1), fewer than a micro-kernel (5), one past two of 6
  // (13), and 18 as two sequences.
  for (auto shape : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {5, 1}, {1, 13}, {2, 9}}) {
    int64_t batch = shape.first, seq = shape.second, m = batch * seq;
    std::vector<float> x = inputRows(rng, m, k), r = rng.uniform(m * n);
    // A zero block in the first row: its scale is 0, its q all 0.
    std::fill(x.begin(), x.begin() + 32, 0.0f);
    Expected y = blockReference(x, m, k, w, terms, n, type.inputBlock);
    Expected fused = epilogue(y, &b, Activation::Gelu, &r);
    HostTensor xt = HostTensor::f32({batch, seq, k}, x),
               rt = HostTensor::f32({batch, seq, n}, r);
    forEachLevel(Precision::Int8, *model,
                 [&](const Model &copy, const Level &) {
                   Pool pool(2);
                   for (const tfm_exec *exec :
                        {(const tfm_exec *)nullptr, pool.exec()}) {
                     INFO(type.name << " K " << k << " N " << n << " batch "
                                    << batch << " seq " << seq
                                    << (exec ? " on a pool of 2" : ""));
                     RunResult out = copy.runOk({xt, rt}, exec);
                     std::vector<int64_t> outShape = {batch, seq, n};
                     CHECK_WITHIN_BOUNDS(out["plain"], y, outShape);
                     CHECK_WITHIN_BOUNDS(out["fused"], fused, outShape);
                   }
                 });
  }
}

/// A model gathering rows of weight "E" of <dir>/w.gguf and multiplying
/// them by the LM head `head` ("E": tied to the embedding).
std::shared_ptr<Model> buildEmbeddingAndHead(const std::string &dir,
                                             const char *head, bool remarks) {
  std::string path = dir + "/" + head + ".tfm";
  std::ofstream(path) << "model tied\ninput ids: i64[batch, seq]\n"
                         "e = embedding(ids, weight = \"E\")\n"
                         "y = linear(e, weight = \""
                      << head << "\")\noutput e\noutput y\n";
  BuildOptions options;
  options.remarks = remarks;
  return Model::buildFiles(path, dir + "/w.gguf", options);
}
} // namespace

TEST_CASE("GGUF Q4_K and Q6_K weights run in their blocks and match float64 "
          "on the dequantized weights and quantized inputs at every CPU level",
          "[kquant]") {
  // K of one super-block, of three (past AVX-512's 512-deep K chunk) and
  // of five (past AVX2's 1024); N of 1, odd, and past the 32-column panel.
  for (const BlockType *type : {&kQ4_K, &kQ6_K}) {
    checkShape(*type, 256, 1);
    checkShape(*type, 768, 37);
    checkShape(*type, 1280, 3);
  }
}

TEST_CASE("GGUF Q5_K, Q4_1, Q5_0 and Q5_1 weights run in their blocks and "
          "match float64 at every CPU level",
          "[kquant]") {
  checkShape(kQ5_K, 256, 37);
  checkShape(kQ5_K, 1280, 3);
  for (const BlockType *type : {&kQ4_1, &kQ5_0, &kQ5_1}) {
    checkShape(*type, 32, 1);
    checkShape(*type, 544, 37);
    checkShape(*type, 1056, 3);
  }
}

TEST_CASE("GGUF weights keep the file's scales in the artifact: its "
          "bytes per weight grow as the file's do",
          "[kquant]") {
  // The weight's own bytes in the artifact: the same layer at two widths,
  // whose artifacts differ by the columns added (their values, scales and
  // offsets, and 4 bytes of bias each); code and the rest are the same.
  // An f32 scale per block (Q8_0 1.125 bytes per weight, Q4_K 0.75) or a
  // byte per 5- or 6-bit value (Q5_0 1.0625, Q6_K 1.07) is far outside 1%.
  const int64_t k = 1024, n = 256, wide = 2304;
  auto sizeOf = [](const std::string &path) {
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    return double(file.tellg());
  };
  for (const BlockType *type :
       {&kQ8_0, &kQ4_0, &kQ4_1, &kQ5_0, &kQ5_1, &kQ4_K, &kQ5_K, &kQ6_K}) {
    double sizes[2];
    for (int i = 0; i < 2; ++i) {
      int64_t cols = i ? wide : n;
      std::vector<unsigned char> blocks = makeBlocks(*type, cols, k, 77);
      std::vector<float> b(size_t(cols), 0.5f);
      std::string dir = makeTempDir();
      TempDirGuard guard(dir);
      BuildOptions options;
      options.cpu = "portable";
      std::shared_ptr<Model> model =
          buildModel(dir, *type, blocks, b, k, cols, options);
      sizes[i] = sizeOf(model->libraryPath());
    }
    double added = double((wide - n) * k);
    double perWeight = (sizes[1] - sizes[0] - 4.0 * double(wide - n)) / added;
    double fileBytes = double(type->bytes) / double(type->superBlock);
    INFO(type->name << ": " << perWeight << " bytes per weight in the "
                    << "artifact, " << type->packedBytes << " expected, the "
                    << "file's " << fileBytes);
    CHECK(perWeight > 0.99 * type->packedBytes);
    CHECK(perWeight < 1.01 * type->packedBytes);
  }
}

TEST_CASE("GGUF K-quant blocks with a NaN or infinite f16 scale are a clean "
          "error naming the weight and block",
          "[kquant]") {
  const int64_t k = 512, n = 3;
  struct Case {
    const BlockType *type;
    size_t offset; ///< of the f16 to spoil, in row 1's second block
    uint16_t bits;
    const char *what;
  };
  for (const Case &c :
       {Case{&kQ4_K, 0, 0x7c00, "scale"}, Case{&kQ4_K, 2, 0x7e00, "minimum"},
        Case{&kQ6_K, 208, 0xfc00, "scale"},
        Case{&kQ4_1, 2, 0x7c01, "minimum"}}) {
    std::vector<unsigned char> blocks = makeBlocks(*c.type, n, k, 5);
    int64_t perRow = k / c.type->superBlock;
    unsigned char *p = blocks.data() + (perRow + 1) * c.type->bytes + c.offset;
    p[0] = uint8_t(c.bits & 0xff);
    p[1] = uint8_t(c.bits >> 8);
    std::string dir = makeTempDir();
    TempDirGuard guard(dir);
    std::vector<float> b(size_t(n), 0.0f);
    std::string error;
    try {
      buildModel(dir, *c.type, blocks, b, k, n, BuildOptions());
    } catch (const std::exception &e) {
      error = e.what();
    }
    INFO(error);
    CHECK(error.find("weight 'W': row 1, block 1 of its " +
                     std::to_string(perRow) + " (" + c.type->name + ") has a " +
                     c.what + " that is not finite") != std::string::npos);
  }
}

double fileSize(const std::string &path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  return double(file.tellg());
}

TEST_CASE("a token embedding of GGUF blocks gathers its rows quantized, "
          "bit for bit the file's dequantized values, and keeps the "
          "artifact small",
          "[kquant]") {
  // Ids in and out of order, repeated, the first and last rows; a table
  // of 301 rows (odd) whose row 0 has a zero block.
  const int64_t vocab = 301;
  std::vector<int64_t> ids = {5, 0, 300, 5, 177, 2};
  for (const BlockType *type :
       {&kQ8_0, &kQ4_0, &kQ4_K, &kQ5_K, &kQ6_K, &kQ4_1, &kQ5_0, &kQ5_1}) {
    const int64_t dim = 512;
    std::vector<unsigned char> blocks = makeBlocks(*type, vocab, dim, 31);
    std::vector<float> table(size_t(vocab * dim));
    REQUIRE(tfm::ggufDequantize(type->ggml, blocks.data(), vocab * dim,
                                table.data()));
    std::string dir = makeTempDir();
    TempDirGuard guard(dir);
    writeGguf(dir + "/w.gguf",
              {{"E", type->ggml, {uint64_t(dim), uint64_t(vocab)}, blocks}});
    std::ofstream(dir + "/m.tfm")
        << "model gather\ninput ids: i64[batch, seq]\n"
           "y = embedding(ids, weight = \"E\")\noutput y\n";
    BuildOptions options;
    options.remarks = true;
    std::shared_ptr<Model> model =
        Model::buildFiles(dir + "/m.tfm", dir + "/w.gguf", options);
    INFO(type->name << ": " << model->diagnostics());
    CHECK(model->diagnostics().find("embedding 'E' [" + std::to_string(vocab) +
                                    ", " + std::to_string(dim) +
                                    "] gathers rows of " + type->name) !=
          std::string::npos);
    RunResult r = model->runOk({HostTensor::i64({2, 3}, ids)});
    std::vector<double> got = r["y"].toDoubles();
    REQUIRE(got.size() == ids.size() * size_t(dim));
    size_t mismatches = 0;
    for (size_t t = 0; t < ids.size(); ++t)
      for (int64_t j = 0; j < dim; ++j)
        mismatches += got[t * size_t(dim) + size_t(j)] !=
                      double(table[size_t(ids[t] * dim + j)]);
    CHECK(mismatches == 0);
    // The table is kept as compact as the file keeps it (the GEMM's block
    // panels, a row a panel): the same model over the f32 table is larger
    // by 4 bytes a weight less those.
    std::vector<unsigned char> f32(table.size() * 4);
    std::memcpy(f32.data(), table.data(), f32.size());
    writeGguf(dir + "/f.gguf",
              {{"E", 0, {uint64_t(dim), uint64_t(vocab)}, f32}});
    std::shared_ptr<Model> plain =
        Model::buildFiles(dir + "/m.tfm", dir + "/f.gguf", BuildOptions());
    double saved =
        fileSize(plain->libraryPath()) - fileSize(model->libraryPath());
    INFO(saved << " bytes saved of " << vocab * dim << " weights");
    CHECK(saved > 0.98 * (4.0 - type->packedBytes) * double(vocab * dim));
    RunResult same = plain->runOk({HostTensor::i64({2, 3}, ids)});
    CHECK(same["y"].toDoubles() == got);
  }
}

TEST_CASE("an LM head of GGUF blocks tied to the token embedding is stored "
          "once: the gather reads the head's panels, bit for bit the "
          "file's values",
          "[kquant]") {
  // 301 rows: not a multiple of any panel width (the last panel is
  // partly padding); K of 3 blocks of 32, or 2 super-blocks of 256.
  const int64_t vocab = 301;
  std::vector<int64_t> ids = {300, 0, 17, 300, 288, 1};
  for (const BlockType *type : {&kQ8_0, &kQ4_0, &kQ5_1, &kQ4_K, &kQ6_K}) {
    const int64_t dim = type->superBlock == 256 ? 512 : 96;
    std::vector<unsigned char> blocks = makeBlocks(*type, vocab, dim, 7);
    std::vector<float> table(size_t(vocab * dim));
    REQUIRE(tfm::ggufDequantize(type->ggml, blocks.data(), vocab * dim,
                                table.data()));
    std::string dir = makeTempDir();
    TempDirGuard guard(dir);
    // "H" holds the same blocks as "E" under its own name: the untied
    // model's head, which must cost a second table.
    writeGguf(dir + "/w.gguf",
              {{"E", type->ggml, {uint64_t(dim), uint64_t(vocab)}, blocks},
               {"H", type->ggml, {uint64_t(dim), uint64_t(vocab)}, blocks}});
    std::shared_ptr<Model> tied = buildEmbeddingAndHead(dir, "E", true);
    std::shared_ptr<Model> untied = buildEmbeddingAndHead(dir, "H", false);
    INFO(type->name << ": " << tied->diagnostics());
    CHECK(tied->diagnostics().find(
              "embedding 'E' [" + std::to_string(vocab) + ", " +
              std::to_string(dim) + "] gathers rows of " + type->name +
              " from the tied LM head's panels") != std::string::npos);
    RunResult a = tied->runOk({HostTensor::i64({2, 3}, ids)});
    RunResult b = untied->runOk({HostTensor::i64({2, 3}, ids)});
    std::vector<double> got = a["e"].toDoubles();
    REQUIRE(got.size() == ids.size() * size_t(dim));
    size_t mismatches = 0;
    for (size_t t = 0; t < ids.size(); ++t)
      for (int64_t j = 0; j < dim; ++j)
        mismatches += got[t * size_t(dim) + size_t(j)] !=
                      double(table[size_t(ids[t] * dim + j)]);
    CHECK(mismatches == 0);
    CHECK(b["e"].toDoubles() == got);
    CHECK(a["y"].toDoubles() == b["y"].toDoubles());
    // The untied model stores the table twice (the gather's rows and the
    // head's panels), the tied one once: the difference is a whole table
    // (30 to 150 KB here).
    double extra =
        fileSize(untied->libraryPath()) - fileSize(tied->libraryPath());
    double one = type->packedBytes * double(vocab * dim);
    INFO(extra << " bytes more untied; a table is " << one);
    // Sections are laid out in pages: allow two pages either way.
    CHECK(extra > one - 8192.0);
    CHECK(extra < one + 8192.0);
  }
}

TEST_CASE("an f32 LM head tied to the token embedding is stored once at an "
          "odd vocabulary and hidden size",
          "[kquant]") {
  // 301 rows by 37: neither a multiple of a panel's width nor of a vector.
  const int64_t vocab = 301, dim = 37;
  std::vector<int64_t> ids = {300, 0, 17, 300, 288, 1};
  std::mt19937 gen(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> table(size_t(vocab * dim));
  for (float &v : table)
    v = normal(gen);
  std::vector<unsigned char> bytes(table.size() * 4);
  std::memcpy(bytes.data(), table.data(), bytes.size());
  std::string dir = makeTempDir();
  TempDirGuard guard(dir);
  writeGguf(dir + "/w.gguf",
            {{"E", 0, {uint64_t(dim), uint64_t(vocab)}, bytes},
             {"H", 0, {uint64_t(dim), uint64_t(vocab)}, bytes}});
  std::shared_ptr<Model> tied = buildEmbeddingAndHead(dir, "E", true);
  std::shared_ptr<Model> untied = buildEmbeddingAndHead(dir, "H", false);
  INFO(tied->diagnostics());
  CHECK(tied->diagnostics().find("embedding 'E' [301, 37] gathers rows of f32 "
                                 "from the tied LM head's panels") !=
        std::string::npos);
  RunResult a = tied->runOk({HostTensor::i64({2, 3}, ids)});
  RunResult b = untied->runOk({HostTensor::i64({2, 3}, ids)});
  std::vector<double> got = a["e"].toDoubles();
  REQUIRE(got.size() == ids.size() * size_t(dim));
  size_t mismatches = 0;
  for (size_t t = 0; t < ids.size(); ++t)
    for (int64_t j = 0; j < dim; ++j)
      mismatches += got[t * size_t(dim) + size_t(j)] !=
                    double(table[size_t(ids[t] * dim + j)]);
  CHECK(mismatches == 0);
  CHECK(a["y"].toDoubles() == b["y"].toDoubles());
  double extra =
      fileSize(untied->libraryPath()) - fileSize(tied->libraryPath());
  double one = 4.0 * double(vocab * dim);
  INFO(extra << " bytes more untied; a table is " << one);
  CHECK(extra > one - 8192.0);
  CHECK(extra < one + 8192.0);
}
