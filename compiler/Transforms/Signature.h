//===- Signature.h - A model's ABI signature --------------------*- C++ -*-===//
//
// The `tfm.signature` attribute (a #tfm.signature, dialects/Tfm/IR/
// TfmAttrs.td) on a model function names its inputs and outputs, their
// dtypes and shapes (static sizes or symbols). The entry-point pass, the
// header emitter and the metadata JSON read it through the plain view below.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_TRANSFORMS_SIGNATURE_H
#define TFM_COMPILER_TRANSFORMS_SIGNATURE_H

#include "dialects/Tfm/IR/TfmDialect.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::tfm {

/// The artifact ABI version: the metadata's "abi" and the generated header's
/// TFM_<MODEL>_API_VERSION. The runtime's TFM_API_VERSION must equal it
/// (Driver.cpp checks at compile time).
constexpr int64_t kArtifactAbiVersion = 1;

/// One dimension of a signature tensor: static, or the index of a symbol.
struct SignatureDim {
  int64_t staticSize = 0;
  int64_t symbol = -1;
};

/// Bytes per element of a signature dtype ("f32", "bf16", "bool", ...).
int64_t dtypeByteSize(StringRef dtype);

struct SignatureTensor {
  std::string name, dtype;
  SmallVector<SignatureDim> dims;
  /// An input the model reads and writes in place: a key/value cache
  /// (docs/generation.md). The model function returns its final value after
  /// the outputs until tfm-results-to-out-params drops it.
  bool cache = false;
};

/// A status code the model may return, and what it means.
struct SignatureError {
  int64_t code = 0;
  std::string message;
};

struct Signature {
  std::string model;
  SmallVector<std::string> symbols;
  SmallVector<SignatureTensor> inputs, outputs;
  /// The number of inputs that are caches.
  int64_t numCaches() const {
    return llvm::count_if(inputs,
                          [](const SignatureTensor &t) { return t.cache; });
  }
  /// The non-zero status codes of the model's run-time checks (empty when
  /// the model has none and always returns 0).
  SmallVector<SignatureError> errors;
  /// Where the model's buffers live: empty for the host, "cuda" for a GPU
  /// artifact, whose entry points take device pointers (docs/gpu.md).
  std::string device;

  /// Reads the `tfm.signature` attribute of `op`, reporting its absence at
  /// `op` (its contents were checked by the attribute's verifier).
  static FailureOr<Signature> read(Operation *op);
  static Signature fromAttr(SignatureAttr attr);

  /// The metadata JSON of docs/artifact.md.
  std::string toJson() const;
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_TRANSFORMS_SIGNATURE_H
