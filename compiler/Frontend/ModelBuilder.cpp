//===- ModelBuilder.cpp - Build tfm models from C++ -----------------------===//
//
// The model itself: inputs, caches, weights and outputs, the status codes of
// run-time checks, and the tensor ops between layers (matmul, transpose,
// scale, softmax, add, concat, masks). The layers are in
// ModelBuilderLayers.cpp and ModelBuilderAttention.cpp, elementwise math and
// reductions in ModelBuilderMath.cpp, slicing in ModelBuilderSlice.cpp.
//
//===----------------------------------------------------------------------===//
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

LogicalResult mlir::tfm::checkShapeLimits(ArrayRef<Dim> shape, Location loc,
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

namespace {
StringRef dtypeName(Type t) { return TensorSpecAttr::dtypeName(t); }

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
  if (!isa<FloatType>(elementType))
    return emitError(loc) << "cache '" << name << "' must hold floats";
  if (cacheElementType)
    elementType = cacheElementType;
  FailureOr<Tensor> t = input(name, elementType, shape, loc);
  if (failed(t))
    return failure();
  if (llvm::is_contained(shape, Dim::of(0)))
    return emitError(loc) << "cache '" << name << "' " << formatShape(shape)
                          << " has a dimension of size 0: it could hold "
                             "nothing";
  // The entry points take it like an input, flagged as written in place.
  auto entry = cast<TensorSpecAttr>(inputSignature.back());
  inputSignature.back() =
      TensorSpecAttr::get(builder.getContext(), entry.getName(),
                          entry.getElementType(), entry.getShape(), true);
  caches.push_back({name.str(), t->value, t->value, Value(), {}});
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
  // The capacity (dimension rank - 2) may be a named dimension: the caller
  // then sizes the cache at run time, as it does the batch.
  int64_t dim = view.rank() - 2;
  if (rows.rank() != view.rank() || !isa<FloatType>(rows.elementType()))
    return emitError(loc) << "cache_append: rows " << formatShape(rows.shape)
                          << " " << rows.elementType()
                          << " must be floats of the rank of the cache view "
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
  // A bf16/f16 cache of f32 rows (--kv-cache-dtype): the rows are rounded
  // to nearest even where they are computed, as torch's .to() does, and
  // the cache holds only the rounded values.
  FailureOr<Tensor> stored = castTo(rows, view.elementType(), loc);
  if (failed(stored))
    return failure();
  flushCacheAppend(*state);
  Value target = state->current;
  if (!whole && slice.getSource() == state->current) {
    target = slice;
  } else if (!whole) {
    target = tensor::ExtractSliceOp::create(
        builder, loc, slice.getType(), state->current, slice.getMixedOffsets(),
        slice.getMixedSizes(), slice.getMixedStrides());
  }
  std::string message =
      "cache '" + state->name + "': a sequence's offset + " +
      "new tokens exceeds its capacity " +
      (view.shape[dim].isSymbolic() ? "'" + view.shape[dim].symbol + "'"
                                    : std::to_string(view.shape[dim].size));
  int32_t code = statusCode(3, message);
  auto append = CacheAppendOp::create(
      builder, loc, target.getType(), builder.getI32Type(), stored->value,
      offset.value, target, builder.getI64IntegerAttr(dim),
      builder.getI32IntegerAttr(code));
  addStatus(append.getStatus(), code, std::move(message));
  if (whole) {
    state->current = append.getResult();
  } else {
    state->pendingSlice = append.getResult();
    state->pendingAt = slice;
  }
  return Tensor{append.getResult(), view.shape};
}

void ModelBuilder::flushCacheAppend(CacheState &state) {
  if (!state.pendingSlice)
    return;
  tensor::ExtractSliceOp at = state.pendingAt;
  state.current = tensor::InsertSliceOp::create(
                      builder, state.pendingSlice.getLoc(), state.pendingSlice,
                      state.current, at.getMixedOffsets(), at.getMixedSizes(),
                      at.getMixedStrides())
                      .getResult();
  state.pendingSlice = Value();
  state.pendingAt = tensor::ExtractSliceOp();
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
  if (name.empty())
    return emitError(loc) << "a weight's name must not be empty";
  auto cached = weightCache.find(name);
  if (cached != weightCache.end())
    return cached->second;
  std::optional<WeightShapes::Info> info =
      weights ? weights->lookup(getContext(), name) : std::nullopt;
  if (!info)
    return emitError(loc) << "unknown weight '" << name
                          << "' (not in the weights file, and not declared "
                             "with 'param')";
  if (!info->unsupported.empty())
    return emitError(loc) << "weight '" << name << "' " << info->unsupported;
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
  for (CacheState &c : caches) {
    flushCacheAppend(c);
    results.push_back(c.current);
  }
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
  if (!mismatch) {
    // Two shapes within the limits can broadcast far beyond them
    // ([2^40, 1] and [1, 2^40]).
    if (failed(checkShapeLimits(result, loc, "the result of " + what)))
      return failure();
    return result;
  }
  size_t rank = std::max(a.size(), b.size());
  auto at = [&](ArrayRef<Dim> s) {
    size_t lead = rank - s.size();
    return *mismatch < lead ? Dim::of(1) : s[*mismatch - lead];
  };
  return emitError(loc) << what << ": shapes " << formatShape(a) << " and "
                        << formatShape(b) << " do not broadcast ("
                        << at(a).str() << " vs " << at(b).str() << ")";
}

FailureOr<Tensor> ModelBuilder::matmul(const Tensor &lhs, const Tensor &rhs,
                                       Location loc) {
  if (lhs.rank() < 2 || rhs.rank() < 2)
    return emitError(loc) << "matmul needs operands of rank 2 or more, got "
                          << formatShape(lhs.shape) << " @ "
                          << formatShape(rhs.shape);
  if (!lhs.sameElementType(rhs) || !isa<FloatType>(lhs.elementType()))
    return emitError(loc) << "matmul operands must have the same float type, "
                             "got "
                          << lhs.elementType() << " and " << rhs.elementType()
                          << " (cast one of them)";
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
    if (t.rank() != int64_t(shape.size()) || !t.sameElementType(inputs.front()))
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
  if (!maskElement.isInteger(1) && !maskElement.isInteger(8) &&
      !maskElement.isInteger(32) && !maskElement.isInteger(64))
    return emitError(loc) << "masked_fill: the mask must be i1, i8, i32 or "
                             "i64 (nonzero = fill), got "
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
