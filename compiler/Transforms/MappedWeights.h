//===- MappedWeights.h - Weight blobs over mapped files ---------*- C++ -*-===//
//
// tfm-bind-weights binds large weights as blobs over the mapped checkpoint
// (.safetensors or GGUF). Once tfm-pack-linear has packed a weight, the
// compiler no longer needs its pages resident: dropping them keeps a BERT-base
// compile from holding the checkpoint and its packed copy at once. A later read
// of the blob (a weight also used unpacked) faults them in from the file again.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_TRANSFORMS_MAPPEDWEIGHTS_H
#define TFM_COMPILER_TRANSFORMS_MAPPEDWEIGHTS_H

#include "mlir/Support/LLVM.h"

#include <memory>

namespace mlir::tfm {
class Checkpoint;

/// Remembers `file` (weakly) as the backing of weight blobs.
void registerMappedWeights(const std::shared_ptr<Checkpoint> &file);

/// Lets the OS drop the pages of `bytes` when a registered file's mapping
/// holds them; does nothing for other memory.
void releaseMappedWeightPages(ArrayRef<char> bytes);

} // namespace mlir::tfm

#endif // TFM_COMPILER_TRANSFORMS_MAPPEDWEIGHTS_H
