//===- ParserExpressions.cpp - Expressions of the .tfm language ----------===//
//
// Expressions are evaluated as they are parsed, straight into ModelBuilder
// calls, so shape errors surface at the token that caused them; numbers,
// strings and booleans are folded at compile time.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontend/ParserImpl.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSwitch.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

/// Binary operators from the loosest to the tightest, as in Python:
/// comparisons, '|', '&', '+ -', '* / @'. Comparisons do not chain.
static int precedence(Token::Kind kind) {
  switch (kind) {
  case Token::less:
  case Token::less_equal:
  case Token::greater:
  case Token::greater_equal:
  case Token::equal_equal:
  case Token::not_equal:
    return 0;
  case Token::pipe:
    return 1;
  case Token::amp:
    return 2;
  case Token::plus:
  case Token::minus:
    return 3;
  case Token::star:
  case Token::slash:
  case Token::percent:
  case Token::at:
    return 4;
  default:
    return -1;
  }
}
static constexpr int kTightestBinary = 4;

FailureOr<ExprValue> Parser::parseExpr() { return parseBinary(0); }

FailureOr<ExprValue> Parser::parseBinary(int level) {
  if (level > kTightestBinary)
    return parseUnary();
  FailureOr<ExprValue> lhs = parseBinary(level + 1);
  while (succeeded(lhs) && precedence(peek().kind) == level) {
    Token op = consume();
    FailureOr<ExprValue> rhs = parseBinary(level + 1);
    if (failed(rhs))
      return failure();
    lhs = binary(op, *lhs, *rhs);
    if (level == 0 && succeeded(lhs) && precedence(peek().kind) == 0)
      return error() << "comparisons do not chain; combine them with '&'";
  }
  return lhs;
}

FailureOr<ExprValue> Parser::parseUnary() {
  // Every recursion (a parenthesis, a call's argument, a list, a unary
  // minus) passes here, so this bounds the depth of all the other frames.
  if (depth >= kMaxExpressionDepth)
    return error() << "the expression nests more than " << kMaxExpressionDepth
                   << " levels deep (parentheses, calls and unary minuses)";
  ++depth;
  llvm::scope_exit leave([&] { --depth; });
  if (!peek().is(Token::minus))
    return parsePrimary();
  Token op = consume();
  FailureOr<ExprValue> v = parseUnary();
  if (failed(v))
    return failure();
  if (v->kind == ExprValue::tensor) {
    FailureOr<Tensor> t = builder->unary(UnaryFn::neg, v->t, loc(op.loc));
    if (failed(t))
      return failure();
    v->t = *t;
  } else if (v->kind == ExprValue::number) {
    v->num = -v->num;
  } else {
    return error(op.loc) << "unary '-' applies to numbers and tensors only";
  }
  v->loc = op.loc;
  return v;
}

FailureOr<ExprValue> Parser::parsePrimary() {
  FailureOr<ExprValue> v = parseAtom();
  while (succeeded(v) && v->kind == ExprValue::tensor &&
         peek().is(Token::l_square))
    v = parseIndex(*v);
  return v;
}

FailureOr<ExprValue> Parser::parseIndex(const ExprValue &x) {
  Token open = consume(); // '['
  SmallVector<IndexItem> items;
  auto integer = [&](int64_t &out) -> LogicalResult {
    llvm::SMLoc at = peek().loc;
    FailureOr<ExprValue> v = parseExpr();
    if (failed(v))
      return failure();
    if (v->kind != ExprValue::number || !v->isInteger ||
        !(std::fabs(v->num) <= double(kMaxDimension)))
      return error(at) << "an index or slice bound must be an integer";
    out = int64_t(v->num);
    return success();
  };
  do {
    IndexItem item;
    if (consumeIf(Token::ellipsis)) {
      item.kind = IndexItem::ellipsis;
      items.push_back(item);
      continue;
    }
    int64_t first = 0;
    bool hasFirst = !peek().is(Token::colon);
    if (hasFirst && failed(integer(first)))
      return failure();
    if (!consumeIf(Token::colon)) {
      item.kind = IndexItem::single;
      item.index = first;
      items.push_back(item);
      continue;
    }
    if (hasFirst)
      item.start = first;
    if (!peek().is(Token::comma) && !peek().is(Token::r_square)) {
      int64_t stop;
      if (failed(integer(stop)))
        return failure();
      item.stop = stop;
    }
    items.push_back(item);
  } while (consumeIf(Token::comma));
  if (failed(expect(Token::r_square, "',' or ']'")))
    return failure();
  FailureOr<Tensor> t = builder->index(x.t, items, loc(open.loc));
  if (failed(t))
    return failure();
  ExprValue v = x;
  v.t = *t;
  return v;
}

FailureOr<ExprValue> Parser::parseAtom() {
  Token t = consume();
  ExprValue v;
  v.loc = t.loc;
  switch (t.kind) {
  case Token::number: {
    std::string text = t.spelling.str();
    char *end = nullptr;
    errno = 0;
    v.num = std::strtod(text.c_str(), &end);
    if (*end != '\0')
      return error(t.loc) << "malformed number '" << t.spelling << "'";
    if (errno == ERANGE && std::isinf(v.num))
      return error(t.loc) << "the number " << t.spelling
                          << " is too large (write inf for infinity)";
    v.isInteger = text.find_first_of(".eE") == std::string::npos;
    return v;
  }
  case Token::string: {
    FailureOr<std::string> text = interpolate(t);
    if (failed(text))
      return failure();
    v.kind = ExprValue::string;
    v.str = std::move(*text);
    return v;
  }
  case Token::l_paren: {
    FailureOr<ExprValue> inner = parseExpr();
    if (failed(inner) || failed(expect(Token::r_paren, "')'")))
      return failure();
    return inner;
  }
  case Token::l_square:
    return parseList(t);
  case Token::identifier:
    if (peek().is(Token::l_paren))
      return parseCall(t);
    return parseName(t);
  default:
    return error(t.loc) << "expected an expression" << describe(t);
  }
}

FailureOr<ExprValue> Parser::parseName(const Token &t) {
  ExprValue v;
  v.loc = t.loc;
  StringRef name = t.spelling;
  if (name == "true" || name == "false") {
    v.kind = ExprValue::boolean;
    v.flag = name == "true";
    return v;
  }
  if (name == "inf") { // `-inf` is unary minus applied to it.
    v.num = std::numeric_limits<double>::infinity();
    return v;
  }
  auto it = frame().values.find(name);
  if (it != frame().values.end()) {
    v = it->second;
    v.loc = t.loc;
    return v;
  }
  if (Type type = dtypeOf(name)) {
    v.kind = ExprValue::dtype;
    v.type = type;
    return v;
  }
  // A dimension's name stands for its size (reshape targets, arange).
  if (dimNames.contains(name)) {
    v.kind = ExprValue::dim;
    v.str = name.str();
    return v;
  }
  if (frame().function && frames.front()->values.count(name))
    return error(t.loc) << "unknown value '" << name << "' in function '"
                        << frame().function->name.spelling
                        << "': a function sees its parameters and its own "
                           "names; pass '"
                        << name << "' as an argument";
  return error(t.loc) << "unknown value '" << name << "'";
}

FailureOr<ExprValue> Parser::parseList(const Token &open) {
  ExprValue list;
  list.kind = ExprValue::list;
  list.loc = open.loc;
  if (consumeIf(Token::r_square))
    return list;
  do {
    FailureOr<ExprValue> v = parseExpr();
    if (failed(v))
      return failure();
    list.elements.push_back(std::move(*v));
  } while (consumeIf(Token::comma));
  if (failed(expect(Token::r_square, "',' or ']'")))
    return failure();
  return list;
}

Type Parser::dtypeOf(StringRef name) const {
  return llvm::StringSwitch<Type>(name)
      .Case("f32", Float32Type::get(ctx))
      .Case("f64", Float64Type::get(ctx))
      .Case("i64", IntegerType::get(ctx, 64))
      .Case("i32", IntegerType::get(ctx, 32))
      .Case("bool", IntegerType::get(ctx, 1))
      .Case("bf16", BFloat16Type::get(ctx))
      .Case("f16", Float16Type::get(ctx))
      .Case("i8", IntegerType::get(ctx, 8))
      .Default(Type());
}

/// Both sides are numbers (or booleans for '&' and '|'): the result is
/// known now.
FailureOr<ExprValue> Parser::foldConstants(const Token &op,
                                           const ExprValue &lhs,
                                           const ExprValue &rhs) {
  ExprValue result;
  result.loc = lhs.loc;
  double a = lhs.num, b = rhs.num;
  if (op.is(Token::amp) || op.is(Token::pipe)) {
    if (lhs.kind != ExprValue::boolean || rhs.kind != ExprValue::boolean)
      return error(op.loc) << "'" << op.spelling
                           << "' combines bool tensors or true/false";
    result.kind = ExprValue::boolean;
    result.flag =
        op.is(Token::amp) ? lhs.flag && rhs.flag : lhs.flag || rhs.flag;
    return result;
  }
  if (precedence(op.kind) == 0) {
    result.kind = ExprValue::boolean;
    result.flag = llvm::StringSwitch<bool>(op.spelling)
                      .Case("<", a < b)
                      .Case("<=", a <= b)
                      .Case(">", a > b)
                      .Case(">=", a >= b)
                      .Case("==", a == b)
                      .Default(a != b);
    return result;
  }
  switch (op.kind) {
  case Token::plus:
    result.num = a + b;
    break;
  case Token::minus:
    result.num = a - b;
    break;
  case Token::star:
    result.num = a * b;
    break;
  case Token::slash:
    if (b == 0)
      return error(op.loc) << "division by zero";
    result.num = a / b;
    break;
  case Token::percent:
    // Python's %, of integers: the remainder has the divisor's sign
    // (`(i + 1) % P`, which layers of a pattern are global).
    if (!lhs.isInteger || !rhs.isInteger)
      return error(op.loc) << "'%' takes two integers";
    if (b == 0)
      return error(op.loc) << "division by zero";
    result.num = a - b * std::floor(a / b);
    break;
  default:
    return error(op.loc) << "'@' needs two tensors";
  }
  // An exact quotient of integers stays an integer, so that sizes derive
  // from sizes (`D = H / N`, a head's size); 1 / 2 is 0.5.
  result.isInteger = lhs.isInteger && rhs.isInteger &&
                     (!op.is(Token::slash) || std::fmod(a, b) == 0);
  return result;
}

FailureOr<ExprValue> Parser::binary(const Token &op, ExprValue lhs,
                                    ExprValue rhs) {
  for (const ExprValue *side : {&lhs, &rhs})
    if (side->kind == ExprValue::tuple)
      return error(side->loc) << "a call that returns " << side->items.size()
                              << " values cannot be used in an expression; "
                                 "name them first ('a, b = ...')";
  if (lhs.kind == ExprValue::string || rhs.kind == ExprValue::string)
    return stringOperator(op, lhs, rhs);
  bool lt = lhs.kind == ExprValue::tensor, rt = rhs.kind == ExprValue::tensor;
  if (!lt && !rt) {
    bool constants = llvm::all_of(std::array{&lhs, &rhs}, [](auto *v) {
      return v->kind == ExprValue::number || v->kind == ExprValue::boolean;
    });
    if (!constants)
      return error(op.loc) << "'" << op.spelling
                           << "' needs tensors or numbers";
    if (!op.is(Token::amp) && !op.is(Token::pipe) &&
        (lhs.kind != ExprValue::number || rhs.kind != ExprValue::number))
      return error(op.loc) << "'" << op.spelling << "' needs numbers, not "
                           << "true or false";
    return foldConstants(op, lhs, rhs);
  }
  // Only tensor operations need a location: a long line of numbers stays
  // cheap (one location per operator would be a uniqued attribute each).
  Location l = loc(op.loc);
  auto tensorResult = [&](FailureOr<Tensor> t) -> FailureOr<ExprValue> {
    if (failed(t))
      return failure();
    ExprValue result;
    result.loc = lhs.loc;
    result.kind = ExprValue::tensor;
    result.t = *t;
    return result;
  };
  if (op.is(Token::at)) {
    if (lt && rt)
      return tensorResult(builder->matmul(lhs.t, rhs.t, l));
    return error(op.loc) << "'@' needs two tensors";
  }
  if (op.is(Token::percent))
    return error(op.loc) << "'%' takes two integers known at compile time, "
                            "not tensors";
  // A float tensor times or over a number stays a tfm.scale, the form the
  // attention matcher reads (`q @ kᵀ / sqrt(d)`).
  const ExprValue &tensorSide = lt ? lhs : rhs, &other = lt ? rhs : lhs;
  bool scalable = isa<FloatType>(tensorSide.t.elementType()) &&
                  other.kind == ExprValue::number;
  if (scalable && op.is(Token::star))
    return tensorResult(builder->scale(tensorSide.t, other.num, false, l));
  if (scalable && op.is(Token::slash) && lt)
    return tensorResult(builder->scale(lhs.t, rhs.num, true, l));
  FailureOr<Tensor> a = asTensor(op, lhs, tensorSide.t),
                    b = asTensor(op, rhs, tensorSide.t);
  if (failed(a) || failed(b))
    return failure();
  return tensorResult(applyOperator(op, *a, *b, l));
}

FailureOr<ExprValue> Parser::stringOperator(const Token &op,
                                            const ExprValue &lhs,
                                            const ExprValue &rhs) {
  if (op.is(Token::plus) && lhs.kind == ExprValue::string &&
      rhs.kind == ExprValue::string) {
    if (failed(checkStringLength(op.loc, lhs.str.size() + rhs.str.size())))
      return failure();
    ExprValue joined = lhs;
    joined.str += rhs.str;
    return joined;
  }
  // Compile-time conditions compare strings (`arch == "llama"`).
  if ((op.is(Token::equal_equal) || op.is(Token::not_equal)) &&
      lhs.kind == ExprValue::string && rhs.kind == ExprValue::string) {
    ExprValue result;
    result.loc = lhs.loc;
    result.kind = ExprValue::boolean;
    result.flag = (lhs.str == rhs.str) == op.is(Token::equal_equal);
    return result;
  }
  const ExprValue &other = lhs.kind == ExprValue::string ? rhs : lhs;
  InFlightDiagnostic diag = error(op.loc);
  diag << "'" << op.spelling << "' does not apply to a string";
  if (op.is(Token::plus))
    diag << " and a non-string ('+' joins two strings";
  if (op.is(Token::plus) && other.kind == ExprValue::number)
    diag << "; put a number into a string with braces: \"layer.{i}\"";
  if (op.is(Token::plus))
    diag << ")";
  if (other.kind == ExprValue::tensor)
    diag << "; a string names a weight only as a function's tensor "
            "argument, or with weight(\"...\")";
  return diag;
}

FailureOr<Tensor> Parser::asTensor(const Token &op, const ExprValue &v,
                                   const Tensor &other) {
  Location l = loc(v.loc);
  switch (v.kind) {
  case ExprValue::tensor:
    return v.t;
  case ExprValue::number:
    return builder->constant(v.num, other.elementType(), l);
  case ExprValue::boolean:
    if (other.elementType().isInteger(1))
      return builder->constant(v.flag, other.elementType(), l);
    [[fallthrough]];
  default:
    return error(v.loc) << "'" << op.spelling << "' needs tensors or numbers";
  }
}

FailureOr<Tensor> Parser::applyOperator(const Token &op, const Tensor &a,
                                        const Tensor &b, Location l) {
  switch (op.kind) {
  case Token::plus:
    return builder->add(a, b, l);
  case Token::minus:
    return builder->binary(BinaryFn::sub, a, b, l);
  case Token::star:
    return builder->binary(BinaryFn::mul, a, b, l);
  case Token::slash:
    return builder->binary(BinaryFn::div, a, b, l);
  case Token::amp:
    return builder->binary(BinaryFn::logicalAnd, a, b, l);
  case Token::pipe:
    return builder->binary(BinaryFn::logicalOr, a, b, l);
  case Token::less:
    return builder->compare(ComparePredicate::lt, a, b, l);
  case Token::less_equal:
    return builder->compare(ComparePredicate::le, a, b, l);
  case Token::greater:
    return builder->compare(ComparePredicate::gt, a, b, l);
  case Token::greater_equal:
    return builder->compare(ComparePredicate::ge, a, b, l);
  case Token::equal_equal:
    return builder->compare(ComparePredicate::eq, a, b, l);
  case Token::not_equal:
    return builder->compare(ComparePredicate::ne, a, b, l);
  default:
    llvm_unreachable("not a binary operator");
  }
}

FailureOr<ExprValue> Parser::parseCall(const Token &name) {
  consume(); // '('
  CallArguments args;
  if (failed(parseArguments(args)))
    return failure();
  auto defined = functions.find(name.spelling);
  if (defined != functions.end())
    return callFunction(defined->second, name, args);
  const Builtin *fn = lookupBuiltin(name.spelling);
  if (!fn) {
    auto later = definitions.find(name.spelling);
    if (later != definitions.end() &&
        later->second.getPointer() > name.loc.getPointer())
      return error(name.loc) << "function '" << name.spelling
                             << "' is used before its 'def' on line "
                             << fileLoc(later->second).getLine()
                             << "; define functions before they are called";
    return error(name.loc) << "unknown function '" << name.spelling << "'";
  }
  auto locOf = [&](llvm::SMLoc l) { return loc(l); };
  BoundCall call(*fn, *builder, name.loc, locOf);
  if (failed(call.bind(args)))
    return failure();
  return fn->build(call);
}

LogicalResult Parser::parseArguments(CallArguments &args) {
  if (consumeIf(Token::r_paren))
    return success();
  do {
    if (peek().is(Token::identifier) && peek(1).is(Token::equal)) {
      Token key = consume();
      consume();
      FailureOr<ExprValue> v = parseExpr();
      if (failed(v))
        return failure();
      if (!args.keywords.try_emplace(key.spelling, *v).second)
        return error(key.loc)
               << "argument '" << key.spelling << "' is given twice";
      continue;
    }
    if (!args.keywords.empty())
      return error() << "positional arguments must come before keyword "
                        "arguments";
    FailureOr<ExprValue> v = parseExpr();
    if (failed(v))
      return failure();
    args.positional.push_back(*v);
  } while (consumeIf(Token::comma));
  return expect(Token::r_paren, "',' or ')'");
}
