//===- GgufWriter.cpp - GGUF files of raw tensors for the tests -----------===//
#include "GgufWriter.h"

#include <algorithm>
#include <fstream>

void e2e::writeGguf(const std::string &path,
                    const std::vector<GgufTensor> &tensors, size_t truncateTo) {
  std::string out;
  auto put = [&](const void *p, size_t n) {
    out.append(static_cast<const char *>(p), n);
  };
  auto u32 = [&](uint32_t v) { put(&v, 4); };
  auto u64 = [&](uint64_t v) { put(&v, 8); };
  put("GGUF", 4);
  u32(3);
  u64(tensors.size());
  u64(0);
  uint64_t offset = 0;
  for (const GgufTensor &t : tensors) {
    u64(t.name.size());
    put(t.name.data(), t.name.size());
    u32(uint32_t(t.dims.size()));
    for (uint64_t d : t.dims)
      u64(d);
    u32(t.type);
    u64(offset);
    offset += (t.bytes.size() + 31) / 32 * 32;
  }
  out.resize((out.size() + 31) / 32 * 32, '\0');
  for (const GgufTensor &t : tensors) {
    put(t.bytes.data(), t.bytes.size());
    out.resize((out.size() + 31) / 32 * 32, '\0');
  }
  out.resize(std::min(out.size(), truncateTo));
  std::ofstream(path, std::ios::binary) << out;
}
