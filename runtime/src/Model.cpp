//===- Model.cpp - Loading and inspecting models ---------------*- C++ -*-===//
//
// Runs: ModelRun.cpp.
//
//===----------------------------------------------------------------------===//

#include "Json.h"
#include "Library.h"
#include "ModelState.h"
#include "Signature.h"
#include "Status.h"
#include "Tensor.h"
#include "Weights.h"
#include "tfm/tokenizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <sys/stat.h>

using namespace tfm::rt;

tfm_status tfm::rt::nullArgument(const char *function, const char *argument) {
  return makeStatus(
      TFM_STATUS_INVALID_ARGUMENT,
      fmt::format("{}: argument '{}' is NULL", function, argument));
}

namespace {

constexpr const char *kMetadataSymbol = "tfm_artifact_metadata";

/// Binds the weights of an artifact compiled with external weights: from
/// `weightsPath`, else from the file its manifest names, next to `path`.
tfm_status loadWeights(const std::string &path, const char *weightsPath,
                       tfm_model_t &model) {
  std::string prefix = "tfm_" + model.signature.model;
  using ManifestFn = const char *(*)();
  auto manifest = reinterpret_cast<ManifestFn>(
      model.library->symbol((prefix + "_weights_manifest").c_str()));
  auto bind = reinterpret_cast<tfm_bind_weights_fn>(
      model.library->symbol((prefix + "_bind_weights").c_str()));
  if (!manifest || !bind) {
    if (!weightsPath)
      return nullptr;
    return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                      fmt::format("{}: the model's weights are embedded; it "
                                  "takes no weights file ({})",
                                  path, weightsPath));
  }
  std::string file;
  if (weightsPath) {
    file = weightsPath;
  } else {
    std::string name;
    nlohmann::json json;
    std::string error;
    if (parseBoundedJson(manifest(), json, error) && json.is_object())
      name = json.value("file", "");
    if (name.empty())
      return makeStatus(TFM_STATUS_FORMAT_ERROR,
                        fmt::format("{}: its weights manifest names no file; "
                                    "pass the weights file",
                                    path));
    size_t slash = path.rfind('/');
    file = (slash == std::string::npos ? "" : path.substr(0, slash + 1)) + name;
  }
  return bindWeights(bind, file, manifest(), model.weights);
}

tfm_status loadModel(const std::string &path,
                     std::unique_ptr<tfm_model_t> &model,
                     const char *weightsPath = nullptr) {
  // Tell a missing file from one that is not a library: dlerror does not.
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return makeStatus(errno == ENOENT ? TFM_STATUS_NOT_FOUND
                                      : TFM_STATUS_IO_ERROR,
                      fmt::format("{}: {}", path, std::strerror(errno)));
  // dlopen of a FIFO blocks until a writer appears, and of a directory or a
  // device makes no sense: only regular files (or links to them) load.
  if (!S_ISREG(info.st_mode))
    return makeStatus(TFM_STATUS_FORMAT_ERROR,
                      fmt::format("{}: not a regular file", path));

  std::string error;
  model = std::make_unique<tfm_model_t>();
  model->library = Library::open(path, error);
  if (!model->library)
    return makeStatus(TFM_STATUS_FORMAT_ERROR, error);

  using MetadataFn = const char *(*)();
  auto metadata =
      reinterpret_cast<MetadataFn>(model->library->symbol(kMetadataSymbol));
  if (!metadata)
    return makeStatus(TFM_STATUS_NOT_FOUND,
                      fmt::format("{}: no symbol '{}'; is it a tfm artifact "
                                  "built as a shared library?",
                                  path, kMetadataSymbol));
  const char *json = metadata();
  if (!json)
    return makeStatus(
        TFM_STATUS_FORMAT_ERROR,
        fmt::format("{}: {}() returned NULL", path, kMetadataSymbol));
  if (!parseSignature(json, model->signature, error))
    return makeStatus(TFM_STATUS_FORMAT_ERROR,
                      fmt::format("{}: {}", path, error));

  const std::string &entry = model->signature.entry;
  model->entry = reinterpret_cast<tfm_run_packed_fn>(
      model->library->symbol(entry.c_str()));
  if (!model->entry)
    return makeStatus(TFM_STATUS_NOT_FOUND,
                      fmt::format("{}: no symbol '{}', the entry point named "
                                  "by the metadata",
                                  path, entry));
  if (!model->signature.workspaceEntry.empty()) {
    for (const std::string *name :
         {&model->signature.workspaceEntry, &model->signature.workspaceSize})
      if (!model->library->symbol(name->c_str()))
        return makeStatus(TFM_STATUS_NOT_FOUND,
                          fmt::format("{}: no symbol '{}', named by the "
                                      "metadata",
                                      path, *name));
    model->entryWithWorkspace = reinterpret_cast<tfm_run_packed_workspace_fn>(
        model->library->symbol(model->signature.workspaceEntry.c_str()));
    model->workspaceSize = reinterpret_cast<tfm_workspace_size_fn>(
        model->library->symbol(model->signature.workspaceSize.c_str()));
  }
  return loadWeights(path, weightsPath, *model);
}

const TensorSpec *spec(const tfm_model *model, bool input, size_t index) {
  if (!model)
    return nullptr;
  const auto &list = input ? model->signature.inputs : model->signature.outputs;
  return index < list.size() ? &list[index] : nullptr;
}

int64_t declaredDim(const tfm_model *model, bool input, size_t index,
                    int32_t dim, const char **outSymbol) {
  if (outSymbol)
    *outSymbol = nullptr;
  const TensorSpec *tensor = spec(model, input, index);
  if (!tensor || dim < 0 || static_cast<size_t>(dim) >= tensor->dims.size())
    return -1;
  const DimSpec &dimSpec = tensor->dims[dim];
  if (dimSpec.symbol < 0)
    return dimSpec.size;
  if (outSymbol)
    *outSymbol = model->signature.symbols[dimSpec.symbol].c_str();
  return -1;
}

tfm_status createFromSymbols(const char *function, const char *metadata_json,
                             tfm_run_packed_fn entry,
                             tfm_run_packed_workspace_fn entryWithWorkspace,
                             tfm_workspace_size_fn workspaceSize,
                             bool withWorkspace, tfm_model **out_model) {
  if (!out_model)
    return nullArgument(function, "out_model");
  *out_model = nullptr;
  if (!metadata_json)
    return nullArgument(function, "metadata_json");
  if (!entry)
    return nullArgument(function, "entry");
  if (withWorkspace && !entryWithWorkspace)
    return nullArgument(function, "entry_with_workspace");
  if (withWorkspace && !workspaceSize)
    return nullArgument(function, "workspace_size");
  auto model = std::make_unique<tfm_model_t>();
  std::string error;
  if (!parseSignature(metadata_json, model->signature, error))
    return makeStatus(TFM_STATUS_FORMAT_ERROR,
                      fmt::format("{}: {}", function, error));
  model->entry = entry;
  model->entryWithWorkspace = entryWithWorkspace;
  model->workspaceSize = workspaceSize;
  *out_model = model.release();
  return nullptr;
}

} // namespace

extern "C" {

tfm_status tfm_model_load(const char *path, tfm_model **out_model) {
  return guard("tfm_model_load", [&]() -> tfm_status {
    if (!out_model)
      return nullArgument("tfm_model_load", "out_model");
    *out_model = nullptr;
    if (!path)
      return nullArgument("tfm_model_load", "path");
    std::unique_ptr<tfm_model_t> model;
    if (tfm_status status = loadModel(path, model))
      return status;
    *out_model = model.release();
    return nullptr;
  });
}

tfm_status tfm_model_load_with_weights(const char *path,
                                       const char *weights_path,
                                       tfm_model **out_model) {
  const char *function = "tfm_model_load_with_weights";
  return guard(function, [&]() -> tfm_status {
    if (!out_model)
      return nullArgument(function, "out_model");
    *out_model = nullptr;
    if (!path)
      return nullArgument(function, "path");
    std::unique_ptr<tfm_model_t> model;
    if (tfm_status status = loadModel(path, model, weights_path))
      return status;
    *out_model = model.release();
    return nullptr;
  });
}

tfm_status tfm_model_create_from_symbols(const char *metadata_json,
                                         tfm_run_packed_fn entry,
                                         tfm_model **out_model) {
  const char *function = "tfm_model_create_from_symbols";
  return guard(function, [&]() -> tfm_status {
    return createFromSymbols(function, metadata_json, entry, nullptr, nullptr,
                             /*withWorkspace=*/false, out_model);
  });
}

tfm_status tfm_model_create_from_symbols_with_workspace(
    const char *metadata_json, tfm_run_packed_fn entry,
    tfm_run_packed_workspace_fn entry_with_workspace,
    tfm_workspace_size_fn workspace_size, tfm_model **out_model) {
  const char *function = "tfm_model_create_from_symbols_with_workspace";
  return guard(function, [&]() -> tfm_status {
    return createFromSymbols(function, metadata_json, entry,
                             entry_with_workspace, workspace_size,
                             /*withWorkspace=*/true, out_model);
  });
}

void tfm_model_release(tfm_model *model) { delete model; }

const char *tfm_model_name(const tfm_model *model) {
  return model ? model->signature.model.c_str() : nullptr;
}

tfm_status tfm_model_tokenizer(const tfm_model *model,
                               const tfm_tokenizer **out_tokenizer) {
  if (out_tokenizer)
    *out_tokenizer = nullptr;
  if (!model)
    return nullArgument("tfm_model_tokenizer", "model");
  if (!out_tokenizer)
    return nullArgument("tfm_model_tokenizer", "out_tokenizer");
  std::string prefix = "tfm_" + model->signature.model;
  const void *data = nullptr, *size = nullptr;
  if (model->library) {
    data = model->library->symbol((prefix + "_tokenizer_data").c_str());
    size = model->library->symbol((prefix + "_tokenizer_size").c_str());
  }
  if (!data || !size)
    return tfm::rt::makeStatus(
        TFM_STATUS_NOT_FOUND,
        fmt::format("model '{}' has no tokenizer (compile it with "
                    "tfm-compile --tokenizer)",
                    model->signature.model));
  int64_t bytes = *static_cast<const int64_t *>(size);
  if (bytes < 0)
    return tfm::rt::makeStatus(TFM_STATUS_FORMAT_ERROR,
                               fmt::format("model '{}': {}_tokenizer_size is "
                                           "{}",
                                           model->signature.model, prefix,
                                           bytes));
  // Loaded once per model and released with it: another artifact loaded
  // later at the same address must not find this one's tokenizer.
  std::lock_guard<std::mutex> lock(model->tokenizerMutex);
  if (!model->tokenizer) {
    tfm_tokenizer *loaded = nullptr;
    bool gguf = bytes >= 4 && std::memcmp(data, "GGUF", 4) == 0;
    tfm_status status =
        gguf ? tfm_tokenizer_load_gguf_memory(data, size_t(bytes), &loaded)
             : tfm_tokenizer_load_json_string(static_cast<const char *>(data),
                                              size_t(bytes), &loaded);
    if (status)
      return status;
    model->tokenizer.reset(loaded);
  }
  *out_tokenizer = model->tokenizer.get();
  return nullptr;
}

const char *tfm_model_device(const tfm_model *model) {
  if (!model)
    return nullptr;
  return model->signature.device.empty() ? "cpu"
                                         : model->signature.device.c_str();
}

size_t tfm_model_input_count(const tfm_model *model) {
  return model ? model->signature.inputs.size() : 0;
}

size_t tfm_model_output_count(const tfm_model *model) {
  return model ? model->signature.outputs.size() : 0;
}

size_t tfm_model_symbol_count(const tfm_model *model) {
  return model ? model->signature.symbols.size() : 0;
}

const char *tfm_model_symbol_name(const tfm_model *model, size_t index) {
  if (!model || index >= model->signature.symbols.size())
    return nullptr;
  return model->signature.symbols[index].c_str();
}

const char *tfm_model_input_name(const tfm_model *model, size_t index) {
  const TensorSpec *tensor = spec(model, true, index);
  return tensor ? tensor->name.c_str() : nullptr;
}

const char *tfm_model_output_name(const tfm_model *model, size_t index) {
  const TensorSpec *tensor = spec(model, false, index);
  return tensor ? tensor->name.c_str() : nullptr;
}

tfm_dtype tfm_model_input_dtype(const tfm_model *model, size_t index) {
  const TensorSpec *tensor = spec(model, true, index);
  return tensor ? tensor->dtype : TFM_DTYPE_INVALID;
}

int32_t tfm_model_input_is_cache(const tfm_model *model, size_t index) {
  const TensorSpec *tensor = spec(model, true, index);
  return tensor && tensor->cache ? 1 : 0;
}

tfm_dtype tfm_model_output_dtype(const tfm_model *model, size_t index) {
  const TensorSpec *tensor = spec(model, false, index);
  return tensor ? tensor->dtype : TFM_DTYPE_INVALID;
}

int32_t tfm_model_input_rank(const tfm_model *model, size_t index) {
  const TensorSpec *tensor = spec(model, true, index);
  return tensor ? static_cast<int32_t>(tensor->dims.size()) : -1;
}

int32_t tfm_model_output_rank(const tfm_model *model, size_t index) {
  const TensorSpec *tensor = spec(model, false, index);
  return tensor ? static_cast<int32_t>(tensor->dims.size()) : -1;
}

int64_t tfm_model_input_dim(const tfm_model *model, size_t index, int32_t dim,
                            const char **out_symbol) {
  return declaredDim(model, true, index, dim, out_symbol);
}

int64_t tfm_model_output_dim(const tfm_model *model, size_t index, int32_t dim,
                             const char **out_symbol) {
  return declaredDim(model, false, index, dim, out_symbol);
}

} // extern "C"
