//===- LayerOptionTests.cpp - Layer options against the f64 reference -----===//
//
// The options of docs/layers.md that the PyTorch fixtures (ReferenceTests)
// do not reach: layers at several run-time sizes from one library, masks that
// empty whole rows (zeros, not NaN, fused and unfused), bool inputs, and the
// run-time error statuses of out-of-range ids and positions.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"
#include "ReferenceLayers.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <tuple>

using namespace e2e;
using ref::Array;

namespace {
/// A bool tensor (one byte per element) from 0/1 values.
HostTensor boolTensor(std::vector<int64_t> shape,
                      const std::vector<int> &values) {
  HostTensor t = HostTensor::zeros(TFM_DTYPE_BOOL, std::move(shape));
  REQUIRE(int64_t(values.size()) == t.numel());
  for (size_t i = 0; i < values.size(); ++i)
    t.bytes[i] = values[i] ? 1 : 0;
  return t;
}

std::vector<int> randomBits(Random &rng, int64_t n, float pTrue) {
  std::vector<float> u = rng.uniform(n, 0.0f, 1.0f);
  std::vector<int> bits;
  for (float x : u)
    bits.push_back(x < pTrue ? 1 : 0);
  return bits;
}

Array fromHost(const HostTensor &t) { return ref::fromTensor(t); }

Weight weightOf(Random &rng, std::vector<int64_t> shape) {
  return rng.weight(std::move(shape), -0.5f, 0.5f);
}
} // namespace

//===----------------------------------------------------------------------===//
// layer_norm, gelu, relu, dropout
//===----------------------------------------------------------------------===//

TEST_CASE("layer_norm, gelu, relu and dropout at several sizes", "[layers]") {
  static const Weights weights = [] {
    Random rng(7001);
    Weights w;
    w["n.weight"] = rng.weight({12}, 0.5f, 1.5f);
    w["n.bias"] = rng.weight({12});
    return w;
  }();
  static const std::shared_ptr<Model> model = Model::build(R"(
model activations
input x: f32[batch, seq, 12]
n = layer_norm(x, weight = "n.weight", bias = "n.bias", eps = 1e-6)
p = layer_norm(x)
g = gelu(n)
t = gelu(n, approximate = "tanh")
r = dropout(relu(x), p = 0.3)
output n, p, g, t, r
)",
                                                           weights);
  Array w = ref::fromWeight(weights.at("n.weight"));
  Array b = ref::fromWeight(weights.at("n.bias"));
  for (auto [batch, seq] :
       {std::pair<int64_t, int64_t>{1, 1}, {2, 5}, {3, 17}}) {
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(uint32_t(batch * 100 + seq));
      // Rows away from 0, so that the mean matters.
      HostTensor x = rng.f32({batch, seq, 12}, -3.0f, 5.0f);
      RunResult r = model->runOk({x});
      Array X = fromHost(x);
      Array N = ref::layerNorm(X, &w, &b, 1e-6);
      E2E_CHECK_CLOSE(r["n"], N);
      E2E_CHECK_CLOSE(r["p"], ref::layerNorm(X, nullptr, nullptr, 1e-5));
      E2E_CHECK_CLOSE(r["g"], ref::gelu(N));
      E2E_CHECK_CLOSE(r["t"], ref::gelu(N, /*tanh=*/true));
      E2E_CHECK_CLOSE(r["r"], ref::relu(X), 0.0, 0.0);
    }
  }
}

//===----------------------------------------------------------------------===//
// sdpa masks
//===----------------------------------------------------------------------===//

TEST_CASE("sdpa with bool, float and causal masks, empty rows give zeros",
          "[masks][both]") {
  static const char *source = R"(
model sdpa_masks
input q: f32[batch, 2, sq, 8]
input k: f32[batch, 2, sk, 8]
input v: f32[batch, 2, sk, 4]
input keep: bool[batch, 1, sq, sk]
input bias: f32[sq, sk]
input keys: bool[sk]
kept = sdpa(q, k, v, attn_mask = keep)
biased = sdpa(q, k, v, attn_mask = bias)
causal = sdpa(q, k, v, is_causal = true)
both = sdpa(q, k, v, attn_mask = keys, is_causal = true, scale = 0.3)
output kept, biased, causal, both
)";
  for (bool fuse : {true, false}) {
    BuildOptions options;
    options.fuseAttention = fuse;
    std::shared_ptr<Model> model = Model::build(source, {}, options);
    for (auto sizes : {std::pair<int64_t, int64_t>{1, 3}, {5, 17}, {19, 3}}) {
      const int64_t sq = sizes.first, sk = sizes.second;
      DYNAMIC_SECTION((fuse ? "fused" : "unfused")
                      << " sq " << sq << " sk " << sk) {
        const int64_t batch = 2, heads = 2;
        Random rng(uint32_t(sq * 31 + sk));
        HostTensor q = rng.f32({batch, heads, sq, 8});
        HostTensor k = rng.f32({batch, heads, sk, 8});
        HostTensor v = rng.f32({batch, heads, sk, 4});
        std::vector<int> keepBits = randomBits(rng, batch * sq * sk, 0.7f);
        // Query row 0 of batch 1 keeps no key: zeros, not NaN.
        for (int64_t j = 0; j < sk; ++j)
          keepBits[size_t((1 * sq + 0) * sk + j)] = 0;
        HostTensor keep = boolTensor({batch, 1, sq, sk}, keepBits);
        std::vector<float> biasValues = rng.uniform(sq * sk, -2.0f, 2.0f);
        // Row 0 is -inf throughout.
        for (int64_t j = 0; j < sk; ++j)
          biasValues[size_t(j)] = -INFINITY;
        HostTensor bias = HostTensor::f32({sq, sk}, biasValues);
        std::vector<int> keyBits = randomBits(rng, sk, 0.8f);
        keyBits[0] = 0; // causal row 0 sees key 0 only: masked, so zeros.
        HostTensor keys = boolTensor({sk}, keyBits);

        RunResult r = model->runOk({q, k, v, keep, bias, keys});
        Array Q = fromHost(q), K = fromHost(k), V = fromHost(v);
        double scale = 1.0 / std::sqrt(8.0);
        ref::AttentionMask keepMask{
            [&](int64_t n, int64_t i, int64_t j) {
              int64_t b = n / heads;
              return !keepBits[size_t((b * sq + i) * sk + j)];
            },
            nullptr};
        ref::AttentionMask biasMask{
            nullptr, [&](int64_t, int64_t i, int64_t j) {
              return double(biasValues[size_t(i * sk + j)]);
            }};
        ref::AttentionMask keyMask{
            [&](int64_t, int64_t, int64_t j) { return !keyBits[size_t(j)]; },
            nullptr};
        E2E_CHECK_CLOSE(r["kept"],
                        ref::maskedAttention(Q, K, V, scale, keepMask));
        E2E_CHECK_CLOSE(r["biased"],
                        ref::maskedAttention(Q, K, V, scale, biasMask));
        E2E_CHECK_CLOSE(r["causal"], ref::maskedAttention(Q, K, V, scale, {},
                                                          /*causal=*/true));
        E2E_CHECK_CLOSE(r["both"],
                        ref::maskedAttention(Q, K, V, 0.3, keyMask, true));
        CHECK(allFinite(r["kept"].toDoubles()));
        CHECK(allFinite(r["biased"].toDoubles()));
        CHECK(allFinite(r["both"].toDoubles()));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// multi_head_attention options
//===----------------------------------------------------------------------===//

TEST_CASE("multi_head_attention: sequence first, kdim, merged masks, weights",
          "[masks][both]") {
  // nn.MultiheadAttention(8, 2, kdim=6, vdim=6, batch_first=False) with a
  // bool key_padding_mask and a float attn_mask; once with need_weights, once
  // without (fused).
  static const char *source = R"(
model mha_options
input q: f32[sq, batch, 8]
input kv: f32[sk, batch, 6]
input pad: bool[batch, sk]
input bias: f32[sq, sk]
y, w = multi_head_attention(q, kv, kv, heads = 2, weights = "attn",
                            batch_first = false, key_padding_mask = pad,
                            attn_mask = bias, need_weights = true)
y2, wh = multi_head_attention(q, kv, kv, heads = 2, weights = "attn",
                              batch_first = false, key_padding_mask = pad,
                              attn_mask = bias, need_weights = true,
                              average_attn_weights = false)
z = multi_head_attention(q, kv, kv, heads = 2, weights = "attn",
                         batch_first = false, key_padding_mask = pad,
                         attn_mask = bias)
output y, w, wh, z
)";
  static const Weights weights = [] {
    Random rng(7003);
    Weights w;
    w["attn.q_proj_weight"] = weightOf(rng, {8, 8});
    w["attn.k_proj_weight"] = weightOf(rng, {8, 6});
    w["attn.v_proj_weight"] = weightOf(rng, {8, 6});
    w["attn.in_proj_bias"] = weightOf(rng, {24});
    w["attn.out_proj.weight"] = weightOf(rng, {8, 8});
    w["attn.out_proj.bias"] = weightOf(rng, {8});
    return w;
  }();
  ref::MhaWeights mw;
  Array inBias = ref::fromWeight(weights.at("attn.in_proj_bias"));
  mw.wq = ref::fromWeight(weights.at("attn.q_proj_weight"));
  mw.wk = ref::fromWeight(weights.at("attn.k_proj_weight"));
  mw.wv = ref::fromWeight(weights.at("attn.v_proj_weight"));
  mw.wo = ref::fromWeight(weights.at("attn.out_proj.weight"));
  mw.bq = ref::rows(inBias, 0, 8);
  mw.bk = ref::rows(inBias, 8, 8);
  mw.bv = ref::rows(inBias, 16, 8);
  mw.bo = ref::fromWeight(weights.at("attn.out_proj.bias"));

  for (bool fuse : {true, false}) {
    BuildOptions options;
    options.fuseAttention = fuse;
    std::shared_ptr<Model> model = Model::build(source, weights, options);
    for (auto sizes : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                       {2, 5, 7},
                       {3, 17, 4}}) {
      const int64_t batch = std::get<0>(sizes), sq = std::get<1>(sizes),
                    sk = std::get<2>(sizes);
      DYNAMIC_SECTION((fuse ? "fused" : "unfused")
                      << " batch " << batch << " sq " << sq << " sk " << sk) {
        Random rng(uint32_t(batch * 1000 + sq * 10 + sk));
        HostTensor q = rng.f32({sq, batch, 8});
        HostTensor kv = rng.f32({sk, batch, 6});
        std::vector<int> padBits = randomBits(rng, batch * sk, 0.3f);
        for (int64_t b = 0; b < batch; ++b)
          padBits[size_t(b * sk)] = 0; // every row keeps key 0
        HostTensor pad = boolTensor({batch, sk}, padBits);
        HostTensor bias = rng.f32({sq, sk}, -1.0f, 1.0f);
        RunResult r = model->runOk({q, kv, pad, bias});

        // The reference is batch first.
        Array Q = ref::transpose(fromHost(q), 0, 1);
        Array KV = ref::transpose(fromHost(kv), 0, 1);
        Array B = fromHost(bias);
        ref::AttentionMask mask{[&](int64_t n, int64_t, int64_t j) {
                                  return padBits[size_t((n / 2) * sk + j)] != 0;
                                },
                                [&](int64_t, int64_t i, int64_t j) {
                                  return B.data[size_t(i * sk + j)];
                                }};
        Array w, wh;
        Array y = ref::maskedMultiHeadAttention(Q, KV, KV, 2, mw, mask, &w);
        ref::maskedMultiHeadAttention(Q, KV, KV, 2, mw, mask, &wh,
                                      /*averageWeights=*/false);
        Array ySeqFirst = ref::transpose(y, 0, 1);
        E2E_CHECK_CLOSE(r["y"], ySeqFirst);
        E2E_CHECK_CLOSE(r["z"], ySeqFirst);
        E2E_CHECK_CLOSE(r["w"], w);
        E2E_CHECK_CLOSE(r["wh"], wh);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// transformer_encoder_layer
//===----------------------------------------------------------------------===//

TEST_CASE("transformer_encoder_layer at several sizes from one library",
          "[layers]") {
  static const Weights weights = [] {
    Random rng(7004);
    Weights w;
    w["enc.self_attn.in_proj_weight"] = weightOf(rng, {24, 8});
    w["enc.self_attn.in_proj_bias"] = weightOf(rng, {24});
    w["enc.self_attn.out_proj.weight"] = weightOf(rng, {8, 8});
    w["enc.self_attn.out_proj.bias"] = weightOf(rng, {8});
    w["enc.linear1.weight"] = weightOf(rng, {20, 8});
    w["enc.linear1.bias"] = weightOf(rng, {20});
    w["enc.linear2.weight"] = weightOf(rng, {8, 20});
    w["enc.linear2.bias"] = weightOf(rng, {8});
    w["enc.norm1.weight"] = rng.weight({8}, 0.5f, 1.5f);
    w["enc.norm1.bias"] = weightOf(rng, {8});
    w["enc.norm2.weight"] = rng.weight({8}, 0.5f, 1.5f);
    w["enc.norm2.bias"] = weightOf(rng, {8});
    return w;
  }();
  static const std::shared_ptr<Model> model = Model::build(R"(
model encoder
input x: f32[batch, seq, 8]
input causal: bool[seq, seq]
input pad: bool[batch, seq]
post = transformer_encoder_layer(x, heads = 2, weights = "enc",
                                 src_mask = causal, src_key_padding_mask = pad)
pre = transformer_encoder_layer(x, heads = 2, weights = "enc", norm_first = true,
                                activation = "gelu", src_key_padding_mask = pad)
output post, pre
)",
                                                           weights);
  auto w = [&](const std::string &name) {
    return ref::fromWeight(weights.at("enc." + name));
  };
  ref::EncoderLayerWeights ew;
  Array inBias = w("self_attn.in_proj_bias"),
        outBias = w("self_attn.out_proj.bias");
  ew.attention =
      ref::MhaWeights::packed(w("self_attn.in_proj_weight"), &inBias,
                              w("self_attn.out_proj.weight"), &outBias);
  ew.linear1Weight = w("linear1.weight");
  ew.linear1Bias = w("linear1.bias");
  ew.linear2Weight = w("linear2.weight");
  ew.linear2Bias = w("linear2.bias");
  ew.norm1Weight = w("norm1.weight");
  ew.norm1Bias = w("norm1.bias");
  ew.norm2Weight = w("norm2.weight");
  ew.norm2Bias = w("norm2.bias");
  for (auto sizes : {std::pair<int64_t, int64_t>{1, 1}, {2, 6}, {3, 13}}) {
    const int64_t batch = sizes.first, seq = sizes.second;
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(uint32_t(batch * 100 + seq));
      HostTensor x = rng.f32({batch, seq, 8});
      std::vector<int> causalBits, padBits = randomBits(rng, batch * seq, 0.3f);
      for (int64_t i = 0; i < seq; ++i)
        for (int64_t j = 0; j < seq; ++j)
          causalBits.push_back(j > i ? 1 : 0); // true = not allowed
      for (int64_t b = 0; b < batch; ++b)
        padBits[size_t(b * seq)] = 0; // key 0 stays, so no row is empty
      RunResult r = model->runOk({x, boolTensor({seq, seq}, causalBits),
                                  boolTensor({batch, seq}, padBits)});
      Array X = fromHost(x);
      auto padded = [&](int64_t n, int64_t j) {
        return padBits[size_t((n / 2) * seq + j)] != 0;
      };
      ref::AttentionMask postMask{[&](int64_t n, int64_t i, int64_t j) {
                                    return j > i || padded(n, j);
                                  },
                                  nullptr};
      ref::AttentionMask preMask{
          [&](int64_t n, int64_t, int64_t j) { return padded(n, j); }, nullptr};
      E2E_CHECK_CLOSE(
          r["post"], ref::encoderLayer(X, 2, ew, false, false, 1e-5, postMask));
      E2E_CHECK_CLOSE(r["pre"],
                      ref::encoderLayer(X, 2, ew, true, true, 1e-5, preMask));
    }
  }
}

//===----------------------------------------------------------------------===//
// Run-time errors
//===----------------------------------------------------------------------===//

TEST_CASE("out-of-range ids and positions are run-time errors",
          "[errors][layers]") {
  static const Weights weights = [] {
    Random rng(7005);
    Weights w;
    w["tok.weight"] = rng.weight({11, 4});
    w["pos.weight"] = rng.weight({6, 4});
    return w;
  }();
  static const std::shared_ptr<Model> model = Model::build(R"(
model lookups
input ids: i64[batch, seq]
e = embedding(ids, weight = "tok.weight", padding_idx = 0)
y = e + positional_encoding(e, kind = "learned", weight = "pos.weight")
output y
)",
                                                           weights);
  Array tok = ref::fromWeight(weights.at("tok.weight"));
  Array pos = ref::fromWeight(weights.at("pos.weight"));
  auto runIds = [&](int64_t batch, int64_t seq, std::vector<int64_t> ids) {
    return model->run({HostTensor::i64({batch, seq}, std::move(ids))});
  };

  SECTION("in range, up to the table's length") {
    for (int64_t seq : {1, 6}) {
      Random rng(static_cast<uint32_t>(seq));
      std::vector<int64_t> ids = rng.ids(2 * seq, 0, 10);
      RunResult r = runIds(2, seq, ids);
      REQUIRE(r.ok());
      Array expected =
          ref::add(ref::embedding({2, seq}, ids, tok), ref::rows(pos, 0, seq));
      E2E_CHECK_CLOSE(r["y"], expected);
    }
  }
  SECTION("an id out of range: status 1") {
    for (int64_t bad : {int64_t(-1), int64_t(11), int64_t(1) << 40}) {
      RunResult r = runIds(1, 3, {0, bad, 10});
      CHECK(r.code == TFM_STATUS_RUNTIME_ERROR);
      CHECK_THAT(r.message, Catch::Contains("1"));
    }
  }
  SECTION("a sequence longer than the position table: status 2") {
    RunResult r = runIds(1, 7, {0, 1, 2, 3, 4, 5, 6});
    CHECK(r.code == TFM_STATUS_RUNTIME_ERROR);
    CHECK_THAT(r.message, Catch::Contains("2"));
  }
  SECTION("both: the first check in the model wins") {
    RunResult r = runIds(1, 7, {0, 1, 2, 3, 4, 5, 11});
    CHECK(r.code == TFM_STATUS_RUNTIME_ERROR);
    CHECK_THAT(r.message, Catch::Contains("1"));
  }
  SECTION("after an error the model runs correctly again") {
    REQUIRE_FALSE(runIds(1, 2, {0, 99}).ok());
    RunResult r = runIds(1, 2, {3, 4});
    REQUIRE(r.ok());
    E2E_CHECK_CLOSE(r["y"], ref::add(ref::embedding({1, 2}, {3, 4}, tok),
                                     ref::rows(pos, 0, 2)));
  }
}
