//===- Parser.h - Parse .tfm model files ------------------------*- C++ -*-===//
#ifndef TFM_COMPILER_FRONTEND_PARSER_H
#define TFM_COMPILER_FRONTEND_PARSER_H

#include "compiler/Frontend/ModelBuilder.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::tfm {

/// Parses the main buffer of `sourceMgr` (the language of docs/language.md)
/// into a tfm module. Errors are reported as diagnostics at `file:line:col`
/// through the context's diagnostic handler. A `cacheElementType` retypes
/// every `cache` declaration (tfm-compile --kv-cache-dtype).
FailureOr<OwningOpRef<ModuleOp>> parseModel(llvm::SourceMgr &sourceMgr,
                                            MLIRContext *ctx,
                                            WeightShapes *weights,
                                            Type cacheElementType = Type());

} // namespace mlir::tfm

#endif // TFM_COMPILER_FRONTEND_PARSER_H
