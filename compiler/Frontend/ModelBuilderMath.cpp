//===- ModelBuilderMath.cpp - Elementwise, reduction and shape builders ---===//
//
// The tensor arithmetic of the language: broadcasting elementwise ops,
// comparisons, where, casts, reductions, reshapes and permutations. Shapes
// are checked on named dimensions (ShapeRules.h) before any op is built.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/ModelBuilder.h"
#include "dialects/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <sstream>

using namespace mlir;
using namespace mlir::tfm;

namespace {
StringRef spelling(BinaryFn fn) {
  switch (fn) {
  case BinaryFn::sub:
    return "'-'";
  case BinaryFn::mul:
    return "'*'";
  case BinaryFn::div:
    return "'/'";
  case BinaryFn::maximum:
    return "maximum";
  case BinaryFn::minimum:
    return "minimum";
  case BinaryFn::pow:
    return "pow";
  case BinaryFn::logicalAnd:
    return "'&'";
  case BinaryFn::logicalOr:
    return "'|'";
  }
  llvm_unreachable("unknown binary function");
}

bool isBool(Type t) { return t.isInteger(1); }

/// A reshape's dims as a product: a static factor times named dims. Named
/// dims that a reshape derived are products themselves ("4*seq"), written
/// as their factors joined by '*', so that reshaping back finds the names.
struct Product {
  int64_t factor = 1;
  SmallVector<std::string> names;
  /// The static factor overflowed int64_t: sizes each within kMaxDimension
  /// can still multiply past it ((2^32+1)(2^32-1)... wraps to 1).
  bool overflowed = false;
  void multiply(const Dim &d) {
    if (!d.isSymbolic()) {
      multiplyFactor(d.size);
      return;
    }
    for (StringRef part : llvm::split(d.symbol, '*')) {
      int64_t n;
      if (!part.getAsInteger(10, n))
        multiplyFactor(n);
      else
        names.push_back(part.str());
    }
  }
  void multiplyFactor(int64_t n) {
    overflowed |= llvm::MulOverflow(factor, n, factor);
  }
  /// Removes `other`'s names from this one; false if one is missing.
  bool remove(ArrayRef<std::string> other) {
    for (const std::string &n : other) {
      auto it = llvm::find(names, n);
      if (it == names.end())
        return false;
      names.erase(it);
    }
    return true;
  }
  Dim dim() const {
    if (names.empty())
      return Dim::of(factor);
    SmallVector<std::string> parts(names);
    llvm::sort(parts);
    if (factor != 1)
      parts.insert(parts.begin(), std::to_string(factor));
    return Dim::named(llvm::join(parts, "*"));
  }
};
} // namespace

FailureOr<Tensor> ModelBuilder::constant(double value, Type elementType,
                                         Location loc) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute attr;
  if (isa<FloatType>(elementType)) {
    attr = builder.getFloatAttr(elementType, value);
  } else {
    if (value != std::trunc(value) || !std::isfinite(value)) {
      std::ostringstream text; // As written: 0.5, not 5.000000e-01.
      text << value;
      return emitError(loc)
             << "the number " << text.str() << " is not an " << elementType
             << " (cast the tensor to a float "
                "type first)";
    }
    // Checked before converting: a double outside int64_t's range makes the
    // conversion undefined, and an i8 or i32 would wrap. i64 takes what a
    // double holds exactly, a bool 0 and 1.
    unsigned width = elementType.getIntOrFloatBitWidth();
    double high = width == 1    ? 1.0
                  : width >= 54 ? 9007199254740992.0
                                : std::ldexp(1.0, int(width) - 1) - 1;
    double low = width == 1    ? 0.0
                 : width >= 54 ? -high
                               : -std::ldexp(1.0, int(width) - 1);
    if (value > high || value < low) {
      std::ostringstream text;
      text << value;
      return emitError(loc) << "the number " << text.str()
                            << " does not fit in " << elementType;
    }
    attr = builder.getIntegerAttr(elementType, int64_t(value));
  }
  Value v = arith::ConstantOp::create(builder, loc,
                                      DenseElementsAttr::get(type, attr));
  return Tensor{v, {}};
}

FailureOr<Shape> ModelBuilder::broadcastAll(ArrayRef<const Tensor *> operands,
                                            Location loc, StringRef what) {
  Shape shape;
  for (const Tensor *t : operands) {
    FailureOr<Shape> next = broadcast(shape, t->shape, loc, what);
    if (failed(next))
      return failure();
    shape = *next;
  }
  return shape;
}

FailureOr<Tensor> ModelBuilder::binary(BinaryFn fn, const Tensor &lhs,
                                       const Tensor &rhs, Location loc) {
  StringRef what = spelling(fn);
  Type type = lhs.elementType();
  if (rhs.elementType() != type)
    return emitError(loc) << what << " needs two tensors of one element type, "
                          << "got " << type << " and " << rhs.elementType()
                          << " (cast one of them)";
  bool logical = fn == BinaryFn::logicalAnd || fn == BinaryFn::logicalOr;
  if (logical != isBool(type))
    return emitError(loc) << what << " needs " << (logical ? "bool" : "numeric")
                          << " tensors, got " << type;
  if ((fn == BinaryFn::div || fn == BinaryFn::pow) && !isa<FloatType>(type))
    return emitError(loc) << what << " needs float tensors, got " << type
                          << " (cast them first)";
  FailureOr<Shape> shape = broadcastAll({&lhs, &rhs}, loc, what);
  if (failed(shape))
    return failure();
  // The ops infer their result types from the shared broadcast rule, which
  // the named shape above satisfies (it is the stricter of the two).
  Value a = lhs.value, b = rhs.value, v;
  switch (fn) {
  case BinaryFn::sub:
    v = SubOp::create(builder, loc, a, b);
    break;
  case BinaryFn::mul:
    v = MulOp::create(builder, loc, a, b);
    break;
  case BinaryFn::div:
    v = DivOp::create(builder, loc, a, b);
    break;
  case BinaryFn::maximum:
    v = MaximumOp::create(builder, loc, a, b);
    break;
  case BinaryFn::minimum:
    v = MinimumOp::create(builder, loc, a, b);
    break;
  case BinaryFn::pow:
    v = PowOp::create(builder, loc, a, b);
    break;
  case BinaryFn::logicalAnd:
    v = LogicalAndOp::create(builder, loc, a, b);
    break;
  case BinaryFn::logicalOr:
    v = LogicalOrOp::create(builder, loc, a, b);
    break;
  }
  return Tensor{v, *shape};
}

FailureOr<Tensor> ModelBuilder::unary(UnaryFn fn, const Tensor &x,
                                      Location loc) {
  Type type = x.elementType();
  Value in = x.value, v;
  auto make = [&](auto op) {
    v = decltype(op)::create(builder, loc, in.getType(), in);
  };
  bool floatOnly =
      fn != UnaryFn::neg && fn != UnaryFn::abs && fn != UnaryFn::logicalNot;
  if (fn == UnaryFn::logicalNot
          ? !isBool(type)
          : (isBool(type) || (floatOnly && !isa<FloatType>(type))))
    return emitError(loc) << "this function needs "
                          << (fn == UnaryFn::logicalNot ? "a bool"
                              : floatOnly               ? "a float"
                                                        : "a numeric")
                          << " tensor, got " << type;
  switch (fn) {
  case UnaryFn::exp:
    make(ExpOp());
    break;
  case UnaryFn::log:
    make(LogOp());
    break;
  case UnaryFn::sqrt:
    make(SqrtOp());
    break;
  case UnaryFn::rsqrt:
    make(RsqrtOp());
    break;
  case UnaryFn::tanh:
    make(TanhOp());
    break;
  case UnaryFn::erf:
    make(ErfOp());
    break;
  case UnaryFn::sin:
    make(SinOp());
    break;
  case UnaryFn::cos:
    make(CosOp());
    break;
  case UnaryFn::neg:
    make(NegOp());
    break;
  case UnaryFn::abs:
    make(AbsOp());
    break;
  case UnaryFn::logicalNot:
    make(LogicalNotOp());
    break;
  }
  return Tensor{v, x.shape};
}

FailureOr<Tensor> ModelBuilder::compare(ComparePredicate fn, const Tensor &lhs,
                                        const Tensor &rhs, Location loc) {
  if (lhs.elementType() != rhs.elementType())
    return emitError(loc) << "comparison of " << lhs.elementType() << " and "
                          << rhs.elementType() << " tensors (cast one of them)";
  FailureOr<Shape> shape = broadcastAll({&lhs, &rhs}, loc, "comparison");
  if (failed(shape))
    return failure();
  Value v = CompareOp::create(builder, loc, lhs.value, rhs.value, fn);
  return Tensor{v, *shape};
}

FailureOr<Tensor> ModelBuilder::where(const Tensor &condition,
                                      const Tensor &lhs, const Tensor &rhs,
                                      Location loc) {
  if (!isBool(condition.elementType()))
    return emitError(loc) << "where: the condition must be bool, got "
                          << condition.elementType()
                          << " (compare it, e.g. 'mask == 0')";
  if (lhs.elementType() != rhs.elementType())
    return emitError(loc) << "where: the choices are " << lhs.elementType()
                          << " and " << rhs.elementType()
                          << "; they need one element type";
  FailureOr<Shape> shape = broadcastAll({&condition, &lhs, &rhs}, loc, "where");
  if (failed(shape))
    return failure();
  Value v =
      WhereOp::create(builder, loc, condition.value, lhs.value, rhs.value);
  return Tensor{v, *shape};
}

FailureOr<Tensor>
ModelBuilder::computeIn(Type type, const Tensor &x, Location loc,
                        function_ref<FailureOr<Tensor>(const Tensor &)> build) {
  FailureOr<Tensor> wide = castTo(x, type, loc);
  if (failed(wide))
    return failure();
  FailureOr<Tensor> result = build(*wide);
  if (failed(result))
    return failure();
  return castTo(*result, x.elementType(), loc);
}

FailureOr<Tensor> ModelBuilder::castTo(const Tensor &x, Type elementType,
                                       Location loc) {
  if (x.elementType() == elementType)
    return x;
  Value v = CastOp::create(builder, loc, typeOf(x.shape, elementType), x.value);
  return Tensor{v, x.shape};
}

FailureOr<Tensor> ModelBuilder::reduce(ReduceKind fn, const Tensor &x,
                                       ArrayRef<int64_t> dims, bool keepdim,
                                       Location loc) {
  StringRef name = stringifyReduceKind(fn);
  Type type = x.elementType();
  if (isBool(type) || (fn == ReduceKind::mean && !isa<FloatType>(type)))
    return emitError(loc) << name << " needs a "
                          << (fn == ReduceKind::mean ? "float" : "numeric")
                          << " tensor, got " << type;
  // torch.sum of int8 is int64: the bytes would overflow at once.
  if (fn == ReduceKind::sum && type.isInteger(8)) {
    FailureOr<Tensor> wide = castTo(x, builder.getI64Type(), loc);
    if (failed(wide))
      return failure();
    return reduce(fn, *wide, dims, keepdim, loc);
  }
  SmallVector<int64_t> normalized;
  for (int64_t d : dims) {
    FailureOr<int64_t> n = normalizeDim(x, d, loc);
    if (failed(n))
      return failure();
    if (llvm::is_contained(normalized, *n))
      return emitError(loc)
             << name << ": dimension " << d << " is listed twice";
    normalized.push_back(*n);
  }
  if (dims.empty())
    for (int64_t i = 0; i < x.rank(); ++i)
      normalized.push_back(i);
  llvm::sort(normalized);
  Shape shape;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (!llvm::is_contained(normalized, i))
      shape.push_back(x.shape[i]);
    else if (keepdim)
      shape.push_back(Dim::of(1));
  }
  Value v = ReduceOp::create(builder, loc, typeOf(shape, type), x.value,
                             ReduceKindAttr::get(builder.getContext(), fn),
                             builder.getDenseI64ArrayAttr(normalized),
                             keepdim ? builder.getUnitAttr() : UnitAttr());
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::broadcastTo(const Tensor &x,
                                            ArrayRef<Dim> shape, Location loc) {
  assert(int64_t(shape.size()) == x.rank() && "broadcast keeps the rank");
  SmallVector<AffineExpr> reads;
  SmallVector<Value> sizes;
  for (auto [d, target] : llvm::enumerate(shape)) {
    bool stretched = x.shape[d] == Dim::of(1) && target != Dim::of(1);
    if (!stretched && x.shape[d] != target)
      return emitError(loc) << "cannot broadcast " << formatShape(x.shape)
                            << " to " << formatShape(shape);
    reads.push_back(stretched ? getAffineConstantExpr(0, getContext())
                              : getAffineDimExpr(d, getContext()));
    if (target.isSymbolic()) {
      FailureOr<Value> size = sizeOf(target, x, loc);
      if (failed(size))
        return failure();
      sizes.push_back(*size);
    }
  }
  RankedTensorType type = typeOf(shape, x.elementType());
  Value empty = tensor::EmptyOp::create(builder, loc, type, sizes);
  unsigned rank = shape.size();
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, reads, getContext()),
      AffineMap::getMultiDimIdentityMap(rank, getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Value v = linalg::GenericOp::create(
                builder, loc, TypeRange{type}, ValueRange{x.value},
                ValueRange{empty}, maps, iterators,
                [](OpBuilder &b, Location l, ValueRange args) {
                  linalg::YieldOp::create(b, l, args[0]);
                })
                .getResult(0);
  return Tensor{v, Shape(shape)};
}

FailureOr<Value> ModelBuilder::sizeOf(const Dim &d, const Tensor &x,
                                      Location loc) {
  if (!d.isSymbolic())
    return Value(arith::ConstantIndexOp::create(builder, loc, d.size));
  for (auto [i, xd] : llvm::enumerate(x.shape))
    if (xd == d)
      return Value(tensor::DimOp::create(builder, loc, x.value, i));
  auto source = symbolSources.find(d.symbol);
  if (source != symbolSources.end())
    return Value(tensor::DimOp::create(builder, loc, source->second.first,
                                       source->second.second));
  // A product a reshape derived: multiply its factors' sizes.
  Product p;
  p.multiply(d);
  if (p.names.size() == 1 && p.names[0] == d.symbol)
    return emitError(loc) << "no input declares the dimension '" << d.symbol
                          << "'";
  Value size = arith::ConstantIndexOp::create(builder, loc, p.factor);
  for (const std::string &name : p.names) {
    FailureOr<Value> factor = sizeOf(Dim::named(name), x, loc);
    if (failed(factor))
      return failure();
    size = arith::MulIOp::create(builder, loc, size, *factor);
  }
  return size;
}

FailureOr<Tensor> ModelBuilder::reshape(const Tensor &x, ArrayRef<Dim> target,
                                        Location loc) {
  auto fail = [&](StringRef why) {
    return emitError(loc) << "reshape: " << formatShape(x.shape)
                          << " cannot become " << formatShape(target) << ": "
                          << why;
  };
  Product in, out;
  for (const Dim &d : x.shape)
    in.multiply(d);
  std::optional<size_t> inferred;
  for (auto [i, d] : llvm::enumerate(target)) {
    if (!d.isSymbolic() && d.size == -1) {
      if (inferred)
        return fail("only one dimension can be -1");
      inferred = i;
      continue;
    }
    if (!d.isSymbolic() && d.size < 0)
      return fail("sizes are non-negative or -1");
    out.multiply(d);
  }
  if (in.overflowed || out.overflowed || out.factor > kMaxElements)
    return fail("the target has more than 2^40 elements");
  Product rest = in;
  if (!rest.remove(out.names))
    return fail("the named dimensions do not match the input's");
  Shape shape(target);
  if (inferred) {
    if (out.factor == 0 || rest.factor % out.factor != 0)
      return fail("the element count does not divide into the other sizes");
    rest.factor /= out.factor;
    shape[*inferred] = rest.factor == 0 ? Dim::of(0) : rest.dim();
  } else if (!rest.names.empty() || rest.factor != out.factor) {
    return fail("the element counts differ");
  }
  if (failed(checkShapeLimits(shape, loc, "the result of reshape")))
    return failure();
  // The dynamic sizes: named dims and the inferred one, read at run time.
  SmallVector<Value> sizes;
  for (const Dim &d : shape) {
    if (!d.isSymbolic())
      continue;
    FailureOr<Value> size = sizeOf(d, x, loc);
    if (failed(size))
      return failure();
    sizes.push_back(*size);
  }
  Value v = ReshapeOp::create(builder, loc, typeOf(shape, x.elementType()),
                              x.value, sizes);
  return Tensor{v, shape};
}

FailureOr<Tensor> ModelBuilder::unsqueeze(const Tensor &x, int64_t dim,
                                          Location loc) {
  // Valid positions run to the rank inclusive, as in torch.unsqueeze.
  int64_t rank = x.rank() + 1;
  int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank)
    return emitError(loc) << "unsqueeze: dimension " << dim
                          << " is out of range for " << formatShape(x.shape);
  Shape shape = x.shape;
  shape.insert(shape.begin() + d, Dim::of(1));
  return reshape(x, shape, loc);
}

FailureOr<Tensor> ModelBuilder::squeeze(const Tensor &x, ArrayRef<int64_t> dims,
                                        Location loc) {
  SmallVector<int64_t> drop;
  for (int64_t dim : dims) {
    FailureOr<int64_t> d = normalizeDim(x, dim, loc);
    if (failed(d))
      return failure();
    if (x.shape[*d] != Dim::of(1))
      return emitError(loc) << "squeeze: dimension " << dim << " of "
                            << formatShape(x.shape) << " is not 1";
    drop.push_back(*d);
  }
  Shape shape;
  for (auto [i, d] : llvm::enumerate(x.shape))
    if (dims.empty() ? d != Dim::of(1) : !llvm::is_contained(drop, int64_t(i)))
      shape.push_back(d);
  return reshape(x, shape, loc);
}

FailureOr<Tensor> ModelBuilder::permute(const Tensor &x,
                                        ArrayRef<int64_t> permutation,
                                        Location loc) {
  if (int64_t(permutation.size()) != x.rank())
    return emitError(loc) << "permute: " << permutation.size()
                          << " dimensions given for " << formatShape(x.shape);
  SmallVector<int64_t> normalized;
  Shape shape;
  for (int64_t p : permutation) {
    FailureOr<int64_t> d = normalizeDim(x, p, loc);
    if (failed(d))
      return failure();
    if (llvm::is_contained(normalized, *d))
      return emitError(loc) << "permute: dimension " << p << " appears twice";
    normalized.push_back(*d);
    shape.push_back(x.shape[*d]);
  }
  Value v =
      PermuteOp::create(builder, loc, typeOf(shape, x.elementType()), x.value,
                        builder.getDenseI64ArrayAttr(normalized));
  return Tensor{v, shape};
}
