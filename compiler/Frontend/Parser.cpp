//===- Parser.cpp - Parse .tfm model files --------------------------------===//
//
// A recursive-descent parser over a token vector. Each statement is one line;
// expressions are evaluated as they are parsed, straight into ModelBuilder
// calls, so shape errors surface at the token that caused them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontend/Parser.h"
#include "compiler/Frontend/Lexer.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// The value of an expression: a tensor, a number, a string or a boolean.
struct Value_ {
  enum Kind { tensor, number, string, boolean, tuple } kind = number;
  Tensor t;
  /// The tensors of a call that returns several (`y, w = ...`).
  std::vector<Tensor> items;
  double num = 0;
  bool isInteger = false;
  std::string str;
  bool flag = false;
  llvm::SMLoc loc;
};

/// Weight shapes declared with `param`, in front of the weights file.
class DeclaredWeights : public WeightShapes {
public:
  explicit DeclaredWeights(WeightShapes *file) : file(file) {}
  std::optional<Info> lookup(MLIRContext *ctx, StringRef name) override {
    auto it = declared.find(name);
    if (it != declared.end())
      return it->second;
    return file ? file->lookup(ctx, name) : std::nullopt;
  }
  llvm::StringMap<Info> declared;
  WeightShapes *file;
};

class Parser {
public:
  Parser(llvm::SourceMgr &sourceMgr, MLIRContext *ctx, WeightShapes *weights)
      : ctx(ctx), weights(weights) {
    const llvm::MemoryBuffer *buffer =
        sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
    fileName = StringAttr::get(ctx, buffer->getBufferIdentifier());
    StringRef text = buffer->getBuffer();
    lineStarts.push_back(text.begin());
    for (const char *p = text.begin(), *e = text.end(); p != e; ++p)
      if (*p == '\n')
        lineStarts.push_back(p + 1);
    Lexer lexer(text);
    for (Token t = lexer.next();; t = lexer.next()) {
      tokens.push_back(t);
      if (t.is(Token::eof))
        break;
    }
  }

  FailureOr<OwningOpRef<ModuleOp>> parse();

private:
  // Tokens.
  const Token &peek(size_t ahead = 0) const {
    return tokens[std::min(index + ahead, tokens.size() - 1)];
  }
  Token consume() {
    Token t = peek();
    if (!t.is(Token::eof))
      ++index;
    return t;
  }
  bool consumeIf(Token::Kind kind) {
    if (!peek().is(kind))
      return false;
    consume();
    return true;
  }
  /// The location of a pointer into the buffer: a binary search over the
  /// line starts, so that long lines do not make parsing quadratic (a
  /// backwards scan to the line's start would).
  Location loc(llvm::SMLoc l) const {
    const char *p = l.getPointer();
    auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), p);
    size_t line = it - lineStarts.begin();
    size_t col = p - *std::prev(it) + 1;
    return FileLineColLoc::get(fileName, line, col);
  }
  InFlightDiagnostic error(llvm::SMLoc l) { return emitError(loc(l)); }
  InFlightDiagnostic error() { return error(peek().loc); }
  LogicalResult expect(Token::Kind kind, StringRef what) {
    if (consumeIf(kind))
      return success();
    return error() << "expected " << what << describe(peek());
  }
  static std::string describe(const Token &t) {
    switch (t.kind) {
    case Token::eof:
      return " but reached the end of the file";
    case Token::newline:
      return " but the line ended";
    case Token::error:
      return t.spelling.starts_with("\"") ? " but the string is not closed"
                                          : " but found '" + t.spelling.str() + "'";
    default:
      return " but found '" + t.spelling.str() + "'";
    }
  }

  /// Names that expressions read as constants, never as tensors.
  static bool isConstantName(StringRef name) {
    return name == "true" || name == "false" || name == "inf";
  }

  // Statements.
  LogicalResult parseStatement();
  LogicalResult parseModelName();
  LogicalResult parseInput();
  LogicalResult parseParam();
  LogicalResult parseOutput();
  LogicalResult parseAssignment();
  LogicalResult parseTupleAssignment();
  LogicalResult defineName(const Token &name);
  FailureOr<Type> parseDtype();
  FailureOr<Shape> parseShape();
  LogicalResult endOfStatement();

  // Expressions.
  FailureOr<Value_> parseExpr();
  FailureOr<Value_> parseTerm();
  FailureOr<Value_> parseUnary();
  FailureOr<Value_> parsePrimary();
  FailureOr<Value_> parseCall(const Token &name);
  FailureOr<Value_> binary(const Token &op, Value_ lhs, Value_ rhs);

  MLIRContext *ctx;
  WeightShapes *weights;
  std::vector<Token> tokens;
  /// Where each line of the buffer starts, for loc().
  std::vector<const char *> lineStarts;
  StringAttr fileName;
  size_t index = 0;
  std::unique_ptr<ModelBuilder> builder;
  std::unique_ptr<DeclaredWeights> declared;
  llvm::StringMap<Tensor> names;
  bool sawOutput = false;
  /// How deeply the expression being parsed nests: parentheses, calls and
  /// unary minuses each add a level. Bounded so that the recursion cannot
  /// overflow the stack.
  unsigned depth = 0;
};

/// The largest magnitude of an integer argument: 2^53, the last integer a
/// double holds exactly.
constexpr double kMaxIntegerArgument = 9007199254740992.0;

/// The deepest expression nesting the parser accepts. Each level takes about
/// 4 KB of stack (parseUnary, parsePrimary, parseCall, parseExpr and
/// parseTerm frames): 1 MB at the limit, well inside an 8 MB stack.
constexpr unsigned kMaxExpressionDepth = 256;

FailureOr<OwningOpRef<ModuleOp>> Parser::parse() {
  declared = std::make_unique<DeclaredWeights>(weights);
  while (consumeIf(Token::newline)) {
  }
  if (peek().is(Token::eof))
    return emitError(loc(peek().loc)) << "empty model file: expected 'model NAME'";
  if (failed(parseModelName()))
    return failure();
  while (!peek().is(Token::eof)) {
    if (consumeIf(Token::newline))
      continue;
    if (failed(parseStatement()))
      return failure();
  }
  if (!sawOutput)
    return error() << "the model has no 'output' statement";
  return builder->finish(loc(peek().loc));
}

LogicalResult Parser::parseModelName() {
  Token kw = consume();
  if (!kw.is(Token::identifier) || kw.spelling != "model")
    return error(kw.loc) << "a model file starts with 'model NAME'"
                         << describe(kw);
  Token name = consume();
  if (!name.is(Token::identifier))
    return error(name.loc) << "expected the model's name" << describe(name);
  builder = std::make_unique<ModelBuilder>(ctx, name.spelling, loc(kw.loc),
                                           declared.get());
  return endOfStatement();
}

LogicalResult Parser::endOfStatement() {
  if (consumeIf(Token::newline) || peek().is(Token::eof))
    return success();
  return error() << "expected the end of the statement" << describe(peek());
}

LogicalResult Parser::parseStatement() {
  const Token &t = peek();
  if (!t.is(Token::identifier))
    return error() << "expected a statement" << describe(t);
  if (peek(1).is(Token::equal))
    return parseAssignment();
  if (peek(1).is(Token::comma))
    return parseTupleAssignment();
  if (t.spelling == "input")
    return parseInput();
  if (t.spelling == "param")
    return parseParam();
  if (t.spelling == "output")
    return parseOutput();
  if (t.spelling == "model")
    return error() << "a file holds one model; 'model' appears twice";
  return error() << "unknown statement '" << t.spelling
                 << "' (expected input, param, output or NAME = ...)";
}

FailureOr<Type> Parser::parseDtype() {
  Token t = consume();
  Type type = llvm::StringSwitch<Type>(t.spelling)
                  .Case("f32", Float32Type::get(ctx))
                  .Case("f64", Float64Type::get(ctx))
                  .Case("i64", IntegerType::get(ctx, 64))
                  .Case("i32", IntegerType::get(ctx, 32))
                  .Case("bool", IntegerType::get(ctx, 1))
                  .Default(Type());
  if (!t.is(Token::identifier) || !type)
    return error(t.loc) << "expected an element type (f32, f64, i32, i64, "
                           "bool)"
                        << describe(t);
  return type;
}

FailureOr<Shape> Parser::parseShape() {
  if (failed(expect(Token::l_square, "'['")))
    return failure();
  Shape shape;
  if (consumeIf(Token::r_square))
    return shape;
  do {
    Token t = consume();
    if (t.is(Token::number)) {
      char *end = nullptr;
      std::string text = t.spelling.str();
      errno = 0;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (errno == ERANGE || v > (int64_t(1) << 40))
        return error(t.loc) << "dimension " << t.spelling << " is too large";
      if (*end != '\0' || v < 0)
        return error(t.loc) << "a dimension must be a non-negative integer, "
                               "got '"
                            << t.spelling << "'";
      shape.push_back(Dim::of(v));
    } else if (t.is(Token::identifier)) {
      shape.push_back(Dim::named(t.spelling.str()));
    } else {
      return error(t.loc) << "expected a dimension (a size or a name)"
                          << describe(t);
    }
  } while (consumeIf(Token::comma));
  if (failed(expect(Token::r_square, "',' or ']'")))
    return failure();
  return shape;
}

LogicalResult Parser::parseInput() {
  Token kw = consume();
  Token name = consume();
  if (!name.is(Token::identifier))
    return error(name.loc) << "expected the input's name" << describe(name);
  if (names.count(name.spelling))
    return error(name.loc) << "'" << name.spelling << "' is already defined";
  if (isConstantName(name.spelling))
    return error(name.loc) << "'" << name.spelling
                           << "' is a constant and cannot name an input";
  if (failed(expect(Token::colon, "':' and a type")))
    return failure();
  FailureOr<Type> type = parseDtype();
  if (failed(type))
    return failure();
  FailureOr<Shape> shape = parseShape();
  if (failed(shape))
    return failure();
  FailureOr<Tensor> t = builder->input(name.spelling, *type, *shape, loc(kw.loc));
  if (failed(t))
    return failure();
  names[name.spelling] = *t;
  return endOfStatement();
}

LogicalResult Parser::parseParam() {
  consume();
  Token name = consume();
  if (!name.is(Token::string) && !name.is(Token::identifier))
    return error(name.loc) << "expected the weight's name" << describe(name);
  if (failed(expect(Token::colon, "':' and a type")))
    return failure();
  FailureOr<Type> type = parseDtype();
  if (failed(type))
    return failure();
  FailureOr<Shape> shape = parseShape();
  if (failed(shape))
    return failure();
  WeightShapes::Info info{*type, {}};
  for (const Dim &d : *shape) {
    if (d.isSymbolic())
      return error(name.loc) << "weight shapes must be static";
    info.shape.push_back(d.size);
  }
  if (weights) {
    if (std::optional<WeightShapes::Info> file =
            weights->lookup(ctx, name.spelling)) {
      if (file->elementType != info.elementType || file->shape != info.shape)
        return error(name.loc)
               << "param '" << name.spelling
               << "' is declared differently from the weights file";
    }
  }
  declared->declared[name.spelling] = info;
  return endOfStatement();
}

LogicalResult Parser::parseOutput() {
  consume();
  do {
    Token name = consume();
    if (!name.is(Token::identifier))
      return error(name.loc) << "expected a value to output" << describe(name);
    auto it = names.find(name.spelling);
    if (it == names.end())
      return error(name.loc) << "unknown value '" << name.spelling << "'";
    if (failed(builder->output(name.spelling, it->second, loc(name.loc))))
      return failure();
    sawOutput = true;
  } while (consumeIf(Token::comma));
  return endOfStatement();
}

LogicalResult Parser::defineName(const Token &name) {
  if (names.count(name.spelling))
    return error(name.loc) << "'" << name.spelling
                           << "' is already defined; names are single-assignment";
  if (isConstantName(name.spelling))
    return error(name.loc) << "'" << name.spelling
                           << "' is a constant and cannot be assigned";
  return success();
}

LogicalResult Parser::parseAssignment() {
  Token name = consume();
  consume(); // '='
  if (failed(defineName(name)))
    return failure();
  FailureOr<Value_> v = parseExpr();
  if (failed(v))
    return failure();
  if (v->kind == Value_::tuple)
    return error(name.loc) << "the call returns " << v->items.size()
                           << " values; assign each a name: '" << name.spelling
                           << ", ... = ...'";
  if (v->kind != Value_::tensor)
    return error(name.loc) << "'" << name.spelling
                           << "' must be a tensor; constants are written inline";
  names[name.spelling] = v->t;
  return endOfStatement();
}

LogicalResult Parser::parseTupleAssignment() {
  SmallVector<Token> targets;
  do {
    Token name = consume();
    if (!name.is(Token::identifier))
      return error(name.loc) << "expected a name to assign" << describe(name);
    if (failed(defineName(name)))
      return failure();
    for (const Token &other : targets)
      if (other.spelling == name.spelling)
        return error(name.loc) << "'" << name.spelling << "' is assigned twice";
    targets.push_back(name);
  } while (consumeIf(Token::comma));
  if (failed(expect(Token::equal, "'='")))
    return failure();
  FailureOr<Value_> v = parseExpr();
  if (failed(v))
    return failure();
  size_t count = v->kind == Value_::tuple ? v->items.size() : 1;
  if (v->kind != Value_::tuple && v->kind != Value_::tensor)
    return error(targets.front().loc) << "the right-hand side is not a tensor";
  if (count != targets.size())
    return error(targets.front().loc)
           << targets.size() << " names for " << count
           << (count == 1 ? " value" : " values")
           << (v->kind == Value_::tensor
                   ? " (multi_head_attention returns its weights too only "
                     "with need_weights = true)"
                   : "");
  for (auto [name, tensor] : llvm::zip(targets, v->items))
    names[name.spelling] = tensor;
  return endOfStatement();
}

FailureOr<Value_> Parser::parseExpr() {
  FailureOr<Value_> lhs = parseTerm();
  while (succeeded(lhs) && (peek().is(Token::plus) || peek().is(Token::minus))) {
    Token op = consume();
    FailureOr<Value_> rhs = parseTerm();
    if (failed(rhs))
      return failure();
    lhs = binary(op, *lhs, *rhs);
  }
  return lhs;
}

FailureOr<Value_> Parser::parseTerm() {
  FailureOr<Value_> lhs = parseUnary();
  while (succeeded(lhs) && (peek().is(Token::star) || peek().is(Token::slash) ||
                            peek().is(Token::at))) {
    Token op = consume();
    FailureOr<Value_> rhs = parseUnary();
    if (failed(rhs))
      return failure();
    lhs = binary(op, *lhs, *rhs);
  }
  return lhs;
}

FailureOr<Value_> Parser::parseUnary() {
  // Every recursion (a parenthesis, a call's argument, a unary minus) passes
  // here, so this bounds the depth of parseExpr/parseCall frames too.
  if (depth >= kMaxExpressionDepth)
    return error() << "the expression nests more than " << kMaxExpressionDepth
                   << " levels deep (parentheses, calls and unary minuses)";
  ++depth;
  llvm::scope_exit leave([&] { --depth; });
  if (peek().is(Token::minus)) {
    Token op = consume();
    FailureOr<Value_> v = parseUnary();
    if (failed(v))
      return failure();
    if (v->kind != Value_::number)
      return error(op.loc) << "unary '-' applies to numbers only";
    v->num = -v->num;
    v->loc = op.loc;
    return v;
  }
  return parsePrimary();
}

FailureOr<Value_> Parser::parsePrimary() {
  Token t = consume();
  Value_ v;
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
  case Token::string:
    v.kind = Value_::string;
    v.str = t.spelling.str();
    return v;
  case Token::l_paren: {
    FailureOr<Value_> inner = parseExpr();
    if (failed(inner) || failed(expect(Token::r_paren, "')'")))
      return failure();
    return inner;
  }
  case Token::identifier: {
    if (peek().is(Token::l_paren))
      return parseCall(t);
    if (t.spelling == "true" || t.spelling == "false") {
      v.kind = Value_::boolean;
      v.flag = t.spelling == "true";
      return v;
    }
    if (t.spelling == "inf") { // `-inf` is unary minus applied to it.
      v.num = std::numeric_limits<double>::infinity();
      return v;
    }
    auto it = names.find(t.spelling);
    if (it == names.end())
      return error(t.loc) << "unknown value '" << t.spelling << "'";
    v.kind = Value_::tensor;
    v.t = it->second;
    return v;
  }
  default:
    return error(t.loc) << "expected an expression" << describe(t);
  }
}

FailureOr<Value_> Parser::binary(const Token &op, Value_ lhs, Value_ rhs) {
  for (const Value_ *side : {&lhs, &rhs})
    if (side->kind == Value_::tuple)
      return error(side->loc) << "a call that returns " << side->items.size()
                              << " values cannot be used in an expression; "
                                 "name them first ('a, b = ...')";
  bool lt = lhs.kind == Value_::tensor, rt = rhs.kind == Value_::tensor;
  bool ln = lhs.kind == Value_::number, rn = rhs.kind == Value_::number;
  Value_ result;
  result.loc = lhs.loc;
  auto tensorResult = [&](FailureOr<Tensor> t) -> FailureOr<Value_> {
    if (failed(t))
      return failure();
    result.kind = Value_::tensor;
    result.t = *t;
    return result;
  };
  if (ln && rn) {
    switch (op.kind) {
    case Token::plus: result.num = lhs.num + rhs.num; break;
    case Token::minus: result.num = lhs.num - rhs.num; break;
    case Token::star: result.num = lhs.num * rhs.num; break;
    case Token::slash:
      if (rhs.num == 0)
        return error(op.loc) << "division by zero";
      result.num = lhs.num / rhs.num;
      break;
    default:
      return error(op.loc) << "'@' needs two tensors";
    }
    result.isInteger = lhs.isInteger && rhs.isInteger && op.kind != Token::slash;
    return result;
  }
  // Only tensor operations need a location: a long line of numbers stays
  // cheap (one location per operator would be a uniqued attribute each).
  Location l = loc(op.loc);
  switch (op.kind) {
  case Token::at:
    if (lt && rt)
      return tensorResult(builder->matmul(lhs.t, rhs.t, l));
    return error(op.loc) << "'@' needs two tensors";
  case Token::plus:
    if (lt && rt)
      return tensorResult(builder->add(lhs.t, rhs.t, l));
    return error(op.loc) << "'+' adds two tensors or two numbers";
  case Token::star:
    if (lt && rn)
      return tensorResult(builder->scale(lhs.t, rhs.num, false, l));
    if (ln && rt)
      return tensorResult(builder->scale(rhs.t, lhs.num, false, l));
    return error(op.loc) << "'*' multiplies a tensor by a number (use '@' "
                            "for matrix products)";
  case Token::slash:
    if (lt && rn)
      return tensorResult(builder->scale(lhs.t, rhs.num, true, l));
    return error(op.loc) << "'/' divides a tensor by a number";
  default:
    if (lt && rt)
      return error(op.loc) << "'-' between two tensors is not supported";
    if (lt || rt)
      return error(op.loc) << "'-' between a tensor and "
                           << (ln || rn ? "a number" : "a non-number")
                           << " is not supported";
    return error(op.loc) << "'-' subtracts two numbers";
  }
}

FailureOr<Value_> Parser::parseCall(const Token &name) {
  consume(); // '('
  SmallVector<Value_, 4> positional;
  llvm::StringMap<Value_> keywords;
  if (!consumeIf(Token::r_paren)) {
    do {
      if (peek().is(Token::identifier) && peek(1).is(Token::equal)) {
        Token key = consume();
        consume();
        FailureOr<Value_> v = parseExpr();
        if (failed(v))
          return failure();
        if (!keywords.try_emplace(key.spelling, *v).second)
          return error(key.loc) << "argument '" << key.spelling
                                << "' is given twice";
        continue;
      }
      if (!keywords.empty())
        return error() << "positional arguments must come before keyword "
                          "arguments";
      FailureOr<Value_> v = parseExpr();
      if (failed(v))
        return failure();
      positional.push_back(*v);
    } while (consumeIf(Token::comma));
    if (failed(expect(Token::r_paren, "',' or ')'")))
      return failure();
  }

  StringRef fn = name.spelling;
  Location l = loc(name.loc);

  // Argument accessors; each reports errors at the argument or the call.
  auto arg = [&](size_t i, StringRef key) -> Value_ * {
    if (i < positional.size())
      return &positional[i];
    auto it = keywords.find(key);
    if (it == keywords.end())
      return nullptr;
    return &it->second;
  };
  auto tensorArg = [&](size_t i, StringRef key) -> FailureOr<Tensor> {
    Value_ *v = arg(i, key);
    if (!v)
      return error(name.loc) << fn << "() needs the tensor argument '" << key
                             << "'";
    if (v->kind == Value_::string) // A weight named by its state_dict key.
      return builder->weight(v->str, loc(v->loc));
    if (v->kind == Value_::tuple)
      return error(v->loc) << fn << "(): '" << key << "' is a call that "
                           << "returns " << v->items.size()
                           << " values; name them first ('a, b = ...')";
    if (v->kind != Value_::tensor)
      return error(v->loc) << fn << "(): '" << key << "' must be a tensor";
    return v->t;
  };
  auto numberArg = [&](size_t i, StringRef key,
                       std::optional<double> def) -> FailureOr<double> {
    Value_ *v = arg(i, key);
    if (!v) {
      if (def)
        return *def;
      return error(name.loc) << fn << "() needs the argument '" << key << "'";
    }
    if (v->kind != Value_::number)
      return error(v->loc) << fn << "(): '" << key << "' must be a number";
    return v->num;
  };
  auto intArg = [&](size_t i, StringRef key,
                    std::optional<int64_t> def) -> FailureOr<int64_t> {
    Value_ *v = arg(i, key);
    if (!v) {
      if (def)
        return *def;
      return error(name.loc) << fn << "() needs the argument '" << key << "'";
    }
    if (v->kind != Value_::number || !v->isInteger)
      return error(v->loc) << fn << "(): '" << key << "' must be an integer";
    // Converting a double outside int64_t's range is undefined behavior;
    // integers past 2^53 are not even exact in the double they were read
    // into. No dimension, count or index comes anywhere near.
    if (!(std::fabs(v->num) <= kMaxIntegerArgument))
      return error(v->loc) << fn << "(): '" << key << "' is out of range (at "
                           << "most 2^53 in magnitude)";
    return int64_t(v->num);
  };
  auto stringArg = [&](StringRef key) -> std::optional<std::string> {
    auto it = keywords.find(key);
    if (it == keywords.end() || it->second.kind != Value_::string)
      return std::nullopt;
    return it->second.str;
  };
  auto boolArg = [&](StringRef key, bool def) -> FailureOr<bool> {
    auto it = keywords.find(key);
    if (it == keywords.end())
      return def;
    if (it->second.kind != Value_::boolean)
      return error(it->second.loc)
             << fn << "(): '" << key << "' must be true or false";
    return it->second.flag;
  };
  /// A keyword naming a tensor or a weight, if given.
  auto optionalTensorArg =
      [&](size_t i, StringRef key) -> FailureOr<std::optional<Tensor>> {
    if (!arg(i, key))
      return std::optional<Tensor>();
    FailureOr<Tensor> t = tensorArg(i, key);
    if (failed(t))
      return failure();
    return std::optional<Tensor>(*t);
  };
  /// A keyword that must be a string, if given.
  auto stringKeyword =
      [&](StringRef key) -> FailureOr<std::optional<std::string>> {
    auto it = keywords.find(key);
    if (it == keywords.end())
      return std::optional<std::string>();
    if (it->second.kind != Value_::string)
      return error(it->second.loc)
             << fn << "(): '" << key << "' must be a string";
    return std::optional<std::string>(it->second.str);
  };
  auto checkArity = [&](size_t maxPositional,
                        ArrayRef<StringRef> allowed) -> LogicalResult {
    if (positional.size() > maxPositional)
      return error(positional[maxPositional].loc)
             << fn << "() takes at most " << maxPositional
             << " positional arguments";
    for (auto &kv : keywords)
      if (!llvm::is_contained(allowed, kv.getKey()))
        return error(kv.getValue().loc)
               << fn << "() has no argument '" << kv.getKey() << "'";
    return success();
  };
  auto result = [&](FailureOr<Tensor> t) -> FailureOr<Value_> {
    if (failed(t))
      return failure();
    Value_ v;
    v.kind = Value_::tensor;
    v.t = *t;
    v.loc = name.loc;
    return v;
  };

  if (fn == "sqrt") {
    if (failed(checkArity(1, {})))
      return failure();
    FailureOr<double> x = numberArg(0, "x", std::nullopt);
    if (failed(x))
      return failure();
    if (*x < 0)
      return error(name.loc) << "sqrt of a negative number";
    Value_ v;
    v.num = std::sqrt(*x);
    v.loc = name.loc;
    return v;
  }
  if (fn == "weight") {
    if (failed(checkArity(1, {"name"})))
      return failure();
    Value_ *v = arg(0, "name");
    if (!v || v->kind != Value_::string)
      return error(name.loc) << "weight() takes the weight's name as a string";
    return result(builder->weight(v->str, l));
  }
  if (fn == "matmul") {
    if (failed(checkArity(2, {"a", "b"})))
      return failure();
    FailureOr<Tensor> a = tensorArg(0, "a"), b = tensorArg(1, "b");
    if (failed(a) || failed(b))
      return failure();
    return result(builder->matmul(*a, *b, l));
  }
  if (fn == "add") {
    if (failed(checkArity(2, {"a", "b"})))
      return failure();
    FailureOr<Tensor> a = tensorArg(0, "a"), b = tensorArg(1, "b");
    if (failed(a) || failed(b))
      return failure();
    return result(builder->add(*a, *b, l));
  }
  if (fn == "transpose") {
    if (failed(checkArity(3, {"dim0", "dim1"})))
      return failure();
    FailureOr<Tensor> x = tensorArg(0, "x");
    FailureOr<int64_t> d0 = intArg(1, "dim0", -2), d1 = intArg(2, "dim1", -1);
    if (failed(x) || failed(d0) || failed(d1))
      return failure();
    return result(builder->transpose(*x, *d0, *d1, l));
  }
  if (fn == "softmax") {
    if (failed(checkArity(2, {"dim"})))
      return failure();
    FailureOr<Tensor> x = tensorArg(0, "x");
    FailureOr<int64_t> dim = intArg(1, "dim", -1);
    if (failed(x) || failed(dim))
      return failure();
    return result(builder->softmax(*x, *dim, l));
  }
  if (fn == "scale") {
    if (failed(checkArity(2, {"factor"})))
      return failure();
    FailureOr<Tensor> x = tensorArg(0, "x");
    FailureOr<double> f = numberArg(1, "factor", std::nullopt);
    if (failed(x) || failed(f))
      return failure();
    return result(builder->scale(*x, *f, false, l));
  }
  if (fn == "concat") {
    if (failed(checkArity(positional.size(), {"dim"})))
      return failure();
    SmallVector<Tensor> inputs;
    for (size_t i = 0; i < positional.size(); ++i) {
      FailureOr<Tensor> t = tensorArg(i, "x");
      if (failed(t))
        return failure();
      inputs.push_back(*t);
    }
    FailureOr<int64_t> dim = intArg(positional.size(), "dim", -1);
    if (failed(dim))
      return failure();
    return result(builder->concat(inputs, *dim, l));
  }
  if (fn == "masked_fill") {
    if (failed(checkArity(3, {"mask", "value"})))
      return failure();
    FailureOr<Tensor> x = tensorArg(0, "x"), mask = tensorArg(1, "mask");
    FailureOr<double> value = numberArg(2, "value", std::nullopt);
    if (failed(x) || failed(mask) || failed(value))
      return failure();
    return result(builder->maskedFill(*x, *mask, *value, l));
  }
  if (fn == "causal_mask") {
    if (failed(checkArity(1, {})))
      return failure();
    FailureOr<Tensor> x = tensorArg(0, "x");
    if (failed(x))
      return failure();
    return result(builder->causalMask(*x, l));
  }
  if (fn == "linear") {
    if (failed(checkArity(3, {"weight", "bias"})))
      return failure();
    FailureOr<Tensor> x = tensorArg(0, "x"), w = tensorArg(1, "weight");
    if (failed(x) || failed(w))
      return failure();
    std::optional<Tensor> bias;
    if (arg(2, "bias")) {
      FailureOr<Tensor> b = tensorArg(2, "bias");
      if (failed(b))
        return failure();
      bias = *b;
    }
    return result(builder->linear(*x, *w, bias, l));
  }
  if (fn == "embedding") {
    if (failed(checkArity(2, {"weight", "padding_idx"})))
      return failure();
    FailureOr<Tensor> ids = tensorArg(0, "ids"), w = tensorArg(1, "weight");
    if (failed(ids) || failed(w))
      return failure();
    std::optional<int64_t> paddingIdx;
    if (arg(2, "padding_idx")) {
      FailureOr<int64_t> p = intArg(2, "padding_idx", std::nullopt);
      if (failed(p))
        return failure();
      paddingIdx = *p;
    }
    return result(builder->embedding(*ids, *w, l, paddingIdx));
  }
  if (fn == "positional_encoding") {
    if (failed(checkArity(1, {"kind", "weight"})))
      return failure();
    FailureOr<Tensor> x = tensorArg(0, "x");
    FailureOr<std::optional<std::string>> kind = stringKeyword("kind");
    if (failed(x) || failed(kind))
      return failure();
    std::string k = kind->value_or("sinusoidal");
    if (k == "learned") {
      if (!arg(1, "weight"))
        return error(name.loc) << "positional_encoding(kind = \"learned\") "
                                  "needs the table: weight = \"...\"";
      FailureOr<Tensor> table = tensorArg(1, "weight");
      if (failed(table))
        return failure();
      return result(builder->learnedPositionalEncoding(*x, *table, l));
    }
    if (k != "sinusoidal")
      return error(keywords.find("kind")->second.loc)
             << "positional_encoding kind '" << k
             << "' is not supported (\"sinusoidal\" or \"learned\")";
    if (arg(1, "weight"))
      return error(name.loc) << "positional_encoding: a sinusoidal encoding "
                                "has no weight (use kind = \"learned\")";
    return result(builder->positionalEncoding(*x, l));
  }
  if (fn == "layer_norm") {
    if (failed(checkArity(3, {"weight", "bias", "eps"})))
      return failure();
    FailureOr<Tensor> x = tensorArg(0, "x");
    FailureOr<std::optional<Tensor>> w = optionalTensorArg(1, "weight");
    FailureOr<std::optional<Tensor>> b = optionalTensorArg(2, "bias");
    FailureOr<double> eps = numberArg(3, "eps", 1e-5);
    if (failed(x) || failed(w) || failed(b) || failed(eps))
      return failure();
    return result(builder->layerNorm(*x, *w, *b, *eps, l));
  }
  if (fn == "relu") {
    if (failed(checkArity(1, {})))
      return failure();
    FailureOr<Tensor> x = tensorArg(0, "x");
    if (failed(x))
      return failure();
    return result(builder->relu(*x, l));
  }
  if (fn == "gelu") {
    if (failed(checkArity(1, {"approximate"})))
      return failure();
    FailureOr<Tensor> x = tensorArg(0, "x");
    FailureOr<std::optional<std::string>> approximate =
        stringKeyword("approximate");
    if (failed(x) || failed(approximate))
      return failure();
    return result(builder->gelu(*x, approximate->value_or("none"), l));
  }
  if (fn == "dropout") {
    if (failed(checkArity(2, {"p"})))
      return failure();
    FailureOr<Tensor> x = tensorArg(0, "x");
    FailureOr<double> p = numberArg(1, "p", 0.5);
    if (failed(x) || failed(p))
      return failure();
    return result(builder->dropout(*x, *p, l));
  }
  if (fn == "sdpa") {
    if (failed(checkArity(4, {"scale", "attn_mask", "is_causal", "dropout_p"})))
      return failure();
    FailureOr<Tensor> q = tensorArg(0, "q"), k = tensorArg(1, "k"),
                      v = tensorArg(2, "v");
    FailureOr<std::optional<Tensor>> mask =
        optionalTensorArg(size_t(-1), "attn_mask");
    FailureOr<bool> causal = boolArg("is_causal", false);
    FailureOr<double> dropoutP = numberArg(size_t(-1), "dropout_p", 0.0);
    if (failed(q) || failed(k) || failed(v) || failed(mask) || failed(causal) ||
        failed(dropoutP))
      return failure();
    if (!(*dropoutP >= 0.0 && *dropoutP <= 1.0))
      return error(name.loc) << "sdpa: dropout_p must lie in [0, 1]";
    SdpaOptions options;
    options.attnMask = *mask;
    options.isCausal = *causal;
    if (arg(3, "scale")) {
      FailureOr<double> s = numberArg(3, "scale", std::nullopt);
      if (failed(s))
        return failure();
      options.scale = *s;
    }
    return result(builder->sdpa(*q, *k, *v, options, l));
  }
  if (fn == "multi_head_attention") {
    static constexpr StringRef kNames[] = {
        "heads",        "weights",      "bias",
        "q_weight",     "k_weight",     "v_weight",
        "q_bias",       "k_bias",       "v_bias",
        "out_weight",   "out_bias",     "in_proj_weight",
        "in_proj_bias", "batch_first",  "key_padding_mask",
        "attn_mask",    "need_weights", "average_attn_weights"};
    if (failed(checkArity(4, kNames)))
      return failure();
    FailureOr<Tensor> q = tensorArg(0, "query"), k = tensorArg(1, "key"),
                      v = tensorArg(2, "value");
    FailureOr<int64_t> heads = intArg(3, "heads", std::nullopt);
    if (failed(q) || failed(k) || failed(v) || failed(heads))
      return failure();
    if (auto it = keywords.find("bias");
        it != keywords.end() && it->second.kind != Value_::boolean)
      return error(it->second.loc) << "'bias' must be true or false";
    FailureOr<bool> bias = boolArg("bias", true);
    FailureOr<bool> batchFirst = boolArg("batch_first", true);
    FailureOr<bool> needWeights = boolArg("need_weights", false);
    FailureOr<bool> average = boolArg("average_attn_weights", true);
    FailureOr<std::optional<Tensor>> padding =
        optionalTensorArg(size_t(-1), "key_padding_mask");
    FailureOr<std::optional<Tensor>> attnMask =
        optionalTensorArg(size_t(-1), "attn_mask");
    if (failed(bias) || failed(batchFirst) || failed(needWeights) ||
        failed(average) || failed(padding) || failed(attnMask))
      return failure();
    MultiHeadAttentionOptions options;
    options.batchFirst = *batchFirst;
    options.needWeights = *needWeights;
    options.averageAttnWeights = *average;
    options.keyPaddingMask = *padding;
    options.attnMask = *attnMask;
    MultiHeadAttentionWeights w;
    if (std::optional<std::string> qw = stringArg("q_weight")) {
      w.qWeight = *qw;
      w.kWeight = stringArg("k_weight").value_or("");
      w.vWeight = stringArg("v_weight").value_or("");
      w.qBias = stringArg("q_bias").value_or("");
      w.kBias = stringArg("k_bias").value_or("");
      w.vBias = stringArg("v_bias").value_or("");
      if (w.kWeight.empty() || w.vWeight.empty())
        return error(name.loc) << "q_weight needs k_weight and v_weight too";
    } else {
      w = MultiHeadAttentionWeights::pytorch(stringArg("weights").value_or(""),
                                             *bias);
      if (auto packed = stringArg("in_proj_weight"))
        w.inProjWeight = *packed;
    }
    if (auto packed = stringArg("in_proj_bias"))
      w.inProjBias = *packed;
    if (auto out = stringArg("out_weight"))
      w.outWeight = *out;
    if (auto out = stringArg("out_bias"))
      w.outBias = *out;
    FailureOr<ModelBuilder::AttentionResult> r =
        builder->multiHeadAttention(*q, *k, *v, *heads, w, options, l);
    if (failed(r))
      return failure();
    if (!r->weights)
      return result(r->output);
    Value_ v2;
    v2.kind = Value_::tuple;
    v2.items = {r->output, *r->weights};
    v2.loc = name.loc;
    return v2;
  }
  if (fn == "transformer_encoder_layer") {
    static constexpr StringRef kNames[] = {
        "heads", "weights",     "norm_first", "activation",
        "eps",   "batch_first", "src_mask",   "src_key_padding_mask"};
    if (failed(checkArity(1, kNames)))
      return failure();
    FailureOr<Tensor> x = tensorArg(0, "x");
    FailureOr<int64_t> heads = intArg(size_t(-1), "heads", std::nullopt);
    FailureOr<bool> normFirst = boolArg("norm_first", false);
    FailureOr<bool> batchFirst = boolArg("batch_first", true);
    FailureOr<double> eps = numberArg(size_t(-1), "eps", 1e-5);
    FailureOr<std::optional<std::string>> activation =
        stringKeyword("activation");
    FailureOr<std::optional<std::string>> prefix = stringKeyword("weights");
    FailureOr<std::optional<Tensor>> srcMask =
        optionalTensorArg(size_t(-1), "src_mask");
    FailureOr<std::optional<Tensor>> padding =
        optionalTensorArg(size_t(-1), "src_key_padding_mask");
    if (failed(x) || failed(heads) || failed(normFirst) || failed(batchFirst) ||
        failed(eps) || failed(activation) || failed(prefix) ||
        failed(srcMask) || failed(padding))
      return failure();
    TransformerEncoderLayerOptions options;
    options.heads = *heads;
    options.prefix = prefix->value_or("");
    options.normFirst = *normFirst;
    options.activation = activation->value_or("relu");
    options.eps = *eps;
    options.batchFirst = *batchFirst;
    options.srcMask = *srcMask;
    options.srcKeyPaddingMask = *padding;
    return result(builder->transformerEncoderLayer(*x, options, l));
  }
  return error(name.loc) << "unknown function '" << fn << "'";
}
} // namespace

FailureOr<OwningOpRef<ModuleOp>>
mlir::tfm::parseModel(llvm::SourceMgr &sourceMgr, MLIRContext *ctx,
                      WeightShapes *weights) {
  Parser parser(sourceMgr, ctx, weights);
  return parser.parse();
}
