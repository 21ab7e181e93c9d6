//===- ModelRun.cpp - Running models ----------------------------*- C++ -*-===//
//
// tfm_model_run and its variants: the arguments checked against the
// signature, the outputs' shapes inferred, a workspace from the model's
// slots (or the caller's), and the artifact's status codes as messages.
//
//===----------------------------------------------------------------------===//

#include "ModelState.h"
#include "Status.h"
#include "Tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

using namespace tfm::rt;

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

} // namespace

extern "C" {

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
