//===- Parser.cpp - Parse .tfm model files --------------------------------===//
//
// A recursive-descent parser over a token vector. Each statement is one line;
// this file holds the model's top-level statements and the token helpers.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontend/Parser.h"
#include "compiler/Frontend/ParserImpl.h"

#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

Parser::Parser(llvm::SourceMgr &sourceMgr, MLIRContext *ctx,
               WeightShapes *weights, Type cacheElementType)
    : ctx(ctx), weights(weights), cacheElementType(cacheElementType) {
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
  indexBlocks();
}

FileLineColLoc Parser::fileLoc(llvm::SMLoc l) const {
  const char *p = l.getPointer();
  auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), p);
  size_t line = it - lineStarts.begin();
  size_t col = p - *std::prev(it) + 1;
  return FileLineColLoc::get(fileName, line, col);
}

Location Parser::loc(llvm::SMLoc l) const {
  FileLineColLoc at = fileLoc(l);
  if (!callers)
    return at;
  return CallSiteLoc::get(at, callers);
}

LogicalResult Parser::expect(Token::Kind kind, StringRef what) {
  if (consumeIf(kind))
    return success();
  return error() << "expected " << what << describe(peek());
}

std::string Parser::describe(const Token &t) {
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

bool Parser::isConstantName(StringRef name) {
  return name == "true" || name == "false" || name == "inf";
}

bool Parser::isKeyword(StringRef name) {
  return name == "def" || name == "end" || name == "for" || name == "in" ||
         name == "return" || name == "if" || name == "elif" || name == "else";
}

FailureOr<OwningOpRef<ModuleOp>> Parser::parse() {
  declared = std::make_unique<DeclaredWeights>(weights);
  frames.push_back(std::make_unique<Frame>());
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
  // A body is checked only when it runs: say so rather than let a broken,
  // unused function pass unnoticed. A function the file calls in a branch
  // of `if` this checkpoint does not take (examples/llama's Gemma block,
  // compiling a Llama) is meant, and not warned about.
  auto isCalledInText = [&](const FunctionDef &fn) {
    for (size_t i = 0; i + 1 < tokens.size(); ++i)
      if (tokens[i].is(Token::identifier) &&
          tokens[i].spelling == fn.name.spelling &&
          tokens[i].loc.getPointer() != fn.name.loc.getPointer() &&
          (i < fn.bodyBegin || i >= fn.bodyEnd) &&
          tokens[i + 1].is(Token::l_paren))
        return true;
    return false;
  };
  for (const auto &entry : functions)
    if (!entry.getValue().called && !isCalledInText(entry.getValue()))
      emitWarning(fileLoc(entry.getValue().name.loc))
          << "function '" << entry.getKey()
          << "' is never called; only its structure was checked";
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
  builder->setCacheElementType(cacheElementType);
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
  if (++statements > kMaxStatements)
    return error() << "the model expands to more than " << kMaxStatements
                   << " statements (counting every loop iteration and call)";
  if (t.spelling == "def")
    return parseDef();
  if (t.spelling == "for")
    return parseFor();
  if (t.spelling == "if")
    return parseIf();
  if (t.spelling == "elif" || t.spelling == "else")
    return error() << "'" << t.spelling << "' without an open 'if'";
  if (t.spelling == "return")
    return parseReturn();
  if (t.spelling == "end")
    return error() << "'end' without an open 'def', 'for' or 'if'";
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
                 << "' (expected input, cache, param, output, def, for or "
                    "NAME = ...)";
}

LogicalResult Parser::requireTopLevel(const Token &keyword) {
  if (frames.size() == 1 && frame().loops == 0 && frame().conditionals == 0)
    return success();
  return error(keyword.loc) << "'" << keyword.spelling
                            << "' stands only at the top level of the model, "
                               "not inside 'def', 'for' or 'if'";
}

FailureOr<Type> Parser::parseDtype() {
  Token t = consume();
  Type type = dtypeOf(t.spelling);
  if (!t.is(Token::identifier) || !type)
    return error(t.loc) << "expected an element type (f32, f64, bf16, f16, "
                           "i8, i32, i64, bool)"
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
      // A name bound to an integer known at compile time (`L =
      // config("llama.block_count")`) is that size; any other name is a
      // dimension chosen at run time.
      auto bound = frame().values.find(t.spelling);
      if (bound != frame().values.end()) {
        const ExprValue &v = bound->second;
        if (v.kind != ExprValue::number || !v.isInteger)
          return error(t.loc)
                 << "'" << t.spelling
                 << "' names a value, not a dimension: a dimension is a size, "
                    "a name bound to an integer, or a new name";
        if (v.num < 0 || v.num > double(int64_t(1) << 40))
          return error(t.loc)
                 << "dimension '" << t.spelling << "' = " << int64_t(v.num)
                 << " is not a size from 0 to 2^40";
        shape.push_back(Dim::of(int64_t(v.num)));
        continue;
      }
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
  if (failed(requireTopLevel(kw)))
    return failure();
  Token name = consume();
  if (!name.is(Token::identifier))
    return error(name.loc) << "expected the " << kw.spelling << "'s name"
                           << describe(name);
  if (failed(defineName(name)))
    return failure();
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
  ExprValue value;
  value.kind = ExprValue::tensor;
  value.t = *t;
  frame().values[name.spelling] = value;
  return endOfStatement();
}

LogicalResult Parser::parseParam() {
  consume();
  Token name = consume();
  if (!name.is(Token::string) && !name.is(Token::identifier))
    return error(name.loc) << "expected the weight's name" << describe(name);
  std::string weightName = name.spelling.str();
  if (name.is(Token::string)) {
    FailureOr<std::string> text = interpolate(name);
    if (failed(text))
      return failure();
    weightName = *text;
  }
  if (weightName.empty())
    return error(name.loc) << "a weight's name must not be empty";
  if (failed(expect(Token::colon, "':' and a type")))
    return failure();
  Token typeToken = peek();
  FailureOr<Type> type = parseDtype();
  if (failed(type))
    return failure();
  // What a checkpoint's weights bind as (BindWeights): bf16 and f16 ones
  // are converted to f32 at compile time.
  if (isLowPrecisionFloat(*type) || type->isInteger(8) || type->isInteger(1))
    return error(typeToken.loc)
           << "a weight is f32, f64, i32 or i64, not " << typeToken.spelling
           << " (a checkpoint's F16 and BF16 weights are f32, converted at "
              "compile time)";
  FailureOr<Shape> shape = parseShape();
  if (failed(shape))
    return failure();
  WeightShapes::Info info{*type, {}, ""};
  for (const Dim &d : *shape) {
    if (d.isSymbolic())
      return error(name.loc) << "weight shapes must be static";
    info.shape.push_back(d.size);
  }
  if (weights) {
    if (std::optional<WeightShapes::Info> file =
            weights->lookup(ctx, weightName)) {
      if (!file->unsupported.empty())
        return error(name.loc)
               << "weight '" << weightName << "' " << file->unsupported;
      if (file->elementType != info.elementType || file->shape != info.shape)
        return error(name.loc)
               << "param '" << weightName
               << "' is declared differently from the weights file";
    }
  }
  declared->declared[weightName] = info;
  return endOfStatement();
}

LogicalResult Parser::parseOutput() {
  if (failed(requireTopLevel(consume())))
    return failure();
  do {
    Token name = consume();
    if (!name.is(Token::identifier))
      return error(name.loc) << "expected a value to output" << describe(name);
    auto it = frame().values.find(name.spelling);
    if (it == frame().values.end())
      return error(name.loc) << "unknown value '" << name.spelling << "'";
    if (it->second.kind != ExprValue::tensor)
      return error(name.loc) << "'" << name.spelling
                             << "' is not a tensor; only tensors are outputs";
    if (failed(builder->output(name.spelling, it->second.t, loc(name.loc))))
      return failure();
    sawOutput = true;
  } while (consumeIf(Token::comma));
  return endOfStatement();
}

LogicalResult Parser::defineName(const Token &name) {
  if (isKeyword(name.spelling))
    return error(name.loc) << "'" << name.spelling
                           << "' is a keyword and cannot name a value";
  if (isConstantName(name.spelling))
    return error(name.loc) << "'" << name.spelling
                           << "' is a constant and cannot be assigned";
  if (frame().loopVariables.contains(name.spelling))
    return error(name.loc) << "'" << name.spelling
                           << "' is the variable of a loop and cannot be "
                              "assigned in it";
  // Straight-line code at the top level assigns each name once; a loop or a
  // function body rebinds names so that `x = layer(x, ...)` chains.
  if (frame().values.count(name.spelling) && !mayRebind())
    return error(name.loc)
           << "'" << name.spelling
           << "' is already defined; names are single-assignment outside "
              "'def' and 'for'";
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
  frame().values[name.spelling] = *v;
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
  for (auto [name, tensor] : llvm::zip(targets, v->items)) {
    ExprValue value;
    value.kind = ExprValue::tensor;
    value.t = tensor;
    frame().values[name.spelling] = value;
  }
  return endOfStatement();
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::tfm::parseModel(llvm::SourceMgr &sourceMgr, MLIRContext *ctx,
                      WeightShapes *weights, Type cacheElementType) {
  Parser parser(sourceMgr, ctx, weights, cacheElementType);
  return parser.parse();
}
