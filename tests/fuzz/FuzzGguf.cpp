//===- FuzzGguf.cpp - Fuzz the GGUF reader --------------------------------===//
//
// Every input is opened as a file. What the reader accepts must be what the
// format promises: each tensor's bytes are whole blocks of its type for its
// element count and lie inside the mapping, and its dequantization (for the
// types that have one) runs over exactly those bytes. Errors are one line.
//
//===----------------------------------------------------------------------===//
#include "MemoryFile.h"

#include "tfm/gguf.h"

#include <vector>

using tfmfuzz::MemoryFile;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MemoryFile input(data, size);
  std::string error;
  std::unique_ptr<tfm::GgufFile> file =
      tfm::GgufFile::open(input.path(), error);
  if (!file) {
    TFM_FUZZ_CHECK(!error.empty() && error.find('\n') == std::string::npos);
    return 0;
  }
  for (const tfm::GgufTensor &tensor : file->tensors()) {
    const tfm::GgufTypeInfo *type = tfm::ggufTypeInfo(tensor.type);
    TFM_FUZZ_CHECK(type != nullptr);
    int64_t count = tensor.elementCount();
    TFM_FUZZ_CHECK(count % type->blockElements == 0);
    TFM_FUZZ_CHECK(tensor.byteSize ==
                   size_t(count / type->blockElements * type->blockBytes));
    if (!type->dequantizes || count > (int64_t(1) << 20))
      continue;
    std::vector<float> out(static_cast<size_t>(count));
    TFM_FUZZ_CHECK(
        tfm::ggufDequantize(tensor.type, tensor.data, count, out.data()));
  }
  return 0;
}
