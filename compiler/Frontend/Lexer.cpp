//===- Lexer.cpp - Tokens of the .tfm model language ----------------------===//
#include "compiler/Frontend/Lexer.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir::tfm;

Token Lexer::make(Token::Kind kind, const char *start, const char *end) {
  return Token{kind, llvm::StringRef(start, end - start),
               llvm::SMLoc::getFromPointer(start)};
}

void Lexer::skipTrivia() {
  const char *end = buffer.end();
  while (pos != end) {
    char c = *pos;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++pos;
    } else if (c == '#') {
      while (pos != end && *pos != '\n')
        ++pos;
    } else if (c == '\\' && pos + 1 != end && pos[1] == '\n') {
      pos += 2; // An explicit line continuation.
    } else if (c == '\n' && depth > 0) {
      ++pos;
    } else {
      break;
    }
  }
}

std::optional<Token> Lexer::lexPunctuation(const char *start) {
  const char *end = buffer.end();
  auto followedBy = [&](char next) { return pos != end && *pos == next; };
  switch (*start) {
  case '\n':
    return make(Token::newline, start, pos);
  case '(':
    ++depth;
    return make(Token::l_paren, start, pos);
  case ')':
    depth = depth > 0 ? depth - 1 : 0;
    return make(Token::r_paren, start, pos);
  case '[':
    ++depth;
    return make(Token::l_square, start, pos);
  case ']':
    depth = depth > 0 ? depth - 1 : 0;
    return make(Token::r_square, start, pos);
  case ',':
    return make(Token::comma, start, pos);
  case ':':
    return make(Token::colon, start, pos);
  case '=':
    if (followedBy('='))
      return make(Token::equal_equal, start, ++pos);
    return make(Token::equal, start, pos);
  case '<':
    if (followedBy('='))
      return make(Token::less_equal, start, ++pos);
    return make(Token::less, start, pos);
  case '>':
    if (followedBy('='))
      return make(Token::greater_equal, start, ++pos);
    return make(Token::greater, start, pos);
  case '!':
    if (followedBy('='))
      return make(Token::not_equal, start, ++pos);
    return std::nullopt;
  case '&':
    return make(Token::amp, start, pos);
  case '|':
    return make(Token::pipe, start, pos);
  case '.':
    if (end - pos >= 2 && pos[0] == '.' && pos[1] == '.')
      return make(Token::ellipsis, start, pos += 2);
    if (followedBy('.'))
      return make(Token::dot_dot, start, ++pos);
    return std::nullopt;
  case '+':
    return make(Token::plus, start, pos);
  case '-':
    return make(Token::minus, start, pos);
  case '*':
    return make(Token::star, start, pos);
  case '/':
    return make(Token::slash, start, pos);
  case '%':
    return make(Token::percent, start, pos);
  case '@':
    return make(Token::at, start, pos);
  default:
    return std::nullopt;
  }
}

Token Lexer::lexString(const char *start) {
  const char *end = buffer.end();
  while (pos != end && *pos != '"' && *pos != '\n')
    ++pos;
  if (pos == end || *pos != '"')
    return make(Token::error, start, pos);
  Token t = make(Token::string, start + 1, pos);
  ++pos;
  t.loc = llvm::SMLoc::getFromPointer(start);
  return t;
}

Token Lexer::lexNumber(const char *start) {
  const char *end = buffer.end();
  // A '.' followed by another is a range (`0..6`), not a decimal point.
  while (pos != end && (llvm::isDigit(*pos) ||
                        (*pos == '.' && (pos + 1 == end || pos[1] != '.'))))
    ++pos;
  if (pos != end && (*pos == 'e' || *pos == 'E')) {
    const char *save = pos++;
    if (pos != end && (*pos == '+' || *pos == '-'))
      ++pos;
    if (pos == end || !llvm::isDigit(*pos))
      pos = save;
    while (pos != end && llvm::isDigit(*pos))
      ++pos;
  }
  return make(Token::number, start, pos);
}

Token Lexer::next() {
  skipTrivia();
  const char *end = buffer.end();
  if (pos == end)
    return make(Token::eof, pos, pos);

  const char *start = pos;
  char c = *pos++;
  if (c == '"')
    return lexString(start);
  if (llvm::isDigit(c) || (c == '.' && pos != end && llvm::isDigit(*pos)))
    return lexNumber(start);
  if (std::optional<Token> punctuation = lexPunctuation(start))
    return *punctuation;
  if (llvm::isAlpha(c) || c == '_') {
    while (pos != end && (llvm::isAlnum(*pos) || *pos == '_'))
      ++pos;
    return make(Token::identifier, start, pos);
  }
  return make(Token::error, start, pos);
}
