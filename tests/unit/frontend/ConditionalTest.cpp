//===- ConditionalTest.cpp - The compile-time `if` and has_weight ---------===//
//
// `if COND:` ... `elif COND:` ... `else:` ... `end` parses the first branch
// whose condition holds and skips the others unparsed; conditions are
// true/false known at compile time (comparisons of numbers or strings,
// has_weight, config). Each case checks which weights the module reads.
//
//===----------------------------------------------------------------------===//
#include "FrontendTestUtils.h"

#include "dialects/Tfm/IR/TfmOps.h"

#include <catch2/catch.hpp>

using namespace mlir;
using tfmtest::parse;
using tfmtest::TableWeights;

namespace {
/// The names of the weights the module reads, sorted.
std::vector<std::string> weightNames(ModuleOp module) {
  std::vector<std::string> names;
  module.walk(
      [&](mlir::tfm::WeightOp op) { names.push_back(op.getName().str()); });
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

TableWeights weights() {
  TableWeights w;
  w.shapes["q.weight"] = {4, 4};
  w.shapes["q.bias"] = {4};
  w.shapes["k.weight"] = {4, 4};
  return w;
}

/// A projection that takes its bias when the file has one, as
/// examples/llama/llama.tfm's.
constexpr const char *kProj = R"(
def proj(x, w):
    if has_weight(w + ".bias"):
        y = linear(x, weight = w + ".weight", bias = w + ".bias")
    else:
        y = linear(x, weight = w + ".weight")
    end
    return y
end
)";
} // namespace

TEST_CASE("if picks the branch whose condition holds", "[frontend]") {
  MLIRContext ctx;
  TableWeights w = weights();
  SECTION("has_weight, in a function") {
    auto result = parse(ctx,
                        std::string("model m\ninput x: f32[2, 4]\n") + kProj +
                            "a = proj(x, \"q\")\nb = proj(x, \"k\")\n"
                            "output a, b\n",
                        &w);
    INFO(result.error);
    REQUIRE(result.module);
    CHECK(weightNames(*result.module) ==
          std::vector<std::string>{"k.weight", "q.bias", "q.weight"});
  }
  for (auto [arch, expected] :
       {std::pair<const char *, const char *>{"llama", "q.weight"},
        {"qwen2", "k.weight"},
        {"gemma3", "q.bias"}}) {
    DYNAMIC_SECTION("string comparison, elif and else: " << arch) {
      std::string source = std::string("model m\narch = \"") + arch +
                           R"("
input x: f32[2, 4]
if arch == "llama":
    y = linear(x, weight = "q.weight")
elif (arch != "gemma3") & (2 > 1):
    y = linear(x, weight = "k.weight")
else:
    y = x + weight("q.bias")
end
output y
)";
      auto result = parse(ctx, source, &w);
      INFO(result.error);
      REQUIRE(result.module);
      CHECK(weightNames(*result.module) == std::vector<std::string>{expected});
    }
  }
  SECTION("% of integers picks every third layer, as Gemma's pattern") {
    auto result = parse(ctx, R"(model m
input x: f32[2, 4]
for i in 0..6:
    if (i + 1) % 3 == 0:
        x = linear(x, weight = "k.weight")
    else:
        x = linear(x, weight = "q.weight")
    end
end
y = x * (-7 % 3)
output y
)",
                        &w);
    INFO(result.error);
    REQUIRE(result.module);
    std::vector<std::string> order;
    result.module->walk([&](mlir::tfm::LinearOp op) {
      order.push_back(
          op.getWeight().getDefiningOp<mlir::tfm::WeightOp>().getName().str());
    });
    CHECK(order == std::vector<std::string>{"q.weight", "q.weight", "k.weight",
                                            "q.weight", "q.weight",
                                            "k.weight"});
    // Python's remainder: the divisor's sign.
    bool scaledByTwo = false;
    result.module->walk([&](mlir::tfm::ScaleOp op) {
      scaledByTwo = op.getFactor().convertToDouble() == 2.0;
    });
    CHECK(scaledByTwo);
  }
  SECTION("a branch not taken is not parsed; a top-level name assigned in "
          "a branch") {
    auto result = parse(ctx, R"(model m
input x: f32[2, 4]
y = x
if 1 > 2:
    y = linear(x, weight = "absent")
end
if true:
    z = y * 2
end
output z
)",
                        &w);
    INFO(result.error);
    REQUIRE(result.module);
    CHECK(weightNames(*result.module).empty());
  }
}

TEST_CASE("a function called only in a branch not taken is not warned about",
          "[frontend]") {
  MLIRContext ctx;
  const char *source = R"(model m
input x: f32[2]
def f(x):
    return x * 2
end
def unused(x):
    return unused(x)
end
if false:
    y = f(x)
else:
    y = x
end
output y
)";
  auto result = parse(ctx, source);
  REQUIRE(result.module);
  // The one diagnostic: `unused` (which only calls itself) is never called.
  CHECK(result.error ==
        "6:5: function 'unused' is never called; only its structure was "
        "checked");
}

TEST_CASE("malformed conditionals give one error at file:line:col",
          "[frontend]") {
  struct Case {
    const char *name, *source, *expected;
  } cases[] = {
      {"tensor condition",
       "model m\ninput x: f32[2]\nif x > 0:\n    y = x\nend\noutput x\n",
       "3:4: a condition must be true or false known at compile time"},
      {"number condition",
       "model m\ninput x: f32[2]\nif 1:\n    y = x\nend\noutput x\n",
       "3:4: a condition must be true or false known at compile time"},
      {"string and number",
       "model m\ninput x: f32[2]\nif \"a\" == 1:\nend\noutput x\n",
       "3:8: '==' does not apply to a string"},
      {"no end", "model m\ninput x: f32[2]\nif true:\n    y = x\noutput x\n",
       "3:1: 'if' has no matching 'end'"},
      {"no colon", "model m\ninput x: f32[2]\nif true\nend\noutput x\n",
       "3:8: expected ':'"},
      {"else without if", "model m\ninput x: f32[2]\nelse:\noutput x\n",
       "3:1: 'else' without an open 'if'"},
      {"elif after else",
       "model m\ninput x: f32[2]\nif true:\nelse:\nelif true:\nend\n"
       "output x\n",
       "5:1: 'elif' after 'else': 'else' is the last branch of an 'if'"},
      {"input inside if", "model m\nif true:\n    input x: f32[2]\nend\n",
       "3:5: 'input' stands only at the top level of the model, not inside "
       "'def', 'for' or 'if'"},
      {"return inside if",
       "model m\ninput x: f32[2]\ndef f(x):\n    if true:\n        return x\n"
       "    end\nend\ny = f(x)\noutput y\n",
       "5:9: 'return' inside 'if': a function returns once"},
      {"has_weight of a number",
       "model m\ninput x: f32[2]\nif has_weight(1):\nend\noutput x\n",
       "3:15: has_weight(): 'name' must be a weight's name"},
      {"% of a fraction", "model m\ninput x: f32[2]\nn = 5 % 1.5\noutput x\n",
       "3:7: '%' takes two integers"},
      {"% by zero", "model m\ninput x: f32[2]\nn = 5 % 0\noutput x\n",
       "3:7: division by zero"},
      {"% of a tensor", "model m\ninput x: f32[2]\ny = x % 2\noutput y\n",
       "3:7: '%' takes two integers known at compile time, not tensors"},
      {"if is a keyword",
       "model m\ninput x: f32[2]\ndef f(if):\n    return if\nend\noutput x\n",
       "3:7: 'if' cannot name a parameter"},
  };
  for (const Case &c : cases) {
    MLIRContext ctx;
    auto result = parse(ctx, c.source);
    INFO(c.name << "\n  got: " << result.error
                << "\n  expected: " << c.expected);
    CHECK_FALSE(result.module);
    CHECK(result.error.find(c.expected) != std::string::npos);
  }
}
