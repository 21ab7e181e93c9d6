//===- Signature.h - A model's inputs, outputs and symbols ------*- C++ -*-===//
//
// The parsed form of an artifact's metadata JSON (docs/artifact.md), and the
// checks that bind its symbolic dims to the shapes of actual input tensors.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_SIGNATURE_H
#define TFM_RUNTIME_SIGNATURE_H

#include "tfm/runtime.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tfm::rt {

/// A declared dim: a static size, or (symbol >= 0) an index into `symbols`.
struct DimSpec {
  int64_t size = -1;
  int symbol = -1;
};

struct TensorSpec {
  std::string name;
  tfm_dtype dtype = TFM_DTYPE_INVALID;
  std::vector<DimSpec> dims;
  /// An input the model also writes: a key/value cache ("cache": true).
  bool cache = false;
};

struct Signature {
  std::string model;
  std::string entry;
  /// The packed entry point taking the caller's workspace and the function
  /// giving its size; both empty for artifacts that predate them.
  std::string workspaceEntry, workspaceSize;
  std::vector<std::string> symbols;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  /// Messages of the run-time checks by status code (metadata "errors").
  std::map<int32_t, std::string> errors;
  /// "cuda" for a GPU artifact (its buffers are device pointers), else
  /// empty (metadata "device").
  std::string device;

  /// "f32[seq, 2]", for messages.
  std::string describe(const TensorSpec &spec) const;
};

/// Parses and checks metadata JSON. On failure returns false with a one-line
/// `error` that does not name the file.
bool parseSignature(std::string_view json, Signature &signature,
                    std::string &error);

/// Checks `inputs` against the signature and binds every symbol, in the order
/// of `signature.symbols`, into `symbolValues`. Data pointers are not looked
/// at. Returns NULL or a status for the caller.
tfm_status bindInputs(const Signature &signature, const tfm_tensor *inputs,
                      size_t inputCount, std::vector<int64_t> &symbolValues);

/// The shape of output `index` once symbols are bound; `shape` holds
/// TFM_MAX_RANK entries.
void outputShape(const Signature &signature, size_t index,
                 const std::vector<int64_t> &symbolValues, int64_t *shape);

} // namespace tfm::rt

#endif // TFM_RUNTIME_SIGNATURE_H
