//===- safetensors.h - Read and write .safetensors files --------*- C++ -*-===//
//
// The format (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header size N, N bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
// data section) plus an optional "__metadata__" string map, then the data.
//
// This header is used by the compiler, which is built without exceptions: none
// of these functions throws, and errors come back as one-line messages that
// start with the file name.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_SAFETENSORS_H
#define TFM_SAFETENSORS_H

#include "tfm/runtime.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tfm {

/// Bytes per element of a safetensors dtype ("F32", "BF16", "I64", ...), or 0
/// if the dtype is unknown.
size_t safeTensorsDtypeSize(std::string_view dtype);

/// The safetensors dtype of a runtime dtype: "F32", "F64", "I32", "I64",
/// "BOOL", "F16", "BF16", "I8" or "U8"; empty for TFM_DTYPE_INVALID.
std::string_view safeTensorsDtypeName(tfm_dtype dtype);

/// The runtime dtype of a safetensors dtype; TFM_DTYPE_INVALID for an
/// unknown one and for those the runtime has no tensors of (I16, U16, U32,
/// U64, F8_E5M2, F8_E4M3).
tfm_dtype dtypeOfSafeTensors(std::string_view dtype);

/// One tensor of an open file. `data` points into the file's mapping, so it
/// lives as long as the SafeTensorsFile. It is only as aligned as the file
/// makes it (the format guarantees nothing), so copy it or read it with
/// memcpy rather than casting it to a wider type.
struct SafeTensorEntry {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t byteSize = 0;
};

/// A .safetensors file mapped read-only and fully validated on open.
/// Immutable, so it may be used from several threads at once.
class SafeTensorsFile {
public:
  /// Opens and validates `path`. On failure returns null and sets `error` to a
  /// one-line message that names the file.
  static std::unique_ptr<SafeTensorsFile> open(const std::string &path,
                                               std::string &error);
  ~SafeTensorsFile();
  SafeTensorsFile(const SafeTensorsFile &) = delete;
  SafeTensorsFile &operator=(const SafeTensorsFile &) = delete;

  const std::string &path() const { return filePath; }
  /// The tensors, in the order of their data in the file.
  const std::vector<SafeTensorEntry> &entries() const { return tensors; }
  /// The tensor called `name`, or null.
  const SafeTensorEntry *find(std::string_view name) const;
  /// The "__metadata__" map, empty if the file has none.
  const std::map<std::string, std::string> &metadata() const {
    return fileMetadata;
  }
  /// Lets the OS drop the mapped pages that lie wholly inside
  /// [data, data + size) (madvise MADV_DONTNEED; the mapping is private and
  /// read-only, so a later read faults them in from the file again). For a
  /// reader done with a tensor: its pages then stop counting in the
  /// process's memory. False when the range is not inside the mapping.
  bool dropPages(const void *data, size_t size) const;
  /// The data section (every tensor's bytes, without gaps) in the mapping.
  const void *dataSection() const { return dataBegin; }
  size_t dataSectionSize() const { return dataSize; }

private:
  SafeTensorsFile() = default;

  std::string filePath;
  void *mapping = nullptr;
  size_t mappingSize = 0;
  std::vector<SafeTensorEntry> tensors;
  std::map<std::string, std::string> fileMetadata;
  const void *dataBegin = nullptr;
  size_t dataSize = 0;
};

/// A 64-bit hash of `size` bytes, the same in the compiler and the runtime:
/// external weights record it at compile time and check it at load
/// (docs/embedding.md). Four independent multiply-rotate lanes over 8-byte
/// words, so that hashing is not the slow part of loading a model.
uint64_t hashBytes(const void *data, size_t size);

/// A tensor to write: `data` holds product(shape) elements of `dtype`.
struct SafeTensorWriteEntry {
  std::string name;
  std::string dtype = "F32";
  std::vector<int64_t> shape;
  const void *data = nullptr;
};

/// Writes `entries`, in order and without gaps, to `path`. Returns false and
/// sets `error` (naming the file) on failure.
bool writeSafeTensors(const std::string &path,
                      const std::vector<SafeTensorWriteEntry> &entries,
                      std::string &error,
                      const std::map<std::string, std::string> &metadata = {});

} // namespace tfm

#endif // TFM_SAFETENSORS_H
