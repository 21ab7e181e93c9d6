//===- Lexer.h - Tokens of the .tfm model language --------------*- C++ -*-===//
#ifndef TFM_COMPILER_FRONTEND_LEXER_H
#define TFM_COMPILER_FRONTEND_LEXER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <optional>

namespace mlir::tfm {

struct Token {
  enum Kind {
    eof,
    newline,
    identifier,
    number,
    string,
    l_paren,
    r_paren,
    l_square,
    r_square,
    comma,
    colon,
    equal,
    plus,
    minus,
    star,
    slash,
    /// `%`: the remainder of two integers known at compile time.
    percent,
    at,
    less,
    less_equal,
    greater,
    greater_equal,
    equal_equal,
    not_equal,
    amp,
    pipe,
    ellipsis,
    /// `..`, the range of a `for` loop.
    dot_dot,
    error,
  };
  Kind kind = eof;
  /// The token's text; for strings, without the quotes.
  llvm::StringRef spelling;
  llvm::SMLoc loc;
  bool is(Kind k) const { return kind == k; }
};

/// Splits a .tfm buffer into tokens. Newlines are tokens because statements
/// end at the end of a line; a line ending inside parentheses or brackets
/// continues the statement, so the lexer drops those.
class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer)
      : buffer(buffer), pos(buffer.begin()) {}
  Token next();

private:
  Token make(Token::Kind kind, const char *start, const char *end);
  /// Blanks, comments, line continuations, and newlines inside brackets.
  void skipTrivia();
  /// The operator or bracket that starts at `start` (`pos` is one past it);
  /// none when the character starts no punctuation.
  std::optional<Token> lexPunctuation(const char *start);
  /// The rest of a number or a string literal that starts at `start`.
  Token lexNumber(const char *start);
  Token lexString(const char *start);
  llvm::StringRef buffer;
  const char *pos;
  int depth = 0;
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_FRONTEND_LEXER_H
