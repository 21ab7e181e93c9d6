//===- gguf.h - Read GGUF files (llama.cpp's weights format) ----*- C++ -*-===//
//
// GGUF versions 2 and 3 (https://github.com/ggml-org/ggml/blob/master/
// docs/gguf.md): the magic "GGUF", a version, the tensor and key/value
// counts; key/values (a string key, a typed value: integers, floats, bool,
// string, or an array of one of those); tensor infos (name, dims with the
// fastest first, a ggml type, an offset into the data section); then the
// data section at the file's alignment (`general.alignment`, 32 by
// default). Little-endian files only.
//
// Like safetensors.h this is used by the compiler, built without
// exceptions: nothing throws, and every error is one line naming the file.
// Every count, length and offset is checked against the file before
// anything is read through it.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_GGUF_H
#define TFM_GGUF_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tfm {

/// ggml's tensor types (the values GGUF files store).
enum class GgufType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  BF16 = 30,
};

/// A type's name ("Q4_K") and block: `blockElements` elements stored in
/// `blockBytes` bytes; null for a type this reader does not know.
struct GgufTypeInfo {
  const char *name;
  int64_t blockElements;
  int64_t blockBytes;
  /// ggufDequantize converts it to f32.
  bool dequantizes;
};
const GgufTypeInfo *ggufTypeInfo(uint32_t type);

/// Converts `count` elements (a multiple of the type's block) of `type` at
/// `data` to f32, as the gguf package's (numpy) dequantization computes them:
/// products and sums rounded one at a time in f32, never fused. False for a
/// type that ggufTypeInfo says does not dequantize.
bool ggufDequantize(uint32_t type, const void *data, int64_t count, float *out);

/// The 6-bit scale and min of sub-block `j` (0..7) of a Q4_K or Q5_K
/// super-block, from its 12 packed `scales` bytes: the one unpacking that
/// the dequantization and the compiler's block repacking share.
void ggufKQuantScaleAndMin(const unsigned char *scales, int j, int &scale,
                           int &min);

/// A metadata value.
struct GgufValue {
  enum class Kind : uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
  };
  Kind kind = Kind::U8;
  /// Integers and bools (unsigned values above INT64_MAX are refused).
  int64_t integer = 0;
  /// Floats, and integers converted.
  double number = 0;
  std::string string;
  /// An array's elements, all of `elementKind`.
  Kind elementKind = Kind::U8;
  std::vector<GgufValue> array;

  bool isInteger() const;
  bool isFloat() const { return kind == Kind::F32 || kind == Kind::F64; }
  /// The kind's name in the format's terms ("u32", "string", ...).
  static const char *kindName(Kind kind);
};

/// One tensor. `shape` lists the dims outermost first (PyTorch's order: a
/// linear layer's weight [out, in]); GGUF stores them the other way round.
/// `data` points into the file's mapping.
struct GgufTensor {
  std::string name;
  uint32_t type = 0;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t byteSize = 0;
  int64_t elementCount() const;
};

/// A GGUF file mapped read-only and validated on open. Immutable.
class GgufFile {
public:
  static std::unique_ptr<GgufFile> open(const std::string &path,
                                        std::string &error);
  /// The same over `size` bytes at `data`, which must outlive the result
  /// (its tensors point into them); `name` stands for the file in errors.
  static std::unique_ptr<GgufFile> openMemory(const void *data, size_t size,
                                              const std::string &name,
                                              std::string &error);
  ~GgufFile();
  GgufFile(const GgufFile &) = delete;
  GgufFile &operator=(const GgufFile &) = delete;

  const std::string &path() const { return filePath; }
  uint32_t version() const { return fileVersion; }
  uint64_t alignment() const { return dataAlignment; }
  const std::map<std::string, GgufValue> &metadata() const { return values; }
  /// The value of `key`, or null.
  const GgufValue *find(std::string_view key) const;
  /// The tensors in the order of their infos.
  const std::vector<GgufTensor> &tensors() const { return infos; }
  const GgufTensor *findTensor(std::string_view name) const;
  /// The offset just past the key/values: the header and the metadata are
  /// the file's bytes before it (its tensor infos and data follow).
  uint64_t keyValuesSize() const { return keyValuesEnd; }
  /// Lets the OS drop the mapping's pages inside [data, data + size), as
  /// SafeTensorsFile::dropPages does. False when the range is not inside the
  /// mapping.
  bool dropPages(const void *data, size_t size) const;

private:
  GgufFile() = default;
  static std::unique_ptr<GgufFile> parse(std::unique_ptr<GgufFile> result,
                                         const unsigned char *bytes,
                                         uint64_t size, std::string &error);

  std::string filePath;
  void *mapping = nullptr;
  size_t mappingSize = 0;
  uint32_t fileVersion = 0;
  uint64_t dataAlignment = 32;
  uint64_t keyValuesEnd = 0;
  std::map<std::string, GgufValue> values;
  std::vector<GgufTensor> infos;
  std::map<std::string, size_t, std::less<>> byName;
};

} // namespace tfm

#endif // TFM_GGUF_H
