//===- FuzzNpy.cpp - Fuzz the .npy reader and writer ----------------------===//
//
// Two properties per input. Read as a .npy file: an accepted file's tensor
// holds exactly the file's trailing bytes (nothing read from outside the
// file, nothing skipped), and writing it and reading it back gives the same
// tensor bit for bit. Taken as a tensor to write (dtype, rank and dims from
// the first bytes, the rest as data): the write succeeds exactly when the
// tensor is valid, and reading the file back gives it bit for bit, NaN
// payloads and all.
//
//===----------------------------------------------------------------------===//
#include "MemoryFile.h"

#include "tfm/runtime.h"

#include <cstring>
#include <vector>

using tfmfuzz::MemoryFile;

namespace {

bool sameTensor(const tfm_tensor &a, const tfm_tensor &b) {
  if (a.dtype != b.dtype || a.rank != b.rank)
    return false;
  for (int32_t i = 0; i < a.rank; ++i)
    if (a.shape[i] != b.shape[i])
      return false;
  int64_t bytes = tfm_tensor_byte_size(&a);
  return bytes >= 0 && std::memcmp(a.data, b.data, bytes) == 0;
}

/// Writes `tensor`, reads it back and checks that nothing changed.
void checkRoundTrip(const tfm_tensor &tensor) {
  MemoryFile file;
  std::string path = file.path();
  if (tfm_status status = tfm_npy_write(path.c_str(), &tensor)) {
    std::fprintf(stderr, "%s\n", tfm_status_message(status));
    tfmfuzz::propertyFailed("a valid tensor is written");
  }
  tfm_tensor reread{};
  if (tfm_status status = tfm_npy_read(path.c_str(), &reread)) {
    std::fprintf(stderr, "%s\n", tfm_status_message(status));
    tfmfuzz::propertyFailed("a written .npy file reads back");
  }
  TFM_FUZZ_CHECK(sameTensor(tensor, reread));
  tfm_tensor_release_data(&reread);
}

void readAsFile(const uint8_t *data, size_t size) {
  MemoryFile input(data, size);
  std::string path = input.path();
  tfm_tensor tensor{};
  tfm_status status = tfm_npy_read(path.c_str(), &tensor);
  if (status) {
    TFM_FUZZ_CHECK(tensor.data == nullptr);
    TFM_FUZZ_CHECK(tfm_status_code(status) == TFM_STATUS_FORMAT_ERROR);
    TFM_FUZZ_CHECK(std::strchr(tfm_status_message(status), '\n') == nullptr);
    tfm_status_free(status);
    return;
  }
  int64_t bytes = tfm_tensor_byte_size(&tensor);
  TFM_FUZZ_CHECK(bytes >= 0 && static_cast<uint64_t>(bytes) <= size);
  TFM_FUZZ_CHECK(tensor.data != nullptr);
  TFM_FUZZ_CHECK(std::memcmp(tensor.data, data + size - bytes, bytes) == 0);
  checkRoundTrip(tensor);
  tfm_tensor_release_data(&tensor);
}

void writeFromBytes(const uint8_t *data, size_t size) {
  if (size < 2)
    return;
  tfm_tensor tensor{};
  tensor.dtype = static_cast<tfm_dtype>(data[0] % 7);
  tensor.rank = data[1] % (TFM_MAX_RANK + 1);
  size_t used = 2;
  for (int32_t i = 0; i < tensor.rank; ++i)
    tensor.shape[i] = used < size ? data[used++] % 4 : 1;
  int64_t bytes = tfm_tensor_byte_size(&tensor);
  bool validDtype = tfm_dtype_size(tensor.dtype) != 0;
  TFM_FUZZ_CHECK(validDtype == (bytes >= 0));
  if (!validDtype)
    return;
  std::vector<uint8_t> payload(bytes > 0 ? bytes : 1);
  for (int64_t i = 0; i < bytes; ++i)
    payload[i] = used < size ? data[used + i % (size - used)] : uint8_t(i);
  tensor.data = payload.data();
  bool validBools = true;
  if (tensor.dtype == TFM_DTYPE_BOOL)
    for (int64_t i = 0; i < bytes; ++i)
      validBools = validBools && payload[i] <= 1;
  if (validBools) {
    checkRoundTrip(tensor);
    return;
  }
  MemoryFile file;
  std::string path = file.path();
  tfm_status status = tfm_npy_write(path.c_str(), &tensor);
  TFM_FUZZ_CHECK(tfm_status_code(status) == TFM_STATUS_INVALID_ARGUMENT);
  tfm_status_free(status);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  readAsFile(data, size);
  writeFromBytes(data, size);
  return 0;
}
