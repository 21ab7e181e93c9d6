//===- ParserBlocks.cpp - def, for, return and string interpolation -------===//
//
// Repetition without copy-paste, expanded while parsing: a `for` body is
// parsed once per iteration and a function's body once per call, each time
// straight into ModelBuilder calls, so the module is the one the file would
// give with every repetition written out. Diagnostics inside a body carry
// the calls and iterations that led there (CallSiteLoc callers, printed as
// notes).
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontend/ParserImpl.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

void Parser::indexBlocks() {
  std::vector<size_t> open;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].is(Token::identifier) || !isStatementHead(i))
      continue;
    StringRef word = tokens[i].spelling;
    if ((word == "elif" || word == "else") && !open.empty() &&
        tokens[open.back()].spelling == "if") {
      branchHeads[open.back()].push_back(i);
      continue;
    }
    if (word == "def" || word == "for" || word == "if") {
      open.push_back(i);
      if (word == "def" && i + 1 < tokens.size() &&
          tokens[i + 1].is(Token::identifier))
        definitions.try_emplace(tokens[i + 1].spelling, tokens[i + 1].loc);
    } else if (word == "end" && !open.empty()) {
      blockEnds[open.back()] = i;
      open.pop_back();
    }
  }
}

void Parser::pushCaller(llvm::SMLoc at, const Twine &what) {
  LocationAttr site = NameLoc::get(StringAttr::get(ctx, what), fileLoc(at));
  callers = callers ? LocationAttr(CallSiteLoc::get(site, callers)) : site;
}

LogicalResult Parser::runBlock(size_t begin, size_t end) {
  index = begin;
  while (index < end) {
    if (consumeIf(Token::newline))
      continue;
    if (failed(parseStatement()))
      return failure();
  }
  if (index != end) // A statement ran past the block's `end`.
    return error(tokens[end].loc) << "expected a statement before 'end'";
  return success();
}

LogicalResult Parser::countBodyRun(llvm::SMLoc at, size_t begin, size_t end) {
  // An empty body still costs a run (and a call-site location), and a body
  // of one huge expression costs every token each time it runs.
  if (++statements > kMaxStatements)
    return error(at) << "the model expands to more than " << kMaxStatements
                     << " statements (counting every loop iteration and call)";
  expandedTokens += int64_t(end - begin) + 1;
  if (expandedTokens > kMaxExpandedTokens)
    return error(at) << "the model expands to more than " << kMaxExpandedTokens
                     << " tokens (counting every loop iteration and call)";
  return success();
}

//===----------------------------------------------------------------------===//
// def
//===----------------------------------------------------------------------===//

LogicalResult Parser::parseDef() {
  size_t start = index;
  Token kw = consume();
  if (failed(requireTopLevel(kw)))
    return failure();
  Token name = consume();
  if (!name.is(Token::identifier))
    return error(name.loc) << "expected the function's name" << describe(name);
  if (isKeyword(name.spelling) || isConstantName(name.spelling))
    return error(name.loc) << "'" << name.spelling
                           << "' cannot name a function";
  if (lookupBuiltin(name.spelling))
    return error(name.loc) << "'" << name.spelling
                           << "' is a builtin function and cannot be "
                              "redefined";
  auto previous = functions.find(name.spelling);
  if (previous != functions.end()) {
    InFlightDiagnostic diag = error(name.loc);
    diag << "function '" << name.spelling << "' is already defined";
    diag.attachNote(fileLoc(previous->second.name.loc)) << "defined here";
    return diag;
  }
  FunctionDef fn;
  fn.name = name;
  fn.ordinal = functions.size();
  if (failed(parseDefParameters(fn)) ||
      failed(expect(Token::colon, "':' after the parameters")) ||
      failed(endOfStatement()))
    return failure();
  auto end = blockEnds.find(start);
  if (end == blockEnds.end())
    return error(kw.loc) << "'def' has no matching 'end'";
  fn.bodyBegin = index;
  fn.bodyEnd = end->second;
  if (failed(checkFunctionBody(fn)))
    return failure();
  functions.try_emplace(name.spelling, std::move(fn));
  index = end->second + 1;
  return endOfStatement();
}

LogicalResult Parser::parseDefParameters(FunctionDef &fn) {
  if (failed(expect(Token::l_paren, "'(' and the parameters")))
    return failure();
  if (consumeIf(Token::r_paren))
    return success();
  do {
    Token param = consume();
    if (!param.is(Token::identifier))
      return error(param.loc)
             << "expected a parameter's name" << describe(param);
    if (isKeyword(param.spelling) || isConstantName(param.spelling))
      return error(param.loc)
             << "'" << param.spelling << "' cannot name a parameter";
    for (const FunctionDef::Parameter &other : fn.params)
      if (other.name.spelling == param.spelling)
        return error(param.loc)
               << "parameter '" << param.spelling << "' appears twice";
    FunctionDef::Parameter p{param, std::nullopt};
    if (consumeIf(Token::equal)) {
      FailureOr<ExprValue> v = parseExpr();
      if (failed(v))
        return failure();
      if (v->kind == ExprValue::tensor || v->kind == ExprValue::tuple)
        return error(v->loc) << "a parameter's default is a number, a "
                                "string, true/false or an element type";
      p.defaultValue = *v;
    } else if (!fn.params.empty() && fn.params.back().defaultValue) {
      return error(param.loc) << "parameter '" << param.spelling
                              << "' needs a default: it follows one that "
                                 "has one";
    }
    fn.params.push_back(std::move(p));
  } while (consumeIf(Token::comma));
  return expect(Token::r_paren, "',' or ')'");
}

/// Whether token `t` is the word `word` (not a string that spells it).
static bool isWord(const Token &t, StringRef word) {
  return t.is(Token::identifier) && t.spelling == word;
}

LogicalResult Parser::checkFunctionBody(const FunctionDef &fn) {
  size_t lastHead = fn.bodyEnd;
  for (size_t i = fn.bodyBegin; i < fn.bodyEnd; ++i) {
    if (!isStatementHead(i) || tokens[i].is(Token::newline))
      continue;
    lastHead = i;
    if (isWord(tokens[i], "def"))
      return error(tokens[i].loc)
             << "functions are defined at the top level, not inside "
                "another function";
    if (isWord(tokens[i], "for") || isWord(tokens[i], "if")) {
      StringRef word = tokens[i].spelling;
      auto end = blockEnds.find(i);
      if (end == blockEnds.end())
        return error(tokens[i].loc) << "'" << word << "' has no matching 'end'";
      for (size_t j = i + 1; j < end->second; ++j)
        if (isStatementHead(j) && isWord(tokens[j], "return"))
          return error(tokens[j].loc)
                 << "'return' inside " << (word == "for" ? "a loop" : "'if'")
                 << ": a function returns once, as its last statement";
      i = end->second;
      continue;
    }
    if (!isWord(tokens[i], "return"))
      continue;
    for (size_t j = i + 1; j < fn.bodyEnd; ++j)
      if (isStatementHead(j) && !tokens[j].is(Token::newline))
        return error(tokens[j].loc)
               << "a statement after 'return': 'return' is the last "
                  "statement of a function";
  }
  if (lastHead == fn.bodyEnd || !isWord(tokens[lastHead], "return"))
    return error(tokens[fn.bodyEnd].loc)
           << "function '" << fn.name.spelling << "' ends without 'return'";
  return success();
}

LogicalResult Parser::parseReturn() {
  Token kw = consume();
  if (!frame().function)
    return error(kw.loc) << "'return' outside a function";
  std::vector<ExprValue> values;
  do {
    FailureOr<ExprValue> v = parseExpr();
    if (failed(v))
      return failure();
    if (v->kind == ExprValue::tuple)
      return error(v->loc) << "a call that returns " << v->items.size()
                           << " values cannot be returned as one; name them "
                              "first ('a, b = ...')";
    values.push_back(std::move(*v));
  } while (consumeIf(Token::comma));
  if (values.size() > 1)
    for (const ExprValue &v : values)
      if (v.kind != ExprValue::tensor)
        return error(v.loc) << "a function that returns several values "
                               "returns tensors only";
  frame().returned = std::move(values);
  return endOfStatement();
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

LogicalResult Parser::bindArguments(const FunctionDef &fn, const Token &name,
                                    CallArguments &args,
                                    std::vector<ExprValue> &values) {
  StringRef fnName = name.spelling;
  if (args.positional.size() > fn.params.size())
    return error(args.positional[fn.params.size()].loc)
           << fnName << "() takes " << fn.params.size() << " argument"
           << (fn.params.size() == 1 ? "" : "s") << " but "
           << args.positional.size() << " were given";
  for (auto &kv : args.keywords) {
    auto it = llvm::find_if(fn.params, [&](const FunctionDef::Parameter &p) {
      return p.name.spelling == kv.getKey();
    });
    if (it == fn.params.end())
      return error(kv.getValue().loc)
             << fnName << "() has no argument '" << kv.getKey() << "'";
    if (size_t(it - fn.params.begin()) < args.positional.size())
      return error(kv.getValue().loc)
             << fnName << "(): '" << kv.getKey()
             << "' is given by position and by keyword";
  }
  for (auto [i, p] : llvm::enumerate(fn.params)) {
    const ExprValue *v = nullptr;
    if (i < args.positional.size())
      v = &args.positional[i];
    else if (auto it = args.keywords.find(p.name.spelling);
             it != args.keywords.end())
      v = &it->second;
    else if (p.defaultValue)
      v = &*p.defaultValue;
    if (!v)
      return error(name.loc)
             << fnName << "() needs the argument '" << p.name.spelling << "'";
    if (v->kind == ExprValue::tuple)
      return error(v->loc) << fnName << "(): '" << p.name.spelling
                           << "' is a call that returns " << v->items.size()
                           << " values; name them first ('a, b = ...')";
    values.push_back(*v);
  }
  return success();
}

FailureOr<ExprValue> Parser::callFunction(FunctionDef &fn, const Token &name,
                                          CallArguments &args) {
  if (inBraces)
    return error(name.loc) << "a function defined with 'def' cannot be "
                              "called inside a string's braces";
  if (const FunctionDef *caller = frame().function) {
    if (caller == &fn)
      return error(name.loc) << "function '" << fn.name.spelling
                             << "' calls itself; recursion is not supported "
                                "(calls are expanded where they are written)";
    if (fn.ordinal > caller->ordinal)
      return error(name.loc)
             << "function '" << caller->name.spelling << "' calls '"
             << fn.name.spelling
             << "', which is defined after it; a function calls only "
                "functions defined before it";
  }
  std::vector<ExprValue> values;
  if (failed(bindArguments(fn, name, args, values)))
    return failure();
  if (blockDepth >= kMaxBlockDepth)
    return error(name.loc) << "loops and function calls nest more than "
                           << kMaxBlockDepth << " levels deep";
  fn.called = true;

  auto frameOfCall = std::make_unique<Frame>();
  frameOfCall->function = &fn;
  for (auto [p, v] : llvm::zip(fn.params, values))
    frameOfCall->values[p.name.spelling] = v;
  ++blockDepth;
  frames.push_back(std::move(frameOfCall));
  LocationAttr savedCallers = callers;
  size_t savedIndex = index;
  llvm::scope_exit leave([&] {
    --blockDepth;
    frames.pop_back();
    callers = savedCallers;
    index = savedIndex;
  });
  pushCaller(name.loc, "in '" + fn.name.spelling + "', called here");
  if (failed(countBodyRun(name.loc, fn.bodyBegin, fn.bodyEnd)) ||
      failed(runBlock(fn.bodyBegin, fn.bodyEnd)))
    return failure();
  if (!frame().returned)
    return error(tokens[fn.bodyEnd].loc) << "the function ended without "
                                            "'return'";
  std::vector<ExprValue> returned = std::move(*frame().returned);
  if (returned.size() == 1) {
    ExprValue v = std::move(returned.front());
    v.loc = name.loc;
    return v;
  }
  ExprValue tuple;
  tuple.kind = ExprValue::tuple;
  tuple.loc = name.loc;
  for (ExprValue &v : returned)
    tuple.items.push_back(v.t);
  return tuple;
}

//===----------------------------------------------------------------------===//
// for
//===----------------------------------------------------------------------===//

FailureOr<int64_t> Parser::parseLoopBound() {
  llvm::SMLoc at = peek().loc;
  FailureOr<ExprValue> v = parseExpr();
  if (failed(v))
    return failure();
  if (v->kind != ExprValue::number || !v->isInteger)
    return error(at) << "a loop bound must be an integer known at compile "
                        "time";
  if (!(std::fabs(v->num) <= double(kMaxDimension)))
    return error(at) << "a loop bound must be at most 2^40 in magnitude";
  return int64_t(v->num);
}

LogicalResult Parser::parseFor() {
  size_t start = index;
  Token kw = consume();
  Token var = consume();
  if (!var.is(Token::identifier))
    return error(var.loc) << "expected the loop's variable" << describe(var);
  if (frame().values.count(var.spelling))
    return error(var.loc) << "the loop variable '" << var.spelling
                          << "' would hide a value of that name";
  if (failed(defineName(var)))
    return failure();
  Token in = consume();
  if (!in.is(Token::identifier) || in.spelling != "in")
    return error(in.loc) << "expected 'in'" << describe(in);
  FailureOr<int64_t> first = parseLoopBound();
  if (failed(first) || failed(expect(Token::dot_dot, "'..' (for i in A..B)")))
    return failure();
  FailureOr<int64_t> last = parseLoopBound();
  if (failed(last) || failed(expect(Token::colon, "':' after the range")) ||
      failed(endOfStatement()))
    return failure();
  auto end = blockEnds.find(start);
  if (end == blockEnds.end())
    return error(kw.loc) << "'for' has no matching 'end'";
  if (*last - *first > kMaxLoopIterations)
    return error(kw.loc) << "the loop runs " << *last - *first
                         << " times; at most " << kMaxLoopIterations;
  if (blockDepth >= kMaxBlockDepth)
    return error(kw.loc) << "loops and function calls nest more than "
                         << kMaxBlockDepth << " levels deep";

  size_t bodyBegin = index, bodyEnd = end->second;
  Frame &f = frame();
  ++blockDepth;
  ++f.loops;
  f.loopVariables.insert(var.spelling);
  LocationAttr savedCallers = callers;
  llvm::scope_exit leave([&] {
    --blockDepth;
    --f.loops;
    f.loopVariables.erase(var.spelling);
    f.values.erase(var.spelling);
    callers = savedCallers;
  });
  for (int64_t i = *first; i < *last; ++i) {
    if (failed(countBodyRun(kw.loc, bodyBegin, bodyEnd)))
      return failure();
    ExprValue value;
    value.num = double(i);
    value.isInteger = true;
    f.values[var.spelling] = value;
    callers = savedCallers;
    pushCaller(kw.loc, "in iteration " + var.spelling + " = " + Twine(i) +
                           " of this loop");
    if (failed(runBlock(bodyBegin, bodyEnd)))
      return failure();
  }
  index = bodyEnd + 1;
  return endOfStatement();
}

//===----------------------------------------------------------------------===//
// if
//===----------------------------------------------------------------------===//

LogicalResult Parser::parseIf() {
  size_t start = index;
  Token kw = consume();
  auto end = blockEnds.find(start);
  if (end == blockEnds.end())
    return error(kw.loc) << "'if' has no matching 'end'";
  // Where each branch stops: at the next `elif`/`else`, the last at `end`.
  std::vector<size_t> stops = branchHeads.lookup(start);
  for (size_t k = 0; k + 1 < stops.size(); ++k)
    if (isWord(tokens[stops[k]], "else"))
      return error(tokens[stops[k + 1]].loc)
             << "'" << tokens[stops[k + 1]].spelling
             << "' after 'else': 'else' is the last branch of an 'if'";
  stops.push_back(end->second);
  if (blockDepth >= kMaxBlockDepth)
    return error(kw.loc) << "loops, conditionals and function calls nest "
                            "more than "
                         << kMaxBlockDepth << " levels deep";

  Frame &f = frame();
  for (size_t branch = 0;; ++branch) {
    bool taken = true;
    if (branch == 0 || !isWord(tokens[stops[branch - 1]], "else")) {
      llvm::SMLoc at = peek().loc;
      FailureOr<ExprValue> cond = parseExpr();
      if (failed(cond))
        return failure();
      if (cond->kind != ExprValue::boolean)
        return error(at) << "a condition must be true or false known at "
                            "compile time (a comparison of numbers or "
                            "strings, has_weight(...), config(...)), not "
                         << (cond->kind == ExprValue::tensor ? "a tensor"
                                                             : "this value");
      taken = cond->flag;
    }
    if (failed(expect(Token::colon, "':'")) || failed(endOfStatement()))
      return failure();
    if (taken) {
      ++blockDepth;
      ++f.conditionals;
      llvm::scope_exit leave([&] {
        --blockDepth;
        --f.conditionals;
      });
      if (failed(runBlock(index, stops[branch])))
        return failure();
      break;
    }
    if (stops[branch] == end->second)
      break;
    index = stops[branch] + 1; // after `elif` or `else`
  }
  index = end->second + 1;
  return endOfStatement();
}

//===----------------------------------------------------------------------===//
// Strings
//===----------------------------------------------------------------------===//

LogicalResult Parser::checkStringLength(llvm::SMLoc at, size_t bytes) {
  if (bytes <= kMaxStringBytes)
    return success();
  return error(at) << "the string would be longer than " << kMaxStringBytes
                   << " bytes";
}

FailureOr<std::string> Parser::interpolate(const Token &t) {
  StringRef s = t.spelling;
  if (!s.contains('{') && !s.contains('}'))
    return s.str();
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool doubled = i + 1 < s.size() && s[i + 1] == c;
    if ((c == '{' || c == '}') && doubled) {
      out += c;
      ++i;
      continue;
    }
    llvm::SMLoc at = llvm::SMLoc::getFromPointer(s.data() + i);
    if (c == '}')
      return error(at) << "a '}' without '{' in a string (write '}}' for a "
                          "brace)";
    if (c != '{') {
      out += c;
      continue;
    }
    size_t close = s.find('}', i + 1);
    if (close == StringRef::npos)
      return error(at) << "a '{' without '}' in a string (write '{{' for a "
                          "brace)";
    FailureOr<std::string> value = evaluateInBraces(s.slice(i + 1, close));
    if (failed(value) ||
        failed(checkStringLength(t.loc, out.size() + value->size() + s.size())))
      return failure();
    out += *value;
    i = close;
  }
  return out;
}

FailureOr<std::string> Parser::evaluateInBraces(StringRef text) {
  llvm::SMLoc at = llvm::SMLoc::getFromPointer(text.data());
  if (inBraces)
    return error(at) << "strings in a string's braces cannot have braces";
  // The text lies in the file's buffer, so its tokens carry their own
  // line and column.
  std::vector<Token> inner;
  Lexer lexer(text);
  for (Token t = lexer.next();; t = lexer.next()) {
    inner.push_back(t);
    if (t.is(Token::eof))
      break;
  }
  if (inner.size() == 1)
    return error(at) << "empty '{}' in a string (write '{{}}' for braces)";
  const std::vector<Token> *savedToks = toks;
  size_t savedIndex = index;
  toks = &inner;
  index = 0;
  inBraces = true;
  llvm::scope_exit leave([&] {
    toks = savedToks;
    index = savedIndex;
    inBraces = false;
  });
  FailureOr<ExprValue> v = parseExpr();
  if (failed(v))
    return failure();
  if (!peek().is(Token::eof))
    return error() << "expected '}'" << describe(peek());
  switch (v->kind) {
  case ExprValue::string:
    return v->str;
  case ExprValue::boolean:
    return std::string(v->flag ? "true" : "false");
  case ExprValue::number:
    if (v->isInteger && std::fabs(v->num) <= double(kMaxDimension))
      return std::to_string(int64_t(v->num));
    {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << llvm::format("%g", v->num);
      return text;
    }
  default:
    return error(at) << "'{" << text
                     << "}' in a string must be a number or a string";
  }
}
