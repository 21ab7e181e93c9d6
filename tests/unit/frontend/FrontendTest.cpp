//===- FrontendTest.cpp - The .tfm parser: models and errors --------------===//
#include "FrontendTestUtils.h"

#include "compiler/Checkpoint/Checkpoint.h"
#include "compiler/Frontend/WeightShapes.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

using namespace mlir;
using tfmtest::parse;
using tfmtest::TableWeights;

namespace {
template <typename OpTy> int count(ModuleOp module) {
  int n = 0;
  module.walk([&](OpTy) { ++n; });
  return n;
}

std::string signatureOf(ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.walk([&](func::FuncOp f) { os << f->getAttr("tfm.signature"); });
  return s;
}
} // namespace

TEST_CASE("hand-written attention parses into tfm primitives", "[frontend]") {
  MLIRContext ctx;
  TableWeights weights;
  weights.shapes = {
      {"W_q.weight", {2, 2}}, {"W_k.weight", {2, 2}}, {"W_v.weight", {2, 2}}};
  auto result = parse(ctx, R"(model self_attention
input x: f32[batch, seq, 2]
q = linear(x, weight = "W_q.weight")
k = linear(x, weight = "W_k.weight")
v = linear(x, weight = "W_v.weight")
y = softmax(q @ transpose(k, 1, 2) / sqrt(2), dim = 2) @ v
output y
)",
                      &weights);
  INFO(result.error);
  REQUIRE(result.module);
  ModuleOp m = *result.module;
  CHECK(count<mlir::tfm::WeightOp>(m) == 3);
  CHECK(count<mlir::tfm::LinearOp>(m) == 3);
  CHECK(count<mlir::tfm::MatmulOp>(m) == 2);
  CHECK(count<mlir::tfm::TransposeOp>(m) == 1);
  CHECK(count<mlir::tfm::SoftmaxOp>(m) == 1);
  int divides = 0;
  m.walk([&](mlir::tfm::ScaleOp op) {
    CHECK(op.getFactor().convertToDouble() == Approx(std::sqrt(2.0)));
    divides += op.getDivide();
  });
  CHECK(divides == 1);
  std::string sig = signatureOf(m);
  CHECK(sig.find("symbols = [\"batch\", \"seq\"]") != std::string::npos);
  CHECK(sig.find("shape = [\"batch\", \"seq\", 2]") != std::string::npos);
}

TEST_CASE("every seed model parses against its weights", "[frontend]") {
  for (const char *seed :
       {"000_self_attention", "001_embedding_attention", "002_numpy_attention",
        "003_multi_head", "004_multi_headed"}) {
    std::string dir = std::string(TFM_SOURCE_DIR) + "/examples/seeds/" + seed;
    auto buffer = llvm::MemoryBuffer::getFile(dir + "/model.tfm");
    REQUIRE(buffer);
    std::string error;
    auto file =
        mlir::tfm::Checkpoint::open(dir + "/weights.safetensors", error);
    INFO(seed << ": " << error);
    REQUIRE(file);
    mlir::tfm::CheckpointWeightShapes weights(*file);
    MLIRContext ctx;
    auto result = parse(ctx, (*buffer)->getBuffer().str(), &weights);
    INFO(result.error);
    CHECK(result.module);
    // Without weights, the first weight reference is the error.
    MLIRContext bare;
    auto unbound = parse(bare, (*buffer)->getBuffer().str());
    CHECK(unbound.error.find("unknown weight") != std::string::npos);
  }
}

TEST_CASE("param declares weight shapes without a file", "[frontend]") {
  MLIRContext ctx;
  auto result = parse(ctx, R"(model m
param "w": f32[4, 3]
param "b": f32[4]
input x: f32[n, 3]
y = linear(x, weight = "w", bias = "b")
output y
)");
  INFO(result.error);
  REQUIRE(result.module);
  CHECK(count<mlir::tfm::LinearOp>(*result.module) == 1);
}

TEST_CASE("layers: embedding, positional encoding, sdpa, mha, concat",
          "[frontend]") {
  MLIRContext ctx;
  TableWeights weights;
  weights.shapes = {{"embed", {10, 8}},
                    {"mha.in_proj_weight", {24, 8}},
                    {"mha.in_proj_bias", {24}},
                    {"mha.out_proj.weight", {8, 8}},
                    {"mha.out_proj.bias", {8}}};
  auto result = parse(ctx, R"(model encoder
input tokens: i64[batch, seq]
x = embedding(tokens, weight = "embed")
x2 = x + positional_encoding(x)
a = multi_head_attention(x2, x2, x2, heads = 2, weights = "mha")
s = sdpa(a, a, a, scale = 0.5)
c = concat(a, s, dim = -1)
output c
)",
                      &weights);
  INFO(result.error);
  REQUIRE(result.module);
  ModuleOp m = *result.module;
  CHECK(count<mlir::tfm::EmbeddingOp>(m) == 1);
  CHECK(count<mlir::tfm::PositionalEncodingOp>(m) == 1);
  CHECK(count<mlir::tfm::AddOp>(m) == 1);
  CHECK(count<mlir::tfm::MultiHeadAttentionOp>(m) == 1);
  CHECK(count<mlir::tfm::SdpaOp>(m) == 1);
  CHECK(count<mlir::tfm::ConcatOp>(m) == 1);
  m.walk([](mlir::tfm::ConcatOp op) {
    CHECK(op.getResult().getType().getShape().back() == 16);
  });
}

struct ErrorCase {
  const char *name;
  const char *source;
  const char *expected; // "line:col: substring"
};

TEST_CASE("malformed models give one error at file:line:col", "[frontend]") {
  const ErrorCase cases[] = {
      {"empty file", "\n# nothing\n", "3:1: empty model file"},
      {"no model line", "input x: f32[2]\n", "1:1: a model file starts with"},
      {"bad dtype", "model m\ninput x: u16[2]\n",
       "2:10: expected an element type (f32, f64, bf16, f16, i8, i32, i64, "
       "bool)"},
      {"bad dim", "model m\ninput x: f32[2, -1]\n",
       "2:17: expected a dimension"},
      {"unknown name", "model m\ninput x: f32[2, 2]\ny = x @ z\noutput y\n",
       "3:9: unknown value 'z'"},
      {"unknown function",
       "model m\ninput x: f32[2, 2]\ny = swish(x)\noutput y\n",
       "3:5: unknown function 'swish'"},
      {"named dims differ",
       "model m\ninput a: f32[seq, 4]\ninput b: f32[3, 4]\n"
       "y = a @ transpose(b)\ny2 = transpose(b) @ a\noutput y2\n",
       "5:19: matmul: [4, 3] @ [seq, 4] contracts mismatched dimensions 3 and "
       "seq"},
      {"unterminated string",
       "model m\ninput x: f32[2, 2]\ny = linear(x, weight = \"w)\noutput y\n",
       "3:24: expected an expression but the string is not closed"},
      {"missing paren",
       "model m\ninput x: f32[2, 2]\ny = softmax(x\noutput y\n",
       "4:1: expected ',' or ')'"},
      {"redefinition",
       "model m\ninput x: f32[2, 2]\nx = softmax(x)\noutput x\n",
       "3:1: 'x' is already defined"},
      {"no output", "model m\ninput x: f32[2, 2]\ny = softmax(x)\n",
       "no 'output' statement"},
      {"softmax dim",
       "model m\ninput x: f32[2, 2]\ny = softmax(x, dim = 2)\noutput y\n",
       "3:5: dimension 2 is out of range for [2, 2]"},
      {"tensor times a boolean",
       "model m\ninput x: f32[2, 2]\ny = x * true\noutput y\n",
       "3:9: '*' needs tensors or numbers"},
      {"keyword repeating a positional argument",
       "model m\ninput x: f32[2, 2]\ny = softmax(x, 1, dim = 0)\noutput y\n",
       "3:25: softmax(): 'dim' is given by position and by keyword"},
      {"weight name that is not a string",
       "model m\ninput x: f32[2, 4]\n"
       "y = multi_head_attention(x, x, x, heads = 2, q_weight = 3)\n"
       "output y\n",
       "3:57: multi_head_attention(): 'q_weight' must be a string"},
      {"too many positional arguments",
       "model m\ninput x: f32[2, 2]\ny = relu(x, x)\noutput y\n",
       "3:13: relu() takes at most 1 positional arguments"},
      {"missing argument",
       "model m\ninput x: f32[2, 2]\ny = scale(x)\noutput y\n",
       "3:5: scale() needs the argument 'factor'"},
      {"unknown keyword",
       "model m\ninput x: f32[2, 2]\ny = softmax(x, axis = 1)\noutput y\n",
       "3:23: softmax() has no argument 'axis'"},
      {"unknown weight",
       "model m\ninput x: f32[2, 2]\ny = linear(x, weight = \"nope\")\noutput "
       "y\n",
       "3:24: unknown weight 'nope'"},
      {"linear feature mismatch",
       "model m\nparam \"w\": f32[4, 3]\ninput x: f32[seq, 5]\n"
       "y = linear(x, weight = \"w\")\noutput y\n",
       "4:5: linear: input [seq, 5] has 5 features but the weight [4, 3] "
       "expects 3"},
      {"mha heads",
       "model m\ninput x: f32[s, 6]\nparam \"in_proj_weight\": f32[18, 6]\n"
       "param \"out_proj.weight\": f32[6, 6]\n"
       "y = multi_head_attention(x, x, x, heads = 4, bias = false)\noutput y\n",
       "5:5: multi_head_attention: embedding dimension 6 is not divisible by "
       "4"},
      {"stray character", "model m\ninput x: f32[2, 2] $\n",
       "2:20: expected the end of the statement but found '$'"},
      {"two models", "model a\nmodel b\n", "2:1: a file holds one model"},
      {"error in a function body",
       "model m\ninput x: f32[2, 2]\ndef f(x):\n    return swish(x)\nend\n"
       "y = f(x)\noutput y\n",
       "4:12: unknown function 'swish'"},
      {"error in a loop body",
       "model m\ninput x: f32[2, 2]\nfor i in 0..2:\n"
       "    x = linear(x, weight = \"w.{i}\")\nend\noutput x\n",
       "4:28: unknown weight 'w.0'"},
      {"loop bound", "model m\ninput x: f32[2]\nfor i in 0..x:\nend\n",
       "3:13: a loop bound must be an integer"},
      {"inf is a constant",
       "model m\ninput x: f32[2, 2]\ninf = x\noutput inf\n",
       "3:1: 'inf' is a constant and cannot be assigned"},
      {"float mask",
       "model m\ninput x: f32[2, 2]\ny = masked_fill(x, x, -inf)\noutput y\n",
       "3:5: masked_fill: the mask must be i1, i8, i32 or i64"},
      {"fill value is a number",
       "model m\ninput x: f32[2, 2]\ninput m: i64[2, 2]\n"
       "y = masked_fill(x, m, x)\noutput y\n",
       "4:23: masked_fill(): 'value' must be a number"},
      // Element types an op cannot take, at the op's line.
      {"bf16 param", "model m\nparam \"w\": bf16[2, 2]\n",
       "2:12: a weight is f32, f64, i32 or i64, not bf16 (a checkpoint's F16 "
       "and BF16 weights are f32, converted at compile time)"},
      {"matmul of bf16 and f32",
       "model m\ninput x: bf16[2, 2]\ninput y: f32[2, 2]\ny2 = x @ y\n"
       "output y2\n",
       "4:8: matmul operands must have the same float type, got 'bf16' and "
       "'f32' (cast one of them)"},
      {"bf16 plus f16",
       "model m\ninput x: bf16[2]\ninput y: f16[2]\nz = x + y\noutput z\n",
       "4:7: '+' needs two tensors of the same numeric type, got 'bf16' and "
       "'f16'"},
      {"exp of i8", "model m\ninput q: i8[2]\nz = exp(q)\noutput z\n",
       "3:5: this function needs a float tensor, got 'i8'"},
      {"mean of i8", "model m\ninput q: i8[2]\nz = mean(q)\noutput z\n",
       "3:5: mean needs a float tensor, got 'i8'"},
      {"i8 divided", "model m\ninput q: i8[2]\nz = q / q\noutput z\n",
       "3:7: '/' needs float tensors, got 'i8'"},
      {"a number that is no i8",
       "model m\ninput q: i8[2]\nz = q + 200\noutput z\n",
       "3:9: the number 200 does not fit in 'i8'"},
      {"linear of i8",
       "model m\nparam \"w\": f32[2, 2]\ninput q: i8[3, 2]\n"
       "z = linear(q, weight = \"w\")\noutput z\n",
       "4:5: linear: input and weight must have the same float type, got "
       "'i8' and 'f32'"},
      {"softmax of i8", "model m\ninput q: i8[2]\nz = softmax(q)\noutput z\n",
       "3:5: softmax needs a float tensor"},
  };
  for (const ErrorCase &c : cases) {
    MLIRContext ctx;
    auto result = tfmtest::parse(ctx, c.source);
    INFO(c.name << "\n  got: " << result.error
                << "\n  expected: " << c.expected);
    CHECK_FALSE(result.module);
    CHECK(result.error.find(c.expected) != std::string::npos);
  }
}

// Hidden from the default run: ctest runs it alone as unit.frontend.long-line
// with a timeout (tests/unit/frontend/CMakeLists.txt). Locations used to be
// found by scanning back to the start of the line, once per operator, which
// made this 2 MB line take minutes; it now takes a fraction of a second.
TEST_CASE("a 2 MB single-line model parses in linear time", "[.][long-line]") {
  const int terms = 1000000;
  std::string expr;
  expr.reserve(2 * terms + 2);
  for (int i = 0; i < terms; ++i)
    expr += "1+";
  expr += "1";
  MLIRContext ctx;
  auto ok = parse(ctx, "model m\ninput x: f32[seq, 4]\ny = x * (" + expr +
                           ")\noutput y\n");
  INFO(ok.error);
  CHECK(ok.module);
  // Columns stay exact at the far end of the line.
  auto bad = parse(ctx, "model m\ninput x: f32[seq, 4]\ny = x * (" + expr +
                            ") + nope\noutput y\n");
  CHECK(bad.error ==
        "3:" + std::to_string(9 + expr.size() + 5) + ": unknown value 'nope'");
}
