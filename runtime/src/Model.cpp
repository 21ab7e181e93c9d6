//===- Model.cpp - Loading, inspecting and running models -------*- C++ -*-===//

#include "Json.h"
#include "Library.h"
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

namespace {
/// A buffer's byte range, to find outputs that overlap other buffers.
struct Extent {
  const char *kind;
  const std::string *name;
  uintptr_t begin, end;
};

/// What one run needs besides the tensors: the model's workspace and the
/// runtime's own arrays, kept from run to run so that a run whose shapes do
/// not grow allocates nothing.
struct RunSlot {
  void *workspace = nullptr;
  int64_t workspaceBytes = 0;
  std::vector<int64_t> symbolValues;
  std::vector<void *> buffers;
  std::vector<Extent> extents;

  RunSlot() = default;
  RunSlot(const RunSlot &) = delete;
  RunSlot &operator=(const RunSlot &) = delete;
  ~RunSlot() { std::free(workspace); }

  /// Makes the workspace hold at least `bytes`; false when it cannot.
  bool reserve(int64_t bytes) {
    if (bytes <= workspaceBytes)
      return true;
    std::free(workspace);
    workspace = nullptr;
    workspaceBytes = 0;
    // aligned_alloc wants a multiple of the alignment.
    auto rounded = static_cast<size_t>(bytes) + (TFM_WORKSPACE_ALIGNMENT - 1);
    rounded -= rounded % TFM_WORKSPACE_ALIGNMENT;
    workspace = std::aligned_alloc(TFM_WORKSPACE_ALIGNMENT, rounded);
    if (!workspace)
      return false;
    workspaceBytes = static_cast<int64_t>(rounded);
    return true;
  }
};
} // namespace

struct tfm_model_t {
  Signature signature;
  /// Null for a model made from symbols linked into the program.
  std::unique_ptr<Library> library;
  tfm_run_packed_fn entry = nullptr;
  /// Null for artifacts without them (tfm_model_create_from_symbols).
  tfm_run_packed_workspace_fn entryWithWorkspace = nullptr;
  tfm_workspace_size_fn workspaceSize = nullptr;
  /// The binding of external weights, shared by every model of the
  /// artifact. Declared after `library`, so released before it closes.
  std::shared_ptr<void> weights;
  /// The artifact's embedded tokenizer, loaded by tfm_model_tokenizer.
  struct TokenizerDeleter {
    void operator()(tfm_tokenizer *t) const { tfm_tokenizer_release(t); }
  };
  mutable std::mutex tokenizerMutex;
  mutable std::unique_ptr<tfm_tokenizer, TokenizerDeleter> tokenizer;

  /// Slots not in use by a run. Runs are concurrent, so the model hands each
  /// its own and keeps as many as ever ran at once; a run's slot returns
  /// here, so the vector's capacity settles and pushing allocates nothing.
  mutable std::mutex slotsMutex;
  mutable std::vector<std::unique_ptr<RunSlot>> freeSlots;

  std::unique_ptr<RunSlot> takeSlot() const {
    {
      std::lock_guard<std::mutex> lock(slotsMutex);
      if (!freeSlots.empty()) {
        std::unique_ptr<RunSlot> slot = std::move(freeSlots.back());
        freeSlots.pop_back();
        return slot;
      }
    }
    return std::make_unique<RunSlot>();
  }

  void giveBack(std::unique_ptr<RunSlot> slot) const {
    std::lock_guard<std::mutex> lock(slotsMutex);
    freeSlots.push_back(std::move(slot));
  }
};

namespace {
/// What a model returns when its scratch workspace cannot be allocated
/// (tfm-plan-workspace; docs/artifact.md).
constexpr int32_t kOutOfMemoryStatus = -2;
/// What the _with_workspace entry points return for a malformed workspace
/// and for one smaller than the dims need; the runtime checks both first.
constexpr int32_t kBadWorkspaceStatus = -3;
constexpr int32_t kWorkspaceTooSmallStatus = -4;

/// Gives a run's slot back to its model however the run ends.
class SlotLease {
public:
  explicit SlotLease(const tfm_model *model)
      : model(model), slot(model->takeSlot()) {}
  ~SlotLease() {
    if (slot)
      model->giveBack(std::move(slot));
  }
  SlotLease(const SlotLease &) = delete;
  SlotLease &operator=(const SlotLease &) = delete;
  RunSlot &operator*() const { return *slot; }
  RunSlot *operator->() const { return slot.get(); }

private:
  const tfm_model *model;
  std::unique_ptr<RunSlot> slot;
};
} // namespace

namespace {

constexpr const char *kMetadataSymbol = "tfm_artifact_metadata";

tfm_status nullArgument(const char *function, const char *argument) {
  return makeStatus(
      TFM_STATUS_INVALID_ARGUMENT,
      fmt::format("{}: argument '{}' is NULL", function, argument));
}

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

/// The checks common to infer and run, up to deriving the symbol values.
tfm_status checkArguments(const char *function, const tfm_model *model,
                          const tfm_tensor *inputs, size_t inputCount,
                          const tfm_tensor *outputs, size_t outputCount,
                          std::vector<int64_t> &symbolValues) {
  if (!model)
    return nullArgument(function, "model");
  if (!inputs && inputCount > 0)
    return nullArgument(function, "inputs");
  if (!outputs && outputCount > 0)
    return nullArgument(function, "outputs");
  if (tfm_status status =
          bindInputs(model->signature, inputs, inputCount, symbolValues))
    return status;
  const Signature &signature = model->signature;
  if (outputCount != signature.outputs.size()) {
    std::string names;
    for (const TensorSpec &output : signature.outputs)
      names += fmt::format("{}{}", names.empty() ? "" : ", ", output.name);
    return makeStatus(
        TFM_STATUS_INVALID_ARGUMENT,
        fmt::format("got {} outputs but model '{}' produces {} ({})",
                    outputCount, signature.model, signature.outputs.size(),
                    names));
  }
  return nullptr;
}

/// The workspace bytes a run at `symbolValues` needs, or a status.
tfm_status workspaceBytes(const tfm_model *model,
                          const std::vector<int64_t> &symbolValues,
                          int64_t &bytes) {
  bytes = model->workspaceSize(symbolValues.empty() ? nullptr
                                                    : symbolValues.data());
  if (bytes >= 0)
    return nullptr;
  // The shapes were checked, so only a size too large to allocate is left.
  return makeStatus(
      TFM_STATUS_RUNTIME_ERROR,
      fmt::format("model '{}': cannot allocate its scratch memory for these "
                  "shapes (larger than 2^56 bytes; {} returned {})",
                  model->signature.model, model->signature.workspaceSize,
                  bytes));
}

tfm_status noWorkspaceEntry(const char *function, const tfm_model *model) {
  return makeStatus(
      TFM_STATUS_INVALID_ARGUMENT,
      fmt::format("{}: model '{}' has no workspace entry points (an artifact "
                  "older than them, or made by "
                  "tfm_model_create_from_symbols)",
                  function, model->signature.model));
}

/// The caller's workspace of a run, when it gives one.
struct CallerWorkspace {
  void *data;
  int64_t bytes;
};

tfm_status runModel(const char *function, const tfm_model *model,
                    const tfm_tensor *inputs, size_t inputCount,
                    tfm_tensor *outputs, size_t outputCount,
                    const tfm_exec *exec,
                    const CallerWorkspace *callerWorkspace = nullptr) {
  if (!model)
    return nullArgument(function, "model");
  SlotLease slot(model);
  std::vector<int64_t> &symbolValues = slot->symbolValues;
  if (tfm_status status = checkArguments(function, model, inputs, inputCount,
                                         outputs, outputCount, symbolValues))
    return status;
  if (exec && exec->abi_version != TFM_EXEC_ABI_VERSION)
    return makeStatus(
        TFM_STATUS_INVALID_ARGUMENT,
        fmt::format("{}: exec has abi_version {} but this runtime supports {}",
                    function, exec->abi_version, TFM_EXEC_ABI_VERSION));
  const Signature &signature = model->signature;
  std::vector<void *> &buffers = slot->buffers;
  std::vector<Extent> &extents = slot->extents;
  buffers.clear();
  extents.clear();
  for (size_t i = 0; i < inputCount; ++i) {
    const std::string &name = signature.inputs[i].name;
    if (!inputs[i].data)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        fmt::format("input '{}': data is NULL", name));
    auto begin = reinterpret_cast<uintptr_t>(inputs[i].data);
    // bindInputs has checked the shape, so the size cannot overflow.
    auto bytes = static_cast<uintptr_t>(tfm_tensor_byte_size(&inputs[i]));
    // Compiled code may test a bool byte's lowest bit or compare it with 0:
    // only 0 and 1 mean the same to both. A GPU model's buffers are device
    // memory, which the host cannot read: tfm-run checks its bools on the
    // host before copying them.
    if (inputs[i].dtype == TFM_DTYPE_BOOL && signature.device.empty()) {
      const auto *data = static_cast<const unsigned char *>(inputs[i].data);
      for (uintptr_t b = 0; b < bytes; ++b)
        if (data[b] > 1)
          return makeStatus(
              TFM_STATUS_INVALID_ARGUMENT,
              fmt::format("input '{}': bool element {} is the byte {}, not 0 "
                          "or 1",
                          name, b, int(data[b])));
    }
    buffers.push_back(inputs[i].data);
    extents.push_back({"input", &name, begin, begin + bytes});
  }
  // A cache is written in place like an output, while the other inputs
  // (and the other caches) are still read.
  for (size_t i = 0; i < inputCount; ++i) {
    if (!signature.inputs[i].cache)
      continue;
    const Extent &cache = extents[i];
    for (size_t j = 0; j < inputCount; ++j) {
      const Extent &other = extents[j];
      if (j != i && cache.begin < cache.end && other.begin < other.end &&
          cache.begin < other.end && other.begin < cache.end)
        return makeStatus(
            TFM_STATUS_INVALID_ARGUMENT,
            fmt::format("input '{}' (a cache, written in place) overlaps "
                        "input '{}' in memory",
                        *cache.name, *other.name));
    }
  }
  for (size_t o = 0; o < outputCount; ++o) {
    const TensorSpec &output = signature.outputs[o];
    const tfm_tensor &view = outputs[o];
    int64_t shape[TFM_MAX_RANK];
    outputShape(signature, o, symbolValues, shape);
    int32_t rank = static_cast<int32_t>(output.dims.size());
    // Formatted only for a message: a run that passes allocates nothing.
    auto expected = [&] {
      return fmt::format("{}{}", tfm_dtype_name(output.dtype),
                         formatShape(shape, rank));
    };
    if (view.dtype != output.dtype)
      return makeStatus(
          TFM_STATUS_INVALID_ARGUMENT,
          fmt::format("output '{}': dtype is {} but the model produces {}",
                      output.name, tfm_dtype_name(view.dtype), expected()));
    bool sameShape = view.rank == rank;
    for (int32_t d = 0; sameShape && d < rank; ++d)
      sameShape = view.shape[d] == shape[d];
    if (!sameShape) {
      int32_t shownRank = std::max(0, std::min(view.rank, TFM_MAX_RANK));
      return makeStatus(
          TFM_STATUS_SHAPE_MISMATCH,
          fmt::format("output '{}': shape is {}{} but the model produces {} "
                      "for these inputs",
                      output.name, tfm_dtype_name(view.dtype),
                      formatShape(view.shape, shownRank), expected()));
    }
    int64_t bytes = tfm_tensor_byte_size(&view);
    if (bytes < 0)
      return makeStatus(
          TFM_STATUS_INVALID_ARGUMENT,
          fmt::format("output '{}': shape {} has too many elements",
                      output.name, formatShape(shape, rank)));
    if (!view.data)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        fmt::format("output '{}': data is NULL", output.name));
    auto begin = reinterpret_cast<uintptr_t>(view.data);
    Extent extent{"output", &output.name, begin,
                  begin + static_cast<uintptr_t>(bytes)};
    // The compiled code may write an output before it reads everything else.
    for (const Extent &other : extents)
      if (extent.begin < extent.end && other.begin < other.end &&
          extent.begin < other.end && other.begin < extent.end)
        return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                          fmt::format("output '{}' overlaps {} '{}' in memory",
                                      output.name, other.kind, *other.name));
    extents.push_back(extent);
    buffers.push_back(view.data);
  }

  const int64_t *symbols = symbolValues.empty() ? nullptr : symbolValues.data();
  int32_t result;
  if (callerWorkspace && (callerWorkspace->data || callerWorkspace->bytes)) {
    if (!model->entryWithWorkspace)
      return noWorkspaceEntry(function, model);
    const CallerWorkspace &given = *callerWorkspace;
    if (given.bytes < 0 || !given.data)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        fmt::format("{}: workspace {} with {} bytes; give "
                                    "NULL and 0 for none",
                                    function, given.data ? "non-NULL" : "NULL",
                                    given.bytes));
    auto begin = reinterpret_cast<uintptr_t>(given.data);
    if (begin % TFM_WORKSPACE_ALIGNMENT != 0)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        fmt::format("{}: workspace {} is not aligned to {} "
                                    "bytes",
                                    function, given.data,
                                    TFM_WORKSPACE_ALIGNMENT));
    int64_t needed;
    if (tfm_status status = workspaceBytes(model, symbolValues, needed))
      return status;
    if (given.bytes < needed)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        fmt::format("{}: workspace has {} bytes but model "
                                    "'{}' needs {} for these shapes",
                                    function, given.bytes, signature.model,
                                    needed));
    // The model writes its scratch there while it reads the inputs.
    uintptr_t end = begin + static_cast<uintptr_t>(needed);
    for (const Extent &other : extents)
      if (begin < end && other.begin < other.end && begin < other.end &&
          other.begin < end)
        return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                          fmt::format("{}: workspace overlaps {} '{}' in "
                                      "memory",
                                      function, other.kind, *other.name));
    result = model->entryWithWorkspace(buffers.data(), symbols, exec,
                                       given.data, given.bytes);
  } else if (model->entryWithWorkspace) {
    int64_t needed;
    if (tfm_status status = workspaceBytes(model, symbolValues, needed))
      return status;
    if (!slot->reserve(needed))
      return makeStatus(
          TFM_STATUS_RUNTIME_ERROR,
          fmt::format("model '{}': cannot allocate its scratch memory for "
                      "these shapes ({} bytes: out of memory)",
                      signature.model, needed));
    result = model->entryWithWorkspace(buffers.data(), symbols, exec,
                                       slot->workspace, slot->workspaceBytes);
  } else {
    result = model->entry(buffers.data(), symbols, exec);
  }
  if (result == kOutOfMemoryStatus)
    return makeStatus(
        TFM_STATUS_RUNTIME_ERROR,
        fmt::format("model '{}': cannot allocate its scratch memory for these "
                    "shapes (out of memory, or larger than 2^56 bytes; error "
                    "code {})",
                    signature.model, result));
  if (result == TFM_GPU_ERROR_STATUS) {
    tfm_status gpu = tfm_gpu_take_error();
    std::string why = gpu ? tfm_status_message(gpu) : "unknown GPU error";
    tfm_status_free(gpu);
    return makeStatus(TFM_STATUS_RUNTIME_ERROR,
                      fmt::format("model '{}': {}", signature.model, why));
  }
  if (result == kBadWorkspaceStatus || result == kWorkspaceTooSmallStatus)
    return makeStatus(
        TFM_STATUS_RUNTIME_ERROR,
        fmt::format("model '{}': {} refused the workspace (error code {})",
                    signature.model, signature.workspaceEntry, result));
  if (result != 0) {
    auto known = signature.errors.find(result);
    if (known != signature.errors.end())
      return makeStatus(TFM_STATUS_RUNTIME_ERROR,
                        fmt::format("model '{}': {} (error code {})",
                                    signature.model, known->second, result));
    return makeStatus(TFM_STATUS_RUNTIME_ERROR,
                      fmt::format("model '{}': {} returned error code {}",
                                  signature.model, signature.entry, result));
  }
  return nullptr;
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

tfm_status tfm_model_infer_output_shapes(const tfm_model *model,
                                         const tfm_tensor *inputs,
                                         size_t n_inputs, tfm_tensor *outputs,
                                         size_t n_outputs) {
  const char *function = "tfm_model_infer_output_shapes";
  return guard(function, [&]() -> tfm_status {
    std::vector<int64_t> symbolValues;
    if (tfm_status status = checkArguments(function, model, inputs, n_inputs,
                                           outputs, n_outputs, symbolValues))
      return status;
    for (size_t o = 0; o < n_outputs; ++o) {
      const TensorSpec &output = model->signature.outputs[o];
      outputs[o].dtype = output.dtype;
      outputs[o].rank = static_cast<int32_t>(output.dims.size());
      outputShape(model->signature, o, symbolValues, outputs[o].shape);
    }
    return nullptr;
  });
}

tfm_status tfm_model_run(const tfm_model *model, const tfm_tensor *inputs,
                         size_t n_inputs, tfm_tensor *outputs,
                         size_t n_outputs) {
  const char *function = "tfm_model_run";
  return guard(function, [&]() -> tfm_status {
    return runModel(function, model, inputs, n_inputs, outputs, n_outputs,
                    /*exec=*/nullptr);
  });
}

tfm_status tfm_model_run_with_exec(const tfm_model *model,
                                   const tfm_tensor *inputs, size_t n_inputs,
                                   tfm_tensor *outputs, size_t n_outputs,
                                   const tfm_exec *exec) {
  const char *function = "tfm_model_run_with_exec";
  return guard(function, [&]() -> tfm_status {
    return runModel(function, model, inputs, n_inputs, outputs, n_outputs,
                    exec);
  });
}

tfm_status tfm_model_workspace_size(const tfm_model *model,
                                    const tfm_tensor *inputs, size_t n_inputs,
                                    int64_t *out_bytes) {
  const char *function = "tfm_model_workspace_size";
  return guard(function, [&]() -> tfm_status {
    if (!out_bytes)
      return nullArgument(function, "out_bytes");
    *out_bytes = 0;
    if (!model)
      return nullArgument(function, "model");
    if (!inputs && n_inputs > 0)
      return nullArgument(function, "inputs");
    if (!model->workspaceSize)
      return noWorkspaceEntry(function, model);
    std::vector<int64_t> symbolValues;
    if (tfm_status status =
            bindInputs(model->signature, inputs, n_inputs, symbolValues))
      return status;
    return workspaceBytes(model, symbolValues, *out_bytes);
  });
}

tfm_status tfm_model_run_with_workspace(const tfm_model *model,
                                        const tfm_tensor *inputs,
                                        size_t n_inputs, tfm_tensor *outputs,
                                        size_t n_outputs, const tfm_exec *exec,
                                        void *workspace,
                                        int64_t workspace_bytes) {
  const char *function = "tfm_model_run_with_workspace";
  return guard(function, [&]() -> tfm_status {
    CallerWorkspace given{workspace, workspace_bytes};
    return runModel(function, model, inputs, n_inputs, outputs, n_outputs, exec,
                    &given);
  });
}

} // extern "C"
