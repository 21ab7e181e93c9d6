//===- Checkpoint.h - A weights file, safetensors or GGUF -------*- C++ -*-===//
//
// The compiler reads weights from the checkpoint's own file: .safetensors
// under PyTorch names, or GGUF as llama.cpp writes it. Both are mapped and
// validated by the runtime's readers (tfm/safetensors.h, tfm/gguf.h); this
// is the one view of them that the frontend (weight shapes) and
// tfm-bind-weights (weight values) share, so that the two can never
// disagree on what a tensor's element type is.
//
// A transformers checkpoint of a decoder architecture llama.cpp knows
// (config.json's model_type llama, qwen2, gemma3_text) also answers to
// llama.cpp's tensor names and metadata keys, with the values its converter
// would write (LlamaCppNames.h): one .tfm file serves both formats.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CHECKPOINT_CHECKPOINT_H
#define TFM_COMPILER_CHECKPOINT_CHECKPOINT_H

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llvm::json {
class Value;
} // namespace llvm::json

namespace tfm {
class GgufFile;
class SafeTensorsFile;
} // namespace tfm

namespace mlir::tfm {

/// The element type a model computes a checkpoint tensor in.
enum class CheckpointElement { F32, F64, I32, I64, Unsupported };

/// One tensor of a checkpoint.
struct CheckpointTensor {
  std::string name;
  /// The stored type: a safetensors dtype ("F32", "BF16") or a ggml type
  /// ("Q8_0", "F16"), for messages.
  std::string dtype;
  /// Outermost first (PyTorch's order), whichever the format.
  std::vector<int64_t> shape;
  /// What the model computes it in: f32 for every float type of 32 bits or
  /// fewer and every quantized type, f64/i32/i64 for those.
  CheckpointElement element = CheckpointElement::Unsupported;
  /// The stored bytes, inside the file's mapping.
  const void *data = nullptr;
  size_t byteSize = 0;
  /// Whether the stored bytes are not already `element`'s values (a
  /// half-precision or quantized type): toF32 converts them.
  bool converts = false;
  /// The file's format's code for the stored type.
  uint32_t storedType = 0;

  int64_t elementCount() const;
};

/// A hyper-parameter a checkpoint states.
struct CheckpointConfig {
  enum class Kind { Number, String, Bool, Other } kind = Kind::Number;
  double number = 0;
  bool isInteger = false;
  bool flag = false;
  /// A string's text; for Other, what the value is ("an array").
  std::string text;
};

/// A checkpoint file, mapped read-only and validated on open. Immutable.
class Checkpoint {
public:
  /// Opens `path`: GGUF when it starts with the magic "GGUF"; the shards of
  /// a sharded safetensors checkpoint when it is their index
  /// (model.safetensors.index.json) or a directory that holds one; else
  /// safetensors (a directory: its model.safetensors). On failure returns null
  /// and sets `error` to a one-line message that names the file.
  static std::shared_ptr<Checkpoint> open(const std::string &path,
                                          std::string &error);
  ~Checkpoint();
  Checkpoint(const Checkpoint &) = delete;
  Checkpoint &operator=(const Checkpoint &) = delete;

  const std::string &path() const { return filePath; }
  bool isGguf() const { return gguf != nullptr; }
  /// The tensor called `name`, or null.
  const CheckpointTensor *find(std::string_view name) const;
  /// The stored types this format's tensors may have, for messages.
  std::string supportedTypes() const;
  /// Writes the f32 values of a tensor that converts (tensor.elementCount()
  /// of them) to `out`. Half-precision values widen exactly; quantized ones
  /// dequantize as llama.cpp's reference does. False for any other tensor.
  bool toF32(const CheckpointTensor &tensor, float *out) const;
  /// Lets the OS drop the mapping's pages in [data, data + size); false
  /// when the range is not inside it.
  bool dropPages(const void *data, size_t size) const;

  /// The hyper-parameter `key`: a GGUF file's metadata key
  /// ("llama.block_count"), or for a .safetensors file a key of the
  /// config.json in its directory (transformers' `save_pretrained` layout;
  /// "rope_scaling.factor" reads into an object). Null when not stated; an
  /// unreadable config.json is `error`.
  std::optional<CheckpointConfig> config(const std::string &key,
                                         std::string &error) const;
  /// Where config() looks: "PATH's metadata" or the config.json's path.
  std::string configSource() const;
  /// The llama.cpp architecture a transformers checkpoint answers as
  /// ("llama", "qwen2", "gemma3"), or empty.
  const std::string &llamaCppArchitecture() const { return llamaCppArch; }

private:
  Checkpoint() = default;
  /// Maps the shards that the index at filePath names and takes each
  /// tensor from the one the index gives.
  bool openShards(std::string &error);
  /// Reads the config.json beside a .safetensors file (once: config()
  /// answers from it).
  void readConfigJson();
  /// Adds the llama.cpp names of a transformers decoder's tensors.
  void addLlamaCppNames();
  std::optional<CheckpointConfig> llamaCppConfig(const std::string &key,
                                                 std::string &error) const;

  std::string filePath;
  /// One .safetensors file, or the shards of a sharded checkpoint.
  std::vector<std::unique_ptr<::tfm::SafeTensorsFile>> shards;
  std::unique_ptr<::tfm::GgufFile> gguf;
  std::map<std::string, CheckpointTensor, std::less<>> tensors;
  /// A .safetensors file's config.json, parsed; or why it could not be.
  std::unique_ptr<llvm::json::Value> configJson;
  std::string configError;
  std::string llamaCppArch;
  /// The values of tensors that a llama.cpp name sees transformed (permuted
  /// rows, Gemma's norm + 1), which the mapping cannot hold.
  std::deque<std::vector<unsigned char>> transformed;
  /// Adds a Phi-3 checkpoint's LongRoPE lists as llama.cpp's factor tensors.
  void addLongRopeFactors(std::vector<CheckpointTensor> &added);
};

} // namespace mlir::tfm

#endif // TFM_COMPILER_CHECKPOINT_CHECKPOINT_H
