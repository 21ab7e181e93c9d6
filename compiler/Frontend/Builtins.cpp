//===- Builtins.cpp - The table of the language's functions ---------------===//
//
// One row per function: its parameters and the builder call. Checks that
// concern one function only (a string option's values, an option that needs
// another) stay with it; everything about argument passing is BoundCall's.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Builtins.h"

#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

namespace {
constexpr Passing kPositional = Passing::positionalOnly;
constexpr Passing kKeyword = Passing::keywordOnly;
constexpr Passing kEither = Passing::positionalOrKeyword;

// Parameter shorthands for the table.
Param tensor(StringRef name, Passing passing = kEither) {
  return {name, ParamKind::tensor, passing};
}
Param optionalTensor(StringRef name, Passing passing = kEither) {
  return {name, ParamKind::tensor, passing, /*optional=*/true};
}
Param number(StringRef name, std::optional<double> def = std::nullopt,
             Passing passing = kEither) {
  return {name, ParamKind::number, passing, false, def};
}
Param optionalNumber(StringRef name, Passing passing = kEither) {
  return {name, ParamKind::number, passing, /*optional=*/true};
}
Param integer(StringRef name, std::optional<double> def = std::nullopt,
              Passing passing = kEither) {
  return {name, ParamKind::integer, passing, false, def};
}
Param optionalInteger(StringRef name, Passing passing = kEither) {
  return {name, ParamKind::integer, passing, /*optional=*/true};
}
Param boolean(StringRef name, bool def, Passing passing = kKeyword) {
  return {name, ParamKind::boolean, passing, false, def ? 1.0 : 0.0};
}
Param string(StringRef name, std::optional<StringRef> def = std::nullopt,
             Passing passing = kKeyword) {
  return {name, ParamKind::string, passing, /*optional=*/!def, std::nullopt,
          def};
}
Param any(StringRef name, Passing passing = kEither) {
  return {name, ParamKind::any, passing, /*optional=*/true};
}

/// The `x` every unary function takes first.
Param input() { return tensor("x", kPositional); }

FailureOr<ExprValue> buildSqrt(BoundCall &c) {
  double x = c.number("x");
  if (x < 0)
    return c.error() << "sqrt of a negative number";
  ExprValue v;
  v.num = std::sqrt(x);
  v.loc = c.nameLocation();
  return v;
}

FailureOr<ExprValue> buildWeight(BoundCall &c) {
  const ExprValue *v = c.value("name");
  if (!v || v->kind != ExprValue::string)
    return c.error() << "weight() takes the weight's name as a string";
  return c.result(c.builder.weight(v->str, c.loc));
}

FailureOr<ExprValue> buildPositionalEncoding(BoundCall &c) {
  std::string kind = c.string("kind");
  if (kind == "learned") {
    if (!c.has("weight"))
      return c.error() << "positional_encoding(kind = \"learned\") needs the "
                          "table: weight = \"...\"";
    FailureOr<Tensor> table = c.convertTensor("weight");
    if (failed(table))
      return failure();
    return c.result(
        c.builder.learnedPositionalEncoding(c.tensor("x"), *table, c.loc));
  }
  if (kind != "sinusoidal")
    return c.errorAt("kind") << "positional_encoding kind '" << kind
                             << "' is not supported (\"sinusoidal\" or "
                                "\"learned\")";
  if (c.has("weight"))
    return c.error() << "positional_encoding: a sinusoidal encoding has no "
                        "weight (use kind = \"learned\")";
  return c.result(c.builder.positionalEncoding(c.tensor("x"), c.loc));
}

FailureOr<ExprValue> buildSdpa(BoundCall &c) {
  double dropout = c.number("dropout_p");
  if (!(dropout >= 0.0 && dropout <= 1.0))
    return c.error() << "sdpa: dropout_p must lie in [0, 1]";
  SdpaOptions options;
  options.attnMask = c.optionalTensor("attn_mask");
  options.isCausal = c.flag("is_causal");
  options.scale = c.optionalNumber("scale");
  return c.result(c.builder.sdpa(c.tensor("q"), c.tensor("k"), c.tensor("v"),
                                 options, c.loc));
}

FailureOr<ExprValue> buildMultiHeadAttention(BoundCall &c) {
  MultiHeadAttentionOptions options;
  options.batchFirst = c.flag("batch_first");
  options.needWeights = c.flag("need_weights");
  options.averageAttnWeights = c.flag("average_attn_weights");
  options.keyPaddingMask = c.optionalTensor("key_padding_mask");
  options.attnMask = c.optionalTensor("attn_mask");
  auto text = [&](StringRef param) {
    return c.optionalString(param).value_or("");
  };
  MultiHeadAttentionWeights w;
  if (c.has("q_weight")) {
    w.qWeight = text("q_weight");
    w.kWeight = text("k_weight");
    w.vWeight = text("v_weight");
    w.qBias = text("q_bias");
    w.kBias = text("k_bias");
    w.vBias = text("v_bias");
    if (w.kWeight.empty() || w.vWeight.empty())
      return c.error() << "q_weight needs k_weight and v_weight too";
  } else {
    w = MultiHeadAttentionWeights::pytorch(text("weights"), c.flag("bias"));
    if (c.has("in_proj_weight"))
      w.inProjWeight = text("in_proj_weight");
  }
  if (c.has("in_proj_bias"))
    w.inProjBias = text("in_proj_bias");
  if (c.has("out_weight"))
    w.outWeight = text("out_weight");
  if (c.has("out_bias"))
    w.outBias = text("out_bias");
  FailureOr<ModelBuilder::AttentionResult> r = c.builder.multiHeadAttention(
      c.tensor("query"), c.tensor("key"), c.tensor("value"), c.integer("heads"),
      w, options, c.loc);
  if (failed(r))
    return failure();
  if (!r->weights)
    return c.result(r->output);
  return c.results({r->output, *r->weights});
}

FailureOr<ExprValue> buildTransformerEncoderLayer(BoundCall &c) {
  TransformerEncoderLayerOptions options;
  options.heads = c.integer("heads");
  options.prefix = c.optionalString("weights").value_or("");
  options.normFirst = c.flag("norm_first");
  options.activation = c.string("activation");
  options.eps = c.number("eps");
  options.batchFirst = c.flag("batch_first");
  options.srcMask = c.optionalTensor("src_mask");
  options.srcKeyPaddingMask = c.optionalTensor("src_key_padding_mask");
  return c.result(
      c.builder.transformerEncoderLayer(c.tensor("x"), options, c.loc));
}

/// The primitives attention is spelled with, and weights. Builder calls
/// that fit on a line are written in place.
std::vector<Builtin> primitiveBuiltins() {
  using R = FailureOr<ExprValue>;
  return {
      {"sqrt", {number("x", std::nullopt, kPositional)}, buildSqrt},
      {"weight", {any("name")}, buildWeight},
      {"matmul",
       {tensor("a"), tensor("b")},
       [](BoundCall &c) -> R {
         return c.result(c.builder.matmul(c.tensor("a"), c.tensor("b"), c.loc));
       }},
      {"add",
       {tensor("a"), tensor("b")},
       [](BoundCall &c) -> R {
         return c.result(c.builder.add(c.tensor("a"), c.tensor("b"), c.loc));
       }},
      {"transpose",
       {input(), integer("dim0", -2), integer("dim1", -1)},
       [](BoundCall &c) -> R {
         return c.result(c.builder.transpose(c.tensor("x"), c.integer("dim0"),
                                             c.integer("dim1"), c.loc));
       }},
      {"softmax",
       {input(), integer("dim", -1)},
       [](BoundCall &c) -> R {
         return c.result(
             c.builder.softmax(c.tensor("x"), c.integer("dim"), c.loc));
       }},
      {"scale",
       {input(), number("factor")},
       [](BoundCall &c) -> R {
         return c.result(c.builder.scale(c.tensor("x"), c.number("factor"),
                                         /*divide=*/false, c.loc));
       }},
      {"concat",
       {{"x", ParamKind::tensors, kPositional}, integer("dim", -1, kKeyword)},
       [](BoundCall &c) -> R {
         return c.result(
             c.builder.concat(c.tensors("x"), c.integer("dim"), c.loc));
       }},
      {"masked_fill",
       {input(), tensor("mask"), number("value")},
       [](BoundCall &c) -> R {
         return c.result(c.builder.maskedFill(c.tensor("x"), c.tensor("mask"),
                                              c.number("value"), c.loc));
       }},
      {"causal_mask",
       {input()},
       [](BoundCall &c) -> R {
         return c.result(c.builder.causalMask(c.tensor("x"), c.loc));
       }},
  };
}

/// The layers, with PyTorch's names and options.
std::vector<Builtin> layerBuiltins() {
  using R = FailureOr<ExprValue>;
  return {
      {"linear",
       {input(), tensor("weight"), optionalTensor("bias")},
       [](BoundCall &c) -> R {
         return c.result(c.builder.linear(c.tensor("x"), c.tensor("weight"),
                                          c.optionalTensor("bias"), c.loc));
       }},
      {"embedding",
       {tensor("ids", kPositional), tensor("weight"),
        optionalInteger("padding_idx", kKeyword)},
       [](BoundCall &c) -> R {
         std::optional<int64_t> padding;
         if (c.has("padding_idx"))
           padding = c.integer("padding_idx");
         return c.result(c.builder.embedding(
             c.tensor("ids"), c.tensor("weight"), c.loc, padding));
       }},
      {"positional_encoding",
       {input(), string("kind", "sinusoidal"), any("weight", kKeyword)},
       buildPositionalEncoding},
      {"layer_norm",
       {input(), optionalTensor("weight"), optionalTensor("bias"),
        number("eps", 1e-5, kKeyword)},
       [](BoundCall &c) -> R {
         return c.result(c.builder.layerNorm(
             c.tensor("x"), c.optionalTensor("weight"),
             c.optionalTensor("bias"), c.number("eps"), c.loc));
       }},
      {"relu",
       {input()},
       [](BoundCall &c) -> R {
         return c.result(c.builder.relu(c.tensor("x"), c.loc));
       }},
      {"gelu",
       {input(), string("approximate", "none")},
       [](BoundCall &c) -> R {
         return c.result(
             c.builder.gelu(c.tensor("x"), c.string("approximate"), c.loc));
       }},
      {"dropout",
       {input(), number("p", 0.5)},
       [](BoundCall &c) -> R {
         return c.result(
             c.builder.dropout(c.tensor("x"), c.number("p"), c.loc));
       }},
      {"sdpa",
       {tensor("q", kPositional), tensor("k", kPositional),
        tensor("v", kPositional), optionalNumber("scale"),
        optionalTensor("attn_mask", kKeyword), boolean("is_causal", false),
        number("dropout_p", 0.0, kKeyword)},
       buildSdpa},
      {"multi_head_attention",
       {tensor("query", kPositional),
        tensor("key", kPositional),
        tensor("value", kPositional),
        integer("heads"),
        string("weights"),
        boolean("bias", true),
        string("q_weight"),
        string("k_weight"),
        string("v_weight"),
        string("q_bias"),
        string("k_bias"),
        string("v_bias"),
        string("out_weight"),
        string("out_bias"),
        string("in_proj_weight"),
        string("in_proj_bias"),
        boolean("batch_first", true),
        optionalTensor("key_padding_mask", kKeyword),
        optionalTensor("attn_mask", kKeyword),
        boolean("need_weights", false),
        boolean("average_attn_weights", true)},
       buildMultiHeadAttention},
      {"transformer_encoder_layer",
       {input(), integer("heads", std::nullopt, kKeyword), string("weights"),
        boolean("norm_first", false), string("activation", "relu"),
        number("eps", 1e-5, kKeyword), boolean("batch_first", true),
        optionalTensor("src_mask", kKeyword),
        optionalTensor("src_key_padding_mask", kKeyword)},
       buildTransformerEncoderLayer},
  };
}
} // namespace

const Builtin *mlir::tfm::lookupBuiltin(StringRef name) {
  static const llvm::StringMap<Builtin> table = [] {
    llvm::StringMap<Builtin> map;
    for (auto family : {primitiveBuiltins, layerBuiltins})
      for (Builtin &b : family())
        map.try_emplace(b.name, std::move(b));
    return map;
  }();
  auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}
