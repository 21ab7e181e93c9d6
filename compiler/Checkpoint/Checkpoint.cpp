//===- Checkpoint.cpp - A weights file, safetensors or GGUF ---------------===//
#include "compiler/Checkpoint/Checkpoint.h"
#include "compiler/Checkpoint/LlamaCppNames.h"
#include "compiler/Checkpoint/ShardIndex.h"
#include "tfm/gguf.h"
#include "tfm/safetensors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

using namespace mlir::tfm;

namespace {
/// IEEE binary16 to binary32, exact (subnormals, infinities and NaN payloads
/// included); bit manipulation rather than APFloat, which costs ~50x more per
/// element on a checkpoint of 10^8 weights.
float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal: normalize, one exponent step per shift.
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(127 - 15 + 1 - shift) << 23) |
           ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// bfloat16 is the upper half of a binary32.
float bfloat16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

constexpr const char *kSafeTensorsTypes = "F32, F64, F16, BF16, I32, I64";

CheckpointTensor fromSafeTensors(const ::tfm::SafeTensorEntry &entry) {
  CheckpointTensor t;
  t.name = entry.name;
  t.dtype = entry.dtype;
  t.shape = entry.shape;
  t.data = entry.data;
  t.byteSize = entry.byteSize;
  // Half-precision checkpoints are computed in f32, widened exactly, as
  // PyTorch's load_state_dict into an f32 module does.
  if (entry.dtype == "F32") {
    t.element = CheckpointElement::F32;
  } else if (entry.dtype == "F16" || entry.dtype == "BF16") {
    t.element = CheckpointElement::F32;
    t.converts = true;
  } else if (entry.dtype == "F64") {
    t.element = CheckpointElement::F64;
  } else if (entry.dtype == "I32") {
    t.element = CheckpointElement::I32;
  } else if (entry.dtype == "I64") {
    t.element = CheckpointElement::I64;
  }
  return t;
}

CheckpointTensor fromGguf(const ::tfm::GgufTensor &tensor) {
  using ::tfm::GgufType;
  CheckpointTensor t;
  t.name = tensor.name;
  const ::tfm::GgufTypeInfo *info = ::tfm::ggufTypeInfo(tensor.type);
  t.dtype = info ? info->name : "type " + std::to_string(tensor.type);
  t.shape = tensor.shape;
  t.data = tensor.data;
  t.byteSize = tensor.byteSize;
  t.storedType = tensor.type;
  switch (GgufType(tensor.type)) {
  case GgufType::F32:
    t.element = CheckpointElement::F32;
    break;
  case GgufType::F64:
    t.element = CheckpointElement::F64;
    break;
  case GgufType::I32:
    t.element = CheckpointElement::I32;
    break;
  case GgufType::I64:
    t.element = CheckpointElement::I64;
    break;
  default:
    // Until the typed GEMM takes quantized blocks as they are, every other
    // float or quantized type is computed in f32.
    if (info && info->dequantizes) {
      t.element = CheckpointElement::F32;
      t.converts = true;
    }
    break;
  }
  return t;
}

/// Whether `path` is a regular file that starts with GGUF's magic. Anything
/// else (a FIFO that would block a read, a directory) goes to the
/// safetensors reader, whose open refuses it with its own message.
bool startsWithGgufMagic(const std::string &path) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode))
    return false;
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return false;
  char magic[4] = {};
  size_t read = std::fread(magic, 1, sizeof(magic), file);
  std::fclose(file);
  return read == sizeof(magic) && std::memcmp(magic, "GGUF", 4) == 0;
}
} // namespace

int64_t CheckpointTensor::elementCount() const {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count;
}

std::shared_ptr<Checkpoint> Checkpoint::open(const std::string &path,
                                             std::string &error) {
  std::shared_ptr<Checkpoint> result(new Checkpoint());
  std::string file = path;
  if (llvm::sys::fs::is_directory(path)) {
    file = checkpointInDirectory(path, error);
    if (file.empty())
      return nullptr;
  }
  result->filePath = file;
  if (startsWithGgufMagic(file)) {
    result->gguf = ::tfm::GgufFile::open(file, error);
    if (!result->gguf)
      return nullptr;
    for (const ::tfm::GgufTensor &tensor : result->gguf->tensors())
      result->tensors.emplace(tensor.name, fromGguf(tensor));
    return result;
  }
  if (isShardIndexPath(file)) {
    if (!result->openShards(error))
      return nullptr;
  } else {
    std::unique_ptr<::tfm::SafeTensorsFile> single =
        ::tfm::SafeTensorsFile::open(file, error);
    if (!single)
      return nullptr;
    for (const ::tfm::SafeTensorEntry &entry : single->entries())
      result->tensors.emplace(entry.name, fromSafeTensors(entry));
    result->shards.push_back(std::move(single));
  }
  result->readConfigJson();
  result->addLlamaCppNames();
  return result;
}

Checkpoint::~Checkpoint() = default;

bool Checkpoint::openShards(std::string &error) {
  std::optional<ShardIndex> index = readShardIndex(filePath, error);
  if (!index)
    return false;
  for (size_t i = 0; i < index->shards.size(); ++i) {
    std::unique_ptr<::tfm::SafeTensorsFile> shard =
        ::tfm::SafeTensorsFile::open(index->shards[i], error);
    if (!shard) {
      error = filePath + ": " + error;
      return false;
    }
    // The index decides which shard a tensor comes from, as transformers'
    // loader does; a stray copy in another shard is not read.
    for (const ::tfm::SafeTensorEntry &entry : shard->entries()) {
      auto it = index->shardOf.find(entry.name);
      if (it != index->shardOf.end() && it->second == i)
        tensors.emplace(entry.name, fromSafeTensors(entry));
    }
    shards.push_back(std::move(shard));
  }
  for (const auto &[name, shard] : index->shardOf)
    if (!tensors.count(name)) {
      error = filePath + ": '" + name + "' is not in " + index->shards[shard] +
              ", the shard its weight_map names";
      return false;
    }
  return true;
}

const CheckpointTensor *Checkpoint::find(std::string_view name) const {
  auto it = tensors.find(name);
  return it == tensors.end() ? nullptr : &it->second;
}

std::string Checkpoint::supportedTypes() const {
  if (!gguf)
    return kSafeTensorsTypes;
  std::string names = "F32, F64, I32, I64";
  for (uint32_t type = 0; type < 64; ++type)
    if (const ::tfm::GgufTypeInfo *info = ::tfm::ggufTypeInfo(type);
        info && info->dequantizes && type != uint32_t(::tfm::GgufType::F32) &&
        type != uint32_t(::tfm::GgufType::F64))
      names += std::string(", ") + info->name;
  return names;
}

bool Checkpoint::toF32(const CheckpointTensor &tensor, float *out) const {
  if (!tensor.converts)
    return false;
  if (gguf)
    return ::tfm::ggufDequantize(tensor.storedType, tensor.data,
                                 tensor.elementCount(), out);
  auto *bytes = static_cast<const unsigned char *>(tensor.data);
  bool isBF16 = tensor.dtype == "BF16";
  for (size_t i = 0, e = tensor.byteSize / 2; i < e; ++i) {
    uint16_t raw = uint16_t(bytes[2 * i]) | uint16_t(bytes[2 * i + 1]) << 8;
    out[i] = isBF16 ? bfloat16ToFloat(raw) : halfToFloat(raw);
  }
  return true;
}

bool Checkpoint::dropPages(const void *data, size_t size) const {
  if (gguf)
    return gguf->dropPages(data, size);
  for (const auto &shard : shards)
    if (shard->dropPages(data, size))
      return true;
  return false;
}

namespace {
std::string configJsonPath(const std::string &weightsPath) {
  llvm::SmallString<256> path(llvm::sys::path::parent_path(weightsPath));
  llvm::sys::path::append(path, "config.json");
  return std::string(path);
}

CheckpointConfig fromGgufValue(const ::tfm::GgufValue &value) {
  using Kind = ::tfm::GgufValue::Kind;
  CheckpointConfig c;
  if (value.kind == Kind::Bool) {
    c.kind = CheckpointConfig::Kind::Bool;
    c.flag = value.integer != 0;
  } else if (value.isInteger()) {
    c.number = double(value.integer);
    c.isInteger = true;
  } else if (value.isFloat()) {
    c.number = value.number;
  } else if (value.kind == Kind::String) {
    c.kind = CheckpointConfig::Kind::String;
    c.text = value.string;
  } else {
    c.kind = CheckpointConfig::Kind::Other;
    c.text = "an array";
  }
  return c;
}

CheckpointConfig fromJsonValue(const llvm::json::Value &value) {
  CheckpointConfig c;
  if (std::optional<bool> b = value.getAsBoolean()) {
    c.kind = CheckpointConfig::Kind::Bool;
    c.flag = *b;
  } else if (std::optional<int64_t> i = value.getAsInteger()) {
    c.number = double(*i);
    c.isInteger = true;
  } else if (std::optional<double> d = value.getAsNumber()) {
    c.number = *d;
  } else if (std::optional<llvm::StringRef> s = value.getAsString()) {
    c.kind = CheckpointConfig::Kind::String;
    c.text = s->str();
  } else {
    c.kind = CheckpointConfig::Kind::Other;
    c.text = value.getAsArray()    ? "an array"
             : value.getAsObject() ? "an object"
                                   : "null";
  }
  return c;
}
} // namespace

std::string Checkpoint::configSource() const {
  if (gguf)
    return filePath + "'s metadata";
  return configJsonPath(filePath);
}

namespace {
/// `key` in `json`: a member, or with dots a member of a member
/// ("rope_scaling.factor"); a whole key with dots is tried first.
const llvm::json::Value *lookupJson(const llvm::json::Value &json,
                                    llvm::StringRef key) {
  const llvm::json::Value *value =
      json.getAsObject() ? json.getAsObject()->get(key) : nullptr;
  if (value)
    return value;
  value = &json;
  llvm::StringRef rest = key;
  while (value && !rest.empty()) {
    auto [head, tail] = rest.split('.');
    const llvm::json::Object *object = value->getAsObject();
    value = object ? object->get(head) : nullptr;
    rest = tail;
  }
  return value;
}

/// `key` of a transformers config: a multimodal config's text_config
/// first, as the converter merges it over the top level.
const llvm::json::Value *lookupHfConfig(const llvm::json::Value &json,
                                        llvm::StringRef key) {
  if (const llvm::json::Object *root = json.getAsObject())
    if (const llvm::json::Value *text = root->get("text_config");
        text && text->getAsObject())
      if (const llvm::json::Value *value = lookupJson(*text, key))
        return value;
  return lookupJson(json, key);
}
} // namespace

void Checkpoint::readConfigJson() {
  std::string path = configJsonPath(filePath);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    if (buffer.getError() != std::errc::no_such_file_or_directory)
      configError = path + ": " + buffer.getError().message();
    return;
  }
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    configError = path + ": " + llvm::toString(json.takeError());
    return;
  }
  configJson = std::make_unique<llvm::json::Value>(std::move(*json));
}

void Checkpoint::addLlamaCppNames() {
  if (!configJson)
    return;
  const llvm::json::Value *modelType = lookupJson(*configJson, "model_type");
  std::optional<llvm::StringRef> type =
      modelType ? modelType->getAsString() : std::nullopt;
  if (!type)
    return;
  llamaCppArch = mlir::tfm::llamaCppArchitecture(std::string_view(*type));
  if (llamaCppArch.empty())
    return;
  auto integer = [&](llvm::StringRef key) -> int64_t {
    const llvm::json::Value *v = lookupHfConfig(*configJson, key);
    return v ? v->getAsInteger().value_or(0) : 0;
  };
  int64_t heads = integer("num_attention_heads");
  int64_t kvHeads = integer("num_key_value_heads");
  if (kvHeads == 0)
    kvHeads = heads;
  std::vector<CheckpointTensor> added;
  for (const auto &[name, tensor] : tensors) {
    std::optional<LlamaCppTensor> mapped =
        llamaCppTensorName(llamaCppArch, withoutLanguageModelPrefix(name));
    // A file that already holds the llama.cpp name keeps its own tensor.
    if (!mapped || tensors.count(mapped->name))
      continue;
    CheckpointTensor alias = tensor;
    alias.name = mapped->name;
    switch (mapped->transform) {
    case LlamaCppTransform::None:
      break;
    case LlamaCppTransform::PermuteQueryHeads:
    case LlamaCppTransform::PermuteKeyHeads: {
      // LlamaModel.permute: rows [head, 2, half] -> [head, half, 2]. The
      // rows move as they are stored (any dtype), unconverted.
      int64_t n = mapped->transform == LlamaCppTransform::PermuteQueryHeads
                      ? heads
                      : kvHeads;
      int64_t rows = tensor.shape.empty() ? 0 : tensor.shape[0];
      if (n <= 0 || rows % (2 * n) != 0 || tensor.byteSize % rows != 0)
        continue; // Not a projection of these heads: no llama.cpp name.
      size_t rowBytes = tensor.byteSize / size_t(rows);
      int64_t half = rows / n / 2;
      auto &bytes = transformed.emplace_back(tensor.byteSize);
      auto *from = static_cast<const unsigned char *>(tensor.data);
      for (int64_t h = 0; h < n; ++h)
        for (int64_t j = 0; j < 2; ++j)
          for (int64_t i = 0; i < half; ++i)
            std::memcpy(
                bytes.data() + size_t((h * half + i) * 2 + j) * rowBytes,
                from + size_t((h * 2 + j) * half + i) * rowBytes, rowBytes);
      alias.data = bytes.data();
      break;
    }
    case LlamaCppTransform::AddOne: {
      // Gemma's norms multiply by 1 + w in f32; the file stores w + 1 (in
      // f32, whatever the checkpoint's type).
      if (tensor.element != CheckpointElement::F32)
        continue;
      int64_t count = tensor.elementCount();
      auto &bytes = transformed.emplace_back(size_t(count) * sizeof(float));
      auto *values = reinterpret_cast<float *>(bytes.data());
      if (tensor.converts)
        toF32(tensor, values);
      else
        std::memcpy(values, tensor.data, bytes.size());
      for (int64_t i = 0; i < count; ++i)
        values[i] += 1.0f;
      alias.data = bytes.data();
      alias.byteSize = bytes.size();
      alias.dtype = "F32";
      alias.converts = false;
      break;
    }
    }
    added.push_back(std::move(alias));
  }
  addLongRopeFactors(added);
  for (CheckpointTensor &t : added) {
    std::string name = t.name;
    tensors.emplace(std::move(name), std::move(t));
  }
}

/// The LongRoPE lists of config.json (rope_type "longrope" or "su": Phi-3
/// 128k, Phi-3.5, Phi-4-mini), as the tensors rope_factors_short.weight and
/// rope_factors_long.weight convert_hf_to_gguf.py writes from them.
static const llvm::json::Value *
longRopeParameters(const llvm::json::Value &configJson) {
  for (const char *group : {"rope_parameters", "rope_scaling"}) {
    const llvm::json::Value *params = lookupHfConfig(configJson, group);
    const llvm::json::Object *object = params ? params->getAsObject() : nullptr;
    if (!object)
      continue;
    std::optional<llvm::StringRef> type = object->getString("rope_type");
    if (!type)
      type = object->getString("type");
    if (type && (*type == "longrope" || *type == "su"))
      return params;
  }
  return nullptr;
}

void Checkpoint::addLongRopeFactors(std::vector<CheckpointTensor> &added) {
  if (llamaCppArch != "phi3")
    return;
  const llvm::json::Value *params = longRopeParameters(*configJson);
  if (!params)
    return;
  const llvm::json::Object &object = *params->getAsObject();
  for (auto [key, name] : {std::pair{"short_factor", "rope_factors_short"},
                           std::pair{"long_factor", "rope_factors_long"}}) {
    const llvm::json::Array *list = object.getArray(key);
    std::string tensorName = std::string(name) + ".weight";
    if (!list || tensors.count(tensorName))
      continue;
    auto &bytes = transformed.emplace_back(list->size() * sizeof(float));
    auto *values = reinterpret_cast<float *>(bytes.data());
    bool numbers = true;
    for (size_t i = 0; i < list->size(); ++i) {
      std::optional<double> v = (*list)[i].getAsNumber();
      numbers &= v.has_value();
      values[i] = float(v.value_or(0));
    }
    if (!numbers)
      continue; // Not LongRoPE's list: the model's rope() reports it.
    CheckpointTensor t;
    t.name = tensorName;
    t.dtype = "F32";
    t.shape = {int64_t(list->size())};
    t.element = CheckpointElement::F32;
    t.data = bytes.data();
    t.byteSize = bytes.size();
    added.push_back(std::move(t));
  }
}

std::optional<CheckpointConfig>
Checkpoint::llamaCppConfig(const std::string &key, std::string &error) const {
  if (key == "general.architecture") {
    CheckpointConfig c;
    c.kind = CheckpointConfig::Kind::String;
    c.text = llamaCppArch;
    return c;
  }
  llvm::StringRef suffix = key;
  if (!suffix.consume_front(llamaCppArch + "."))
    return std::nullopt;
  // Gemma 3: transformers 5 states which layers are local as a list;
  // llama.cpp's key is the period of that list.
  if (suffix == "attention.sliding_window_pattern") {
    if (const llvm::json::Value *types =
            lookupHfConfig(*configJson, "layer_types")) {
      std::vector<std::string> list;
      if (const llvm::json::Array *array = types->getAsArray())
        for (const llvm::json::Value &v : *array)
          list.push_back(v.getAsString().value_or("").str());
      std::optional<int64_t> pattern = slidingWindowPattern(list);
      if (!pattern) {
        error = configJsonPath(filePath) +
                ": 'layer_types' is not a pattern of sliding_attention "
                "layers with every P-th full_attention, which " +
                key + " describes";
        return std::nullopt;
      }
      CheckpointConfig c;
      c.number = double(*pattern);
      c.isInteger = true;
      return c;
    }
  }
  // LongRoPE is the factor tensors above and this scale of cos and sin,
  // which the converter computes from the context lengths; its type is not
  // a scaling rope() applies.
  const llvm::json::Value *longRope =
      llamaCppArch == "phi3" ? longRopeParameters(*configJson) : nullptr;
  if (longRope) {
    if (suffix == "rope.scaling.type") {
      CheckpointConfig c;
      c.kind = CheckpointConfig::Kind::String;
      c.text = "none";
      return c;
    }
    if (suffix == "rope.scaling.attn_factor") {
      const llvm::json::Object &params = *longRope->getAsObject();
      if (std::optional<double> given = params.getNumber("attention_factor")) {
        CheckpointConfig c;
        c.number = *given;
        return c;
      }
      std::optional<CheckpointConfig> context =
          llamaCppConfig(llamaCppArch + ".context_length", error);
      std::optional<CheckpointConfig> original = llamaCppConfig(
          llamaCppArch + ".rope.scaling.original_context_length", error);
      if (context && original && original->number > 1) {
        double scale = context->number / original->number;
        CheckpointConfig c;
        c.number =
            scale > 1
                ? std::sqrt(1 + std::log(scale) / std::log(original->number))
                : 1.0;
        return c;
      }
    }
  }
  // Phi-3/4: the rotated dims are partial_rotary_factor of each head's,
  // as convert_hf_to_gguf.py computes them (int(factor * hidden) / heads).
  if (suffix == "rope.dimension_count" && llamaCppArch == "phi3") {
    const llvm::json::Value *factor =
        lookupHfConfig(*configJson, "partial_rotary_factor");
    if (!factor || factor->kind() == llvm::json::Value::Null)
      factor =
          lookupHfConfig(*configJson, "rope_parameters.partial_rotary_factor");
    const llvm::json::Value *hidden =
        lookupHfConfig(*configJson, "hidden_size");
    const llvm::json::Value *heads =
        lookupHfConfig(*configJson, "num_attention_heads");
    if (factor && hidden && heads && factor->getAsNumber() &&
        hidden->getAsInteger() && heads->getAsInteger() &&
        *heads->getAsInteger() > 0) {
      CheckpointConfig c;
      c.number = double(
          int64_t(*factor->getAsNumber() * double(*hidden->getAsInteger())) /
          *heads->getAsInteger());
      c.isInteger = true;
      return c;
    }
  }
  for (const std::string &hfKey : hfConfigKeys(llamaCppArch, suffix.str()))
    if (const llvm::json::Value *value = lookupHfConfig(*configJson, hfKey))
      if (value->kind() != llvm::json::Value::Null) {
        CheckpointConfig c = fromJsonValue(*value);
        // transformers' unscaled RoPE is "default", llama.cpp's "none".
        if (suffix == "rope.scaling.type" && c.text == "default")
          c.text = "none";
        return c;
      }
  if (std::optional<double> fallback =
          llamaCppConverterDefault(llamaCppArch, suffix.str())) {
    CheckpointConfig c;
    c.number = *fallback;
    c.isInteger = *fallback == double(int64_t(*fallback));
    return c;
  }
  return std::nullopt;
}

std::optional<CheckpointConfig> Checkpoint::config(const std::string &key,
                                                   std::string &error) const {
  if (gguf) {
    const ::tfm::GgufValue *value = gguf->find(key);
    if (!value)
      return std::nullopt;
    return fromGgufValue(*value);
  }
  if (!configError.empty()) {
    error = configError;
    return std::nullopt;
  }
  if (!configJson)
    return std::nullopt;
  // llama.cpp's keys, for a decoder that answers to them; any other key is
  // config.json's own.
  if (!llamaCppArch.empty()) {
    std::optional<CheckpointConfig> mapped = llamaCppConfig(key, error);
    if (mapped || !error.empty())
      return mapped;
    if (key == "general.architecture" ||
        llvm::StringRef(key).starts_with(llamaCppArch + "."))
      return std::nullopt;
  }
  const llvm::json::Value *value = lookupHfConfig(*configJson, key);
  if (!value)
    return std::nullopt;
  return fromJsonValue(*value);
}
