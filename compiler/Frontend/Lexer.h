//===- Lexer.h - Tokens of the .tfm model language --------------*- C++ -*-===//
#ifndef TFM_COMPILER_FRONTEND_LEXER_H
#define TFM_COMPILER_FRONTEND_LEXER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

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
  llvm::StringRef buffer;
  const char *pos;
  int depth = 0;
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_FRONTEND_LEXER_H
