//===- LanguageFunctionTests.cpp - def and for against copies and float64 -===//
//
// A BERT-style encoder written once with `def` and `for` must compute what
// the same model written out layer by layer computes, bit for bit (the
// frontend expands both to the same IR), and what the float64 reference of
// nn.TransformerEncoderLayer computes. transformer_encoder_layer with Hugging
// Face weight names is checked against PyTorch's own outputs: the reference
// fixtures' weights are renamed here the way a BERT checkpoint names them.
//
//===----------------------------------------------------------------------===//
#include "Fixture.h"
#include "Harness.h"
#include "Reference.h"
#include "ReferenceLayers.h"

#include "tfm/safetensors.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace e2e;
using ref::Array;

namespace {
constexpr int64_t kLayers = 3, kE = 8, kF = 12, kHeads = 2;

/// BERT's names for layer `i`, as transformers' BertModel writes them.
std::string bert(int64_t i, const std::string &name) {
  return "encoder.layer." + std::to_string(i) + "." + name;
}

Weights randomBertWeights() {
  Random rng(7);
  Weights w;
  for (int64_t i = 0; i < kLayers; ++i) {
    for (const char *p : {"query", "key", "value"}) {
      w[bert(i, std::string("attention.self.") + p + ".weight")] =
          rng.weight({kE, kE}, -0.5f, 0.5f);
      w[bert(i, std::string("attention.self.") + p + ".bias")] =
          rng.weight({kE}, -0.2f, 0.2f);
    }
    w[bert(i, "attention.output.dense.weight")] =
        rng.weight({kE, kE}, -0.5f, 0.5f);
    w[bert(i, "attention.output.dense.bias")] = rng.weight({kE}, -0.2f, 0.2f);
    w[bert(i, "intermediate.dense.weight")] = rng.weight({kF, kE}, -0.5f, 0.5f);
    w[bert(i, "intermediate.dense.bias")] = rng.weight({kF}, -0.2f, 0.2f);
    w[bert(i, "output.dense.weight")] = rng.weight({kE, kF}, -0.5f, 0.5f);
    w[bert(i, "output.dense.bias")] = rng.weight({kE}, -0.2f, 0.2f);
    for (const char *ln : {"attention.output.LayerNorm", "output.LayerNorm"}) {
      w[bert(i, std::string(ln) + ".weight")] = rng.weight({kE}, 0.5f, 1.5f);
      w[bert(i, std::string(ln) + ".bias")] = rng.weight({kE}, -0.2f, 0.2f);
    }
  }
  return w;
}

/// One BERT layer from primitives, its weights named under the string
/// expression `p` (a parameter in the function, a literal when written
/// out), reading `in` and naming its result `out`; `tag` keeps the
/// temporaries of layers written out apart.
std::string bertLayerBody(const std::string &p, const std::string &in,
                          const std::string &out, const std::string &tag) {
  auto n = [&](const std::string &name) { return p + " + \"." + name + "\""; };
  std::string a = "a" + tag, h = "h" + tag, f = "f" + tag;
  return a + " = multi_head_attention(" + in + ", " + in + ", " + in +
         ", heads = 2,\n"
         "    q_weight = " +
         n("attention.self.query.weight") +
         ", q_bias = " + n("attention.self.query.bias") +
         ",\n"
         "    k_weight = " +
         n("attention.self.key.weight") +
         ", k_bias = " + n("attention.self.key.bias") +
         ",\n"
         "    v_weight = " +
         n("attention.self.value.weight") +
         ", v_bias = " + n("attention.self.value.bias") +
         ",\n"
         "    out_weight = " +
         n("attention.output.dense.weight") +
         ", out_bias = " + n("attention.output.dense.bias") +
         ",\n"
         "    key_padding_mask = pad)\n" +
         h + " = layer_norm(" + in + " + " + a +
         ", weight = " + n("attention.output.LayerNorm.weight") +
         ", bias = " + n("attention.output.LayerNorm.bias") +
         ", eps = 1e-12)\n" + f + " = linear(gelu(linear(" + h +
         ", weight = " + n("intermediate.dense.weight") +
         ", bias = " + n("intermediate.dense.bias") +
         ")),\n"
         "    weight = " +
         n("output.dense.weight") + ", bias = " + n("output.dense.bias") +
         ")\n" + out + " = layer_norm(" + h + " + " + f +
         ", weight = " + n("output.LayerNorm.weight") +
         ", bias = " + n("output.LayerNorm.bias") + ", eps = 1e-12)\n";
}

const char *kHeader = "model bert\n"
                      "input x: f32[batch, seq, 8]\n"
                      "input mask: i64[batch, seq]\n";

/// The layers with def and for.
std::string withFunctions() {
  return std::string(kHeader) + "def layer(x, p, pad):\n" +
         bertLayerBody("p", "x", "y", "") +
         "    return y\n"
         "end\n"
         "pad = mask == 0\n"
         "h = x\n"
         "for i in 0..3:\n"
         "    h = layer(h, \"encoder.layer.{i}\", pad)\n"
         "end\n"
         "output h\n";
}

/// The same layers written out, as a generator script would.
std::string writtenOut() {
  std::string s = std::string(kHeader) + "pad = mask == 0\n";
  std::string in = "x";
  for (int64_t i = 0; i < kLayers; ++i) {
    std::string layer = std::to_string(i), out = "x" + std::to_string(i + 1);
    s += bertLayerBody("\"encoder.layer." + layer + "\"", in, out, layer);
    in = out;
  }
  return s + "output " + in + "\n";
}

/// The same layers, each one transformer_encoder_layer with BERT's names.
std::string withEncoderLayer() {
  return std::string(kHeader) +
         "def layer(x, p, pad):\n"
         "    return transformer_encoder_layer(x, heads = 2, eps = 1e-12,\n"
         "        activation = \"gelu\", src_key_padding_mask = pad,\n"
         "        q_weight = p + \".attention.self.query.weight\",\n"
         "        q_bias = p + \".attention.self.query.bias\",\n"
         "        k_weight = p + \".attention.self.key.weight\",\n"
         "        k_bias = p + \".attention.self.key.bias\",\n"
         "        v_weight = p + \".attention.self.value.weight\",\n"
         "        v_bias = p + \".attention.self.value.bias\",\n"
         "        out_weight = p + \".attention.output.dense.weight\",\n"
         "        out_bias = p + \".attention.output.dense.bias\",\n"
         "        linear1_weight = p + \".intermediate.dense.weight\",\n"
         "        linear1_bias = p + \".intermediate.dense.bias\",\n"
         "        linear2_weight = p + \".output.dense.weight\",\n"
         "        linear2_bias = p + \".output.dense.bias\",\n"
         "        norm1_weight = p + \".attention.output.LayerNorm.weight\",\n"
         "        norm1_bias = p + \".attention.output.LayerNorm.bias\",\n"
         "        norm2_weight = p + \".output.LayerNorm.weight\",\n"
         "        norm2_bias = p + \".output.LayerNorm.bias\")\n"
         "end\n"
         "pad = mask == 0\n"
         "h = x\n"
         "for i in 0..3:\n"
         "    h = layer(h, \"encoder.layer.{i}\", pad)\n"
         "end\n"
         "output h\n";
}

ref::EncoderLayerWeights referenceLayer(const Weights &w, int64_t i) {
  auto a = [&](const std::string &name) {
    return ref::fromWeight(w.at(bert(i, name)));
  };
  ref::EncoderLayerWeights e;
  e.attention.wq = a("attention.self.query.weight");
  e.attention.wk = a("attention.self.key.weight");
  e.attention.wv = a("attention.self.value.weight");
  e.attention.wo = a("attention.output.dense.weight");
  e.attention.bq = a("attention.self.query.bias");
  e.attention.bk = a("attention.self.key.bias");
  e.attention.bv = a("attention.self.value.bias");
  e.attention.bo = a("attention.output.dense.bias");
  e.linear1Weight = a("intermediate.dense.weight");
  e.linear1Bias = a("intermediate.dense.bias");
  e.linear2Weight = a("output.dense.weight");
  e.linear2Bias = a("output.dense.bias");
  e.norm1Weight = a("attention.output.LayerNorm.weight");
  e.norm1Bias = a("attention.output.LayerNorm.bias");
  e.norm2Weight = a("output.LayerNorm.weight");
  e.norm2Bias = a("output.LayerNorm.bias");
  return e;
}

/// Every element equal, bit for bit.
bool identical(const HostTensor &a, const HostTensor &b) {
  return a.shape == b.shape && a.bytes == b.bytes;
}
} // namespace

TEST_CASE("def and for compute what the layers written out compute",
          "[language]") {
  static const Weights weights = randomBertWeights();
  static const std::shared_ptr<Model> functions =
      Model::build(withFunctions(), weights);
  static const std::shared_ptr<Model> handWritten =
      Model::build(writtenOut(), weights);
  static const std::shared_ptr<Model> encoderLayer =
      Model::build(withEncoderLayer(), weights);
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {2, 7}, {3, 13}};
  for (auto size : sizes) {
    const int64_t batch = size.first, seq = size.second;
    DYNAMIC_SECTION("batch " << batch << " seq " << seq) {
      Random rng(uint32_t(batch * 100 + seq));
      HostTensor x = rng.f32({batch, seq, kE});
      // Hugging Face's attention mask: 1 = attend; key 0 always attends, so
      // that no row is fully masked.
      std::vector<int64_t> attend = rng.ids(batch * seq, 0, 1);
      for (int64_t b = 0; b < batch; ++b)
        attend[size_t(b * seq)] = 1;
      HostTensor mask = HostTensor::i64({batch, seq}, attend);
      RunResult got = functions->runOk({x, mask});
      RunResult want = handWritten->runOk({x, mask});
      RunResult layer = encoderLayer->runOk({x, mask});
      CHECK(identical(got["h"], want["x3"]));

      ref::AttentionMask padding{
          [&](int64_t n, int64_t, int64_t j) {
            return attend[size_t((n / kHeads) * seq + j)] == 0;
          },
          nullptr};
      Array y = ref::fromTensor(x);
      for (int64_t i = 0; i < kLayers; ++i)
        y = ref::encoderLayer(y, kHeads, referenceLayer(weights, i),
                              /*normFirst=*/false, /*gelu=*/true, 1e-12,
                              padding);
      E2E_CHECK_CLOSE(got["h"], y, 1e-4, 1e-4);
      E2E_CHECK_CLOSE(layer["h"], y, 1e-4, 1e-4);
    }
  }
}

namespace {
/// A fixture's safetensors as Weights (F32 only, as generate.py writes).
Weights readWeights(const std::string &path) {
  std::string error;
  std::unique_ptr<tfm::SafeTensorsFile> file =
      tfm::SafeTensorsFile::open(path, error);
  if (!file)
    throw std::runtime_error(error);
  Weights w;
  for (const tfm::SafeTensorEntry &e : file->entries()) {
    if (e.dtype != "F32")
      throw std::runtime_error(path + ": " + e.name + " is not F32");
    Weight &t = w[e.name];
    t.shape = e.shape;
    t.data.resize(e.byteSize / sizeof(float));
    std::memcpy(t.data.data(), e.data, e.byteSize);
  }
  return w;
}

/// Rows [begin, begin + count) of a weight.
Weight rowsOf(const Weight &w, int64_t begin, int64_t count) {
  int64_t width = w.data.size() / size_t(w.shape[0]);
  Weight r;
  r.shape = w.shape;
  r.shape[0] = count;
  r.data.assign(w.data.begin() + begin * width,
                w.data.begin() + (begin + count) * width);
  return r;
}

/// nn.TransformerEncoderLayer's weights under `from`, renamed the way
/// BertModel names layer weights under `to` (in_proj split into query, key
/// and value).
void renameToBert(const Weights &in, const std::string &from,
                  const std::string &to, Weights &out) {
  auto get = [&](const std::string &name) { return in.at(from + "." + name); };
  int64_t e = get("self_attn.out_proj.weight").shape[0];
  const char *qkv[] = {"query", "key", "value"};
  for (int64_t k = 0; k < 3; ++k) {
    std::string p = to + ".attention.self." + qkv[k];
    out[p + ".weight"] = rowsOf(get("self_attn.in_proj_weight"), k * e, e);
    out[p + ".bias"] = rowsOf(get("self_attn.in_proj_bias"), k * e, e);
  }
  const std::pair<const char *, const char *> names[] = {
      {"self_attn.out_proj", "attention.output.dense"},
      {"linear1", "intermediate.dense"},
      {"linear2", "output.dense"},
      {"norm1", "attention.output.LayerNorm"},
      {"norm2", "output.LayerNorm"}};
  for (auto [torch, hf] : names)
    for (const char *kind : {".weight", ".bias"})
      out[to + "." + hf + kind] = get(std::string(torch) + kind);
}

const char *kBertLayerDef = R"(
def bert_layer(h, p, mask):
    return transformer_encoder_layer(h, heads = 2, activation = "relu",
        src_key_padding_mask = mask,
        q_weight = "{p}.attention.self.query.weight", q_bias = "{p}.attention.self.query.bias",
        k_weight = "{p}.attention.self.key.weight", k_bias = "{p}.attention.self.key.bias",
        v_weight = "{p}.attention.self.value.weight", v_bias = "{p}.attention.self.value.bias",
        out_weight = "{p}.attention.output.dense.weight",
        out_bias = "{p}.attention.output.dense.bias",
        linear1_weight = "{p}.intermediate.dense.weight",
        linear1_bias = "{p}.intermediate.dense.bias",
        linear2_weight = "{p}.output.dense.weight", linear2_bias = "{p}.output.dense.bias",
        norm1_weight = "{p}.attention.output.LayerNorm.weight",
        norm1_bias = "{p}.attention.output.LayerNorm.bias",
        norm2_weight = "{p}.output.LayerNorm.weight",
        norm2_bias = "{p}.output.LayerNorm.bias")
end
)";
} // namespace

TEST_CASE("transformer_encoder_layer with BERT's weight names matches PyTorch",
          "[language]") {
  std::string dir = sourceDir() + "/tests/reference/";
  SECTION("one layer, Hugging Face's i64 attention mask") {
    std::string fixture = dir + "encoder_post_relu_e8_h2_f16_b3_s5_kpm";
    Weights w;
    renameToBert(readWeights(fixture + "/weights.safetensors"), "layer",
                 "encoder.layer.0", w);
    std::shared_ptr<Model> model =
        Model::build(std::string("model bert_kpm\n"
                                 "input x: f32[batch, seq, 8]\n"
                                 "input attention_mask: i64[batch, seq]\n") +
                         kBertLayerDef +
                         "y = bert_layer(x, \"encoder.layer.0\", "
                         "attention_mask == 0)\n"
                         "output y\n",
                     w);
    HostTensor padding = HostTensor::readNpy(fixture + "/padding.npy");
    std::vector<int64_t> attend;
    for (double masked : padding.toDoubles())
      attend.push_back(masked != 0 ? 0 : 1);
    HostTensor x = HostTensor::readNpy(fixture + "/x.npy");
    HostTensor y = HostTensor::readNpy(fixture + "/y.npy");
    RunResult r = model->runOk({x, HostTensor::i64(padding.shape, attend)});
    E2E_CHECK_CLOSE(r["y"], ref::fromTensor(y));
  }
  SECTION("a stack of two layers in a for loop, with a float mask") {
    std::string fixture = dir + "encoder_stack2_post_e8_h2_f16_b2_s5";
    Weights torch = readWeights(fixture + "/weights.safetensors"), w;
    for (int i = 0; i < 2; ++i)
      renameToBert(torch, "encoder.layers." + std::to_string(i),
                   "encoder.layer." + std::to_string(i), w);
    // The fixture's causal float mask goes in as src_mask.
    std::shared_ptr<Model> model =
        Model::build(std::string("model bert_stack\n"
                                 "input x: f32[batch, seq, 8]\n"
                                 "input mask: f32[seq, seq]\n") +
                         R"(
def bert_layer(h, p, mask):
    return transformer_encoder_layer(h, heads = 2, activation = "relu",
        src_mask = mask,
        q_weight = p + ".attention.self.query.weight", q_bias = p + ".attention.self.query.bias",
        k_weight = p + ".attention.self.key.weight", k_bias = p + ".attention.self.key.bias",
        v_weight = p + ".attention.self.value.weight", v_bias = p + ".attention.self.value.bias",
        out_weight = p + ".attention.output.dense.weight",
        out_bias = p + ".attention.output.dense.bias",
        linear1_weight = p + ".intermediate.dense.weight",
        linear1_bias = p + ".intermediate.dense.bias",
        linear2_weight = p + ".output.dense.weight", linear2_bias = p + ".output.dense.bias",
        norm1_weight = p + ".attention.output.LayerNorm.weight",
        norm1_bias = p + ".attention.output.LayerNorm.bias",
        norm2_weight = p + ".output.LayerNorm.weight",
        norm2_bias = p + ".output.LayerNorm.bias")
end
h = x
for i in 0..2:
    h = bert_layer(h, "encoder.layer.{i}", mask)
end
output h
)",
                     w);
    HostTensor x = HostTensor::readNpy(fixture + "/x.npy");
    HostTensor mask = HostTensor::readNpy(fixture + "/mask.npy");
    HostTensor y = HostTensor::readNpy(fixture + "/y.npy");
    RunResult r = model->runOk({x, mask});
    E2E_CHECK_CLOSE(r["h"], ref::fromTensor(y));
  }
}
