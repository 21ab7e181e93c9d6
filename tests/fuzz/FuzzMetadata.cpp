//===- FuzzMetadata.cpp - Fuzz the artifact metadata path ----------------===//
//
// Artifact metadata (docs/artifact.md) is JSON that a loaded library hands
// to the runtime. Each input is given to tfm_model_create_from_symbols with
// stand-in entry points; a model it accepts is then used as an app would:
// its signature queried, inputs built from the declared dims, output shapes
// inferred, the workspace sized and the model run, the stand-in entry point
// returning an error code chosen by the input so that the messages of the
// metadata's "errors" are looked up too. Every call must give a status, a
// value or a one-line message, never a crash.
//
//===----------------------------------------------------------------------===//
#include "MemoryFile.h"

#include "tfm/runtime.h"

#include <cstring>
#include <string>
#include <vector>

namespace {

int32_t entryResult = 0;
int64_t workspaceResult = 0;

int32_t entry(void *const *, const int64_t *, const tfm_exec *) {
  return entryResult;
}
int32_t entryWithWorkspace(void *const *, const int64_t *, const tfm_exec *,
                           void *, int64_t) {
  return entryResult;
}
int64_t workspaceSize(const int64_t *) { return workspaceResult; }

void checkStatus(tfm_status status) {
  if (!status)
    return;
  TFM_FUZZ_CHECK(tfm_status_code(status) != TFM_STATUS_OK);
  const char *message = tfm_status_message(status);
  TFM_FUZZ_CHECK(message && *message && !std::strchr(message, '\n'));
  tfm_status_free(status);
}

/// Tensors of at most this many bytes are allocated and run.
constexpr int64_t kMaxRunBytes = 1 << 16;

struct Tensors {
  std::vector<tfm_tensor> tensors;
  ~Tensors() {
    for (tfm_tensor &tensor : tensors)
      tfm_tensor_release_data(&tensor);
  }
};

void useModel(tfm_model *model, const uint8_t *data, size_t size) {
  TFM_FUZZ_CHECK(tfm_model_name(model) != nullptr);
  size_t symbols = tfm_model_symbol_count(model);
  for (size_t i = 0; i < symbols; ++i)
    TFM_FUZZ_CHECK(tfm_model_symbol_name(model, i) != nullptr);
  TFM_FUZZ_CHECK(tfm_model_symbol_name(model, symbols) == nullptr);

  // Symbols take small values from the input's first bytes.
  auto symbolValue = [&](int32_t index) -> int64_t {
    return size ? data[index % size] % 4 : 1;
  };
  Tensors inputs, outputs;
  size_t inputCount = tfm_model_input_count(model);
  bool runnable = true;
  for (size_t i = 0; i < inputCount; ++i) {
    TFM_FUZZ_CHECK(tfm_model_input_name(model, i) != nullptr);
    tfm_tensor tensor{};
    tensor.dtype = tfm_model_input_dtype(model, i);
    TFM_FUZZ_CHECK(tfm_dtype_size(tensor.dtype) != 0);
    tensor.rank = tfm_model_input_rank(model, i);
    TFM_FUZZ_CHECK(tensor.rank >= 0 && tensor.rank <= TFM_MAX_RANK);
    for (int32_t d = 0; d < tensor.rank; ++d) {
      const char *symbolName = nullptr;
      int64_t dim = tfm_model_input_dim(model, i, d, &symbolName);
      TFM_FUZZ_CHECK((symbolName != nullptr) == (dim == -1));
      TFM_FUZZ_CHECK(dim >= -1);
      int32_t symbol = -1;
      for (size_t s = 0; symbolName && s < symbols; ++s)
        if (std::strcmp(tfm_model_symbol_name(model, s), symbolName) == 0)
          symbol = static_cast<int32_t>(s);
      TFM_FUZZ_CHECK(!symbolName || symbol >= 0);
      tensor.shape[d] = symbol >= 0 ? symbolValue(symbol) : dim;
    }
    int64_t bytes = tfm_tensor_byte_size(&tensor);
    if (bytes < 0 || bytes > kMaxRunBytes) {
      runnable = false;
      tensor.data = nullptr;
    } else {
      tfm_tensor allocated{};
      checkStatus(tfm_tensor_allocate(tensor.dtype, tensor.rank, tensor.shape,
                                      &allocated));
      tensor.data = allocated.data;
    }
    inputs.tensors.push_back(tensor);
  }
  TFM_FUZZ_CHECK(tfm_model_input_name(model, inputCount) == nullptr);

  size_t outputCount = tfm_model_output_count(model);
  for (size_t i = 0; i < outputCount; ++i) {
    TFM_FUZZ_CHECK(tfm_model_output_name(model, i) != nullptr);
    TFM_FUZZ_CHECK(tfm_model_output_rank(model, i) >= 0 &&
                   tfm_model_output_rank(model, i) <= TFM_MAX_RANK);
  }
  outputs.tensors.resize(outputCount);
  tfm_status inferred =
      tfm_model_infer_output_shapes(model, inputs.tensors.data(), inputCount,
                                    outputs.tensors.data(), outputCount);
  if (inferred) {
    checkStatus(inferred);
    return;
  }
  for (tfm_tensor &output : outputs.tensors) {
    int64_t bytes = tfm_tensor_byte_size(&output);
    TFM_FUZZ_CHECK(bytes >= 0);
    if (bytes > kMaxRunBytes) {
      runnable = false;
      continue;
    }
    tfm_tensor allocated{};
    checkStatus(tfm_tensor_allocate(output.dtype, output.rank, output.shape,
                                    &allocated));
    output.data = allocated.data;
  }
  int64_t workspaceBytes = -1;
  checkStatus(tfm_model_workspace_size(model, inputs.tensors.data(), inputCount,
                                       &workspaceBytes));
  if (!runnable)
    return;
  checkStatus(tfm_model_run(model, inputs.tensors.data(), inputCount,
                            outputs.tensors.data(), outputCount));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The last bytes choose what the stand-in entry points return: mostly 0,
  // sometimes an error code, the out-of-memory -2 or a huge workspace.
  entryResult = size ? static_cast<int8_t>(data[size - 1]) % 8 : 0;
  workspaceResult = size > 1 ? (data[size - 2] % 5 == 0 ? -2 : 64) : 0;
  std::string json(reinterpret_cast<const char *>(data), size);
  tfm_model *model = nullptr;
  tfm_status status = tfm_model_create_from_symbols_with_workspace(
      json.c_str(), entry, entryWithWorkspace, workspaceSize, &model);
  if (status) {
    TFM_FUZZ_CHECK(model == nullptr);
    checkStatus(status);
    return 0;
  }
  TFM_FUZZ_CHECK(model != nullptr);
  useModel(model, data, size);
  tfm_model_release(model);
  return 0;
}
