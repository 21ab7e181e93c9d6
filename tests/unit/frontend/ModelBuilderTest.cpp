//===- ModelBuilderTest.cpp - The C++ model-building API ------------------===//
#include "FrontendTestUtils.h"

#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/IR/Verifier.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

TEST_CASE("ModelBuilder builds seed 001's attention from C++", "[builder]") {
  MLIRContext ctx;
  tfmtest::TableWeights weights;
  weights.shapes = {{"embed.weight", {6, 16}},
                    {"W_query", {24, 16}},
                    {"W_key", {24, 16}},
                    {"W_value", {28, 16}}};
  Location loc = UnknownLoc::get(&ctx);
  ModelBuilder b(&ctx, "embedding_attention", loc, &weights);
  auto tokens =
      b.input("tokens", IntegerType::get(&ctx, 64), {Dim::named("seq")}, loc);
  REQUIRE(succeeded(tokens));
  auto embedded = b.embedding(*tokens, *b.weight("embed.weight", loc), loc);
  REQUIRE(succeeded(embedded));
  auto q = b.linear(*embedded, *b.weight("W_query", loc), std::nullopt, loc);
  auto k = b.linear(*embedded, *b.weight("W_key", loc), std::nullopt, loc);
  auto v = b.linear(*embedded, *b.weight("W_value", loc), std::nullopt, loc);
  REQUIRE((succeeded(q) && succeeded(k) && succeeded(v)));
  auto context = b.sdpa(*q, *k, *v, std::nullopt, loc);
  REQUIRE(succeeded(context));
  CHECK(formatShape(context->shape) == "[seq, 28]");
  REQUIRE(succeeded(b.output("context", *context, loc)));
  auto module = b.finish(loc);
  REQUIRE(succeeded(module));
  CHECK(succeeded(verify(module->get())));
  int sdpas = 0;
  module->get().walk([&](SdpaOp op) {
    ++sdpas;
    CHECK(op.getScaleOrDefault() == Approx(1.0 / std::sqrt(24.0)));
  });
  CHECK(sdpas == 1);
}

TEST_CASE("ModelBuilder rejects bad shapes with a diagnostic", "[builder]") {
  MLIRContext ctx;
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  Location loc = UnknownLoc::get(&ctx);
  ModelBuilder b(&ctx, "m", loc, nullptr);
  auto f32 = Float32Type::get(&ctx);
  auto x = b.input("x", f32, {Dim::named("seq"), Dim::of(8)}, loc);
  auto y = b.input("y", f32, {Dim::named("len"), Dim::of(8)}, loc);
  REQUIRE((succeeded(x) && succeeded(y)));

  // seq and len are different run-time sizes: adding them cannot be allowed.
  CHECK(failed(b.add(*x, *y, loc)));
  CHECK(message.find("do not broadcast (seq vs len)") != std::string::npos);

  CHECK(failed(b.sdpa(*x, *y, *x, std::nullopt, loc)));
  CHECK(message.find("differ in sequence length") != std::string::npos);

  CHECK(failed(b.scale(*x, 0.0, /*divide=*/true, loc)));
  CHECK(message.find("division by zero") != std::string::npos);

  CHECK(failed(b.weight("missing", loc)));
  CHECK(message.find("unknown weight 'missing'") != std::string::npos);

  CHECK(failed(b.input("x", f32, {Dim::of(1)}, loc)));
  CHECK(message.find("declared twice") != std::string::npos);

  CHECK(failed(b.finish(loc)));
  CHECK(message.find("has no output") != std::string::npos);
}

TEST_CASE("ModelBuilder masks attention scores", "[builder]") {
  MLIRContext ctx;
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  Location loc = UnknownLoc::get(&ctx);
  ModelBuilder b(&ctx, "masked", loc, nullptr);
  auto f32 = Float32Type::get(&ctx);
  auto i64 = IntegerType::get(&ctx, 64);
  Dim seq = Dim::named("seq");
  auto s = b.input("s", f32, {Dim::of(2), seq, seq}, loc);
  auto pad = b.input("pad", i64, {Dim::of(1), seq}, loc);
  auto other = b.input("other", i64, {Dim::named("len"), seq}, loc);
  REQUIRE((succeeded(s) && succeeded(pad) && succeeded(other)));

  // An integer mask broadcasts like '+' and becomes `mask != 0`.
  auto causal = b.causalMask(*s, loc);
  REQUIRE(succeeded(causal));
  auto filled = b.maskedFill(*causal, *pad, -INFINITY, loc);
  REQUIRE(succeeded(filled));
  CHECK(formatShape(filled->shape) == "[2, seq, seq]");

  // Named dims match by name only.
  CHECK(failed(b.maskedFill(*s, *other, 0.0, loc)));
  CHECK(message.find("does not broadcast") != std::string::npos);
  // Masks are integers; scores are floats of rank 2 or more.
  CHECK(failed(b.maskedFill(*s, *s, 0.0, loc)));
  CHECK(failed(b.maskedFill(*pad, *pad, 0.0, loc)));
  auto row = b.input("row", f32, {seq}, loc);
  REQUIRE(succeeded(row));
  CHECK(failed(b.causalMask(*row, loc)));

  REQUIRE(succeeded(b.output("y", *filled, loc)));
  auto module = b.finish(loc);
  REQUIRE(succeeded(module));
  int fills = 0, causals = 0;
  module->get().walk([&](MaskedFillOp op) {
    ++fills;
    CHECK(op.getMask().getType().getElementType().isInteger(1));
    CHECK(std::isinf(op.getValue().convertToDouble()));
  });
  module->get().walk([&](CausalMaskOp) { ++causals; });
  CHECK(fills == 1);
  CHECK(causals == 1);
}
