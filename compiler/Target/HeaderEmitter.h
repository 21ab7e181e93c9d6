//===- HeaderEmitter.h - The per-model C header -----------------*- C++ -*-===//
#ifndef TFM_COMPILER_TARGET_HEADEREMITTER_H
#define TFM_COMPILER_TARGET_HEADEREMITTER_H

#include "compiler/Transforms/Signature.h"

#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::tfm {

/// A tokenizer embedded in the artifact (tfm-compile --tokenizer).
struct HeaderTokenizer {
  /// Bytes of tfm_<model>_tokenizer_data.
  int64_t size = 0;
  /// The file it came from (a name for the comment) and what it holds.
  std::string source, kind;
};

/// Writes the C header of a compiled model: its typed entry point, the
/// packed one, the metadata function, and macros for ranks and element
/// counts. `source` names the model file in the banner. With
/// `externalWeights`, also the functions that bind the weights file
/// (`--weights-mode external`); with `tokenizer`, tfm_<model>_tokenize and
/// _detokenize over the embedded tokenizer.
void emitHeader(const Signature &signature, StringRef source,
                llvm::raw_ostream &os, bool externalWeights = false,
                const HeaderTokenizer *tokenizer = nullptr);

} // namespace mlir::tfm

#endif // TFM_COMPILER_TARGET_HEADEREMITTER_H
