//===- LayersTest.cpp - Layer functions of the language and the builder ---===//
//
// The layers of docs/layers.md through the parser and through ModelBuilder:
// what they build, their run-time checks and status, tuple assignment, and
// their errors.
//
//===----------------------------------------------------------------------===//
#include "FrontendTestUtils.h"

#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"

#include <catch2/catch.hpp>

using namespace mlir;
using namespace mlir::tfm;
using tfmtest::parse;
using tfmtest::TableWeights;

namespace {
template <typename OpTy> int count(ModuleOp module) {
  int n = 0;
  module.walk([&](OpTy) { ++n; });
  return n;
}

func::FuncOp modelOf(ModuleOp module) {
  func::FuncOp f;
  module.walk([&](func::FuncOp op) { f = op; });
  return f;
}

/// nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)'s state_dict under
/// `prefix`.
void addEncoderLayer(TableWeights &weights, const std::string &prefix) {
  std::string p = prefix.empty() ? "" : prefix + ".";
  weights.shapes[p + "self_attn.in_proj_weight"] = {24, 8};
  weights.shapes[p + "self_attn.in_proj_bias"] = {24};
  weights.shapes[p + "self_attn.out_proj.weight"] = {8, 8};
  weights.shapes[p + "self_attn.out_proj.bias"] = {8};
  weights.shapes[p + "linear1.weight"] = {16, 8};
  weights.shapes[p + "linear1.bias"] = {16};
  weights.shapes[p + "linear2.weight"] = {8, 16};
  weights.shapes[p + "linear2.bias"] = {8};
  for (const char *norm : {"norm1", "norm2"}) {
    weights.shapes[p + norm + ".weight"] = {8};
    weights.shapes[p + norm + ".bias"] = {8};
  }
}
} // namespace

TEST_CASE("lookups come with run-time checks whose status the model returns",
          "[frontend][layers]") {
  MLIRContext ctx;
  TableWeights weights;
  weights.shapes = {{"tok", {11, 8}}, {"pos", {32, 8}}};
  auto result = parse(ctx, R"(model lookups
input ids: i32[batch, seq]
e = embedding(ids, weight = "tok", padding_idx = -1)
y = e + positional_encoding(e, kind = "learned", weight = "pos")
output y
)",
                      &weights);
  INFO(result.error);
  REQUIRE(result.module);
  ModuleOp m = *result.module;
  CHECK(succeeded(verify(m)));
  func::FuncOp f = modelOf(m);
  // The outputs, then the i32 status.
  REQUIRE(f.getFunctionType().getNumResults() == 2);
  CHECK(f.getFunctionType().getResult(1).isInteger(32));
  m.walk([](CheckIndexOp op) {
    CHECK(op.getBound() == 11);
    CHECK(op.getCode() == 1);
  });
  m.walk([](CheckSizeOp op) {
    CHECK(int64_t(op.getDim()) == -2);
    CHECK(op.getMax() == 32);
    CHECK(op.getCode() == 2);
  });
  CHECK(count<CheckIndexOp>(m) == 1);
  CHECK(count<CheckSizeOp>(m) == 1);
  ArrayAttr errors = getSignatureAttr(f).getErrors();
  REQUIRE(errors);
  CHECK(errors.size() == 2);
}

TEST_CASE("models without lookups return no status", "[frontend][layers]") {
  MLIRContext ctx;
  auto result = parse(ctx, R"(model plain
input x: f32[seq, 8]
input keep: bool[seq, seq]
y = sdpa(x, x, x, attn_mask = keep, is_causal = true)
z = dropout(relu(gelu(layer_norm(y), approximate = "tanh")), p = 0.2)
output z
)");
  INFO(result.error);
  REQUIRE(result.module);
  func::FuncOp f = modelOf(*result.module);
  CHECK(f.getFunctionType().getNumResults() == 1);
  CHECK(f.getArgumentTypes()[1] ==
        RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                              IntegerType::get(&ctx, 1)));
  CHECK(!getSignatureAttr(f).getErrors());
  ModuleOp m = *result.module;
  // dropout is the identity; layer_norm without weights has no operands but x.
  CHECK(count<LayerNormOp>(m) == 1);
  m.walk([](LayerNormOp op) {
    CHECK(!op.getWeight());
    CHECK(op.getEpsilon().convertToDouble() == 1e-5);
  });
  m.walk([](SdpaOp op) {
    CHECK(op.getCausal());
    CHECK(op.getMask());
  });
  CHECK(count<GeluOp>(m) == 1);
  CHECK(count<ReluOp>(m) == 1);
}

TEST_CASE("need_weights returns two values to assign", "[frontend][layers]") {
  MLIRContext ctx;
  TableWeights weights;
  weights.shapes = {{"attn.in_proj_weight", {24, 8}},
                    {"attn.in_proj_bias", {24}},
                    {"attn.out_proj.weight", {8, 8}},
                    {"attn.out_proj.bias", {8}}};
  auto result = parse(ctx, R"(model weights
input q: f32[sq, batch, 8]
input kv: f32[sk, batch, 8]
input pad: bool[batch, sk]
y, w = multi_head_attention(q, kv, kv, heads = 2, weights = "attn",
                            batch_first = false, key_padding_mask = pad,
                            need_weights = true)
y2, w2 = multi_head_attention(q, kv, kv, heads = 2, weights = "attn",
                              batch_first = false, need_weights = true,
                              average_attn_weights = false)
output y, w, w2
)",
                      &weights);
  INFO(result.error);
  REQUIRE(result.module);
  ModuleOp m = *result.module;
  CHECK(succeeded(verify(m)));
  // Sequence first: the output keeps the layout, the weights are batch first
  // as PyTorch returns them.
  SignatureAttr sig = getSignatureAttr(modelOf(m));
  std::string outputs;
  llvm::raw_string_ostream os(outputs);
  os << sig.getOutputs();
  CHECK(outputs.find("shape = [\"sq\", \"batch\", 8]") != std::string::npos);
  CHECK(outputs.find("shape = [\"batch\", \"sq\", \"sk\"]") !=
        std::string::npos);
  CHECK(outputs.find("shape = [\"batch\", 2, \"sq\", \"sk\"]") !=
        std::string::npos);
  CHECK(count<MultiHeadAttentionOp>(m) == 2);
}

TEST_CASE("kdim and vdim use nn.MultiheadAttention's separate weights",
          "[frontend][layers]") {
  MLIRContext ctx;
  TableWeights weights;
  weights.shapes = {
      {"attn.q_proj_weight", {8, 8}},   {"attn.k_proj_weight", {8, 5}},
      {"attn.v_proj_weight", {8, 7}},   {"attn.in_proj_bias", {24}},
      {"attn.out_proj.weight", {8, 8}}, {"attn.out_proj.bias", {8}}};
  auto result = parse(ctx, R"(model cross
input q: f32[batch, sq, 8]
input k: f32[batch, sk, 5]
input v: f32[batch, sk, 7]
y = multi_head_attention(q, k, v, heads = 4, weights = "attn")
output y
)",
                      &weights);
  INFO(result.error);
  REQUIRE(result.module);
  ModuleOp m = *result.module;
  m.walk([](MultiHeadAttentionOp op) {
    CHECK(op.getKWeight().getType().getShape() == ArrayRef<int64_t>{8, 5});
    CHECK(op.getVWeight().getType().getShape() == ArrayRef<int64_t>{8, 7});
    CHECK(op.getQBias()); // sliced from in_proj_bias
  });
}

TEST_CASE("ModelBuilder builds nn.TransformerEncoderLayer both ways",
          "[builder][layers]") {
  for (bool normFirst : {false, true}) {
    MLIRContext ctx;
    TableWeights weights;
    addEncoderLayer(weights, "encoder.layers.0");
    Location loc = UnknownLoc::get(&ctx);
    ModelBuilder b(&ctx, "encoder", loc, &weights);
    auto f32 = Float32Type::get(&ctx);
    auto x = b.input("x", f32,
                     {Dim::named("batch"), Dim::named("seq"), Dim::of(8)}, loc);
    auto pad = b.input("pad", IntegerType::get(&ctx, 1),
                       {Dim::named("batch"), Dim::named("seq")}, loc);
    REQUIRE((succeeded(x) && succeeded(pad)));
    TransformerEncoderLayerOptions options;
    options.heads = 2;
    options.weights =
        TransformerEncoderLayerWeights::pytorch("encoder.layers.0");
    options.normFirst = normFirst;
    options.activation = "gelu";
    options.srcKeyPaddingMask = *pad;
    auto y = b.transformerEncoderLayer(*x, options, loc);
    REQUIRE(succeeded(y));
    CHECK(formatShape(y->shape) == "[batch, seq, 8]");
    REQUIRE(succeeded(b.output("y", *y, loc)));
    auto module = b.finish(loc);
    REQUIRE(succeeded(module));
    ModuleOp m = module->get();
    CHECK(count<MultiHeadAttentionOp>(m) == 1);
    CHECK(count<LayerNormOp>(m) == 2);
    CHECK(count<LinearOp>(m) == 2);
    CHECK(count<GeluOp>(m) == 1);
    CHECK(count<AddOp>(m) == 2);
    CHECK(count<WeightOp>(m) == 12);
    // Post-norm ends in norm2; pre-norm ends in the second residual add.
    Operation *last = modelOf(m).getBody().front().getTerminator();
    Operation *result = last->getOperand(0).getDefiningOp();
    CHECK((normFirst ? isa<AddOp>(result) : isa<LayerNormOp>(result)));
  }
}

TEST_CASE("ModelBuilder's sdpa and multi-head attention options",
          "[builder][layers]") {
  MLIRContext ctx;
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  TableWeights weights;
  weights.shapes = {{"in_proj_weight", {24, 8}}, {"out_proj.weight", {8, 8}}};
  Location loc = UnknownLoc::get(&ctx);
  ModelBuilder b(&ctx, "attention", loc, &weights);
  auto f32 = Float32Type::get(&ctx);
  auto i1 = IntegerType::get(&ctx, 1);
  Dim batch = Dim::of(2), sq = Dim::named("sq"), sk = Dim::named("sk");
  auto q = b.input("q", f32, {batch, sq, Dim::of(8)}, loc);
  auto k = b.input("k", f32, {batch, sk, Dim::of(8)}, loc);
  auto keep = b.input("keep", i1, {batch, Dim::of(1), sk}, loc);
  auto pad = b.input("pad", i1, {batch, sk}, loc);
  auto perHead = b.input("per_head", f32, {Dim::of(4), sq, sk}, loc);
  REQUIRE((succeeded(q) && succeeded(k) && succeeded(keep) && succeeded(pad) &&
           succeeded(perHead)));

  SdpaOptions sdpa;
  sdpa.attnMask = *keep;
  sdpa.isCausal = true;
  auto s = b.sdpa(*q, *k, *k, sdpa, loc);
  REQUIRE(succeeded(s));
  CHECK(formatShape(s->shape) == "[2, sq, 8]");
  // A mask must broadcast to the scores [2, sq, sk].
  sdpa.attnMask = *pad;
  CHECK(failed(b.sdpa(*q, *k, *k, sdpa, loc)));
  CHECK(
      message.find("does not broadcast to the attention scores [2, sq, sk]") !=
      std::string::npos);

  MultiHeadAttentionOptions mha;
  mha.keyPaddingMask = *pad;
  mha.attnMask = *perHead; // [batch * heads, sq, sk]
  mha.needWeights = true;
  auto names = MultiHeadAttentionWeights::pytorch("", /*bias=*/false);
  auto r = b.multiHeadAttention(*q, *k, *k, 2, names, mha, loc);
  REQUIRE(succeeded(r));
  REQUIRE(r->weights);
  CHECK(formatShape(r->weights->shape) == "[2, sq, sk]");
  // [batch * heads] is 4, not 3.
  CHECK(failed(b.multiHeadAttention(*q, *k, *k, 4, names, mha, loc)));
  CHECK(message.find("attn_mask [4, sq, sk] must be [sq, sk] or [8, sq, sk]") !=
        std::string::npos);

  REQUIRE(succeeded(b.output("y", r->output, loc)));
  REQUIRE(succeeded(b.output("w", *r->weights, loc)));
  auto module = b.finish(loc);
  REQUIRE(succeeded(module));
  CHECK(succeeded(verify(module->get())));
}
