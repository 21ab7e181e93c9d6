//===- EmbeddedWeights.h - Weights written straight to the object -*- C++ -*-=//
//
// Embedded weights never pass through LLVM, which would copy them twice
// (into its constants, then into the object writer's buffers):
// `tfm-externalize-weights{embed}` makes the code read them at offsets from
// one symbol that starts a section of its own, left empty by LLVM, and
// records on that symbol which bytes go where. The object writer
// (compiler/Target/EmbeddedWeights.h) fills the section from the context's
// storage. The names below are what the two agree on.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_TRANSFORMS_EMBEDDEDWEIGHTS_H
#define TFM_COMPILER_TRANSFORMS_EMBEDDEDWEIGHTS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::tfm {

/// The section of the weights: `.rodata.*`, so that linkers place it with
/// the other read-only data.
inline constexpr llvm::StringLiteral kEmbeddedWeightsSection =
    ".rodata.tfm_weights";
/// The local symbol at the start of that section.
inline constexpr llvm::StringLiteral kEmbeddedWeightsSymbol = "__tfm_weights";
/// On the symbol's declaration: `{size, tensors = [{name, offset, data}]}`
/// (not a tfm dialect attribute: the driver takes it off before LLVM).
inline constexpr llvm::StringLiteral kEmbeddedWeightsAttr =
    "tfm_embedded_weights";
/// The section's alignment, and every tensor's within it.
inline constexpr int64_t kEmbeddedWeightsAlignment = 64;

} // namespace mlir::tfm

#endif // TFM_COMPILER_TRANSFORMS_EMBEDDEDWEIGHTS_H
