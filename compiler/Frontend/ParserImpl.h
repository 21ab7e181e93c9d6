//===- ParserImpl.h - The .tfm parser, shared by its files -----*- C++ -*-===//
//
// The parser is split by what it parses: Parser.cpp holds the statements of
// the model's top level, ParserExpressions.cpp the expressions, and
// ParserBlocks.cpp the constructs that repeat statements (`def`, `for`,
// `return`, calls of functions defined with `def`) and strings with `{...}`.
// Everything is evaluated while it is parsed: a loop body or a function body
// is parsed again for each iteration or call, straight into ModelBuilder
// calls, so the IR is the same as if the file spelled every repetition out.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_FRONTEND_PARSERIMPL_H
#define TFM_COMPILER_FRONTEND_PARSERIMPL_H

#include "compiler/Frontend/Builtins.h"
#include "compiler/Frontend/Lexer.h"
#include "compiler/Frontend/ModelBuilder.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <memory>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::tfm::detail {

/// The deepest expression nesting the parser accepts. Each level takes
/// parseUnary, parsePrimary, parseCall or parseList and one parseBinary per
/// precedence level: 255 nested calls or parentheses fit in a 4 MB stack
/// (measured), half of the usual 8 MB. A function's body is parsed at the
/// depth of its call, so the bound holds across calls.
constexpr unsigned kMaxExpressionDepth = 256;
/// How deeply loops and function calls in progress may nest.
constexpr unsigned kMaxBlockDepth = 32;
/// The most iterations of one `for` loop.
constexpr int64_t kMaxLoopIterations = 4096;
/// The most statements a model may expand to, counting every statement of
/// every loop iteration and every call: far above any real model (a
/// 96-layer one with 40 statements a layer is 4000), low enough that a
/// runaway nest of loops fails quickly instead of exhausting memory.
constexpr int64_t kMaxStatements = 100000;
/// The most tokens a model may expand to, counting each run of a loop's or
/// function's body: bounds the work of a statement as kMaxStatements bounds
/// their number (one 400 KB expression in a loop would otherwise be
/// re-parsed 100000 times). A 96-layer model is about 10^5.
constexpr int64_t kMaxExpandedTokens = 20'000'000;
/// The longest string value (weight names, prefixes): far above any
/// checkpoint's names, low enough that `s = s + s` in a loop stops at once.
constexpr size_t kMaxStringBytes = 65536;

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
  std::optional<ConfigValue> config(StringRef key) override {
    return file ? file->config(key) : std::nullopt;
  }
  std::string configSource() const override {
    return file ? file->configSource() : "";
  }
  bool remarksOnDefaults() const override {
    return file && file->remarksOnDefaults();
  }
  llvm::StringMap<Info> declared;
  WeightShapes *file;
};

/// A function defined with `def NAME(PARAMS):` ... `end`.
struct FunctionDef {
  struct Parameter {
    Token name;
    /// A default, evaluated where the function is defined.
    std::optional<ExprValue> defaultValue;
  };
  Token name;
  std::vector<Parameter> params;
  /// Token indices: the body's first token and its `end`.
  size_t bodyBegin = 0, bodyEnd = 0;
  /// Definition order: a function calls only functions defined before it,
  /// which rules out recursion.
  unsigned ordinal = 0;
  bool called = false;
};

/// The names that the statements being parsed see: the model's top level,
/// or one call of a function (its parameters and its own names).
struct Frame {
  llvm::StringMap<ExprValue> values;
  /// Null at the top level.
  const FunctionDef *function = nullptr;
  /// The loops open in this frame, and their variables.
  unsigned loops = 0;
  llvm::StringSet<> loopVariables;
  /// The `if` branches open in this frame.
  unsigned conditionals = 0;
  /// What `return` gave, once it ran.
  std::optional<std::vector<ExprValue>> returned;
};

class Parser {
public:
  Parser(llvm::SourceMgr &sourceMgr, MLIRContext *ctx, WeightShapes *weights,
         Type cacheElementType = Type());
  FailureOr<OwningOpRef<ModuleOp>> parse();

private:
  //===--------------------------------------------------------------------===//
  // Tokens and diagnostics (Parser.cpp)
  //===--------------------------------------------------------------------===//
  const Token &peek(size_t ahead = 0) const {
    return (*toks)[std::min(index + ahead, toks->size() - 1)];
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
  /// The file location of a pointer into the buffer: a binary search over
  /// the line starts, so that long lines do not make parsing quadratic.
  FileLineColLoc fileLoc(llvm::SMLoc l) const;
  /// fileLoc inside the calls and loop iterations in progress: a
  /// CallSiteLoc whose callers say where (tfm-compile prints them as notes).
  Location loc(llvm::SMLoc l) const;
  InFlightDiagnostic error(llvm::SMLoc l) { return emitError(loc(l)); }
  InFlightDiagnostic error() { return error(peek().loc); }
  LogicalResult expect(Token::Kind kind, StringRef what);
  static std::string describe(const Token &t);
  /// Names that expressions read as constants, never as tensors.
  static bool isConstantName(StringRef name);
  /// Words that start or end blocks; they cannot name anything.
  static bool isKeyword(StringRef name);

  //===--------------------------------------------------------------------===//
  // Top-level statements (Parser.cpp)
  //===--------------------------------------------------------------------===//
  LogicalResult parseStatement();
  LogicalResult parseModelName();
  LogicalResult parseInput();
  LogicalResult parseParam();
  LogicalResult parseOutput();
  LogicalResult parseAssignment();
  LogicalResult parseTupleAssignment();
  /// Checks that `name` may be assigned in the current frame.
  LogicalResult defineName(const Token &name);
  /// `input`, `output` and `def` stand only at the top level.
  LogicalResult requireTopLevel(const Token &keyword);
  FailureOr<Type> parseDtype();
  FailureOr<Shape> parseShape();
  LogicalResult endOfStatement();

  //===--------------------------------------------------------------------===//
  // Expressions (ParserExpressions.cpp)
  //===--------------------------------------------------------------------===//
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
  /// `+` joins two strings; any other operator on a string is an error.
  FailureOr<ExprValue> stringOperator(const Token &op, const ExprValue &lhs,
                                      const ExprValue &rhs);

  //===--------------------------------------------------------------------===//
  // Functions, loops and strings (ParserBlocks.cpp)
  //===--------------------------------------------------------------------===//
  /// Pairs every `def` and `for` with its `end`, and records where each
  /// function is defined (for "defined after its use" errors).
  void indexBlocks();
  bool isStatementHead(size_t i) const {
    return i == 0 || tokens[i - 1].is(Token::newline);
  }
  LogicalResult parseDef();
  LogicalResult parseDefParameters(FunctionDef &fn);
  /// The body's shape, checked where it is defined: no `def` inside, one
  /// `return`, at its end and outside loops.
  LogicalResult checkFunctionBody(const FunctionDef &fn);
  LogicalResult parseFor();
  FailureOr<int64_t> parseLoopBound();
  /// `if COND:` ... [`elif COND:` ...] [`else:` ...] `end`: the first branch
  /// whose condition (true/false, known at compile time) holds is parsed;
  /// the others are skipped unparsed, so they may name weights the file
  /// does not hold.
  LogicalResult parseIf();
  LogicalResult parseReturn();
  /// Parses the statements of tokens [begin, end) in the current frame.
  LogicalResult runBlock(size_t begin, size_t end);
  /// Counts one run of the body of tokens [begin, end) (a loop iteration or
  /// a call, written at `at`) toward kMaxStatements and kMaxExpandedTokens.
  LogicalResult countBodyRun(llvm::SMLoc at, size_t begin, size_t end);
  /// Fails at `at` when a string would exceed kMaxStringBytes.
  LogicalResult checkStringLength(llvm::SMLoc at, size_t bytes);
  /// Expands a call of a function defined with `def`.
  FailureOr<ExprValue> callFunction(FunctionDef &fn, const Token &name,
                                    CallArguments &args);
  LogicalResult bindArguments(const FunctionDef &fn, const Token &name,
                              CallArguments &args,
                              std::vector<ExprValue> &values);
  /// The value of a string token, with each `{EXPR}` replaced by the value
  /// of EXPR (a number or a string) and `{{`/`}}` by a brace.
  FailureOr<std::string> interpolate(const Token &t);
  FailureOr<std::string> evaluateInBraces(StringRef text);
  /// Enters a call or a loop iteration: `what` is the note that
  /// diagnostics inside it carry, at `at`.
  void pushCaller(llvm::SMLoc at, const Twine &what);
  Frame &frame() { return *frames.back(); }
  /// Whether assigning an existing name rebinds it (in a function or a
  /// loop) rather than being an error.
  bool mayRebind() const {
    return frames.back()->function || frames.back()->loops > 0 ||
           frames.back()->conditionals > 0;
  }

  MLIRContext *ctx;
  WeightShapes *weights;
  /// --kv-cache-dtype: every cache's element type (null: as declared).
  Type cacheElementType;
  std::vector<Token> tokens;
  /// The tokens being read: `tokens`, or those of a string's `{...}`.
  const std::vector<Token> *toks = &tokens;
  /// Where each line of the buffer starts, for loc().
  std::vector<const char *> lineStarts;
  StringAttr fileName;
  size_t index = 0;
  std::unique_ptr<ModelBuilder> builder;
  std::unique_ptr<DeclaredWeights> declared;
  /// frames.back() is the frame being parsed; frames[0] the top level.
  std::vector<std::unique_ptr<Frame>> frames;
  llvm::StringMap<FunctionDef> functions;
  /// The token index of the `end` of each `def`, `for` and `if`, by the
  /// index of its keyword.
  llvm::DenseMap<size_t, size_t> blockEnds;
  /// The token indices of each `if`'s `elif`s and `else`, in order.
  llvm::DenseMap<size_t, std::vector<size_t>> branchHeads;
  /// Every `def NAME` of the file, with where it stands.
  llvm::StringMap<llvm::SMLoc> definitions;
  /// The calls and loop iterations in progress, as a location chain.
  LocationAttr callers;
  bool sawOutput = false;
  /// How deeply the expression being parsed nests: parentheses, calls and
  /// unary minuses each add a level. Bounded so that the recursion cannot
  /// overflow the stack.
  unsigned depth = 0;
  /// Loops and function calls in progress.
  unsigned blockDepth = 0;
  int64_t statements = 0;
  int64_t expandedTokens = 0;
  /// Set while a string's `{...}` is evaluated.
  bool inBraces = false;
  /// The named dimensions of the inputs.
  llvm::StringSet<> dimNames;
};

} // namespace mlir::tfm::detail

#endif // TFM_COMPILER_FRONTEND_PARSERIMPL_H
