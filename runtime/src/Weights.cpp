//===- Weights.cpp - External weights: map, check against a manifest ------===//
//
// An artifact compiled with `--weights-mode external` reads its weights from
// a .safetensors sidecar through one pointer. The file is mapped read-only
// (never copied) and checked against the manifest the compiler recorded in
// the artifact before the pointer is bound: a file that is not the one the
// model was compiled with is refused with a message naming the first
// difference (docs/embedding.md).
//
//===----------------------------------------------------------------------===//

#include "Weights.h"
#include "Json.h"
#include "Status.h"
#include "Tensor.h"

#include "tfm/safetensors.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

using namespace tfm::rt;
using nlohmann::json;

struct tfm_weights_t {
  std::unique_ptr<tfm::SafeTensorsFile> file;
  std::string hash; ///< the manifest's, which the file matched
};

namespace {
std::string hex(uint64_t value) { return fmt::format("{:016x}", value); }

std::string formatDims(const std::vector<int64_t> &shape) {
  return formatShape(shape.data(), shape.size());
}

/// Why `file` is not the file `manifest` describes, or "" when it is.
std::string mismatch(const tfm::SafeTensorsFile &file, const json &manifest) {
  const json &tensors = manifest.at("tensors");
  std::string model = manifest.at("model").get<std::string>();
  auto found = file.metadata().find("model");
  if (found != file.metadata().end() && found->second != model)
    return fmt::format("holds the weights of model '{}', not of '{}'",
                       printable(found->second), model);
  auto section = static_cast<const unsigned char *>(file.dataSection());
  for (const json &expected : tensors) {
    std::string name = expected.at("name").get<std::string>();
    const tfm::SafeTensorEntry *entry = file.find(name);
    if (!entry)
      return fmt::format("has no tensor '{}', which the model reads", name);
    std::string dtype = expected.at("dtype").get<std::string>();
    if (entry->dtype != dtype)
      return fmt::format("tensor '{}' is {}, but the model was compiled with "
                         "{}",
                         name, entry->dtype, dtype);
    auto shape = expected.at("shape").get<std::vector<int64_t>>();
    if (entry->shape != shape)
      return fmt::format("tensor '{}' has shape {}, but the model was "
                         "compiled with {}",
                         name, formatDims(entry->shape), formatDims(shape));
    auto offset = expected.at("offset").get<uint64_t>();
    auto at = static_cast<uint64_t>(
        static_cast<const unsigned char *>(entry->data) - section);
    if (at != offset)
      return fmt::format("tensor '{}' is at byte {} of the data, but the "
                         "model reads it at byte {}",
                         name, at, offset);
  }
  if (file.entries().size() != tensors.size())
    for (const tfm::SafeTensorEntry &entry : file.entries())
      if (std::none_of(tensors.begin(), tensors.end(), [&](const json &t) {
            return t.at("name").get<std::string>() == entry.name;
          }))
        return fmt::format("has a tensor '{}' that the model does not read",
                           printable(entry.name));
  auto bytes = manifest.at("bytes").get<uint64_t>();
  if (file.dataSectionSize() != bytes)
    return fmt::format("has {} bytes of data, but the model reads {}",
                       file.dataSectionSize(), bytes);
  if (reinterpret_cast<uintptr_t>(section) % 64 != 0)
    return "has a data section that does not start at a multiple of 64 "
           "bytes (write it with tfm's safetensors writer, which aligns it)";
  for (const json &expected : tensors) {
    std::string name = expected.at("name").get<std::string>();
    const tfm::SafeTensorEntry *entry = file.find(name);
    std::string hash = hex(tfm::hashBytes(entry->data, entry->byteSize));
    std::string want = expected.at("hash").get<std::string>();
    if (hash != want)
      return fmt::format("tensor '{}' is not the one the model was compiled "
                         "with (content hash {}, expected {})",
                         name, hash, want);
  }
  return "";
}

/// One binding per loaded artifact: its bind function's address names it.
/// Every model over that artifact shares it, and the last one unbinds.
struct Binding {
  std::shared_ptr<tfm_weights_t> weights;
  tfm_bind_weights_fn bind;
  ~Binding() { bind(nullptr, 0); }
};

std::mutex bindingsMutex;
std::map<tfm_bind_weights_fn, std::weak_ptr<Binding>> bindings;
} // namespace

tfm_status tfm::rt::openWeights(const std::string &path,
                                const char *manifestJson,
                                std::unique_ptr<tfm_weights_t> &out) {
  json manifest;
  std::string error;
  if (!parseBoundedJson(manifestJson, manifest, error) ||
      !manifest.is_object() || !manifest.contains("tensors") ||
      !manifest["tensors"].is_array())
    return makeStatus(
        TFM_STATUS_FORMAT_ERROR,
        fmt::format("the weights manifest {}",
                    error.empty() ? "is not a tfm manifest" : error));
  auto file = tfm::SafeTensorsFile::open(path, error);
  if (!file)
    return makeStatus(error.find("No such file") != std::string::npos
                          ? TFM_STATUS_NOT_FOUND
                          : TFM_STATUS_FORMAT_ERROR,
                      error + " (the model's external weights)");
  std::string why = mismatch(*file, manifest);
  if (!why.empty())
    return makeStatus(
        TFM_STATUS_FORMAT_ERROR,
        fmt::format("{}: not the weights of this model: {}", path, why));
  out = std::make_unique<tfm_weights_t>();
  out->file = std::move(file);
  out->hash = manifest.value("hash", "");
  return nullptr;
}

tfm_status tfm::rt::bindWeights(tfm_bind_weights_fn bind,
                                const std::string &path,
                                const char *manifestJson,
                                std::shared_ptr<void> &holder) {
  std::unique_ptr<tfm_weights_t> opened;
  if (tfm_status status = openWeights(path, manifestJson, opened))
    return status;
  std::lock_guard<std::mutex> lock(bindingsMutex);
  // Already bound by another model of this artifact: any file that passed
  // the check holds the same bytes, so the first mapping serves both.
  if (std::shared_ptr<Binding> bound = bindings[bind].lock()) {
    holder = bound;
    return nullptr;
  }
  auto binding = std::make_shared<Binding>();
  binding->weights = std::move(opened);
  binding->bind = bind;
  const tfm::SafeTensorsFile &file = *binding->weights->file;
  int32_t rc =
      bind(file.dataSection(), static_cast<int64_t>(file.dataSectionSize()));
  if (rc != 0) {
    binding->bind = [](const void *, int64_t) { return 0; };
    return makeStatus(TFM_STATUS_FORMAT_ERROR,
                      fmt::format("{}: the model refused its weights "
                                  "(bind_weights returned {})",
                                  path, rc));
  }
  bindings[bind] = binding;
  holder = binding;
  return nullptr;
}

tfm_status tfm_weights_open(const char *path, const char *manifest_json,
                            tfm_weights **out_weights) {
  return guard("tfm_weights_open", [&]() -> tfm_status {
    if (!out_weights)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        "tfm_weights_open: argument 'out_weights' is NULL");
    *out_weights = nullptr;
    if (!path || !manifest_json)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        fmt::format("tfm_weights_open: argument '{}' is NULL",
                                    path ? "manifest_json" : "path"));
    std::unique_ptr<tfm_weights_t> weights;
    if (tfm_status status = openWeights(path, manifest_json, weights))
      return status;
    *out_weights = weights.release();
    return nullptr;
  });
}

const void *tfm_weights_data(const tfm_weights *weights) {
  return weights ? weights->file->dataSection() : nullptr;
}

int64_t tfm_weights_size(const tfm_weights *weights) {
  return weights ? static_cast<int64_t>(weights->file->dataSectionSize()) : 0;
}

void tfm_weights_release(tfm_weights *weights) { delete weights; }
