//===- Builtins.h - The functions a .tfm expression can call ----*- C++ -*-===//
//
// Every function of the language is one row of a table: its name, its
// parameters (kind, how they may be passed, default) and the ModelBuilder
// call that implements it. The parser only collects a call's arguments; the
// table binds them to parameters, converts them to what each parameter's
// kind says and reports mistakes at the argument that made them, so a new
// function is a row and, at most, a small function.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_FRONTEND_BUILTINS_H
#define TFM_COMPILER_FRONTEND_BUILTINS_H

#include "compiler/Frontend/ModelBuilder.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SMLoc.h"

#include <string>
#include <vector>

namespace mlir::tfm {

/// The value of an expression: a tensor, a number, a string, a boolean, the
/// several tensors of a call that returns more than one, a `[...]` list, an
/// element type (`f32`) or, inside a list, a named dimension (`seq`).
struct ExprValue {
  enum Kind { tensor, number, string, boolean, tuple, list, dtype, dim };
  Kind kind = number;
  Tensor t;
  /// The tensors of a call that returns several (`y, w = ...`).
  std::vector<Tensor> items;
  /// The elements of a list.
  std::vector<ExprValue> elements;
  double num = 0;
  bool isInteger = false;
  /// A string's text, or a named dimension's name.
  std::string str;
  bool flag = false;
  Type type;
  llvm::SMLoc loc;
};

/// What a parameter accepts.
enum class ParamKind {
  /// A tensor, or a string naming a weight.
  tensor,
  /// Every remaining positional argument, each a tensor (concat's inputs).
  tensors,
  number,
  /// An integer within 2^53 in magnitude.
  integer,
  /// An integer or a list of integers (`dim = -1`, `dim = [0, 2]`).
  integers,
  boolean,
  string,
  /// An element type: `f32`, `f64`, `bf16`, `f16`, `i8`, `i32`, `i64`, `bool`.
  dtype,
  /// Whatever was written; the builtin checks it.
  any,
};

/// How a parameter may be given.
enum class Passing { positionalOrKeyword, positionalOnly, keywordOnly };

/// One parameter. Parameters that may be given by position come first, in
/// their order; a parameter without a default and not `optional` is
/// required.
struct Param {
  Param(StringRef name, ParamKind kind,
        Passing passing = Passing::positionalOrKeyword, bool optional = false,
        std::optional<double> defaultNumber = std::nullopt,
        std::optional<StringRef> defaultString = std::nullopt)
      : name(name), kind(kind), passing(passing), optional(optional),
        defaultNumber(defaultNumber), defaultString(defaultString) {}
  StringRef name;
  ParamKind kind;
  Passing passing;
  bool optional;
  /// The default of a number, integer or boolean parameter.
  std::optional<double> defaultNumber;
  /// The default of a string parameter.
  std::optional<StringRef> defaultString;
};

class BoundCall;

/// A function of the language.
struct Builtin {
  StringRef name;
  std::vector<Param> params;
  FailureOr<ExprValue> (*build)(BoundCall &call);
};

/// The builtin called `name`, or null.
const Builtin *lookupBuiltin(StringRef name);

/// The arguments of a call as written: positional ones in order, keywords
/// by name.
struct CallArguments {
  SmallVector<ExprValue, 4> positional;
  llvm::StringMap<ExprValue> keywords;
};

/// A call whose arguments have been bound to the builtin's parameters and
/// converted to their kinds. Accessors take the parameter's name; asking for
/// a parameter the builtin does not declare is a programming error.
class BoundCall {
public:
  BoundCall(const Builtin &fn, ModelBuilder &builder, llvm::SMLoc nameLoc,
            function_ref<Location(llvm::SMLoc)> locOf);

  /// Binds and converts `args`; reports the first mistake.
  LogicalResult bind(CallArguments &args);

  ModelBuilder &builder;
  /// The call's location (its name), for builder calls and errors.
  Location loc;

  bool has(StringRef param) const;
  const Tensor &tensor(StringRef param) const;
  std::optional<Tensor> optionalTensor(StringRef param) const;
  ArrayRef<Tensor> tensors(StringRef param) const;
  double number(StringRef param) const;
  std::optional<double> optionalNumber(StringRef param) const;
  int64_t integer(StringRef param) const;
  ArrayRef<int64_t> integers(StringRef param) const;
  bool flag(StringRef param) const;
  std::string string(StringRef param) const;
  std::optional<std::string> optionalString(StringRef param) const;
  Type dtype(StringRef param) const;
  /// The argument as written (null if not given).
  const ExprValue *value(StringRef param) const;
  /// Converts an argument of kind `any` to a tensor, for builtins that
  /// look at other arguments first.
  FailureOr<Tensor> convertTensor(StringRef param);

  /// An error at the call's name, or at the argument given for `param`.
  InFlightDiagnostic error() const;
  InFlightDiagnostic errorAt(StringRef param) const;

  /// Wraps a builder result as the call's value.
  FailureOr<ExprValue> result(FailureOr<Tensor> t) const;
  /// Several tensors, for `a, b, ... = f(...)`.
  FailureOr<ExprValue> results(std::vector<Tensor> ts) const;

  StringRef name() const { return fn.name; }
  Location locOf(llvm::SMLoc l) const { return locOfFn(l); }
  llvm::SMLoc nameLocation() const { return nameLoc; }

private:
  /// One parameter's argument after conversion.
  struct Bound {
    const ExprValue *given = nullptr;
    Tensor t;
    std::vector<Tensor> tensors;
    SmallVector<int64_t> ints;
    double num = 0;
    bool flag = false;
    std::string str;
    Type type;
  };
  size_t indexOf(StringRef param) const;
  LogicalResult convert(const Param &p, const ExprValue *v, Bound &out);
  LogicalResult convertInteger(const ExprValue &v, StringRef param,
                               int64_t &out);

  const Builtin &fn;
  llvm::SMLoc nameLoc;
  function_ref<Location(llvm::SMLoc)> locOfFn;
  std::vector<Bound> bound;
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_FRONTEND_BUILTINS_H
