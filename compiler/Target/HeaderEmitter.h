//===- HeaderEmitter.h - The per-model C header -----------------*- C++ -*-===//
#ifndef TFM_COMPILER_TARGET_HEADEREMITTER_H
#define TFM_COMPILER_TARGET_HEADEREMITTER_H

#include "compiler/Transforms/Signature.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::tfm {

/// Writes the C header of a compiled model: its typed entry point, the
/// packed one, the metadata function, and macros for ranks and element
/// counts. `source` names the model file in the banner. With
/// `externalWeights`, also the functions that bind the weights file
/// (`--weights-mode external`).
void emitHeader(const Signature &signature, StringRef source,
                llvm::raw_ostream &os, bool externalWeights = false);

} // namespace mlir::tfm

#endif // TFM_COMPILER_TARGET_HEADEREMITTER_H
