//===- Parser.cpp - Parse .tfm model files --------------------------------===//
//
// A recursive-descent parser over a token vector. Each statement is one line;
// expressions are evaluated as they are parsed, straight into ModelBuilder
// calls, so shape errors surface at the token that caused them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontend/Parser.h"
#include "compiler/Frontend/Builtins.h"
#include "compiler/Frontend/Lexer.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
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
      return t.spelling.starts_with("\"")
                 ? " but the string is not closed"
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
  FailureOr<ExprValue> parseExpr();
  /// Binary operators of precedence `level` and tighter.
  FailureOr<ExprValue> parseBinary(int level);
  FailureOr<ExprValue> parseUnary();
  /// An atom and any `[...]` indexing after it.
  FailureOr<ExprValue> parsePrimary();
  FailureOr<ExprValue> parseAtom();
  FailureOr<ExprValue> parseIndex(const ExprValue &x);
  FailureOr<ExprValue> parseName(const Token &t);
  FailureOr<ExprValue> parseList(const Token &open);
  Type dtypeOf(StringRef name) const;
  FailureOr<ExprValue> foldConstants(const Token &op, const ExprValue &lhs,
                                     const ExprValue &rhs);
  /// A side of a binary operator as a tensor: numbers become constants of
  /// the other side's element type.
  FailureOr<Tensor> asTensor(const Token &op, const ExprValue &v,
                             const Tensor &other);
  FailureOr<Tensor> applyOperator(const Token &op, const Tensor &a,
                                  const Tensor &b, Location l);
  FailureOr<ExprValue> parseCall(const Token &name);
  LogicalResult parseArguments(CallArguments &args);
  FailureOr<ExprValue> binary(const Token &op, ExprValue lhs, ExprValue rhs);

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
  /// The named dimensions of the inputs.
  llvm::StringSet<> dimNames;
};

/// The deepest expression nesting the parser accepts. Each level takes
/// parseUnary, parsePrimary, parseCall or parseList and one parseBinary per
/// precedence level: 255 nested calls or parentheses fit in a 4 MB stack
/// (measured), half of the usual 8 MB.
constexpr unsigned kMaxExpressionDepth = 256;

FailureOr<OwningOpRef<ModuleOp>> Parser::parse() {
  declared = std::make_unique<DeclaredWeights>(weights);
  while (consumeIf(Token::newline)) {
  }
  if (peek().is(Token::eof))
    return emitError(loc(peek().loc))
           << "empty model file: expected 'model NAME'";
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
  if (t.spelling == "input" || t.spelling == "cache")
    return parseInput();
  if (t.spelling == "param")
    return parseParam();
  if (t.spelling == "output")
    return parseOutput();
  if (t.spelling == "model")
    return error() << "a file holds one model; 'model' appears twice";
  return error() << "unknown statement '" << t.spelling
                 << "' (expected input, cache, param, output or NAME = ...)";
}

FailureOr<Type> Parser::parseDtype() {
  Token t = consume();
  Type type = dtypeOf(t.spelling);
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
    return error(name.loc) << "expected the " << kw.spelling << "'s name"
                           << describe(name);
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
  FailureOr<Tensor> t =
      kw.spelling == "cache"
          ? builder->cache(name.spelling, *type, *shape, loc(kw.loc))
          : builder->input(name.spelling, *type, *shape, loc(kw.loc));
  if (failed(t))
    return failure();
  for (const Dim &d : *shape)
    if (d.isSymbolic())
      dimNames.insert(d.symbol);
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
    return error(name.loc)
           << "'" << name.spelling
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
  FailureOr<ExprValue> v = parseExpr();
  if (failed(v))
    return failure();
  if (v->kind == ExprValue::tuple)
    return error(name.loc) << "the call returns " << v->items.size()
                           << " values; assign each a name: '" << name.spelling
                           << ", ... = ...'";
  if (v->kind != ExprValue::tensor)
    return error(name.loc)
           << "'" << name.spelling
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
  FailureOr<ExprValue> v = parseExpr();
  if (failed(v))
    return failure();
  size_t count = v->kind == ExprValue::tuple ? v->items.size() : 1;
  if (v->kind != ExprValue::tuple && v->kind != ExprValue::tensor)
    return error(targets.front().loc) << "the right-hand side is not a tensor";
  if (count != targets.size())
    return error(targets.front().loc)
           << targets.size() << " names for " << count
           << (count == 1 ? " value" : " values")
           << (v->kind == ExprValue::tensor
                   ? " (multi_head_attention returns its weights too only "
                     "with need_weights = true)"
                   : "");
  for (auto [name, tensor] : llvm::zip(targets, v->items))
    names[name.spelling] = tensor;
  return endOfStatement();
}

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
  case Token::string:
    v.kind = ExprValue::string;
    v.str = t.spelling.str();
    return v;
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
  auto it = names.find(name);
  if (it != names.end()) {
    v.kind = ExprValue::tensor;
    v.t = it->second;
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
  default:
    return error(op.loc) << "'@' needs two tensors";
  }
  result.isInteger = lhs.isInteger && rhs.isInteger && !op.is(Token::slash);
  return result;
}

FailureOr<ExprValue> Parser::binary(const Token &op, ExprValue lhs,
                                    ExprValue rhs) {
  for (const ExprValue *side : {&lhs, &rhs})
    if (side->kind == ExprValue::tuple)
      return error(side->loc) << "a call that returns " << side->items.size()
                              << " values cannot be used in an expression; "
                                 "name them first ('a, b = ...')";
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
    return builder->compare(CompareFn::lt, a, b, l);
  case Token::less_equal:
    return builder->compare(CompareFn::le, a, b, l);
  case Token::greater:
    return builder->compare(CompareFn::gt, a, b, l);
  case Token::greater_equal:
    return builder->compare(CompareFn::ge, a, b, l);
  case Token::equal_equal:
    return builder->compare(CompareFn::eq, a, b, l);
  case Token::not_equal:
    return builder->compare(CompareFn::ne, a, b, l);
  default:
    llvm_unreachable("not a binary operator");
  }
}

FailureOr<ExprValue> Parser::parseCall(const Token &name) {
  consume(); // '('
  CallArguments args;
  if (failed(parseArguments(args)))
    return failure();
  const Builtin *fn = lookupBuiltin(name.spelling);
  if (!fn)
    return error(name.loc) << "unknown function '" << name.spelling << "'";
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
} // namespace

FailureOr<OwningOpRef<ModuleOp>>
mlir::tfm::parseModel(llvm::SourceMgr &sourceMgr, MLIRContext *ctx,
                      WeightShapes *weights) {
  Parser parser(sourceMgr, ctx, weights);
  return parser.parse();
}
