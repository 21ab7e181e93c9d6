//===- BoundCall.cpp - Bind a call's arguments to a builtin's parameters --===//
//
// Arity, unknown and repeated keywords, missing arguments and the kind of
// each argument are checked here, once for every builtin, so that the same
// mistake gets the same message whichever function it is made in.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Builtins.h"

#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

/// The largest magnitude of an integer argument: 2^53, the last integer a
/// double holds exactly.
static constexpr double kMaxIntegerArgument = 9007199254740992.0;

BoundCall::BoundCall(const Builtin &fn, ModelBuilder &builder,
                     llvm::SMLoc nameLoc,
                     function_ref<Location(llvm::SMLoc)> locOf)
    : builder(builder), loc(locOf(nameLoc)), fn(fn), nameLoc(nameLoc),
      locOfFn(locOf), bound(fn.params.size()) {}

LogicalResult BoundCall::bind(CallArguments &args) {
  size_t maxPositional = 0;
  bool variadic = false;
  for (const Param &p : fn.params) {
    if (p.passing != Passing::keywordOnly)
      ++maxPositional;
    variadic |= p.kind == ParamKind::tensors;
  }
  if (!variadic && args.positional.size() > maxPositional)
    return emitError(locOf(args.positional[maxPositional].loc))
           << fn.name << "() takes at most " << maxPositional
           << " positional arguments";
  for (auto &kv : args.keywords) {
    auto it = llvm::find_if(fn.params, [&](const Param &p) {
      return p.name == kv.getKey() && p.passing != Passing::positionalOnly;
    });
    if (it == fn.params.end())
      return emitError(locOf(kv.getValue().loc))
             << fn.name << "() has no argument '" << kv.getKey() << "'";
    size_t index = it - fn.params.begin();
    if (it->passing != Passing::keywordOnly && index < args.positional.size())
      return emitError(locOf(kv.getValue().loc))
             << fn.name << "(): '" << kv.getKey()
             << "' is given by position and by keyword";
  }
  size_t position = 0;
  for (auto [p, b] : llvm::zip(fn.params, bound)) {
    const ExprValue *v = nullptr;
    if (p.kind == ParamKind::tensors) {
      for (; position < args.positional.size(); ++position) {
        Bound item;
        if (failed(convert({p.name, ParamKind::tensor},
                           &args.positional[position], item)))
          return failure();
        b.tensors.push_back(item.t);
      }
      continue;
    }
    if (p.passing != Passing::keywordOnly && position < args.positional.size())
      v = &args.positional[position];
    if (p.passing != Passing::keywordOnly)
      ++position;
    if (!v) {
      auto it = args.keywords.find(p.name);
      if (it != args.keywords.end())
        v = &it->second;
    }
    if (failed(convert(p, v, b)))
      return failure();
  }
  return success();
}

LogicalResult BoundCall::convertInteger(const ExprValue &v, StringRef param,
                                        int64_t &out) {
  if (v.kind != ExprValue::number || !v.isInteger)
    return emitError(locOf(v.loc))
           << fn.name << "(): '" << param << "' must be an integer";
  // Converting a double outside int64_t's range is undefined behavior;
  // integers past 2^53 are not even exact in the double they were read
  // into. No dimension, count or index comes anywhere near.
  if (!(std::fabs(v.num) <= kMaxIntegerArgument))
    return emitError(locOf(v.loc)) << fn.name << "(): '" << param
                                   << "' is out of range (at most 2^53 in "
                                      "magnitude)";
  out = int64_t(v.num);
  return success();
}

LogicalResult BoundCall::convert(const Param &p, const ExprValue *v,
                                 Bound &out) {
  out.given = v;
  if (!v) {
    if (p.optional || p.defaultString || p.kind == ParamKind::tensors) {
      if (p.defaultString)
        out.str = p.defaultString->str();
      return success();
    }
    if (p.defaultNumber) {
      out.num = *p.defaultNumber;
      out.flag = *p.defaultNumber != 0;
      if (p.kind == ParamKind::integer || p.kind == ParamKind::integers)
        out.ints.push_back(int64_t(*p.defaultNumber));
      return success();
    }
    return emitError(loc) << fn.name << "() needs the "
                          << (p.kind == ParamKind::tensor ? "tensor " : "")
                          << "argument '" << p.name << "'";
  }
  auto mistake = [&](StringRef what) {
    return emitError(locOf(v->loc))
           << fn.name << "(): '" << p.name << "' " << what;
  };
  switch (p.kind) {
  case ParamKind::tensor:
  case ParamKind::tensors: {
    if (v->kind == ExprValue::string) { // A weight named by its state_dict key.
      FailureOr<Tensor> w = builder.weight(v->str, locOf(v->loc));
      if (failed(w))
        return failure();
      out.t = *w;
      return success();
    }
    if (v->kind == ExprValue::tuple)
      return mistake("is a call that returns ")
             << v->items.size() << " values; name them first ('a, b = ...')";
    if (v->kind != ExprValue::tensor)
      return mistake("must be a tensor");
    out.t = v->t;
    return success();
  }
  case ParamKind::number:
    if (v->kind != ExprValue::number)
      return mistake("must be a number");
    out.num = v->num;
    return success();
  case ParamKind::integer:
    out.ints.resize(1);
    return convertInteger(*v, p.name, out.ints[0]);
  case ParamKind::integers:
    if (v->kind != ExprValue::list) {
      out.ints.resize(1);
      return convertInteger(*v, p.name, out.ints[0]);
    }
    for (const ExprValue &e : v->elements)
      if (failed(convertInteger(e, p.name, out.ints.emplace_back())))
        return failure();
    return success();
  case ParamKind::boolean:
    if (v->kind != ExprValue::boolean)
      return mistake("must be true or false");
    out.flag = v->flag;
    return success();
  case ParamKind::string:
    if (v->kind != ExprValue::string)
      return mistake("must be a string");
    out.str = v->str;
    return success();
  case ParamKind::dtype:
    if (v->kind != ExprValue::dtype)
      return mistake("must be an element type (f32, f64, bf16, f16, i8, i32, "
                     "i64, bool)");
    out.type = v->type;
    return success();
  case ParamKind::any:
    return success();
  }
  llvm_unreachable("unknown parameter kind");
}

size_t BoundCall::indexOf(StringRef param) const {
  for (auto [i, p] : llvm::enumerate(fn.params))
    if (p.name == param)
      return i;
  llvm_unreachable("the builtin has no such parameter");
}

bool BoundCall::has(StringRef param) const {
  return bound[indexOf(param)].given;
}
const Tensor &BoundCall::tensor(StringRef param) const {
  return bound[indexOf(param)].t;
}
std::optional<Tensor> BoundCall::optionalTensor(StringRef param) const {
  if (!has(param))
    return std::nullopt;
  return tensor(param);
}
ArrayRef<Tensor> BoundCall::tensors(StringRef param) const {
  return bound[indexOf(param)].tensors;
}
double BoundCall::number(StringRef param) const {
  return bound[indexOf(param)].num;
}
std::optional<double> BoundCall::optionalNumber(StringRef param) const {
  if (!has(param))
    return std::nullopt;
  return number(param);
}
int64_t BoundCall::integer(StringRef param) const {
  return bound[indexOf(param)].ints.front();
}
ArrayRef<int64_t> BoundCall::integers(StringRef param) const {
  return bound[indexOf(param)].ints;
}
bool BoundCall::flag(StringRef param) const {
  return bound[indexOf(param)].flag;
}
std::string BoundCall::string(StringRef param) const {
  return bound[indexOf(param)].str;
}
std::optional<std::string> BoundCall::optionalString(StringRef param) const {
  const Bound &b = bound[indexOf(param)];
  if (!b.given && !fn.params[indexOf(param)].defaultString)
    return std::nullopt;
  return b.str;
}
Type BoundCall::dtype(StringRef param) const {
  return bound[indexOf(param)].type;
}
const ExprValue *BoundCall::value(StringRef param) const {
  return bound[indexOf(param)].given;
}

FailureOr<Tensor> BoundCall::convertTensor(StringRef param) {
  Bound b;
  if (failed(convert({fn.params[indexOf(param)].name, ParamKind::tensor},
                     value(param), b)))
    return failure();
  return b.t;
}

InFlightDiagnostic BoundCall::error() const { return emitError(loc); }
InFlightDiagnostic BoundCall::errorAt(StringRef param) const {
  const ExprValue *v = value(param);
  return emitError(v ? locOf(v->loc) : loc);
}

FailureOr<ExprValue> BoundCall::result(FailureOr<Tensor> t) const {
  if (failed(t))
    return failure();
  ExprValue v;
  v.kind = ExprValue::tensor;
  v.t = *t;
  v.loc = nameLoc;
  return v;
}

FailureOr<ExprValue> BoundCall::results(std::vector<Tensor> ts) const {
  ExprValue v;
  v.kind = ExprValue::tuple;
  v.items = std::move(ts);
  v.loc = nameLoc;
  return v;
}
