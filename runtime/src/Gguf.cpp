//===- Gguf.cpp - Read GGUF files ------------------------------*- C++ -*-===//
//
// Every count, length and offset read from the file is checked against the
// bytes left before it is used; see the header for the format.
//
//===----------------------------------------------------------------------===//

#include "tfm/gguf.h"

#include "File.h"
#include "Json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <sys/mman.h>
#include <unistd.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "GGUF fields are read as host integers");

namespace tfm {

namespace {

/// ggml's GGML_MAX_DIMS.
constexpr uint32_t kMaxDims = 4;
/// Arrays inside arrays (the format allows them; no real file nests).
constexpr int kMaxArrayDepth = 4;
/// Characters of a key or name quoted in a message.
constexpr size_t kNameInMessage = 256;

/// Reads little-endian fields from [data, data + size), failing (and
/// staying failed) instead of reading past the end.
class Reader {
public:
  Reader(const unsigned char *data, uint64_t size) : data(data), size(size) {}

  uint64_t offset() const { return pos; }
  uint64_t left() const { return size - pos; }
  bool failed() const { return !error.empty(); }
  const std::string &message() const { return error; }

  template <typename T> bool read(T &value, const char *what) {
    if (failed())
      return false;
    if (left() < sizeof(T))
      return fail(
          fmt::format("the file ends inside {} at offset {}", what, pos));
    std::memcpy(&value, data + pos, sizeof(T));
    pos += sizeof(T);
    return true;
  }

  bool readString(std::string &value, const char *what) {
    uint64_t length = 0;
    if (!read(length, what))
      return false;
    if (length > left())
      return fail(fmt::format("{} at offset {} is {} bytes long, more than "
                              "the {} left in the file",
                              what, pos - 8, length, left()));
    value.assign(reinterpret_cast<const char *>(data + pos), length);
    pos += length;
    return true;
  }

  bool fail(std::string message) {
    if (error.empty())
      error = std::move(message);
    return false;
  }

private:
  const unsigned char *data;
  uint64_t size;
  uint64_t pos = 0;
  std::string error;
};

using Kind = GgufValue::Kind;

/// The fewest bytes a value of `kind` takes: bounds an array's count.
uint64_t minimumSize(Kind kind) {
  switch (kind) {
  case Kind::U8:
  case Kind::I8:
  case Kind::Bool:
    return 1;
  case Kind::U16:
  case Kind::I16:
    return 2;
  case Kind::U32:
  case Kind::I32:
  case Kind::F32:
    return 4;
  case Kind::U64:
  case Kind::I64:
  case Kind::F64:
  case Kind::String:
    return 8;
  case Kind::Array:
    return 12;
  }
  return 1;
}

bool validKind(uint32_t kind) { return kind <= uint32_t(Kind::F64); }

template <typename T> bool readInteger(Reader &r, GgufValue &value) {
  T raw;
  if (!r.read(raw, "a value"))
    return false;
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (raw > uint64_t(std::numeric_limits<int64_t>::max()))
      return r.fail(fmt::format("a u64 value {} is above 2^63 - 1", raw));
  }
  value.integer = int64_t(raw);
  value.number = double(raw);
  return true;
}

bool readValue(Reader &r, Kind kind, GgufValue &value, int depth) {
  value.kind = kind;
  switch (kind) {
  case Kind::U8:
    return readInteger<uint8_t>(r, value);
  case Kind::I8:
    return readInteger<int8_t>(r, value);
  case Kind::U16:
    return readInteger<uint16_t>(r, value);
  case Kind::I16:
    return readInteger<int16_t>(r, value);
  case Kind::U32:
    return readInteger<uint32_t>(r, value);
  case Kind::I32:
    return readInteger<int32_t>(r, value);
  case Kind::U64:
    return readInteger<uint64_t>(r, value);
  case Kind::I64:
    return readInteger<int64_t>(r, value);
  case Kind::Bool: {
    uint8_t raw;
    if (!r.read(raw, "a bool"))
      return false;
    if (raw > 1)
      return r.fail(fmt::format("a bool at offset {} is {}, not 0 or 1",
                                r.offset() - 1, int(raw)));
    value.integer = raw;
    value.number = raw;
    return true;
  }
  case Kind::F32: {
    float raw;
    if (!r.read(raw, "an f32 value"))
      return false;
    value.number = raw;
    return true;
  }
  case Kind::F64:
    return r.read(value.number, "an f64 value");
  case Kind::String:
    return r.readString(value.string, "a string value");
  case Kind::Array: {
    if (depth >= kMaxArrayDepth)
      return r.fail(
          fmt::format("arrays nest more than {} deep", kMaxArrayDepth));
    uint32_t elementKind;
    uint64_t count;
    if (!r.read(elementKind, "an array's type") ||
        !r.read(count, "an array's length"))
      return false;
    if (!validKind(elementKind))
      return r.fail(fmt::format("an array at offset {} has the unknown "
                                "element type {}",
                                r.offset() - 12, elementKind));
    value.elementKind = Kind(elementKind);
    if (count > r.left() / minimumSize(value.elementKind))
      return r.fail(fmt::format("an array at offset {} claims {} elements, "
                                "more than the {} bytes left can hold",
                                r.offset() - 12, count, r.left()));
    value.array.resize(count);
    for (GgufValue &element : value.array)
      if (!readValue(r, value.elementKind, element, depth + 1))
        return false;
    return true;
  }
  }
  return r.fail("unreachable value kind");
}

} // namespace

bool GgufValue::isInteger() const {
  switch (kind) {
  case Kind::U8:
  case Kind::I8:
  case Kind::U16:
  case Kind::I16:
  case Kind::U32:
  case Kind::I32:
  case Kind::U64:
  case Kind::I64:
    return true;
  default:
    return false;
  }
}

const char *GgufValue::kindName(Kind kind) {
  static const char *const kNames[] = {"u8",  "i8",  "u16",  "i16",    "u32",
                                       "i32", "f32", "bool", "string", "array",
                                       "u64", "i64", "f64"};
  uint32_t index = uint32_t(kind);
  return index < std::size(kNames) ? kNames[index] : "unknown";
}

int64_t GgufTensor::elementCount() const {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d; // Checked against overflow when the file was opened.
  return count;
}

std::unique_ptr<GgufFile> GgufFile::open(const std::string &path,
                                         std::string &error) {
  rt::InputFile file;
  bool notFound;
  if (!file.open(path, error, notFound))
    return nullptr;
  auto fail = [&](const std::string &message) {
    error = fmt::format("{}: {}", path, message);
    return nullptr;
  };
  uint64_t fileSize = uint64_t(file.size());
  if (fileSize < 24)
    return fail(fmt::format("the file has {} bytes, too few for a GGUF "
                            "header",
                            fileSize));
  std::unique_ptr<GgufFile> result(new GgufFile());
  result->filePath = path;
  void *mapping =
      ::mmap(nullptr, fileSize, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  if (mapping == MAP_FAILED)
    return fail(fmt::format("mmap failed: {}", std::strerror(errno)));
  result->mapping = mapping;
  result->mappingSize = fileSize;
  return parse(std::move(result), static_cast<const unsigned char *>(mapping),
               fileSize, error);
}

std::unique_ptr<GgufFile> GgufFile::openMemory(const void *data, size_t size,
                                               const std::string &name,
                                               std::string &error) {
  if (size < 24) {
    error = fmt::format("{}: {} bytes, too few for a GGUF header", name, size);
    return nullptr;
  }
  std::unique_ptr<GgufFile> result(new GgufFile());
  result->filePath = name;
  return parse(std::move(result), static_cast<const unsigned char *>(data),
               size, error);
}

std::unique_ptr<GgufFile> GgufFile::parse(std::unique_ptr<GgufFile> result,
                                          const unsigned char *bytes,
                                          uint64_t fileSize,
                                          std::string &error) {
  const std::string &path = result->filePath;
  auto fail = [&](const std::string &message) {
    error = fmt::format("{}: {}", path, message);
    return nullptr;
  };
  Reader r(bytes, fileSize);
  char magic[4];
  r.read(magic, "the magic");
  if (std::memcmp(magic, "GGUF", 4) != 0)
    return fail(fmt::format("not a GGUF file (it starts with '{}', not "
                            "'GGUF')",
                            rt::printable(std::string_view(magic, 4), 4)));
  uint32_t version = 0;
  uint64_t tensorCount = 0, valueCount = 0;
  r.read(version, "the version");
  if (version != 2 && version != 3)
    return fail(
        fmt::format("GGUF version {} is not supported (2 and 3 are)", version));
  result->fileVersion = version;
  r.read(tensorCount, "the tensor count");
  r.read(valueCount, "the key/value count");
  // A key/value takes at least 13 bytes, a tensor info 24.
  if (valueCount > r.left() / 13)
    return fail(fmt::format("the header claims {} key/values, more than the "
                            "file can hold",
                            valueCount));
  if (tensorCount > r.left() / 24)
    return fail(fmt::format("the header claims {} tensors, more than the file "
                            "can hold",
                            tensorCount));

  for (uint64_t i = 0; i < valueCount && !r.failed(); ++i) {
    std::string key;
    uint32_t kind = 0;
    if (!r.readString(key, "a key") || !r.read(kind, "a value's type"))
      break;
    std::string quoted = rt::printable(key, kNameInMessage);
    if (!validKind(kind))
      return fail(
          fmt::format("key '{}' has the unknown value type {}", quoted, kind));
    GgufValue value;
    if (!readValue(r, Kind(kind), value, 0))
      break;
    if (!result->values.emplace(std::move(key), std::move(value)).second)
      return fail(fmt::format("the key '{}' appears twice", quoted));
  }
  if (r.failed())
    return fail(r.message());

  if (const GgufValue *alignment = result->find("general.alignment")) {
    if (alignment->kind != Kind::U32 || alignment->integer == 0 ||
        (alignment->integer & (alignment->integer - 1)) != 0)
      return fail(fmt::format("general.alignment must be a u32 power of two, "
                              "got {} {}",
                              GgufValue::kindName(alignment->kind),
                              alignment->isInteger()
                                  ? std::to_string(alignment->integer)
                                  : rt::printable(alignment->string, 32)));
    result->dataAlignment = uint64_t(alignment->integer);
  }

  result->keyValuesEnd = r.offset();
  struct Info {
    std::vector<uint64_t> dims;
    uint64_t offset, bytes;
  };
  std::vector<Info> raw;
  for (uint64_t i = 0; i < tensorCount && !r.failed(); ++i) {
    GgufTensor tensor;
    uint32_t dimCount = 0;
    if (!r.readString(tensor.name, "a tensor name") ||
        !r.read(dimCount, "a tensor's dim count"))
      break;
    std::string where =
        fmt::format("tensor '{}'", rt::printable(tensor.name, kNameInMessage));
    if (dimCount == 0 || dimCount > kMaxDims)
      return fail(fmt::format("{} has {} dims (1 to {} are allowed)", where,
                              dimCount, kMaxDims));
    Info info;
    info.dims.resize(dimCount);
    for (uint64_t &d : info.dims)
      r.read(d, "a tensor's dims");
    uint64_t offset = 0;
    r.read(tensor.type, "a tensor's type");
    r.read(offset, "a tensor's offset");
    if (r.failed())
      break;
    const GgufTypeInfo *type = ggufTypeInfo(tensor.type);
    if (!type)
      return fail(
          fmt::format("{} has the unknown type {}", where, tensor.type));
    uint64_t count = 1;
    for (uint64_t d : info.dims) {
      if (d > uint64_t(std::numeric_limits<int64_t>::max()) ||
          (d != 0 &&
           count > uint64_t(std::numeric_limits<int64_t>::max()) / 8 / d))
        return fail(fmt::format("{} has too many elements", where));
      count *= d;
    }
    if (info.dims[0] % uint64_t(type->blockElements) != 0)
      return fail(fmt::format("{}: its rows of {} elements are not whole "
                              "{} blocks of {}",
                              where, info.dims[0], type->name,
                              type->blockElements));
    if (offset % result->dataAlignment != 0)
      return fail(fmt::format("{}: offset {} is not a multiple of the "
                              "alignment {}",
                              where, offset, result->dataAlignment));
    info.offset = offset;
    info.bytes =
        count / uint64_t(type->blockElements) * uint64_t(type->blockBytes);
    for (auto d = info.dims.rbegin(); d != info.dims.rend(); ++d)
      tensor.shape.push_back(int64_t(*d));
    if (!result->byName.emplace(tensor.name, result->infos.size()).second)
      return fail(fmt::format("{} appears twice", where));
    result->infos.push_back(std::move(tensor));
    raw.push_back(std::move(info));
  }
  if (r.failed())
    return fail(r.message());

  uint64_t dataStart = r.offset();
  uint64_t align = result->dataAlignment;
  dataStart = (dataStart + align - 1) / align * align;
  if (dataStart > fileSize)
    return fail(fmt::format("the data section would start at {}, past the "
                            "end of the file ({} bytes)",
                            dataStart, fileSize));
  uint64_t dataSize = fileSize - dataStart;
  std::vector<size_t> order(raw.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return raw[a].offset < raw[b].offset; });
  uint64_t reached = 0;
  std::string previous;
  for (size_t i : order) {
    const Info &info = raw[i];
    GgufTensor &tensor = result->infos[i];
    std::string where =
        fmt::format("tensor '{}'", rt::printable(tensor.name, kNameInMessage));
    if (info.offset > dataSize || info.bytes > dataSize - info.offset)
      return fail(fmt::format("{}: bytes [{}, {}) of the data section end "
                              "past it ({} bytes)",
                              where, info.offset, info.offset + info.bytes,
                              dataSize));
    if (info.bytes > 0 && info.offset < reached)
      return fail(fmt::format("{} overlaps tensor '{}' in the data section",
                              where, rt::printable(previous, kNameInMessage)));
    if (info.bytes > 0) {
      reached = info.offset + info.bytes;
      previous = tensor.name;
    }
    tensor.data = bytes + dataStart + info.offset;
    tensor.byteSize = size_t(info.bytes);
  }
  return result;
}

bool GgufFile::dropPages(const void *data, size_t size) const {
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

GgufFile::~GgufFile() {
  if (mapping)
    ::munmap(mapping, mappingSize);
}

const GgufValue *GgufFile::find(std::string_view key) const {
  auto it = values.find(std::string(key));
  return it == values.end() ? nullptr : &it->second;
}

const GgufTensor *GgufFile::findTensor(std::string_view name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &infos[it->second];
}

} // namespace tfm
