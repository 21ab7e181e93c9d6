//===- HeaderEmitter.cpp - The per-model C header -------------------------===//
#include "compiler/Target/HeaderEmitter.h"
#include "compiler/Target/ExecDeclaration.inc"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tfm;

/// Whether `name` cannot be a parameter or macro-parameter name in a header
/// compiled as C (C89 to C23) or C++ (to C++23): a keyword, an alternative
/// token, a name the standards reserve (`_Bool`, `__x`), a typedef or macro
/// of <stdint.h>, <stdbool.h> and <stddef.h> (`int64_t`, `NULL`), a POSIX
/// `_t` type, or one of the header's own macros.
static bool isReservedInC(StringRef name) {
  static const char *const keywords[] = {
      // C
      "auto", "break", "case", "char", "const", "continue", "default", "do",
      "double", "else", "enum", "extern", "float", "for", "goto", "if",
      "inline", "int", "long", "register", "restrict", "return", "short",
      "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
      "unsigned", "void", "volatile", "while", "alignas", "alignof", "bool",
      "constexpr", "false", "nullptr", "static_assert", "thread_local", "true",
      "typeof", "typeof_unqual",
      // C++ keywords and alternative tokens
      "and", "and_eq", "asm", "bitand", "bitor", "catch", "char8_t", "char16_t",
      "char32_t", "class", "co_await", "co_return", "co_yield", "compl",
      "concept", "consteval", "constinit", "const_cast", "decltype", "delete",
      "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace",
      "new", "noexcept", "not", "not_eq", "operator", "or", "or_eq", "private",
      "protected", "public", "reflexpr", "reinterpret_cast", "requires",
      "static_cast", "template", "this", "throw", "try", "typeid", "typename",
      "using", "virtual", "wchar_t", "xor", "xor_eq",
      // Macros of <stddef.h>, <stdint.h> and <stdbool.h> that are not
      // caught by the patterns below.
      "NULL", "offsetof", "SIZE_MAX", "PTRDIFF_MIN", "PTRDIFF_MAX",
      "SIG_ATOMIC_MIN", "SIG_ATOMIC_MAX", "WCHAR_MIN", "WCHAR_MAX", "WINT_MIN",
      "WINT_MAX", "INTMAX_C", "UINTMAX_C",
      // The parameters _run_with_workspace and _run_with_exec add after
      // the symbols.
      "workspace", "workspace_bytes", "exec"};
  if (llvm::is_contained(keywords, name))
    return true;
  // _Bool, _Complex, __attribute__, ...: reserved to the implementation.
  if (name.starts_with("__") ||
      (name.size() >= 2 && name[0] == '_' && llvm::isUpper(name[1])))
    return true;
  // int64_t, size_t, uintptr_t, ...: every POSIX `_t` name.
  if (name.ends_with("_t"))
    return true;
  // INT64_MAX, UINT_LEAST8_MIN, INTPTR_MAX, INT32_C, ...
  if ((name.starts_with("INT") || name.starts_with("UINT")) &&
      (name.ends_with("_MIN") || name.ends_with("_MAX") ||
       name.ends_with("_C")))
    return true;
  // The header's own macros: TFM_EXEC_DEFINED, TFM_<MODEL>_...
  return name.starts_with("TFM_");
}

namespace {
/// C identifiers for the tensor and symbol names of a signature: a name C or
/// C++ would misread gets a trailing underscore (names starting with `_` a
/// `tfm` prefix, with `TFM_` a `tfm_` prefix), and more underscores until it
/// is distinct from every other name.
class CNames {
public:
  explicit CNames(const Signature &sig) {
    // In signature order, so that the choice is deterministic.
    SmallVector<StringRef> ordered;
    llvm::StringSet<> original;
    auto add = [&](StringRef name) {
      if (original.insert(name).second)
        ordered.push_back(name);
    };
    for (const auto *list : {&sig.inputs, &sig.outputs})
      for (const SignatureTensor &t : *list)
        add(t.name);
    for (const std::string &s : sig.symbols)
      add(s);
    llvm::StringSet<> taken;
    auto assign = [&](StringRef name) {
      if (names.count(name))
        return;
      if (!isReservedInC(name)) {
        names[name] = name.str();
        taken.insert(name);
        return;
      }
      // Prefixes make names that start reserved ones (`_Bool`, `TFM_...`)
      // safe; a suffix the rest. Appending `_` then ends every match of
      // isReservedInC, so the loop only steps past names already in use.
      std::string c = name.starts_with("_")      ? ("tfm" + name).str()
                      : name.starts_with("TFM_") ? ("tfm_" + name).str()
                                                 : (name + "_").str();
      while (isReservedInC(c) || original.count(c) || taken.count(c))
        c += "_";
      names[name] = c;
      taken.insert(c);
    };
    // Names that need no change first, so that they keep their spelling.
    for (StringRef name : ordered)
      if (!isReservedInC(name))
        assign(name);
    for (StringRef name : ordered)
      assign(name);
  }
  const std::string &operator()(StringRef name) const {
    return names.find(name)->second;
  }

private:
  llvm::StringMap<std::string> names;
};
} // namespace

/// `text` for a /* */ comment: no `*/` or `/*` that would end or nest it,
/// and no line breaks or other control characters.
static std::string commentText(StringRef text) {
  std::string out;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      out += '?';
    else if (c == '/' && !out.empty() && out.back() == '*')
      out += " /";
    else if (c == '*' && !out.empty() && out.back() == '/')
      out += " *";
    else
      out += c;
  }
  return out;
}

static StringRef cType(StringRef dtype) {
  if (dtype == "f32")
    return "float";
  if (dtype == "f64")
    return "double";
  if (dtype == "i32")
    return "int32_t";
  if (dtype == "bool")
    return "bool"; // one byte per element, 0 or 1
  // C has no bfloat16 and no portable half: their bits, as the runtime's
  // tfm_f32_to_bf16/f16 and tfm_bf16/f16_to_f32 convert them.
  if (dtype == "bf16" || dtype == "f16")
    return "uint16_t";
  if (dtype == "i8")
    return "int8_t";
  return "int64_t";
}

void mlir::tfm::emitHeader(const Signature &sig, StringRef source,
                           llvm::raw_ostream &os, bool externalWeights,
                           const HeaderTokenizer *tokenizer) {
  CNames cName(sig);
  std::string prefix = "tfm_" + sig.model;
  std::string macro = llvm::StringRef(prefix).upper();
  auto shapeText = [&](const SignatureTensor &t) {
    std::string s = t.dtype + "[";
    for (auto [i, d] : llvm::enumerate(t.dims))
      s += (i ? ", " : "") + (d.symbol >= 0 ? sig.symbols[d.symbol]
                                            : std::to_string(d.staticSize));
    return s + "]";
  };
  // Element count as a C expression over the symbol parameters.
  auto countExpr = [&](const SignatureTensor &t) {
    std::string s;
    for (const SignatureDim &d : t.dims)
      s += (s.empty() ? "" : " * ") +
           (d.symbol >= 0 ? "(int64_t)(" + cName(sig.symbols[d.symbol]) + ")"
                          : std::to_string(d.staticSize) + "LL");
    return s.empty() ? std::string("1LL") : s;
  };
  // A size macro takes the symbols its tensor's shape names, in the
  // signature's order: a cache sized by batch alone takes (batch).
  auto symbolParams = [&](const SignatureTensor &t) {
    std::string params;
    for (auto [i, s] : llvm::enumerate(sig.symbols))
      if (llvm::any_of(t.dims, [&, i = i](const SignatureDim &d) {
            return d.symbol == int64_t(i);
          }))
        params += (params.empty() ? "" : ", ") + cName(s);
    return params;
  };

  os << "/* " << prefix << ".h - generated by tfm-compile from "
     << commentText(source) << ". Do not edit. */\n";
  os << "#ifndef " << macro << "_H\n#define " << macro << "_H\n\n";
  bool usesBool = llvm::any_of(
      sig.inputs, [](const SignatureTensor &t) { return t.dtype == "bool"; });
  if (tokenizer)
    os << "#include <stddef.h>\n";
  os << "#include <stdint.h>\n";
  if (usesBool)
    os << "#include <stdbool.h>\n";
  os << "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  // runtime/include/tfm/exec.h, copied in at build time: the generated
  // header stands alone, and the two cannot drift apart.
  os << kExecDeclaration << "\n";
  os << "/* Model '" << sig.model << "'.\n";
  if (!sig.symbols.empty())
    os << " * Symbolic dimensions (passed at run time): "
       << llvm::join(sig.symbols, ", ") << ".\n";
  for (const SignatureTensor &t : sig.inputs)
    os << (t.cache ? " * cache  " : " * input  ") << t.name << ": "
       << shapeText(t) << (t.cache ? " (read and written in place)" : "")
       << "\n";
  for (const SignatureTensor &t : sig.outputs)
    os << " * output " << t.name << ": " << shapeText(t) << "\n";
  os << " * Buffers are dense row-major; outputs are written into memory the\n"
        " * caller provides, which the functions never keep. The _run\n"
        " * functions allocate only scratch memory of their own, freed before\n"
        " * they return; the _with_workspace ones use the caller's instead\n"
        " * and allocate nothing.\n"
        " * Thread safety: every function is reentrant and may run on several\n"
        " * threads at once (the code keeps no state between runs but a CPU\n"
        " * feature cache set atomically); concurrent runs may share inputs\n"
        " * and must write distinct outputs.\n";
  if (sig.device == "cuda")
    os << " * GPU artifact (tfm-compile --target cuda, docs/gpu.md): every\n"
          " * buffer is a CUDA device pointer; a run returns once the device\n"
          " * has finished, or TFM_GPU_ERROR_STATUS (-5) when a GPU call\n"
          " * failed (no driver, a failed launch), with the reason from the\n"
          " * runtime's tfm_gpu_take_error. Link libtfm_runtime.\n";
  os << " */\n\n";
  os << "/* The artifact ABI this header and its object follow; an app that\n"
        " * also includes tfm/runtime.h can check\n"
        " *   "
     << macro << "_API_VERSION == TFM_API_VERSION. */\n";
  os << "#define " << macro << "_API_VERSION " << kArtifactAbiVersion << "\n\n";

  os << "#define " << macro << "_NUM_INPUTS " << sig.inputs.size() << "\n";
  os << "#define " << macro << "_NUM_OUTPUTS " << sig.outputs.size() << "\n";
  os << "#define " << macro << "_NUM_SYMBOLS " << sig.symbols.size() << "\n";
  auto tensorMacros = [&](const SignatureTensor &t) {
    std::string name = macro + "_" + StringRef(t.name).upper();
    os << "#define " << name << "_RANK " << t.dims.size() << "\n";
    os << "/* Elements of " << t.name << " */\n";
    os << "#define " << name << "_COUNT(" << symbolParams(t) << ") ("
       << countExpr(t) << ")\n";
  };
  for (const SignatureTensor &t : sig.inputs) {
    tensorMacros(t);
    if (!t.cache)
      continue;
    // A cache's layout for the app that allocates it: its static dims, the
    // capacity among them (docs/generation.md).
    std::string name = macro + "_" + StringRef(t.name).upper();
    os << "/* " << t.name << " is a cache: the caller allocates it (dense, "
       << "row-major " << shapeText(t) << "),\n * keeps it between runs and "
       << "passes each sequence's cached length. */\n";
    os << "#define " << name << "_IS_CACHE 1\n";
    // Its element type (tfm-compile --kv-cache-dtype may change it): an app
    // that allocates with sizeof(<type>) follows the artifact it links.
    os << "#define " << name << "_DTYPE \"" << t.dtype << "\"\n";
    os << "typedef " << cType(t.dtype) << " " << prefix << "_" << t.name
       << "_t;\n";
    for (auto [i, d] : llvm::enumerate(t.dims))
      if (d.symbol < 0)
        os << "#define " << name << "_DIM" << i << " " << d.staticSize << "\n";
  }
  for (const SignatureTensor &t : sig.outputs)
    tensorMacros(t);

  if (sig.errors.empty()) {
    os << "\n/* Runs the model on the calling thread. Returns 0 on success. "
          "*/\n";
  } else {
    os << "\n/* Runs the model on the calling thread. Returns 0 on success, "
          "or\n"
          " * the code of the first run-time check that failed (the outputs\n"
          " * are then unspecified, but nothing was read out of bounds):\n";
    // By code, as an app's switch lists them; codes are distinct.
    SmallVector<const SignatureError *> errors;
    for (const SignatureError &e : sig.errors)
      errors.push_back(&e);
    llvm::sort(errors, [](const SignatureError *a, const SignatureError *b) {
      return a->code < b->code;
    });
    for (const SignatureError *e : errors)
      os << " *   " << e->code << ": " << commentText(e->message) << "\n";
    os << " */\n";
  }
  SmallVector<std::string> params;
  for (const SignatureTensor &t : sig.inputs)
    params.push_back((t.cache ? "" : "const ") + cType(t.dtype).str() + " *" +
                     cName(t.name));
  for (const SignatureTensor &t : sig.outputs)
    params.push_back(cType(t.dtype).str() + " *" + cName(t.name));
  SmallVector<std::string> symbolDecls;
  for (const std::string &s : sig.symbols)
    symbolDecls.push_back("int64_t " + cName(s));
  params.append(symbolDecls);
  os << "int32_t " << prefix << "_run(" << llvm::join(params, ", ") << ");\n\n";
  os << "/* The same, with parallel work handed to exec->parallel_for (NULL:\n"
        " * run everything on the calling thread); tfm/runtime.h's\n"
        " * tfm_thread_pool_exec gives one over the runtime's pool. */\n";
  SmallVector<std::string> withExec(params);
  withExec.push_back("const tfm_exec *exec");
  os << "int32_t " << prefix << "_run_with_exec(" << llvm::join(withExec, ", ")
     << ");\n\n";
  // The order of the arrays, spelled out: the app builds them by hand.
  SmallVector<std::string> bufferOrder;
  for (const auto *list : {&sig.inputs, &sig.outputs})
    for (const SignatureTensor &t : *list)
      bufferOrder.push_back(t.name);
  auto indexed = [](ArrayRef<std::string> names) {
    std::string s;
    for (auto [i, n] : llvm::enumerate(names))
      s += (i ? ", " : "") + ("[" + std::to_string(i) + "] " + n);
    return s.empty() ? std::string("none") : s;
  };
  os << "/* The same, with buffers (inputs then outputs) and symbol values in\n"
        " * arrays, and parallel work handed to exec->parallel_for (NULL: run\n"
        " * everything on the calling thread).\n"
        " *   buffers: "
     << commentText(indexed(bufferOrder))
     << "\n"
        " *   symbols: "
     << commentText(indexed(sig.symbols)) << " */\n";
  os << "int32_t " << prefix
     << "_run_packed(void *const *buffers, const int64_t *symbols, "
        "const tfm_exec *exec);\n\n";

  os << "/* Scratch memory in the caller's hands (docs/embedding.md).\n"
        " * "
     << prefix
     << "_workspace_size gives the bytes a run needs for\n"
        " * these dims: 0 when the model needs none, -1 for a negative dim or\n"
        " * a tensor too large to address, -2 when it exceeds 2^56 bytes. It\n"
        " * reads nothing but its arguments, and a workspace sized for some\n"
        " * dims serves any dims that are not larger. */\n";
  os << "#define " << macro << "_WORKSPACE_ALIGNMENT 64\n";
  os << "int64_t " << prefix << "_workspace_size("
     << (symbolDecls.empty() ? std::string("void")
                             : llvm::join(symbolDecls, ", "))
     << ");\n\n";
  os << "/* " << prefix
     << "_run with the caller's workspace of\n"
        " * workspace_bytes bytes, aligned to "
     << macro
     << "_WORKSPACE_ALIGNMENT:\n"
        " * when it holds "
     << prefix
     << "_workspace_size bytes the run\n"
        " * allocates nothing; NULL with 0 bytes allocates as _run does. It\n"
        " * returns -3 for a negative size, NULL with a non-zero size or a\n"
        " * misaligned pointer, and -4 when the workspace is smaller than\n"
        " * these dims need; nothing is computed then. A workspace serves one\n"
        " * run at a time, and its contents between runs mean nothing. */\n";
  SmallVector<std::string> withWorkspace(params);
  withWorkspace.append({"void *workspace", "int64_t workspace_bytes"});
  os << "int32_t " << prefix << "_run_with_workspace("
     << llvm::join(withWorkspace, ", ") << ");\n\n";
  os << "/* The packed forms of the two above (the runtime's). */\n";
  os << "int64_t " << prefix
     << "_workspace_size_packed(const int64_t *symbols);\n";
  os << "int32_t " << prefix
     << "_run_packed_with_workspace(void *const *buffers, const int64_t "
        "*symbols,\n    const tfm_exec *exec, void *workspace, int64_t "
        "workspace_bytes);\n\n";
  os << "/* JSON description of the model (docs/artifact.md). */\n";
  os << "const char *" << prefix << "_metadata(void);\n\n";
  if (externalWeights)
    os << "/* External weights (tfm-compile --weights-mode external,\n"
          " * docs/embedding.md): the model reads its weights from a file\n"
          " * mapped at load. Every _run returns -6 until they are bound.\n"
          " * The manifest (JSON) lists the tensors the file must hold, with\n"
          " * their content hashes; the runtime's tfm_weights_open maps a\n"
          " * file and checks it against it. bind_weights takes the file's\n"
          " * data section (tfm_weights_data): 64-byte aligned and of exactly\n"
          " * the manifest's size, else it returns -3; NULL, 0 unbinds. The\n"
          " * binding is one per program and the memory must outlive every\n"
          " * run; do not bind while a run is in flight. */\n"
          "#define "
       << macro << "_EXTERNAL_WEIGHTS 1\n"
       << "const char *" << prefix << "_weights_manifest(void);\n"
       << "int32_t " << prefix
       << "_bind_weights(const void *data, int64_t bytes);\n\n";
  if (tokenizer) {
    os << "/* The tokenizer embedded by tfm-compile --tokenizer (from "
       << commentText(tokenizer->source) << ", " << tokenizer->kind
       << ";\n * docs/tokenizers.md). " << prefix
       << "_tokenize encodes text_size bytes of UTF-8 text\n"
          " * into token ids (with the tokenizer's special tokens when\n"
          " * add_special_tokens is 1), written to ids when capacity holds\n"
          " * them; *out_count is their number either way. "
       << prefix
       << "_detokenize\n"
          " * writes the text of count ids (NUL-terminated) to text when\n"
          " * capacity holds it; *out_size is its size without the NUL. Both\n"
          " * return 0, 5 when the result does not fit (call again with the\n"
          " * size given), 4 when the tokenizer does not load, 1 for NULL\n"
          " * pointers. They call the runtime's tokenizer (tfm/tokenizer.h),\n"
          " * which loads it once per process: link libtfm_runtime. "
          "Thread-safe.\n"
          " * tfm_tokenizer_embedded("
       << prefix << "_tokenizer_data, " << macro
       << "_TOKENIZER_SIZE, &t)\n * gives the whole tokenizer API. */\n";
    os << "#define " << macro << "_HAS_TOKENIZER 1\n";
    os << "#define " << macro << "_TOKENIZER_SIZE " << tokenizer->size << "\n";
    os << "extern const unsigned char " << prefix << "_tokenizer_data[" << macro
       << "_TOKENIZER_SIZE];\n";
    os << "#ifndef TFM_EMBEDDED_TOKENIZER_DECLARED\n"
          "#define TFM_EMBEDDED_TOKENIZER_DECLARED\n"
          "int32_t tfm_embedded_tokenize(const void *data, size_t size, "
          "const char *text,\n"
          "    size_t text_size, int32_t add_special_tokens, int64_t *ids,\n"
          "    int64_t capacity, int64_t *out_count);\n"
          "int32_t tfm_embedded_detokenize(const void *data, size_t size,\n"
          "    const int64_t *ids, int64_t count, int32_t "
          "skip_special_tokens,\n"
          "    char *text, int64_t capacity, int64_t *out_size);\n"
          "#endif\n";
    os << "static inline int32_t " << prefix
       << "_tokenize(const char *text, size_t text_size,\n"
          "    int32_t add_special_tokens, int64_t *ids, int64_t capacity,\n"
          "    int64_t *out_count) {\n"
          "  return tfm_embedded_tokenize("
       << prefix << "_tokenizer_data, " << macro
       << "_TOKENIZER_SIZE,\n"
          "      text, text_size, add_special_tokens, ids, capacity, "
          "out_count);\n}\n";
    os << "static inline int32_t " << prefix
       << "_detokenize(const int64_t *ids, int64_t count,\n"
          "    int32_t skip_special_tokens, char *text, int64_t capacity,\n"
          "    int64_t *out_size) {\n"
          "  return tfm_embedded_detokenize("
       << prefix << "_tokenizer_data, " << macro
       << "_TOKENIZER_SIZE,\n"
          "      ids, count, skip_special_tokens, text, capacity, "
          "out_size);\n}\n\n";
  }
  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << macro << "_H */\n";
}
