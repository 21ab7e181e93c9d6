//===- Builtins.cpp - The table of the language's functions ---------------===//
//
// One row per function: its parameters and the builder call. Checks that
// concern one function only (a string option's values, an option that needs
// another) stay with it; everything about argument passing is BoundCall's.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Builtins.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"

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

/// Parameter lists joined, for functions that share groups of keywords.
std::vector<Param> concat(std::vector<Param> params,
                          const std::vector<Param> &more,
                          const std::vector<Param> &evenMore = {}) {
  params.insert(params.end(), more.begin(), more.end());
  params.insert(params.end(), evenMore.begin(), evenMore.end());
  return params;
}

/// The `x` every unary function takes first.
Param input() { return tensor("x", kPositional); }

/// sum, mean, max and min: `x`, `dim` (one or a list, all when absent) and
/// `keepdim`, as in torch.
std::vector<Param> reduction() {
  return {input(),
          {"dim", ParamKind::integers, kEither, /*optional=*/true},
          {"keepdim", ParamKind::boolean, kEither, false, 0.0}};
}

FailureOr<ExprValue> buildWeight(BoundCall &c) {
  const ExprValue *v = c.value("name");
  if (!v || v->kind != ExprValue::string)
    return c.error() << "weight() takes the weight's name as a string";
  return c.result(c.builder.weight(v->str, c.loc));
}

/// config("key", default = ...): a hyper-parameter of the checkpoint,
/// known at compile time (GGUF metadata, or the config.json beside a
/// .safetensors file).
FailureOr<ExprValue> buildConfig(BoundCall &c) {
  std::string key = c.string("key");
  const ExprValue *fallback = c.value("default");
  WeightShapes *source = c.builder.weightSource();
  std::string where = source ? source->configSource() : "";
  std::optional<WeightShapes::ConfigValue> value =
      source ? source->config(key) : std::nullopt;
  if (!value) {
    if (fallback) {
      if (fallback->kind != ExprValue::number &&
          fallback->kind != ExprValue::string &&
          fallback->kind != ExprValue::boolean)
        return c.errorAt("default")
               << "config(): the default must be a number, a string or "
                  "true/false";
      ExprValue result = *fallback;
      result.loc = c.nameLocation();
      if (source && source->remarksOnDefaults()) {
        InFlightDiagnostic remark = emitRemark(c.loc);
        remark << "config(): '" << key << "' is not in " << where
               << ": using the default ";
        if (fallback->kind == ExprValue::string)
          remark << "\"" << fallback->str << "\"";
        else if (fallback->kind == ExprValue::boolean)
          remark << (fallback->flag ? "true" : "false");
        else if (fallback->isInteger)
          remark << int64_t(fallback->num);
        else
          remark << (llvm::formatv("{0}", fallback->num).str());
        if (c.has("note"))
          remark << " (" << c.string("note") << ")";
      }
      return result;
    }
    if (where.empty())
      return c.error() << "config(): reading '" << key
                       << "' needs a weights file (--weights) that states it, "
                          "or tfm-compile --set "
                       << key << "=VALUE";
    return c.errorAt("key") << "config(): '" << key << "' is not in " << where
                            << " (give a default = ... for a value the "
                               "checkpoint may leave out)";
  }
  ExprValue result;
  result.loc = c.nameLocation();
  switch (value->kind) {
  case WeightShapes::ConfigValue::number:
    result.kind = ExprValue::number;
    result.num = value->num;
    result.isInteger = value->isInteger;
    break;
  case WeightShapes::ConfigValue::string:
    result.kind = ExprValue::string;
    result.str = value->str;
    break;
  case WeightShapes::ConfigValue::boolean:
    result.kind = ExprValue::boolean;
    result.flag = value->flag;
    break;
  case WeightShapes::ConfigValue::unsupported:
    return c.errorAt("key") << "config(): " << value->str;
  }
  return result;
}

/// has_weight("name"): whether the weights file (or a `param`) holds the
/// weight, for the compile-time `if` of a layer a checkpoint may or may not
/// have (Qwen2's q/k/v biases).
FailureOr<ExprValue> buildHasWeight(BoundCall &c) {
  const ExprValue *name = c.value("name");
  if (!name || name->kind != ExprValue::string)
    return c.errorAt("name")
           << "has_weight(): 'name' must be a weight's name (a string)";
  WeightShapes *source = c.builder.weightSource();
  ExprValue result;
  result.kind = ExprValue::boolean;
  result.loc = c.nameLocation();
  result.flag = source && source->lookup(c.builder.getContext(), name->str);
  return result;
}

/// first_weight(["a", "b"]): the first name the weights file holds, for a
/// tensor a checkpoint may leave out (a tied LM head reads the embedding).
FailureOr<ExprValue> buildFirstWeight(BoundCall &c) {
  const ExprValue *names = c.value("names");
  auto malformed = [&] {
    return c.errorAt("names") << "first_weight(): 'names' must be a list of "
                                 "weight names, like [\"output.weight\", "
                                 "\"token_embd.weight\"]";
  };
  if (!names || names->kind != ExprValue::list || names->elements.empty())
    return malformed();
  WeightShapes *source = c.builder.weightSource();
  for (const ExprValue &name : names->elements) {
    if (name.kind != ExprValue::string)
      return malformed();
    if (source && source->lookup(c.builder.getContext(), name.str)) {
      ExprValue result = name;
      result.loc = c.nameLocation();
      return result;
    }
  }
  std::string list;
  for (const ExprValue &name : names->elements)
    list += (list.empty() ? "'" : ", '") + name.str + "'";
  return c.errorAt("names")
         << "first_weight(): none of " << list << " is in the weights file";
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

FailureOr<ExprValue> buildRope(BoundCall &c) {
  RopeOptions options;
  options.theta = c.number("theta");
  if (c.has("rotary_dims"))
    options.rotaryDims = c.integer("rotary_dims");
  std::string style = c.string("style");
  if (style == "pairs")
    options.style = RopeStyle::pairs;
  else if (style != "half")
    return c.errorAt("style") << "rope style '" << style
                              << "' is not supported (\"half\": "
                                 "transformers' rotate_half, or \"pairs\": "
                                 "llama.cpp's GGUF convention)";
  std::string scaling = c.string("scaling");
  if (scaling == "linear")
    options.scaling = RopeScaling::linear;
  else if (scaling == "llama3")
    options.scaling = RopeScaling::llama3;
  else if (scaling != "none")
    return c.errorAt("scaling") << "rope scaling '" << scaling
                                << "' is not supported (\"none\", "
                                   "\"linear\" or \"llama3\")";
  options.factor = c.number("factor");
  options.lowFreqFactor = c.number("low_freq_factor");
  options.highFreqFactor = c.number("high_freq_factor");
  options.originalMaxPositions = c.integer("original_max_positions");
  options.freqFactors = c.optionalTensor("freq_factors");
  return c.result(
      c.builder.rope(c.tensor("x"), c.tensor("positions"), options, c.loc));
}

FailureOr<ExprValue> buildSdpa(BoundCall &c) {
  double dropout = c.number("dropout_p");
  if (!(dropout >= 0.0 && dropout <= 1.0))
    return c.error() << "sdpa: dropout_p must lie in [0, 1]";
  SdpaOptions options;
  options.attnMask = c.optionalTensor("attn_mask");
  options.isCausal = c.flag("is_causal");
  options.scale = c.optionalNumber("scale");
  options.kvLength = c.optionalTensor("kv_length");
  options.queryOffset = c.optionalTensor("query_offset");
  if (c.has("window"))
    options.window = c.integer("window");
  return c.result(c.builder.sdpa(c.tensor("q"), c.tensor("k"), c.tensor("v"),
                                 options, c.loc));
}

/// The keywords that name attention weights one by one, taken by
/// multi_head_attention and transformer_encoder_layer alike.
std::vector<Param> attentionNames() {
  return {string("q_weight"),    string("k_weight"), string("v_weight"),
          string("q_bias"),      string("k_bias"),   string("v_bias"),
          string("out_weight"),  string("out_bias"), string("in_proj_weight"),
          string("in_proj_bias")};
}

/// Puts the attention weights named explicitly over those in `w`.
/// Separate q/k/v weights replace the packed in_proj_weight (and its bias,
/// unless in_proj_bias is named too).
LogicalResult nameAttentionWeights(BoundCall &c, MultiHeadAttentionWeights &w) {
  auto text = [&](StringRef param) {
    return c.optionalString(param).value_or("");
  };
  static constexpr StringRef kSeparate[] = {"q_weight", "k_weight", "v_weight"};
  static constexpr StringRef kSeparateBias[] = {"q_bias", "k_bias", "v_bias"};
  bool separate =
      llvm::any_of(kSeparate, [&](StringRef p) { return c.has(p); });
  for (StringRef p : kSeparate)
    if (separate && !c.has(p))
      return c.error() << c.name()
                       << "(): q_weight, k_weight and v_weight go together; '"
                       << p << "' is missing";
  for (StringRef p : kSeparateBias)
    if (!separate && c.has(p))
      return c.errorAt(p) << c.name() << "(): '" << p
                          << "' goes with q_weight, k_weight and v_weight";
  if (separate && c.has("in_proj_weight"))
    return c.errorAt("in_proj_weight")
           << c.name()
           << "(): in_proj_weight packs q, k and v; it cannot go with "
              "q_weight, k_weight and v_weight";
  if (separate) {
    w.inProjWeight.clear();
    w.inProjBias.clear();
    w.qWeight = text("q_weight");
    w.kWeight = text("k_weight");
    w.vWeight = text("v_weight");
    w.qBias = text("q_bias");
    w.kBias = text("k_bias");
    w.vBias = text("v_bias");
  }
  if (c.has("in_proj_weight"))
    w.inProjWeight = text("in_proj_weight");
  if (c.has("in_proj_bias"))
    w.inProjBias = text("in_proj_bias");
  if (c.has("out_weight"))
    w.outWeight = text("out_weight");
  if (c.has("out_bias"))
    w.outBias = text("out_bias");
  return success();
}

FailureOr<ExprValue> buildMultiHeadAttention(BoundCall &c) {
  MultiHeadAttentionOptions options;
  options.batchFirst = c.flag("batch_first");
  options.needWeights = c.flag("need_weights");
  options.averageAttnWeights = c.flag("average_attn_weights");
  options.keyPaddingMask = c.optionalTensor("key_padding_mask");
  options.attnMask = c.optionalTensor("attn_mask");
  // Separate projections name every weight they use; otherwise the prefix
  // gives nn.MultiheadAttention's names.
  MultiHeadAttentionWeights w;
  if (!c.has("q_weight") && !c.has("k_weight") && !c.has("v_weight"))
    w = MultiHeadAttentionWeights::pytorch(
        c.optionalString("weights").value_or(""), c.flag("bias"));
  if (failed(nameAttentionWeights(c, w)))
    return failure();
  FailureOr<ModelBuilder::AttentionResult> r = c.builder.multiHeadAttention(
      c.tensor("query"), c.tensor("key"), c.tensor("value"), c.integer("heads"),
      w, options, c.loc);
  if (failed(r))
    return failure();
  if (!r->weights)
    return c.result(r->output);
  return c.results({r->output, *r->weights});
}

/// The encoder layer's own weights, after the attention's.
std::vector<Param> encoderLayerNames() {
  return {string("linear1_weight"), string("linear1_bias"),
          string("linear2_weight"), string("linear2_bias"),
          string("norm1_weight"),   string("norm1_bias"),
          string("norm2_weight"),   string("norm2_bias")};
}

FailureOr<ExprValue> buildTransformerEncoderLayer(BoundCall &c) {
  TransformerEncoderLayerOptions options;
  options.heads = c.integer("heads");
  // Each weight named explicitly replaces the name the prefix gives it.
  TransformerEncoderLayerWeights &w = options.weights;
  w = TransformerEncoderLayerWeights::pytorch(
      c.optionalString("weights").value_or(""));
  if (failed(nameAttentionWeights(c, w.attention)))
    return failure();
  std::pair<StringRef, std::string *> names[] = {
      {"linear1_weight", &w.linear1Weight}, {"linear1_bias", &w.linear1Bias},
      {"linear2_weight", &w.linear2Weight}, {"linear2_bias", &w.linear2Bias},
      {"norm1_weight", &w.norm1Weight},     {"norm1_bias", &w.norm1Bias},
      {"norm2_weight", &w.norm2Weight},     {"norm2_bias", &w.norm2Bias}};
  for (auto [param, name] : names)
    if (c.has(param))
      *name = c.string(param);
  options.normFirst = c.flag("norm_first");
  options.activation = c.string("activation");
  options.eps = c.number("eps");
  options.batchFirst = c.flag("batch_first");
  options.srcMask = c.optionalTensor("src_mask");
  options.srcKeyPaddingMask = c.optionalTensor("src_key_padding_mask");
  return c.result(
      c.builder.transformerEncoderLayer(c.tensor("x"), options, c.loc));
}

//===----------------------------------------------------------------------===//
// Elementwise math, comparisons, reductions and shapes
//===----------------------------------------------------------------------===//

/// A required argument that may be a tensor or a number.
Param operand(StringRef name, Passing passing = kEither) {
  return {name, ParamKind::any, passing};
}

ExprValue numberValue(BoundCall &c, double value) {
  ExprValue v;
  v.num = value;
  v.loc = c.nameLocation();
  return v;
}

/// The tensors of an elementwise call: weights and tensors as they are,
/// numbers (and true/false) as constants of the first tensor's element type,
/// or of `fallback` when every argument is a number.
FailureOr<SmallVector<Tensor>> elementwiseOperands(BoundCall &c,
                                                   ArrayRef<StringRef> params,
                                                   Type fallback = {}) {
  SmallVector<std::optional<Tensor>> tensors;
  Type like = fallback;
  for (StringRef p : params) {
    const ExprValue *v = c.value(p);
    if (v->kind == ExprValue::number || v->kind == ExprValue::boolean) {
      tensors.push_back(std::nullopt);
      continue;
    }
    FailureOr<Tensor> t = c.convertTensor(p);
    if (failed(t))
      return failure();
    tensors.push_back(*t);
    if (!like || like == fallback)
      like = t->elementType();
  }
  if (!like)
    return c.error() << c.name() << "() needs at least one tensor";
  SmallVector<Tensor> result;
  for (auto [p, t] : llvm::zip(params, tensors)) {
    if (t) {
      result.push_back(*t);
      continue;
    }
    const ExprValue *v = c.value(p);
    if (v->kind == ExprValue::boolean && !like.isInteger(1))
      return c.errorAt(p) << c.name() << "(): '" << p
                          << "' is true or false but the tensors are " << like;
    double number = v->kind == ExprValue::boolean ? v->flag : v->num;
    FailureOr<Tensor> constant = c.builder.constant(number, like, c.loc);
    if (failed(constant))
      return failure();
    result.push_back(*constant);
  }
  return result;
}

bool allNumbers(BoundCall &c, ArrayRef<StringRef> params) {
  return llvm::all_of(params, [&](StringRef p) {
    return c.value(p)->kind == ExprValue::number;
  });
}

template <BinaryFn F> FailureOr<ExprValue> buildBinary(BoundCall &c) {
  if (allNumbers(c, {"a", "b"})) {
    double a = c.value("a")->num, b = c.value("b")->num;
    switch (F) {
    case BinaryFn::sub:
      return numberValue(c, a - b);
    case BinaryFn::mul:
      return numberValue(c, a * b);
    case BinaryFn::div:
      if (b == 0)
        return c.error() << "division by zero";
      return numberValue(c, a / b);
    case BinaryFn::maximum:
      return numberValue(c, std::fmax(a, b));
    case BinaryFn::minimum:
      return numberValue(c, std::fmin(a, b));
    case BinaryFn::pow:
      return numberValue(c, std::pow(a, b));
    default:
      break;
    }
  }
  FailureOr<SmallVector<Tensor>> t = elementwiseOperands(c, {"a", "b"});
  if (failed(t))
    return failure();
  return c.result(c.builder.binary(F, (*t)[0], (*t)[1], c.loc));
}

template <ComparePredicate F> FailureOr<ExprValue> buildCompare(BoundCall &c) {
  FailureOr<SmallVector<Tensor>> t = elementwiseOperands(c, {"a", "b"});
  if (failed(t))
    return failure();
  return c.result(c.builder.compare(F, (*t)[0], (*t)[1], c.loc));
}

/// The value of a unary function at a number, computed now.
double foldUnary(UnaryFn fn, double x) {
  switch (fn) {
  case UnaryFn::exp:
    return std::exp(x);
  case UnaryFn::log:
    return std::log(x);
  case UnaryFn::sqrt:
    return std::sqrt(x);
  case UnaryFn::rsqrt:
    return 1.0 / std::sqrt(x);
  case UnaryFn::tanh:
    return std::tanh(x);
  case UnaryFn::erf:
    return std::erf(x);
  case UnaryFn::sin:
    return std::sin(x);
  case UnaryFn::cos:
    return std::cos(x);
  case UnaryFn::neg:
    return -x;
  case UnaryFn::abs:
    return std::fabs(x);
  case UnaryFn::logicalNot:
    break;
  }
  return x;
}

template <UnaryFn F> FailureOr<ExprValue> buildUnary(BoundCall &c) {
  const ExprValue *x = c.value("x");
  if (x->kind == ExprValue::number && F != UnaryFn::logicalNot) {
    if ((F == UnaryFn::sqrt || F == UnaryFn::rsqrt) && x->num < 0)
      return c.error() << c.name() << " of a negative number";
    return numberValue(c, foldUnary(F, x->num));
  }
  if (x->kind == ExprValue::boolean && F == UnaryFn::logicalNot) {
    ExprValue v = *x;
    v.flag = !v.flag;
    return v;
  }
  FailureOr<Tensor> t = c.convertTensor("x");
  if (failed(t))
    return failure();
  return c.result(c.builder.unary(F, *t, c.loc));
}

FailureOr<ExprValue> buildWhere(BoundCall &c) {
  // Two numbers choose floats (torch's default dtype), two booleans bools.
  MLIRContext *ctx = c.loc.getContext();
  bool booleans = c.value("a")->kind == ExprValue::boolean &&
                  c.value("b")->kind == ExprValue::boolean;
  Type fallback =
      booleans ? Type(IntegerType::get(ctx, 1)) : Type(Float32Type::get(ctx));
  FailureOr<SmallVector<Tensor>> t =
      elementwiseOperands(c, {"a", "b"}, fallback);
  if (failed(t))
    return failure();
  return c.result(
      c.builder.where(c.tensor("condition"), (*t)[0], (*t)[1], c.loc));
}

template <ReduceKind F> FailureOr<ExprValue> buildReduce(BoundCall &c) {
  ArrayRef<int64_t> dims;
  if (c.has("dim"))
    dims = c.integers("dim");
  if (c.has("dim") && dims.empty())
    return c.errorAt("dim") << c.name() << "(): 'dim' lists no dimension";
  return c.result(
      c.builder.reduce(F, c.tensor("x"), dims, c.flag("keepdim"), c.loc));
}

FailureOr<ExprValue> buildSplit(BoundCall &c) {
  const ExprValue *sizes = c.value("split_size");
  SmallVector<int64_t> values;
  auto integer = [&](const ExprValue &v) -> LogicalResult {
    if (v.kind != ExprValue::number || !v.isInteger ||
        !(std::fabs(v.num) <= double(kMaxDimension)))
      return emitError(c.locOf(v.loc))
             << "split(): 'split_size' is an integer or a list of integers";
    values.push_back(int64_t(v.num));
    return success();
  };
  bool chunked = sizes->kind != ExprValue::list;
  if (chunked && failed(integer(*sizes)))
    return failure();
  if (!chunked)
    for (const ExprValue &e : sizes->elements)
      if (failed(integer(e)))
        return failure();
  FailureOr<std::vector<Tensor>> pieces =
      c.builder.split(c.tensor("x"), values, chunked, c.integer("dim"), c.loc);
  if (failed(pieces))
    return failure();
  if (pieces->size() == 1)
    return c.result(pieces->front());
  return c.results(std::move(*pieces));
}

/// arange(end), arange(start, end[, step]): integers, or a named dim as the
/// end.
FailureOr<ExprValue> buildArange(BoundCall &c) {
  std::optional<Dim> bounds[2];
  static constexpr StringRef kParams[] = {"a", "b"};
  for (auto [i, param] : llvm::enumerate(kParams)) {
    const ExprValue *v = c.value(param);
    if (!v)
      continue;
    if (v->kind == ExprValue::dim)
      bounds[i] = Dim::named(v->str);
    else if (v->kind == ExprValue::number && v->isInteger &&
             std::fabs(v->num) <= double(kMaxDimension))
      bounds[i] = Dim::of(int64_t(v->num));
    else
      return c.errorAt(param) << "arange(): bounds are integers or the "
                                 "name of an input's dimension";
  }
  Dim end = bounds[1] ? *bounds[1] : *bounds[0];
  Dim start = bounds[1] ? *bounds[0] : Dim::of(0);
  if (start.isSymbolic())
    return c.errorAt("a") << "arange(): the start must be an integer";
  return c.result(c.builder.arange(start.size, end, c.integer("step"), c.loc));
}

/// reshape's target: sizes, -1 and names of dimensions.
FailureOr<ExprValue> buildReshape(BoundCall &c) {
  const ExprValue *shape = c.value("shape");
  if (shape->kind != ExprValue::list)
    return c.errorAt("shape") << "reshape(): 'shape' must be a list like "
                                 "[batch, -1, 64]";
  Shape target;
  for (const ExprValue &e : shape->elements) {
    if (e.kind == ExprValue::dim) {
      target.push_back(Dim::named(e.str));
    } else if (e.kind == ExprValue::number && e.isInteger &&
               std::fabs(e.num) <= double(kMaxDimension)) {
      target.push_back(Dim::of(int64_t(e.num)));
    } else {
      return emitError(c.locOf(e.loc))
             << "reshape(): each size is an integer, -1 or the name of an "
                "input's dimension";
    }
  }
  return c.result(c.builder.reshape(c.tensor("x"), target, c.loc));
}

/// The primitives attention is spelled with, and weights. Builder calls
/// that fit on a line are written in place.
std::vector<Builtin> primitiveBuiltins() {
  using R = FailureOr<ExprValue>;
  return {
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
         std::string spelled = c.string("approximate");
         std::optional<GeluApproximation> approximate =
             symbolizeGeluApproximation(spelled);
         if (!approximate)
           return emitError(c.loc)
                  << "gelu: approximate must be \"none\" or \"tanh\", got \""
                  << spelled << "\"";
         return c.result(c.builder.gelu(c.tensor("x"), *approximate, c.loc));
       }},
      {"sigmoid",
       {input()},
       [](BoundCall &c) -> R {
         return c.result(c.builder.sigmoid(c.tensor("x"), c.loc));
       }},
      {"silu",
       {input()},
       [](BoundCall &c) -> R {
         return c.result(c.builder.silu(c.tensor("x"), c.loc));
       }},
      {"rms_norm",
       {input(), optionalTensor("weight"), number("eps", 1e-6, kKeyword),
        number("weight_offset", 0.0, kKeyword)},
       [](BoundCall &c) -> R {
         return c.result(c.builder.rmsNorm(
             c.tensor("x"), c.optionalTensor("weight"), c.number("eps"),
             c.number("weight_offset"), c.loc));
       }},
      {"rope",
       {input(), tensor("positions"), number("theta", 10000.0, kKeyword),
        optionalInteger("rotary_dims", kKeyword),
        string("style", "half", kKeyword), string("scaling", "none", kKeyword),
        number("factor", 1.0, kKeyword),
        number("low_freq_factor", 1.0, kKeyword),
        number("high_freq_factor", 4.0, kKeyword),
        integer("original_max_positions", 8192, kKeyword),
        optionalTensor("freq_factors", kKeyword)},
       buildRope},
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
        number("dropout_p", 0.0, kKeyword),
        optionalTensor("kv_length", kKeyword),
        optionalTensor("query_offset", kKeyword),
        optionalInteger("window", kKeyword)},
       buildSdpa},
      {"cache_append",
       {tensor("cache", kPositional), tensor("rows", kPositional),
        tensor("offset", kPositional)},
       [](BoundCall &c) -> FailureOr<ExprValue> {
         return c.result(c.builder.cacheAppend(
             c.tensor("cache"), c.tensor("rows"), c.tensor("offset"), c.loc));
       }},
      {"multi_head_attention",
       concat({tensor("query", kPositional), tensor("key", kPositional),
               tensor("value", kPositional), integer("heads"),
               string("weights"), boolean("bias", true),
               boolean("batch_first", true),
               optionalTensor("key_padding_mask", kKeyword),
               optionalTensor("attn_mask", kKeyword),
               boolean("need_weights", false),
               boolean("average_attn_weights", true)},
              attentionNames()),
       buildMultiHeadAttention},
      {"transformer_encoder_layer",
       concat({input(), integer("heads", std::nullopt, kKeyword),
               string("weights"), boolean("norm_first", false),
               string("activation", "relu"), number("eps", 1e-5, kKeyword),
               boolean("batch_first", true),
               optionalTensor("src_mask", kKeyword),
               optionalTensor("src_key_padding_mask", kKeyword)},
              attentionNames(), encoderLayerNames()),
       buildTransformerEncoderLayer},
  };
}
/// Elementwise math, comparisons, where and cast.
std::vector<Builtin> mathBuiltins() {
  using R = FailureOr<ExprValue>;
  return {
      {"sub", {operand("a"), operand("b")}, buildBinary<BinaryFn::sub>},
      {"mul", {operand("a"), operand("b")}, buildBinary<BinaryFn::mul>},
      {"div", {operand("a"), operand("b")}, buildBinary<BinaryFn::div>},
      {"maximum", {operand("a"), operand("b")}, buildBinary<BinaryFn::maximum>},
      {"minimum", {operand("a"), operand("b")}, buildBinary<BinaryFn::minimum>},
      {"pow", {operand("a"), operand("b")}, buildBinary<BinaryFn::pow>},
      {"logical_and",
       {operand("a"), operand("b")},
       buildBinary<BinaryFn::logicalAnd>},
      {"logical_or",
       {operand("a"), operand("b")},
       buildBinary<BinaryFn::logicalOr>},
      {"lt", {operand("a"), operand("b")}, buildCompare<ComparePredicate::lt>},
      {"le", {operand("a"), operand("b")}, buildCompare<ComparePredicate::le>},
      {"gt", {operand("a"), operand("b")}, buildCompare<ComparePredicate::gt>},
      {"ge", {operand("a"), operand("b")}, buildCompare<ComparePredicate::ge>},
      {"eq", {operand("a"), operand("b")}, buildCompare<ComparePredicate::eq>},
      {"ne", {operand("a"), operand("b")}, buildCompare<ComparePredicate::ne>},
      {"exp", {operand("x", kPositional)}, buildUnary<UnaryFn::exp>},
      {"log", {operand("x", kPositional)}, buildUnary<UnaryFn::log>},
      {"sqrt", {operand("x", kPositional)}, buildUnary<UnaryFn::sqrt>},
      {"rsqrt", {operand("x", kPositional)}, buildUnary<UnaryFn::rsqrt>},
      {"tanh", {operand("x", kPositional)}, buildUnary<UnaryFn::tanh>},
      {"erf", {operand("x", kPositional)}, buildUnary<UnaryFn::erf>},
      {"sin", {operand("x", kPositional)}, buildUnary<UnaryFn::sin>},
      {"cos", {operand("x", kPositional)}, buildUnary<UnaryFn::cos>},
      {"neg", {operand("x", kPositional)}, buildUnary<UnaryFn::neg>},
      {"abs", {operand("x", kPositional)}, buildUnary<UnaryFn::abs>},
      {"logical_not",
       {operand("x", kPositional)},
       buildUnary<UnaryFn::logicalNot>},
      {"not", {operand("x", kPositional)}, buildUnary<UnaryFn::logicalNot>},
      {"where", {tensor("condition"), operand("a"), operand("b")}, buildWhere},
      {"cast",
       {input(), {"dtype", ParamKind::dtype}},
       [](BoundCall &c) -> R {
         return c.result(
             c.builder.castTo(c.tensor("x"), c.dtype("dtype"), c.loc));
       }},
      {"sum", reduction(), buildReduce<ReduceKind::sum>},
      {"mean", reduction(), buildReduce<ReduceKind::mean>},
      {"max", reduction(), buildReduce<ReduceKind::max>},
      {"min", reduction(), buildReduce<ReduceKind::min>},
  };
}

/// Reductions and shapes.
std::vector<Builtin> shapeBuiltins() {
  using R = FailureOr<ExprValue>;
  return {
      {"reshape", {input(), operand("shape")}, buildReshape},
      {"split",
       {input(), operand("split_size"), integer("dim", -1)},
       buildSplit},
      {"arange", {operand("a"), any("b"), integer("step", 1)}, buildArange},
      {"config",
       {string("key", std::nullopt, kEither), any("default", kKeyword),
        string("note")},
       buildConfig},
      {"first_weight", {any("names", kPositional)}, buildFirstWeight},
      {"has_weight", {any("name", kPositional)}, buildHasWeight},
      {"unsqueeze",
       {input(), integer("dim")},
       [](BoundCall &c) -> R {
         return c.result(
             c.builder.unsqueeze(c.tensor("x"), c.integer("dim"), c.loc));
       }},
      {"squeeze",
       {input(), {"dim", ParamKind::integers, kEither, /*optional=*/true}},
       [](BoundCall &c) -> R {
         ArrayRef<int64_t> dims;
         if (c.has("dim"))
           dims = c.integers("dim");
         return c.result(c.builder.squeeze(c.tensor("x"), dims, c.loc));
       }},
      {"permute",
       {input(), {"dims", ParamKind::integers}},
       [](BoundCall &c) -> R {
         return c.result(
             c.builder.permute(c.tensor("x"), c.integers("dims"), c.loc));
       }},
  };
}
} // namespace

const Builtin *mlir::tfm::lookupBuiltin(StringRef name) {
  static const llvm::StringMap<Builtin> table = [] {
    llvm::StringMap<Builtin> map;
    for (auto family :
         {primitiveBuiltins, layerBuiltins, mathBuiltins, shapeBuiltins})
      for (Builtin &b : family())
        map.try_emplace(b.name, std::move(b));
    return map;
  }();
  auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}
