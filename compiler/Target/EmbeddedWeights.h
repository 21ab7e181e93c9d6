//===- EmbeddedWeights.h - Write weights into an object's section -*- C++ -*-=//
//
// The second half of embedded weights (compiler/Transforms/EmbeddedWeights.h):
// LLVM writes the object with the weights section empty, and this appends
// the weights' bytes to it, streamed from the compiler's storage, so that
// no copy of them is made along the way.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_TARGET_EMBEDDEDWEIGHTS_H
#define TFM_COMPILER_TARGET_EMBEDDEDWEIGHTS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::tfm {

/// The weights tfm-externalize-weights{embed} placed in a module: each
/// tensor's bytes (views of the context's storage, which outlives them) at
/// its offset in a section of `size` bytes.
struct EmbeddedWeights {
  struct Tensor {
    int64_t offset;
    ArrayRef<char> bytes;
  };
  SmallVector<Tensor> tensors;
  int64_t size = 0;
};

/// Takes the record of embedded weights off `module`, which translates to
/// LLVM IR without it; an empty result for a module without one.
FailureOr<EmbeddedWeights> takeEmbeddedWeights(ModuleOp module);

/// Writes the ELF relocatable object `object` (x86-64, as LLVM emitted it
/// with an empty weights section) to `os` with the weights in that section:
/// the section header points past the object's end, where the bytes are
/// streamed. Errors name what is wrong with the object.
llvm::Error writeObjectWithWeights(StringRef object,
                                   const EmbeddedWeights &weights,
                                   llvm::raw_ostream &os);

} // namespace mlir::tfm

#endif // TFM_COMPILER_TARGET_EMBEDDEDWEIGHTS_H
