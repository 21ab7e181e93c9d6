//===- SafeTensors.cpp - Read and write .safetensors files ------*- C++ -*-===//
//
// Files come from anywhere, so every field is checked against the file before
// any pointer into it is handed out; see the header for the format.
//
//===----------------------------------------------------------------------===//

#include "tfm/safetensors.h"

#include "File.h"
#include "Json.h"
#include "Tensor.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <sys/mman.h>
#include <tuple>
#include <unistd.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the safetensors header size is read as a host integer");

using json = nlohmann::json;

namespace tfm {

namespace {

/// Characters of a tensor name quoted in a message (names of real
/// checkpoints are well under this).
constexpr size_t kNameInMessage = 256;

constexpr const char *kMetadataKey = "__metadata__";

struct DtypeInfo {
  const char *name;
  size_t size;
  /// The runtime's dtype of the same elements, if it has one.
  tfm_dtype dtype;
};
constexpr DtypeInfo kDtypes[] = {
    {"BOOL", 1, TFM_DTYPE_BOOL},       {"U8", 1, TFM_DTYPE_U8},
    {"I8", 1, TFM_DTYPE_I8},           {"F8_E5M2", 1, TFM_DTYPE_INVALID},
    {"F8_E4M3", 1, TFM_DTYPE_INVALID}, {"I16", 2, TFM_DTYPE_INVALID},
    {"U16", 2, TFM_DTYPE_INVALID},     {"F16", 2, TFM_DTYPE_F16},
    {"BF16", 2, TFM_DTYPE_BF16},       {"I32", 4, TFM_DTYPE_I32},
    {"U32", 4, TFM_DTYPE_INVALID},     {"F32", 4, TFM_DTYPE_F32},
    {"F64", 8, TFM_DTYPE_F64},         {"I64", 8, TFM_DTYPE_I64},
    {"U64", 8, TFM_DTYPE_INVALID}};

/// The parse of one header entry, before it is turned into a SafeTensorEntry.
struct RawEntry {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

/// Checks one tensor's header entry; returns an error (without the file name)
/// or an empty string.
std::string parseEntry(const std::string &name, const json &value,
                       uint64_t dataSize, RawEntry &entry) {
  entry.name = name;
  // A name may hold any character JSON can escape: the message stays on
  // one line.
  std::string where =
      fmt::format("tensor '{}'", rt::printable(name, kNameInMessage));
  if (!value.is_object())
    return fmt::format("{}: expected an object, got {}", where,
                       value.type_name());

  auto dtype = value.find("dtype");
  if (dtype == value.end() || !dtype->is_string())
    return fmt::format("{}: \"dtype\" is missing or not a string", where);
  entry.dtype = dtype->get<std::string>();
  size_t elementSize = safeTensorsDtypeSize(entry.dtype);
  if (elementSize == 0)
    return fmt::format("{}: unknown dtype '{}'", where, entry.dtype);

  auto shape = value.find("shape");
  if (shape == value.end() || !shape->is_array())
    return fmt::format("{}: \"shape\" is missing or not an array", where);
  for (size_t d = 0; d < shape->size(); ++d) {
    const json &dim = (*shape)[d];
    if (dim.is_number_integer() && !dim.is_number_unsigned())
      return fmt::format("{}: dim {} is negative ({})", where, d,
                         dim.get<int64_t>());
    if (!dim.is_number_unsigned() ||
        dim.get<uint64_t>() >
            static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return fmt::format("{}: dim {} is {}, not a non-negative integer", where,
                         d, rt::describeJson(dim));
    entry.shape.push_back(dim.get<int64_t>());
  }

  auto offsets = value.find("data_offsets");
  if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned())
    return fmt::format("{}: \"data_offsets\" must be two non-negative "
                       "integers",
                       where);
  entry.begin = (*offsets)[0].get<uint64_t>();
  entry.end = (*offsets)[1].get<uint64_t>();
  if (entry.end < entry.begin)
    return fmt::format("{}: data_offsets [{}, {}) end before they begin", where,
                       entry.begin, entry.end);
  if (entry.end > dataSize)
    return fmt::format("{}: data_offsets [{}, {}) end past the data section "
                       "({} bytes)",
                       where, entry.begin, entry.end, dataSize);

  std::optional<int64_t> count =
      rt::elementCount(entry.shape.data(), entry.shape.size());
  std::optional<int64_t> bytes =
      count ? rt::byteSize(*count, elementSize) : std::nullopt;
  if (!bytes)
    return fmt::format("{}: shape {} is too large", where,
                       rt::formatShape(entry.shape.data(), entry.shape.size()));
  if (static_cast<uint64_t>(*bytes) != entry.end - entry.begin)
    return fmt::format(
        "{}: shape {} of {} needs {} bytes but data_offsets "
        "[{}, {}) hold {}",
        where, rt::formatShape(entry.shape.data(), entry.shape.size()),
        entry.dtype, *bytes, entry.begin, entry.end, entry.end - entry.begin);
  return "";
}

std::string parseMetadata(const json &value,
                          std::map<std::string, std::string> &metadata) {
  if (!value.is_object())
    return fmt::format("\"{}\" must be an object of strings", kMetadataKey);
  for (const auto &[key, text] : value.items()) {
    if (!text.is_string())
      return fmt::format("\"{}\" entry '{}' is {}, not a string", kMetadataKey,
                         key, text.type_name());
    metadata[key] = text.get<std::string>();
  }
  return "";
}

} // namespace

size_t safeTensorsDtypeSize(std::string_view dtype) {
  for (const DtypeInfo &info : kDtypes)
    if (dtype == info.name)
      return info.size;
  return 0;
}

std::string_view safeTensorsDtypeName(tfm_dtype dtype) {
  for (const DtypeInfo &info : kDtypes)
    if (dtype != TFM_DTYPE_INVALID && info.dtype == dtype)
      return info.name;
  return {};
}

tfm_dtype dtypeOfSafeTensors(std::string_view dtype) {
  for (const DtypeInfo &info : kDtypes)
    if (dtype == info.name)
      return info.dtype;
  return TFM_DTYPE_INVALID;
}

std::unique_ptr<SafeTensorsFile> SafeTensorsFile::open(const std::string &path,
                                                       std::string &error) {
  try {
    rt::InputFile file;
    bool notFound;
    if (!file.open(path, error, notFound))
      return nullptr;
    auto fail = [&](const std::string &message) {
      error = fmt::format("{}: {}", path, message);
      return nullptr;
    };
    uint64_t fileSize = static_cast<uint64_t>(file.size());
    if (fileSize < 8)
      return fail(fmt::format("the file has {} bytes, too few for the 8-byte "
                              "header size",
                              fileSize));

    std::unique_ptr<SafeTensorsFile> result(new SafeTensorsFile());
    result->filePath = path;
    void *mapping =
        ::mmap(nullptr, fileSize, PROT_READ, MAP_PRIVATE, file.fd(), 0);
    if (mapping == MAP_FAILED)
      return fail(fmt::format("mmap failed: {}", std::strerror(errno)));
    result->mapping = mapping;
    result->mappingSize = fileSize;
    const auto *bytes = static_cast<const unsigned char *>(mapping);

    uint64_t headerSize = 0;
    std::memcpy(&headerSize, bytes, 8);
    if (headerSize > fileSize - 8)
      return fail(fmt::format("header size {} is larger than the rest of the "
                              "file ({} bytes)",
                              headerSize, fileSize - 8));
    const char *headerBegin = reinterpret_cast<const char *>(bytes + 8);
    // JSON parsers stop at a NUL byte, so bytes after one would hide from
    // this reader but not from others.
    if (const void *nul = std::memchr(headerBegin, '\0', headerSize))
      return fail(
          fmt::format("the header has a NUL byte at offset {}",
                      8 + (static_cast<const char *>(nul) - headerBegin)));
    json header;
    std::string jsonError;
    if (!rt::parseBoundedJson(std::string_view(headerBegin, headerSize), header,
                              jsonError))
      return fail("the header " + jsonError);
    if (!header.is_object())
      return fail(fmt::format("the header is a JSON {}, not an object",
                              header.type_name()));

    uint64_t dataSize = fileSize - 8 - headerSize;
    std::vector<RawEntry> raw;
    for (const auto &[name, value] : header.items()) {
      std::string message;
      if (name == kMetadataKey) {
        message = parseMetadata(value, result->fileMetadata);
      } else {
        raw.emplace_back();
        message = parseEntry(name, value, dataSize, raw.back());
      }
      if (!message.empty())
        return fail(message);
    }

    std::sort(raw.begin(), raw.end(), [](const RawEntry &a, const RawEntry &b) {
      return std::tie(a.begin, a.end, a.name) <
             std::tie(b.begin, b.end, b.name);
    });
    // Sorted by start, a tensor can only overlap the furthest-reaching one
    // before it. Empty tensors occupy no bytes and overlap nothing. As the
    // format requires, the tensors must also cover the data section without
    // holes or trailing bytes, which could hide another file's content.
    const RawEntry *furthest = nullptr;
    uint64_t covered = 0;
    for (const RawEntry &entry : raw) {
      if (entry.begin == entry.end)
        continue;
      if (furthest && furthest->end > entry.begin)
        return fail(fmt::format("tensors '{}' [{}, {}) and '{}' [{}, {}) "
                                "overlap",
                                rt::printable(furthest->name, kNameInMessage),
                                furthest->begin, furthest->end,
                                rt::printable(entry.name, kNameInMessage),
                                entry.begin, entry.end));
      if (entry.begin > covered)
        return fail(fmt::format("the data bytes [{}, {}) belong to no tensor "
                                "(before '{}')",
                                covered, entry.begin,
                                rt::printable(entry.name, kNameInMessage)));
      if (!furthest || entry.end > furthest->end)
        furthest = &entry;
      covered = furthest->end;
    }
    if (covered != dataSize)
      return fail(fmt::format("the data bytes [{}, {}) at the end belong to "
                              "no tensor",
                              covered, dataSize));

    const unsigned char *data = bytes + 8 + headerSize;
    result->dataBegin = data;
    result->dataSize = static_cast<size_t>(dataSize);
    for (RawEntry &entry : raw) {
      SafeTensorEntry tensor;
      tensor.name = std::move(entry.name);
      tensor.dtype = std::move(entry.dtype);
      tensor.shape = std::move(entry.shape);
      tensor.data = data + entry.begin;
      tensor.byteSize = static_cast<size_t>(entry.end - entry.begin);
      result->tensors.push_back(std::move(tensor));
    }
    return result;
  } catch (const std::bad_alloc &) {
    error = fmt::format("{}: out of memory", path);
  } catch (const std::exception &e) {
    error = fmt::format("{}: {}", path, e.what());
  }
  return nullptr;
}

uint64_t hashBytes(const void *data, size_t size) {
  constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
  constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
  auto rotate = [](uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
  auto mix = [&](uint64_t lane, uint64_t word) {
    return rotate(lane + word * kPrime2, 31) * kPrime1;
  };
  const auto *bytes = static_cast<const unsigned char *>(data);
  uint64_t lanes[4] = {kPrime1 + kPrime2, kPrime2, 0, 0 - kPrime1};
  size_t i = 0;
  for (; i + 32 <= size; i += 32)
    for (int l = 0; l < 4; ++l) {
      uint64_t word;
      std::memcpy(&word, bytes + i + 8 * l, 8);
      lanes[l] = mix(lanes[l], word);
    }
  uint64_t h = rotate(lanes[0], 1) + rotate(lanes[1], 7) +
               rotate(lanes[2], 12) + rotate(lanes[3], 18) +
               static_cast<uint64_t>(size);
  for (; i < size; ++i)
    h = rotate(h ^ (bytes[i] * kPrime1), 11) * kPrime2;
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  return h;
}

bool SafeTensorsFile::dropPages(const void *data, size_t size) const {
  auto begin = reinterpret_cast<uintptr_t>(data);
  auto base = reinterpret_cast<uintptr_t>(mapping);
  if (!mapping || begin < base || begin - base > mappingSize ||
      size > mappingSize - (begin - base))
    return false;
  auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t first = (begin + page - 1) / page * page;
  uintptr_t last = (begin + size) / page * page;
  if (first < last)
    ::madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
  return true;
}

SafeTensorsFile::~SafeTensorsFile() {
  if (mapping)
    ::munmap(mapping, mappingSize);
}

const SafeTensorEntry *SafeTensorsFile::find(std::string_view name) const {
  for (const SafeTensorEntry &entry : tensors)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

bool writeSafeTensors(const std::string &path,
                      const std::vector<SafeTensorWriteEntry> &entries,
                      std::string &error,
                      const std::map<std::string, std::string> &metadata) {
  try {
    json header = json::object();
    if (!metadata.empty())
      header[kMetadataKey] = metadata;
    std::vector<rt::Chunk> chunks(1);
    uint64_t offset = 0;
    for (const SafeTensorWriteEntry &entry : entries) {
      auto fail = [&](const std::string &message) {
        error = fmt::format("{}: tensor '{}': {}", path,
                            rt::printable(entry.name, kNameInMessage), message);
        return false;
      };
      if (entry.name == kMetadataKey || header.contains(entry.name))
        return fail("the name is reserved or used twice");
      size_t elementSize = safeTensorsDtypeSize(entry.dtype);
      if (elementSize == 0)
        return fail(fmt::format("unknown dtype '{}'", entry.dtype));
      std::optional<int64_t> count =
          rt::elementCount(entry.shape.data(), entry.shape.size());
      std::optional<int64_t> bytes =
          count ? rt::byteSize(*count, elementSize) : std::nullopt;
      if (!bytes)
        return fail(fmt::format(
            "invalid shape {}",
            rt::formatShape(entry.shape.data(), entry.shape.size())));
      if (!entry.data && *bytes > 0)
        return fail("data is null");
      header[entry.name] = {
          {"dtype", entry.dtype},
          {"shape", entry.shape},
          {"data_offsets", {offset, offset + static_cast<uint64_t>(*bytes)}}};
      offset += static_cast<uint64_t>(*bytes);
      chunks.push_back({entry.data, static_cast<size_t>(*bytes)});
    }
    // Spaces pad the header so that the data section starts 64-byte aligned
    // (the reference writer pads to 8): a mapped file's tensors then sit on
    // cache lines, as compiled code that reads them in place wants.
    std::string text = header.dump();
    text.append((64 - (8 + text.size()) % 64) % 64, ' ');
    std::string prefix(8, '\0');
    uint64_t headerSize = text.size();
    std::memcpy(prefix.data(), &headerSize, 8);
    prefix += text;
    chunks[0] = {prefix.data(), prefix.size()};
    return rt::writeFile(path, chunks, error);
  } catch (const std::exception &e) {
    error = fmt::format("{}: {}", path, e.what());
    return false;
  }
}

} // namespace tfm
