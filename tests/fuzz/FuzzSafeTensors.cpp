//===- FuzzSafeTensors.cpp - Fuzz the .safetensors reader -----------------===//
//
// Every input is opened as a file. What the reader accepts must be exactly
// what the format promises: each tensor's bytes are product(shape) elements
// of its dtype, lie inside the data section, and the non-empty tensors tile
// that section in order (so no byte of the file hides from the reader).
// Accepted files are written back and read again: the tensors, their bytes
// and the metadata must survive unchanged.
//
//===----------------------------------------------------------------------===//
#include "MemoryFile.h"

#include "tfm/safetensors.h"

#include <cstring>

using tfmfuzz::MemoryFile;

namespace {

bool sameEntries(const tfm::SafeTensorsFile &a, const tfm::SafeTensorsFile &b) {
  if (a.entries().size() != b.entries().size() || a.metadata() != b.metadata())
    return false;
  for (const tfm::SafeTensorEntry &entry : a.entries()) {
    const tfm::SafeTensorEntry *other = b.find(entry.name);
    if (!other || other->dtype != entry.dtype || other->shape != entry.shape ||
        other->byteSize != entry.byteSize ||
        (entry.byteSize &&
         std::memcmp(other->data, entry.data, entry.byteSize) != 0))
      return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MemoryFile input(data, size);
  std::string error;
  std::unique_ptr<tfm::SafeTensorsFile> file =
      tfm::SafeTensorsFile::open(input.path(), error);
  if (!file) {
    TFM_FUZZ_CHECK(!error.empty());
    TFM_FUZZ_CHECK(error.find('\n') == std::string::npos);
    return 0;
  }

  TFM_FUZZ_CHECK(size >= 8);
  uint64_t headerSize;
  std::memcpy(&headerSize, data, 8);
  TFM_FUZZ_CHECK(headerSize <= size - 8);
  size_t dataStart = 8 + headerSize;

  // The mapping's address is unknown here; the first non-empty tensor must
  // start the data section, which pins it.
  const unsigned char *base = nullptr;
  const unsigned char *next = nullptr;
  for (const tfm::SafeTensorEntry &entry : file->entries()) {
    size_t elementSize = tfm::safeTensorsDtypeSize(entry.dtype);
    TFM_FUZZ_CHECK(elementSize != 0);
    uint64_t count = 1;
    for (int64_t dim : entry.shape) {
      TFM_FUZZ_CHECK(dim >= 0);
      TFM_FUZZ_CHECK(
          !__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count));
    }
    uint64_t bytes;
    TFM_FUZZ_CHECK(!__builtin_mul_overflow(count, elementSize, &bytes));
    TFM_FUZZ_CHECK(bytes == entry.byteSize);
    TFM_FUZZ_CHECK(file->find(entry.name) == &entry);
    if (entry.byteSize == 0)
      continue;
    const auto *begin = static_cast<const unsigned char *>(entry.data);
    if (!base) {
      base = begin - dataStart;
      next = begin;
    }
    TFM_FUZZ_CHECK(begin == next);
    TFM_FUZZ_CHECK(entry.byteSize <= size - (begin - base));
    TFM_FUZZ_CHECK(std::memcmp(begin, data + (begin - base), entry.byteSize) ==
                   0);
    next = begin + entry.byteSize;
  }
  TFM_FUZZ_CHECK(base ? next == base + size : dataStart == size);

  std::vector<tfm::SafeTensorWriteEntry> entries;
  for (const tfm::SafeTensorEntry &entry : file->entries())
    entries.push_back({entry.name, entry.dtype, entry.shape, entry.data});
  MemoryFile output;
  TFM_FUZZ_CHECK(
      tfm::writeSafeTensors(output.path(), entries, error, file->metadata()));
  std::unique_ptr<tfm::SafeTensorsFile> reread =
      tfm::SafeTensorsFile::open(output.path(), error);
  if (!reread) {
    std::fprintf(stderr, "%s\n", error.c_str());
    tfmfuzz::propertyFailed("a written file reads back");
  }
  TFM_FUZZ_CHECK(sameEntries(*file, *reread));
  return 0;
}
