//===- ModelBuilder.cpp - Build tfm models from C++ -----------------------===//
#include "compiler/Frontend/ModelBuilder.h"
#include "dialects/Tfm/IR/ShapeRules.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

std::string Dim::str() const {
  return isSymbolic() ? symbol : std::to_string(size);
}

std::string mlir::tfm::formatShape(ArrayRef<Dim> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + d.str();
  return s + "]";
}

WeightShapes::~WeightShapes() = default;

MultiHeadAttentionWeights MultiHeadAttentionWeights::pytorch(StringRef prefix,
                                                             bool bias) {
  std::string p = prefix.empty() ? "" : (prefix + ".").str();
  MultiHeadAttentionWeights w;
  w.inProjWeight = p + "in_proj_weight";
  w.qProjWeight = p + "q_proj_weight";
  w.kProjWeight = p + "k_proj_weight";
  w.vProjWeight = p + "v_proj_weight";
  w.outWeight = p + "out_proj.weight";
  if (bias) {
    w.inProjBias = p + "in_proj_bias";
    w.outBias = p + "out_proj.bias";
  }
  return w;
}

TransformerEncoderLayerWeights
TransformerEncoderLayerWeights::pytorch(StringRef prefix) {
  std::string p = prefix.empty() ? "" : (prefix + ".").str();
  TransformerEncoderLayerWeights w;
  w.attention = MultiHeadAttentionWeights::pytorch(p + "self_attn", true);
  w.linear1Weight = p + "linear1.weight";
  w.linear1Bias = p + "linear1.bias";
  w.linear2Weight = p + "linear2.weight";
  w.linear2Bias = p + "linear2.bias";
  w.norm1Weight = p + "norm1.weight";
  w.norm1Bias = p + "norm1.bias";
  w.norm2Weight = p + "norm2.weight";
  w.norm2Bias = p + "norm2.bias";
  return w;
}

namespace {
StringRef dtypeName(Type t) { return TensorSpecAttr::dtypeName(t); }

/// Checks `shape` against kMaxRank, kMaxDimension and kMaxElements; `what`
/// names the tensor in the error.
LogicalResult checkShapeLimits(ArrayRef<Dim> shape, Location loc,
                               const Twine &what) {
  if (int64_t(shape.size()) > kMaxRank)
    return emitError(loc) << what << " has rank " << shape.size()
                          << ", more than the maximum of " << kMaxRank;
  int64_t elements = 1;
  for (const Dim &d : shape) {
    if (d.isSymbolic())
      continue;
    if (d.size < 0)
      return emitError(loc) << what << " has the negative dimension " << d.size;
    if (d.size > kMaxDimension)
      return emitError(loc)
             << what << " has the dimension " << d.size
             << ", more than the maximum of " << kMaxDimension << " (2^40)";
    // Checked before multiplying, so nothing overflows.
    int64_t factor = std::max<int64_t>(d.size, 1);
    if (elements > kMaxElements / factor)
      return emitError(loc)
             << what << " " << formatShape(shape) << " has more than "
             << kMaxElements << " (2^40) elements";
    elements *= factor;
  }
  return success();
}

bool isIdentifier(StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}
} // namespace

ModelBuilder::ModelBuilder(MLIRContext *ctx, StringRef name, Location loc,
                           WeightShapes *weights)
    : builder(ctx), module(ModuleOp::create(loc)), modelName(name.str()),
      weights(weights) {
  ctx->loadDialect<TfmDialect, func::FuncDialect, tensor::TensorDialect,
                   linalg::LinalgDialect, arith::ArithDialect>();
  builder.setInsertionPointToEnd(module->getBody());
  func =
      func::FuncOp::create(builder, loc, name, builder.getFunctionType({}, {}));
  builder.setInsertionPointToStart(func.addEntryBlock());
}

RankedTensorType ModelBuilder::typeOf(ArrayRef<Dim> shape, Type elementType) {
  SmallVector<int64_t> sizes;
  for (const Dim &d : shape)
    sizes.push_back(d.isSymbolic() ? ShapedType::kDynamic : d.size);
  return RankedTensorType::get(sizes, elementType);
}

FailureOr<Tensor> ModelBuilder::input(StringRef name, Type elementType,
                                      ArrayRef<Dim> shape, Location loc) {
  if (llvm::is_contained(inputNames, name))
    return emitError(loc) << "input '" << name << "' is declared twice";
  if (failed(checkDistinctInHeader(name, loc)))
    return failure();
  if (llvm::is_contained(symbols, name))
    return emitError(loc) << "input '" << name
                          << "' has the name of a dimension; the C entry "
                             "point needs distinct names";
  if (dtypeName(elementType).empty())
    return emitError(loc) << "unsupported input element type " << elementType;
  // The runtime refuses ranks above 8, and shapes past these limits could
  // not be allocated or addressed: refuse them here, not after compiling.
  if (failed(checkShapeLimits(shape, loc, "input '" + name + "'")))
    return failure();
  SmallVector<Attribute> dims;
  for (const Dim &d : shape) {
    if (d.isSymbolic()) {
      if (!isIdentifier(d.symbol))
        return emitError(loc) << "bad dimension name '" << d.symbol << "'";
      if (llvm::is_contained(inputNames, d.symbol) || d.symbol == name)
        return emitError(loc) << "dimension '" << d.symbol
                              << "' has the name of an input; the C entry "
                                 "point needs distinct names";
      if (!llvm::is_contained(symbols, d.symbol))
        symbols.push_back(d.symbol);
      dims.push_back(builder.getStringAttr(d.symbol));
    } else {
      if (d.size < 0)
        return emitError(loc) << "negative dimension " << d.size;
      dims.push_back(builder.getI64IntegerAttr(d.size));
    }
  }
  inputNames.push_back(name.str());
  inputSignature.push_back(
      TensorSpecAttr::get(builder.getContext(), builder.getStringAttr(name),
                          elementType, builder.getArrayAttr(dims), false));
  Value arg =
      func.getBody().front().addArgument(typeOf(shape, elementType), loc);
  for (auto [i, d] : llvm::enumerate(shape))
    if (d.isSymbolic())
      symbolSources.try_emplace(d.symbol, arg, int64_t(i));
  return Tensor{arg, Shape(shape)};
}

FailureOr<Tensor> ModelBuilder::cache(StringRef name, Type elementType,
                                      ArrayRef<Dim> shape, Location loc) {
  FailureOr<Tensor> t = input(name, elementType, shape, loc);
  if (failed(t))
    return failure();
  if (!isa<FloatType>(elementType))
    return emitError(loc) << "cache '" << name << "' must hold floats";
  // The entry points take it like an input, flagged as written in place.
  auto entry = cast<TensorSpecAttr>(inputSignature.back());
  inputSignature.back() =
      TensorSpecAttr::get(builder.getContext(), entry.getName(),
                          entry.getElementType(), entry.getShape(), true);
  caches.push_back({name.str(), t->value, t->value});
  return t;
}

FailureOr<Tensor> ModelBuilder::cacheAppend(const Tensor &view,
                                            const Tensor &rows,
                                            const Tensor &offset,
                                            Location loc) {
  // The view is the cache or one static slice of it; the append writes the
  // cache's latest value, so that appends chain and bufferize in place.
  CacheState *state = nullptr;
  auto slice = view.value.getDefiningOp<tensor::ExtractSliceOp>();
  for (CacheState &c : caches) {
    if (view.value == c.argument || view.value == c.current ||
        (slice &&
         (slice.getSource() == c.argument || slice.getSource() == c.current)))
      state = &c;
  }
  if (!state)
    return emitError(loc) << "cache_append: the first argument must be a "
                             "cache or a slice of one with static indices "
                             "(k_cache[0])";
  bool whole = view.value == state->argument || view.value == state->current;
  if (view.rank() < 3)
    return emitError(loc) << "cache_append: the cache view "
                          << formatShape(view.shape)
                          << " needs [batch, ..., capacity, features]";
  int64_t dim = view.rank() - 2;
  if (view.shape[dim].isSymbolic())
    return emitError(loc) << "cache_append: the cache view "
                          << formatShape(view.shape)
                          << " needs a static capacity (dimension " << dim
                          << ")";
  if (rows.rank() != view.rank() || rows.elementType() != view.elementType())
    return emitError(loc) << "cache_append: rows " << formatShape(rows.shape)
                          << " must have the rank and element type of the "
                             "cache view "
                          << formatShape(view.shape);
  for (int64_t d = 0; d < view.rank(); ++d)
    if (d != dim && rows.shape[d] != view.shape[d])
      return emitError(loc) << "cache_append: rows " << formatShape(rows.shape)
                            << " and the cache view " << formatShape(view.shape)
                            << " differ in dimension " << d;
  if (offset.rank() != 1 || !offset.elementType().isInteger(64) ||
      offset.shape[0] != view.shape[0])
    return emitError(loc) << "cache_append: the offset must be i64 "
                          << formatShape(ArrayRef(view.shape).take_front())
                          << ", the tokens each sequence has cached; got "
                          << formatShape(offset.shape);
  Value target = state->current;
  if (!whole && slice.getSource() == state->current) {
    target = slice;
  } else if (!whole) {
    target = tensor::ExtractSliceOp::create(
        builder, loc, slice.getType(), state->current, slice.getMixedOffsets(),
        slice.getMixedSizes(), slice.getMixedStrides());
  }
  std::string message = "cache '" + state->name + "': a sequence's offset + " +
                        "new tokens exceeds its capacity " +
                        std::to_string(view.shape[dim].size);
  int32_t code = statusCode(3, message);
  auto append = CacheAppendOp::create(
      builder, loc, target.getType(), builder.getI32Type(), rows.value,
      offset.value, target, builder.getI64IntegerAttr(dim),
      builder.getI32IntegerAttr(code));
  addStatus(append.getStatus(), code, std::move(message));
  state->current = whole ? append.getResult()
                         : tensor::InsertSliceOp::create(
                               builder, loc, append.getResult(), state->current,
                               slice.getMixedOffsets(), slice.getMixedSizes(),
                               slice.getMixedStrides())
                               .getResult();
  return Tensor{append.getResult(), view.shape};
}

LogicalResult ModelBuilder::checkDistinctInHeader(StringRef name,
                                                  Location loc) {
  // The generated header upper-cases names in its macros.
  for (const auto *names : {&inputNames, &outputNames})
    for (const std::string &other : *names)
      if (other != name && StringRef(other).equals_insensitive(name))
        return emitError(loc) << "'" << name << "' differs from '" << other
                              << "' only in case; the generated C header "
                                 "needs names that differ in upper case";
  return success();
}

FailureOr<Tensor> ModelBuilder::weight(StringRef name, Location loc) {
  auto cached = weightCache.find(name);
  if (cached != weightCache.end())
    return cached->second;
  std::optional<WeightShapes::Info> info =
      weights ? weights->lookup(getContext(), name) : std::nullopt;
  if (!info)
    return emitError(loc) << "unknown weight '" << name
                          << "' (not in the weights file, and not declared "
                             "with 'param')";
  Shape shape;
  for (int64_t d : info->shape)
    shape.push_back(Dim::of(d));
  if (failed(checkShapeLimits(shape, loc, "weight '" + name + "'")))
    return failure();
  int64_t elements = 1;
  for (int64_t d : info->shape)
    elements *= d; // At most kMaxElements: checked above.
  // A weight's data becomes one constant of the object file, which LLVM
  // builds row by row with 32-bit counts.
  if (elements > kMaxWeightElements)
    return emitError(loc) << "weight '" << name << "' " << formatShape(shape)
                          << " has " << elements << " elements, more than the "
                          << kMaxWeightElements
                          << " a weight embedded in the object can hold";
  OpBuilder::InsertionGuard guard(builder);
  // Weights go first, in order of first use, so any later use is dominated.
  if (lastWeight)
    builder.setInsertionPointAfter(lastWeight);
  else
    builder.setInsertionPointToStart(&func.getBody().front());
  RankedTensorType type = typeOf(shape, info->elementType);
  Value v;
  if (elements == 0) {
    // Nothing to embed: an empty tensor of the weight's shape is the weight,
    // and needs no global (whose LLVM constant would still hold one empty
    // row per index of the other dimensions: 2^32 of them for [2^32, 0]).
    auto op = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                      type.getElementType());
    lastWeight = op;
    v = op;
  } else {
    auto op = WeightOp::create(builder, loc, type, builder.getStringAttr(name));
    lastWeight = op;
    v = op;
  }
  Tensor t{v, shape};
  weightCache[name] = t;
  return t;
}

LogicalResult ModelBuilder::output(StringRef name, const Tensor &value,
                                   Location loc) {
  if (llvm::is_contained(outputNames, name))
    return emitError(loc) << "output '" << name << "' is listed twice";
  if (!llvm::is_contained(inputNames, name) &&
      failed(checkDistinctInHeader(name, loc)))
    return failure();
  if (llvm::is_contained(inputNames, name) || llvm::is_contained(symbols, name))
    return emitError(loc) << "output '" << name
                          << "' has the name of an input or a dimension; "
                             "name it differently";
  if (failed(checkShapeLimits(value.shape, loc, "output '" + name + "'")))
    return failure();
  // The caller learns an output's shape from the named dims of the inputs;
  // a product a reshape derived (`batch*seq`) is not among them.
  for (const Dim &d : value.shape)
    if (d.isSymbolic() && !llvm::is_contained(symbols, d.symbol))
      return emitError(loc)
             << "output '" << name << "' " << formatShape(value.shape)
             << " has the dimension '" << d.symbol
             << "', which no input declares; "
                "reshape it back to the inputs' dimensions";
  SmallVector<Attribute> dims;
  for (const Dim &d : value.shape) {
    if (d.isSymbolic())
      dims.push_back(builder.getStringAttr(d.symbol));
    else
      dims.push_back(builder.getI64IntegerAttr(d.size));
  }
  outputNames.push_back(name.str());
  outputSignature.push_back(TensorSpecAttr::get(
      builder.getContext(), builder.getStringAttr(name), value.elementType(),
      builder.getArrayAttr(dims), false));
  outputs.push_back(value.value);
  return success();
}

FailureOr<OwningOpRef<ModuleOp>> ModelBuilder::finish(Location loc) {
  if (outputs.empty())
    return emitError(loc) << "model '" << modelName << "' has no output";
  SmallVector<Value> results(outputs);
  // The caches' final values follow the outputs; bufferized in place they
  // are the caller's buffers, and tfm-results-to-out-params drops them.
  for (const CacheState &c : caches)
    results.push_back(c.current);
  if (!statuses.empty()) {
    // The status of the first check that failed, or 0: the model function's
    // trailing i32 result, which the entry points return.
    Value status = statuses.front();
    Value zero =
        arith::ConstantOp::create(builder, loc, builder.getI32IntegerAttr(0));
    for (Value next : ArrayRef(statuses).drop_front()) {
      Value failedBefore = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::ne, status, zero);
      status =
          arith::SelectOp::create(builder, loc, failedBefore, status, next);
    }
    results.push_back(status);
  }
  func::ReturnOp::create(builder, loc, results);
  SmallVector<Type> inputTypes(func.getBody().front().getArgumentTypes());
  SmallVector<Type> outputTypes;
  for (Value v : results)
    outputTypes.push_back(v.getType());
  func.setFunctionType(builder.getFunctionType(inputTypes, outputTypes));
  SmallVector<Attribute> symbolAttrs;
  for (const std::string &s : symbols)
    symbolAttrs.push_back(builder.getStringAttr(s));
  SmallVector<Attribute> errorAttrs;
  for (const auto &[code, message] : errors)
    errorAttrs.push_back(SignatureErrorAttr::get(
        builder.getContext(), code, builder.getStringAttr(message)));
  // Checked: a name or dimension the checks above missed is reported, not
  // carried into the artifact.
  auto signature = SignatureAttr::getChecked(
      [&] { return emitError(loc); }, builder.getContext(),
      builder.getStringAttr(modelName), builder.getArrayAttr(symbolAttrs),
      builder.getArrayAttr(inputSignature),
      builder.getArrayAttr(outputSignature),
      errorAttrs.empty() ? ArrayAttr() : builder.getArrayAttr(errorAttrs),
      StringAttr());
  if (!signature)
    return failure();
  setSignatureAttr(func, signature);
  if (failed(verify(*module)))
    return failure();
  return std::move(module);
}

FailureOr<int64_t> ModelBuilder::normalizeDim(const Tensor &x, int64_t dim,
                                              Location loc) {
  int64_t rank = x.rank();
  int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank)
    return emitError(loc) << "dimension " << dim << " is out of range for "
                          << formatShape(x.shape);
  return d;
}

FailureOr<Shape> ModelBuilder::broadcast(ArrayRef<Dim> a, ArrayRef<Dim> b,
                                         Location loc, StringRef what) {
  Shape result;
  std::optional<size_t> mismatch = broadcastDims<Dim>(
      a, b, result, Dim::of(1), [](const Dim &d) { return d == Dim::of(1); },
      [](const Dim &x, const Dim &y) -> std::optional<Dim> {
        if (x != y)
          return std::nullopt;
        return x;
      });
  if (!mismatch)
    return result;
  size_t rank = std::max(a.size(), b.size());
  auto at = [&](ArrayRef<Dim> s) {
    size_t lead = rank - s.size();
    return *mismatch < lead ? Dim::of(1) : s[*mismatch - lead];
  };
  return emitError(loc) << what << ": shapes " << formatShape(a) << " and "
                        << formatShape(b) << " do not broadcast ("
                        << at(a).str() << " vs " << at(b).str() << ")";
}

static bool sameFloatType(const Tensor &a, const Tensor &b) {
  return a.elementType() == b.elementType();
}

FailureOr<Tensor> ModelBuilder::matmul(const Tensor &lhs, const Tensor &rhs,
                                       Location loc) {
  if (lhs.rank() < 2 || rhs.rank() < 2)
    return emitError(loc) << "matmul needs operands of rank 2 or more, got "
                          << formatShape(lhs.shape) << " @ "
                          << formatShape(rhs.shape);
  if (!sameFloatType(lhs, rhs) || !isa<FloatType>(lhs.elementType()))
    return emitError(loc) << "matmul operands must have the same float type";
  const Dim &k1 = lhs.shape.back(), &k2 = rhs.shape[rhs.rank() - 2];
  if (k1 != k2)
    return emitError(loc) << "matmul: " << formatShape(lhs.shape) << " @ "
                          << formatShape(rhs.shape)
                          << " contracts mismatched dimensions " << k1.str()
                          << " and " << k2.str();
  FailureOr<Shape> shape =
      broadcast(ArrayRef(lhs.shape).drop_back(2),
                ArrayRef(rhs.shape).drop_back(2), loc, "matmul batch dims");
  if (failed(shape))
    return failure();
  shape->push_back(lhs.shape[lhs.rank() - 2]);
  shape->push_back(rhs.shape.back());
  Value v = MatmulOp::create(builder, loc, typeOf(*shape, lhs.elementType()),
                             lhs.value, rhs.value);
  return Tensor{v, *shape};
}

FailureOr<Tensor> ModelBuilder::transpose(const Tensor &x, int64_t dim0,
                                          int64_t dim1, Location loc) {
  FailureOr<int64_t> d0 = normalizeDim(x, dim0, loc);
  if (failed(d0))
    return failure();
  FailureOr<int64_t> d1 = normalizeDim(x, dim1, loc);
  if (failed(d1))
    return failure();
  Shape shape = x.shape;
  std::swap(shape[*d0], shape[*d1]);
  Value v = TransposeOp::create(builder, loc, typeOf(shape, x.elementType()),
                                x.value, builder.getI64IntegerAttr(dim0),
                                builder.getI64IntegerAttr(dim1));
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::scale(const Tensor &x, double factor,
                                      bool divide, Location loc) {
  if (!isa<FloatType>(x.elementType()))
    return emitError(loc) << "can only scale float tensors";
  if (divide && factor == 0.0)
    return emitError(loc) << "division by zero";
  if (!std::isfinite(factor))
    return emitError(loc) << (divide ? "division" : "multiplication") << " by "
                          << (std::isnan(factor) ? "nan"
                              : factor > 0       ? "inf"
                                                 : "-inf")
                          << ": the factor must be finite (masked_fill sets "
                             "elements to -inf)";
  Value v = ScaleOp::create(builder, loc, x.value.getType(), x.value,
                            builder.getF64FloatAttr(factor),
                            divide ? builder.getUnitAttr() : UnitAttr());
  return Tensor{v, x.shape};
}

FailureOr<Tensor> ModelBuilder::softmax(const Tensor &x, int64_t dim,
                                        Location loc) {
  if (failed(normalizeDim(x, dim, loc)))
    return failure();
  if (!isa<FloatType>(x.elementType()))
    return emitError(loc) << "softmax needs a float tensor";
  Value v = SoftmaxOp::create(builder, loc, x.value.getType(), x.value,
                              builder.getI64IntegerAttr(dim));
  return Tensor{v, x.shape};
}

FailureOr<Tensor> ModelBuilder::add(const Tensor &lhs, const Tensor &rhs,
                                    Location loc) {
  Type type = lhs.elementType();
  if (type != rhs.elementType() || type.isInteger(1))
    return emitError(loc) << "'+' needs two tensors of the same numeric type, "
                          << "got " << type << " and " << rhs.elementType()
                          << " (cast one of them)";
  FailureOr<Shape> shape = broadcast(lhs.shape, rhs.shape, loc, "'+'");
  if (failed(shape))
    return failure();
  Value v = AddOp::create(builder, loc, lhs.value, rhs.value);
  return Tensor{v, *shape};
}

FailureOr<Tensor> ModelBuilder::concat(ArrayRef<Tensor> inputs, int64_t dim,
                                       Location loc) {
  if (inputs.empty())
    return emitError(loc) << "concat needs at least one tensor";
  FailureOr<int64_t> d = normalizeDim(inputs.front(), dim, loc);
  if (failed(d))
    return failure();
  Shape shape = inputs.front().shape;
  SmallVector<Value> values;
  for (auto [i, t] : llvm::enumerate(inputs)) {
    values.push_back(t.value);
    if (t.rank() != int64_t(shape.size()) || !sameFloatType(t, inputs.front()))
      return emitError(loc)
             << "concat: input " << i << " " << formatShape(t.shape)
             << " differs in rank or type from input 0";
    for (int64_t j = 0; j < t.rank(); ++j) {
      if (j == *d) {
        if (t.shape[j].isSymbolic() || (i > 0 && shape[j].isSymbolic()))
          return emitError(loc)
                 << "concat along the symbolic dimension '"
                 << (t.shape[j].isSymbolic() ? t.shape[j] : shape[j]).str()
                 << "' is not supported";
        // Every size is at most kMaxDimension, so the sum cannot overflow
        // before it is checked.
        if (i > 0 && shape[j].size > kMaxDimension - t.shape[j].size)
          return emitError(loc) << "concat: the sizes along dimension " << j
                                << " add up to more than the maximum of "
                                << kMaxDimension << " (2^40) at input " << i;
        if (i > 0)
          shape[j].size += t.shape[j].size;
      } else if (t.shape[j] != shape[j]) {
        return emitError(loc)
               << "concat: input " << i << " " << formatShape(t.shape)
               << " disagrees with input 0 "
               << formatShape(inputs.front().shape) << " in dimension " << j;
      }
    }
  }
  Value v = ConcatOp::create(builder, loc,
                             typeOf(shape, inputs.front().elementType()),
                             values, builder.getI64IntegerAttr(dim));
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::maskedFill(const Tensor &x, const Tensor &mask,
                                           double value, Location loc) {
  if (!isa<FloatType>(x.elementType()))
    return emitError(loc) << "masked_fill needs a float tensor to fill, got "
                          << x.elementType();
  Type maskElement = mask.elementType();
  if (!maskElement.isInteger(1) && !maskElement.isInteger(32) &&
      !maskElement.isInteger(64))
    return emitError(loc) << "masked_fill: the mask must be i1, i32 or i64 "
                             "(nonzero = fill), got "
                          << maskElement;
  if (mask.rank() > x.rank())
    return emitError(loc) << "masked_fill: mask " << formatShape(mask.shape)
                          << " has more dimensions than the input "
                          << formatShape(x.shape);
  for (int64_t i = 0; i < mask.rank(); ++i) {
    const Dim &m = mask.shape[i];
    const Dim &d = x.shape[x.rank() - mask.rank() + i];
    if (m != Dim::of(1) && m != d)
      return emitError(loc)
             << "masked_fill: mask " << formatShape(mask.shape)
             << " does not broadcast to the input " << formatShape(x.shape)
             << " (" << m.str() << " vs " << d.str() << ")";
  }
  Value condition = mask.value;
  if (!maskElement.isInteger(1)) {
    // tfm.masked_fill takes i1; integer masks become `mask != 0` here, an
    // elementwise generic that convert-tfm-to-linalg leaves as it is.
    auto intType = cast<RankedTensorType>(mask.value.getType());
    auto boolType =
        RankedTensorType::get(intType.getShape(), builder.getI1Type());
    SmallVector<Value> sizes;
    for (int64_t i = 0; i < mask.rank(); ++i)
      if (boolType.isDynamicDim(i))
        sizes.push_back(tensor::DimOp::create(builder, loc, mask.value, i));
    Value empty = tensor::EmptyOp::create(builder, loc, boolType, sizes);
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(mask.rank(), getContext());
    condition = linalg::GenericOp::create(
                    builder, loc, TypeRange{boolType}, ValueRange{mask.value},
                    ValueRange{empty}, ArrayRef<AffineMap>{identity, identity},
                    SmallVector<utils::IteratorType>(
                        mask.rank(), utils::IteratorType::parallel),
                    [&](OpBuilder &b, Location l, ValueRange args) {
                      Value zero = arith::ConstantOp::create(
                          b, l, b.getIntegerAttr(maskElement, 0));
                      Value nonzero = arith::CmpIOp::create(
                          b, l, arith::CmpIPredicate::ne, args[0], zero);
                      linalg::YieldOp::create(b, l, nonzero);
                    })
                    .getResult(0);
  }
  Value v = MaskedFillOp::create(builder, loc, x.value.getType(), x.value,
                                 condition, builder.getF64FloatAttr(value));
  return Tensor{v, x.shape};
}

FailureOr<Tensor> ModelBuilder::causalMask(const Tensor &x, Location loc) {
  if (!isa<FloatType>(x.elementType()))
    return emitError(loc) << "causal_mask needs a float tensor, got "
                          << x.elementType();
  if (x.rank() < 2)
    return emitError(loc) << "causal_mask needs scores [..., queries, keys], "
                             "got "
                          << formatShape(x.shape);
  Value v = CausalMaskOp::create(builder, loc, x.value.getType(), x.value);
  return Tensor{v, x.shape};
}

FailureOr<Tensor> ModelBuilder::linear(const Tensor &x, const Tensor &weight,
                                       const std::optional<Tensor> &bias,
                                       Location loc) {
  if (x.rank() < 1 || weight.rank() != 2)
    return emitError(loc) << "linear needs an input of rank 1 or more and a "
                             "weight [out, in], got "
                          << formatShape(x.shape) << " and "
                          << formatShape(weight.shape);
  if (!sameFloatType(x, weight) || !isa<FloatType>(x.elementType()))
    return emitError(loc) << "linear: input and weight must have the same "
                             "float type";
  if (x.shape.back() != weight.shape[1])
    return emitError(loc) << "linear: input " << formatShape(x.shape) << " has "
                          << x.shape.back().str() << " features but the weight "
                          << formatShape(weight.shape) << " expects "
                          << weight.shape[1].str()
                          << " (weights are [out, in])";
  if (bias && (bias->rank() != 1 || bias->shape[0] != weight.shape[0] ||
               !sameFloatType(*bias, x)))
    return emitError(loc) << "linear: bias " << formatShape(bias->shape)
                          << " must be [" << weight.shape[0].str() << "]";
  Shape shape = x.shape;
  shape.back() = weight.shape[0];
  Value v =
      LinearOp::create(builder, loc, typeOf(shape, x.elementType()), x.value,
                       weight.value, bias ? bias->value : Value());
  return Tensor{v, shape};
}

int32_t ModelBuilder::statusCode(int32_t preferred,
                                 const std::string &message) const {
  int32_t highest = 2; // 1 and 2 stay the first embedding's and encoding's.
  bool preferredTaken = false;
  for (const auto &[code, text] : errors) {
    if (text == message)
      return code;
    preferredTaken |= code == preferred;
    highest = std::max(highest, code);
  }
  return preferredTaken ? highest + 1 : preferred;
}

void ModelBuilder::addStatus(Value status, int32_t code, std::string message) {
  statuses.push_back(status);
  std::pair<int32_t, std::string> error(code, std::move(message));
  if (!llvm::is_contained(errors, error))
    errors.push_back(std::move(error));
}

FailureOr<Tensor> ModelBuilder::embedding(const Tensor &ids,
                                          const Tensor &table, Location loc,
                                          std::optional<int64_t> paddingIdx) {
  if (!ids.elementType().isInteger(64) && !ids.elementType().isInteger(32))
    return emitError(loc) << "embedding ids must be i64 or i32";
  if (table.rank() != 2 || !isa<FloatType>(table.elementType()))
    return emitError(loc) << "embedding table must be a float [num, dim], got "
                          << formatShape(table.shape);
  int64_t num = table.shape[0].size;
  if (num == 0)
    return emitError(loc) << "embedding table " << formatShape(table.shape)
                          << " has no rows";
  if (paddingIdx && (*paddingIdx < -num || *paddingIdx >= num))
    return emitError(loc) << "embedding: padding_idx " << *paddingIdx
                          << " is outside [" << -num << ", " << num << ")";
  Shape shape = ids.shape;
  shape.push_back(table.shape[1]);
  Value v = EmbeddingOp::create(
      builder, loc, typeOf(shape, table.elementType()), ids.value, table.value);
  std::string name = "embedding";
  if (auto weight = table.value.getDefiningOp<WeightOp>())
    name += " '" + weight.getName().str() + "'";
  std::string message =
      name + ": a token id is outside [0, " + std::to_string(num) + ")";
  int32_t code = statusCode(1, message);
  Value status = CheckIndexOp::create(builder, loc, ids.value,
                                      builder.getI64IntegerAttr(num),
                                      builder.getI32IntegerAttr(code));
  addStatus(status, code, std::move(message));
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::positionalEncoding(const Tensor &x,
                                                   Location loc) {
  if (x.rank() < 2 || !isa<FloatType>(x.elementType()))
    return emitError(loc) << "positional_encoding needs a float [..., seq, "
                             "dim] tensor, got "
                          << formatShape(x.shape);
  if (x.shape.back().isSymbolic())
    return emitError(loc) << "positional_encoding needs a static model "
                             "dimension, got '"
                          << x.shape.back().str() << "'";
  Shape shape(ArrayRef(x.shape).take_back(2));
  Value v = PositionalEncodingOp::create(
      builder, loc, typeOf(shape, x.elementType()), x.value, Value());
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::learnedPositionalEncoding(const Tensor &x,
                                                          const Tensor &table,
                                                          Location loc) {
  if (x.rank() < 2 || !isa<FloatType>(x.elementType()))
    return emitError(loc) << "positional_encoding needs a float [..., seq, "
                             "dim] tensor, got "
                          << formatShape(x.shape);
  if (table.rank() != 2 || !sameFloatType(x, table) ||
      table.shape[1] != x.shape.back())
    return emitError(loc) << "positional_encoding: the learned table "
                          << formatShape(table.shape) << " must be [max_len, "
                          << x.shape.back().str() << "] of the input's type";
  int64_t maxLen = table.shape[0].size;
  if (maxLen == 0)
    return emitError(loc) << "positional_encoding: the learned table "
                          << formatShape(table.shape) << " has no rows";
  const Dim &seq = x.shape[x.rank() - 2];
  if (!seq.isSymbolic() && seq.size > maxLen)
    return emitError(loc) << "positional_encoding: sequence length " << seq.size
                          << " exceeds the learned table's " << maxLen
                          << " positions";
  Shape shape(ArrayRef(x.shape).take_back(2));
  Value v = PositionalEncodingOp::create(
      builder, loc, typeOf(shape, x.elementType()), x.value, table.value);
  if (seq.isSymbolic()) {
    std::string name = "positional_encoding";
    if (auto weight = table.value.getDefiningOp<WeightOp>())
      name += " '" + weight.getName().str() + "'";
    std::string message = name + ": the sequence is longer than the table's " +
                          std::to_string(maxLen) + " positions";
    int32_t code = statusCode(2, message);
    Value status = CheckSizeOp::create(
        builder, loc, x.value, builder.getI64IntegerAttr(-2),
        builder.getI64IntegerAttr(maxLen), builder.getI32IntegerAttr(code));
    addStatus(status, code, std::move(message));
  }
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::layerNorm(const Tensor &x,
                                          const std::optional<Tensor> &weight,
                                          const std::optional<Tensor> &bias,
                                          double eps, Location loc) {
  if (x.rank() < 1 || !isa<FloatType>(x.elementType()))
    return emitError(loc) << "layer_norm needs a float tensor of rank 1 or "
                             "more, got "
                          << formatShape(x.shape);
  if (!std::isfinite(eps) || eps < 0)
    return emitError(loc) << "layer_norm: eps must be finite and "
                             "non-negative, got "
                          << eps;
  for (const auto *p : {&weight, &bias}) {
    if (!*p)
      continue;
    const Tensor &t = **p;
    if (t.rank() != 1 || t.shape[0] != x.shape.back() || !sameFloatType(t, x))
      return emitError(loc)
             << "layer_norm: " << (p == &weight ? "weight" : "bias") << " "
             << formatShape(t.shape) << " must be [" << x.shape.back().str()
             << "] (it normalizes the last dim of " << formatShape(x.shape)
             << ")";
  }
  Value v = LayerNormOp::create(builder, loc, x.value.getType(), x.value,
                                weight ? weight->value : Value(),
                                bias ? bias->value : Value(),
                                builder.getF64FloatAttr(eps));
  return Tensor{v, x.shape};
}

FailureOr<Tensor> ModelBuilder::relu(const Tensor &x, Location loc) {
  if (!isa<FloatType>(x.elementType()))
    return emitError(loc) << "relu needs a float tensor";
  Value v = ReluOp::create(builder, loc, x.value.getType(), x.value);
  return Tensor{v, x.shape};
}

FailureOr<Tensor> ModelBuilder::gelu(const Tensor &x, StringRef approximate,
                                     Location loc) {
  if (!isa<FloatType>(x.elementType()))
    return emitError(loc) << "gelu needs a float tensor";
  if (approximate != "none" && approximate != "tanh")
    return emitError(loc) << "gelu: approximate must be \"none\" or "
                             "\"tanh\", got \""
                          << approximate << "\"";
  Value v = GeluOp::create(builder, loc, x.value.getType(), x.value,
                           builder.getStringAttr(approximate));
  return Tensor{v, x.shape};
}

FailureOr<Tensor> ModelBuilder::dropout(const Tensor &x, double p,
                                        Location loc) {
  if (!(p >= 0.0 && p <= 1.0))
    return emitError(loc) << "dropout probability has to be between 0 and 1, "
                             "but got "
                          << p;
  return x; // Inference: dropout is the identity.
}

LogicalResult ModelBuilder::checkMask(const Tensor &mask, ArrayRef<Dim> scores,
                                      Type floatType, StringRef what,
                                      Location loc) {
  Type element = mask.elementType();
  if (!element.isInteger(1) && element != floatType)
    return emitError(loc) << what << " must be bool or " << floatType
                          << " (the scores' type), got " << element;
  bool ok = mask.rank() >= 1 && mask.rank() <= int64_t(scores.size());
  for (int64_t i = 0; ok && i < mask.rank(); ++i)
    ok = mask.shape[i] == Dim::of(1) ||
         mask.shape[i] == scores[scores.size() - mask.rank() + i];
  if (!ok)
    return emitError(loc) << what << " " << formatShape(mask.shape)
                          << " does not broadcast to the attention scores "
                          << formatShape(scores);
  return success();
}

FailureOr<Tensor> ModelBuilder::sdpa(const Tensor &q, const Tensor &k,
                                     const Tensor &v,
                                     std::optional<double> scale,
                                     Location loc) {
  SdpaOptions options;
  options.scale = scale;
  return sdpa(q, k, v, options, loc);
}

FailureOr<Tensor> ModelBuilder::sdpa(const Tensor &q, const Tensor &k,
                                     const Tensor &v,
                                     const SdpaOptions &options, Location loc) {
  if (q.rank() < 2 || k.rank() != q.rank() || v.rank() != q.rank())
    return emitError(loc) << "sdpa needs query, key and value of the same "
                             "rank (2 or more), got "
                          << formatShape(q.shape) << ", "
                          << formatShape(k.shape) << ", "
                          << formatShape(v.shape);
  if (!sameFloatType(q, k) || !sameFloatType(q, v) ||
      !isa<FloatType>(q.elementType()))
    return emitError(loc) << "sdpa operands must have the same float type";
  for (int64_t i = 0; i + 2 < q.rank(); ++i)
    if (q.shape[i] != k.shape[i] || q.shape[i] != v.shape[i])
      return emitError(loc)
             << "sdpa: batch dimension " << i << " differs between query "
             << formatShape(q.shape) << ", key " << formatShape(k.shape)
             << " and value " << formatShape(v.shape);
  if (q.shape.back() != k.shape.back())
    return emitError(loc) << "sdpa: query " << formatShape(q.shape)
                          << " and key " << formatShape(k.shape)
                          << " differ in the last dimension";
  if (k.shape[k.rank() - 2] != v.shape[v.rank() - 2])
    return emitError(loc) << "sdpa: key " << formatShape(k.shape)
                          << " and value " << formatShape(v.shape)
                          << " differ in sequence length";
  if (q.shape.back().isSymbolic())
    return emitError(loc) << "sdpa needs a static head dimension";
  if (options.scale && !std::isfinite(*options.scale))
    return emitError(loc) << "sdpa scale must be finite";
  if (options.attnMask) {
    Shape scores(ArrayRef(q.shape).drop_back());
    scores.push_back(k.shape[k.rank() - 2]);
    if (failed(checkMask(*options.attnMask, scores, q.elementType(),
                         "sdpa: attn_mask", loc)))
      return failure();
  }
  Shape shape = q.shape;
  shape.back() = v.shape.back();
  if (options.kvLength || options.queryOffset)
    return cachedAttention(q, k, v, options, shape, loc);
  Value result = SdpaOp::create(
      builder, loc, typeOf(shape, q.elementType()), q.value, k.value, v.value,
      options.attnMask ? options.attnMask->value : Value(),
      options.scale ? builder.getF64FloatAttr(*options.scale) : FloatAttr(),
      options.isCausal ? builder.getUnitAttr() : UnitAttr());
  return Tensor{result, shape};
}

FailureOr<Tensor>
ModelBuilder::cachedAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                              const SdpaOptions &options, const Shape &shape,
                              Location loc) {
  if (q.rank() < 3)
    return emitError(loc) << "sdpa: kv_length and query_offset need a "
                             "leading batch dimension, got "
                          << formatShape(q.shape);
  if (options.attnMask)
    return emitError(loc) << "sdpa: attn_mask cannot be combined with "
                             "kv_length or query_offset";
  if (options.queryOffset && !options.isCausal)
    return emitError(loc) << "sdpa: query_offset places causal queries; it "
                             "needs is_causal = true";
  for (const auto &[t, name] : {std::pair(options.kvLength, "kv_length"),
                                std::pair(options.queryOffset, "query_offset")})
    if (t && (t->rank() != 1 || !t->elementType().isInteger(64) ||
              t->shape[0] != q.shape[0]))
      return emitError(loc)
             << "sdpa: " << name << " must be i64 "
             << formatShape(ArrayRef(q.shape).take_front())
             << ", one value per sequence; got " << formatShape(t->shape);
  // Straight to the fused op: its kernel is what bounds the keys visited.
  RankedTensorType type = typeOf(shape, q.elementType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(
          builder, loc, d + 1 < type.getRank() ? q.value : v.value, d));
  Value init = tensor::EmptyOp::create(builder, loc, type, sizes);
  double scale =
      options.scale.value_or(1.0 / std::sqrt(double(q.shape.back().size)));
  Value result =
      AttentionOp::create(
          builder, loc, TypeRange{type}, q.value, k.value, v.value, Value(),
          options.kvLength ? options.kvLength->value : Value(),
          options.queryOffset ? options.queryOffset->value : Value(), init,
          builder.getF64FloatAttr(scale),
          options.isCausal ? builder.getUnitAttr() : UnitAttr(),
          /*indexing_maps=*/ArrayAttr())
          .getResult()[0];
  return Tensor{result, shape};
}

FailureOr<Tensor> ModelBuilder::sliceRows(const Tensor &x, int64_t begin,
                                          int64_t count, Location loc) {
  Shape shape = x.shape;
  shape[0] = Dim::of(count);
  SmallVector<OpFoldResult> offsets(x.rank(), builder.getIndexAttr(0));
  offsets[0] = builder.getIndexAttr(begin);
  SmallVector<OpFoldResult> sizes, strides(x.rank(), builder.getIndexAttr(1));
  for (const Dim &d : shape)
    sizes.push_back(builder.getIndexAttr(d.size));
  Value v = tensor::ExtractSliceOp::create(builder, loc,
                                           typeOf(shape, x.elementType()),
                                           x.value, offsets, sizes, strides);
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::multiHeadAttention(
    const Tensor &q, const Tensor &k, const Tensor &v, int64_t heads,
    const MultiHeadAttentionWeights &names, Location loc) {
  FailureOr<AttentionResult> r =
      multiHeadAttention(q, k, v, heads, names, {}, loc);
  if (failed(r))
    return failure();
  return r->output;
}

FailureOr<ModelBuilder::AttentionResult> ModelBuilder::multiHeadAttention(
    const Tensor &query, const Tensor &key, const Tensor &value, int64_t heads,
    const MultiHeadAttentionWeights &names,
    const MultiHeadAttentionOptions &options, Location loc) {
  if (query.rank() < 2 || query.rank() > 3 || key.rank() != query.rank() ||
      value.rank() != query.rank())
    return emitError(loc) << "multi_head_attention needs query, key and value "
                             "as [seq, embed] or [batch, seq, embed], got "
                          << formatShape(query.shape) << ", "
                          << formatShape(key.shape) << ", "
                          << formatShape(value.shape);
  // Sequence-first inputs [seq, batch, E] are transposed to batch first
  // (once per distinct value) and the output back.
  bool batched = query.rank() == 3;
  bool seqFirst = batched && !options.batchFirst;
  SmallVector<std::pair<Value, Tensor>> transposed;
  auto batchFirst = [&](const Tensor &t) -> Tensor {
    if (!seqFirst)
      return t;
    for (auto &[original, result] : transposed)
      if (original == t.value)
        return result;
    Tensor result = *transpose(t, 0, 1, loc);
    transposed.push_back({t.value, result});
    return result;
  };
  Tensor q = batchFirst(query), k = batchFirst(key), v = batchFirst(value);
  if (batched && (q.shape[0] != k.shape[0] || q.shape[0] != v.shape[0]))
    return emitError(loc) << "multi_head_attention: query, key and value "
                             "disagree on the batch size";
  if (k.shape[k.rank() - 2] != v.shape[v.rank() - 2])
    return emitError(loc) << "multi_head_attention: key "
                          << formatShape(key.shape) << " and value "
                          << formatShape(value.shape)
                          << " differ in sequence length";
  const Dim &embed = q.shape.back();
  if (embed.isSymbolic() || k.shape.back().isSymbolic() ||
      v.shape.back().isSymbolic())
    return emitError(loc) << "multi_head_attention needs static embedding "
                             "dimensions";
  if (heads <= 0 || embed.size % heads != 0)
    return emitError(loc) << "multi_head_attention: embedding dimension "
                          << embed.size << " is not divisible by " << heads
                          << " heads";
  int64_t e = embed.size;
  int64_t kdim = k.shape.back().size, vdim = v.shape.back().size;
  auto expect = [&](const Tensor &t, StringRef name,
                    ArrayRef<int64_t> shape) -> LogicalResult {
    Shape want;
    for (int64_t d : shape)
      want.push_back(Dim::of(d));
    if (t.shape == want && sameFloatType(t, q))
      return success();
    return emitError(loc) << "multi_head_attention: weight '" << name << "' is "
                          << formatShape(t.shape) << " but must be "
                          << formatShape(want);
  };

  Tensor wq, wk, wv, wo;
  std::optional<Tensor> bq, bk, bv, bo;
  auto load = [&](StringRef name, Tensor &out) -> LogicalResult {
    FailureOr<Tensor> t = weight(name, loc);
    if (failed(t))
      return failure();
    out = *t;
    return success();
  };
  auto loadOptional = [&](StringRef name,
                          std::optional<Tensor> &out) -> LogicalResult {
    if (name.empty())
      return success();
    Tensor t;
    if (failed(load(name, t)))
      return failure();
    out = t;
    return success();
  };
  // A packed in_proj_bias [3E] goes with the packed weight, or with separate
  // weights (nn.MultiheadAttention with kdim/vdim != E).
  auto loadPackedBias = [&]() -> LogicalResult {
    if (names.inProjBias.empty())
      return success();
    Tensor packedBias;
    if (failed(load(names.inProjBias, packedBias)) ||
        failed(expect(packedBias, names.inProjBias, {3 * e})))
      return failure();
    bq = *sliceRows(packedBias, 0, e, loc);
    bk = *sliceRows(packedBias, e, e, loc);
    bv = *sliceRows(packedBias, 2 * e, e, loc);
    return success();
  };
  bool split = names.inProjWeight.empty() || kdim != e || vdim != e;
  if (!split) {
    Tensor packed;
    if (failed(load(names.inProjWeight, packed)) ||
        failed(expect(packed, names.inProjWeight, {3 * e, e})))
      return failure();
    wq = *sliceRows(packed, 0, e, loc);
    wk = *sliceRows(packed, e, e, loc);
    wv = *sliceRows(packed, 2 * e, e, loc);
    if (failed(loadPackedBias()))
      return failure();
  } else {
    MultiHeadAttentionWeights n = names;
    if (n.qWeight.empty()) {
      // nn.MultiheadAttention's names when kdim or vdim differ from E.
      if (n.qProjWeight.empty())
        return emitError(loc)
               << "multi_head_attention: a packed in_proj_weight needs key "
                  "and value of the query's embedding size "
               << e << " (got " << kdim << " and " << vdim
               << "); name the q/k/v weights separately";
      n.qWeight = n.qProjWeight;
      n.kWeight = n.kProjWeight;
      n.vWeight = n.vProjWeight;
    }
    if (failed(load(n.qWeight, wq)) || failed(load(n.kWeight, wk)) ||
        failed(load(n.vWeight, wv)) || failed(loadOptional(n.qBias, bq)) ||
        failed(loadOptional(n.kBias, bk)) || failed(loadOptional(n.vBias, bv)))
      return failure();
    if (!bq && !bk && !bv && failed(loadPackedBias()))
      return failure();
    if (failed(expect(wq, n.qWeight, {e, e})) ||
        failed(expect(wk, n.kWeight, {e, kdim})) ||
        failed(expect(wv, n.vWeight, {e, vdim})))
      return failure();
  }
  if (failed(load(names.outWeight, wo)) ||
      failed(loadOptional(names.outBias, bo)) ||
      failed(expect(wo, names.outWeight, {e, e})))
    return failure();
  std::optional<Tensor> biases[] = {bq, bk, bv, bo};
  int numBiases = llvm::count_if(biases, [](auto &b) { return b.has_value(); });
  if (numBiases != 0 && numBiases != 4)
    return emitError(loc) << "multi_head_attention needs all four biases "
                             "(q, k, v, out) or none";
  for (auto &b : biases)
    if (b && failed(expect(*b, "bias", {e})))
      return failure();

  // Masks, as nn.MultiheadAttention.forward takes them.
  const Dim &sq = q.shape[q.rank() - 2], &sk = k.shape[k.rank() - 2];
  Type floatType = q.elementType();
  auto checkMaskType = [&](const Tensor &m, StringRef what) -> LogicalResult {
    if (m.elementType().isInteger(1) || m.elementType() == floatType)
      return success();
    return emitError(loc) << "multi_head_attention: " << what
                          << " must be bool (true = masked) or " << floatType
                          << ", got " << m.elementType();
  };
  if (const std::optional<Tensor> &m = options.keyPaddingMask) {
    Shape want;
    if (batched)
      want.push_back(q.shape[0]);
    want.push_back(sk);
    if (failed(checkMaskType(*m, "key_padding_mask")))
      return failure();
    if (m->shape != want)
      return emitError(loc) << "multi_head_attention: key_padding_mask "
                            << formatShape(m->shape) << " must be "
                            << formatShape(want) << " ([batch, key length])";
  }
  if (const std::optional<Tensor> &m = options.attnMask) {
    if (failed(checkMaskType(*m, "attn_mask")))
      return failure();
    bool ok = m->shape == Shape{sq, sk};
    if (m->rank() == 3 && m->shape[1] == sq && m->shape[2] == sk) {
      if (!batched) {
        ok = m->shape[0] == Dim::of(heads);
      } else if (m->shape[0].isSymbolic() || q.shape[0].isSymbolic()) {
        return emitError(loc)
               << "multi_head_attention: a 3-D attn_mask "
               << formatShape(m->shape)
               << " needs a static batch size and a static first dimension "
                  "(batch * heads) to be checked against the query "
               << formatShape(query.shape);
      } else {
        ok = m->shape[0].size == q.shape[0].size * heads;
      }
    }
    if (!ok)
      return emitError(loc)
             << "multi_head_attention: attn_mask " << formatShape(m->shape)
             << " must be [" << sq.str() << ", " << sk.str() << "] or ["
             << (batched ? (q.shape[0].isSymbolic()
                                ? q.shape[0].str() + "*" + std::to_string(heads)
                                : std::to_string(q.shape[0].size * heads))
                         : std::to_string(heads))
             << ", " << sq.str() << ", " << sk.str() << "]";
  }

  Shape shape = q.shape;
  auto resultType = typeOf(shape, floatType);
  Type weightsType;
  Shape weightsShape;
  if (options.needWeights) {
    if (batched)
      weightsShape.push_back(q.shape[0]);
    if (!options.averageAttnWeights)
      weightsShape.push_back(Dim::of(heads));
    weightsShape.append({sq, sk});
    weightsType = typeOf(weightsShape, floatType);
  }
  auto valueOf = [](const std::optional<Tensor> &t) {
    return t ? t->value : Value();
  };
  auto op = MultiHeadAttentionOp::create(
      builder, loc, resultType, weightsType, q.value, k.value, v.value,
      wq.value, wk.value, wv.value, wo.value, valueOf(bq), valueOf(bk),
      valueOf(bv), valueOf(bo), valueOf(options.keyPaddingMask),
      valueOf(options.attnMask), builder.getI64IntegerAttr(heads),
      options.averageAttnWeights ? BoolAttr() : builder.getBoolAttr(false));
  AttentionResult result{Tensor{op.getResult(), shape}, std::nullopt};
  if (options.needWeights)
    result.weights = Tensor{op.getAttnWeights(), weightsShape};
  if (seqFirst)
    result.output = *transpose(result.output, 0, 1, loc);
  return result;
}

FailureOr<Tensor> ModelBuilder::transformerEncoderLayer(
    const Tensor &x, const TransformerEncoderLayerOptions &options,
    Location loc) {
  if (options.activation != "relu" && options.activation != "gelu")
    return emitError(loc) << "transformer_encoder_layer: activation must be "
                             "\"relu\" or \"gelu\", got \""
                          << options.activation << "\"";
  const TransformerEncoderLayerWeights &w = options.weights;
  auto param = [&](StringRef name) { return weight(name, loc); };
  MultiHeadAttentionOptions attention;
  attention.batchFirst = options.batchFirst;
  attention.attnMask = options.srcMask;
  attention.keyPaddingMask = options.srcKeyPaddingMask;
  auto selfAttention = [&](const Tensor &t) -> FailureOr<Tensor> {
    FailureOr<AttentionResult> r =
        multiHeadAttention(t, t, t, options.heads, w.attention, attention, loc);
    if (failed(r))
      return failure();
    return r->output;
  };
  auto norm = [&](const Tensor &t, StringRef weightName,
                  StringRef biasName) -> FailureOr<Tensor> {
    FailureOr<Tensor> scale = param(weightName), shift = param(biasName);
    if (failed(scale) || failed(shift))
      return failure();
    return layerNorm(t, *scale, *shift, options.eps, loc);
  };
  auto norm1 = [&](const Tensor &t) {
    return norm(t, w.norm1Weight, w.norm1Bias);
  };
  auto norm2 = [&](const Tensor &t) {
    return norm(t, w.norm2Weight, w.norm2Bias);
  };
  auto feedForward = [&](const Tensor &t) -> FailureOr<Tensor> {
    FailureOr<Tensor> w1 = param(w.linear1Weight), b1 = param(w.linear1Bias),
                      w2 = param(w.linear2Weight), b2 = param(w.linear2Bias);
    if (failed(w1) || failed(b1) || failed(w2) || failed(b2))
      return failure();
    FailureOr<Tensor> h = linear(t, *w1, *b1, loc);
    if (failed(h))
      return failure();
    h = options.activation == "relu" ? relu(*h, loc) : gelu(*h, "none", loc);
    if (failed(h))
      return failure();
    return linear(*h, *w2, *b2, loc);
  };
  auto residual = [&](const Tensor &t,
                      const FailureOr<Tensor> &branch) -> FailureOr<Tensor> {
    if (failed(branch))
      return failure();
    return add(t, *branch, loc);
  };

  FailureOr<Tensor> y = x;
  if (options.normFirst) {
    // x = x + sa(norm1(x)); x = x + ff(norm2(x))
    FailureOr<Tensor> n1 = norm1(*y);
    if (failed(n1) || failed(y = residual(*y, selfAttention(*n1))))
      return failure();
    FailureOr<Tensor> n2 = norm2(*y);
    if (failed(n2))
      return failure();
    return residual(*y, feedForward(*n2));
  }
  // x = norm1(x + sa(x)); x = norm2(x + ff(x))
  if (failed(y = residual(*y, selfAttention(*y))) || failed(y = norm1(*y)) ||
      failed(y = residual(*y, feedForward(*y))))
    return failure();
  return norm2(*y);
}
