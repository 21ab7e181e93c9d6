//===- Npy.cpp - Read and write .npy files ----------------------*- C++ -*-===//
//
// The format is described in numpy/lib/format.py: a magic string, a version,
// a little-endian header length, then a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }
// padded with spaces and a newline, then the raw data.
//
//===----------------------------------------------------------------------===//

#include "File.h"
#include "Json.h"
#include "Status.h"
#include "Tensor.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              ".npy data is read and written as little-endian");

using namespace tfm::rt;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy aligns the start of the data to 64 bytes so that it can be mmapped.
constexpr size_t kHeaderAlignment = 64;

struct DtypeCode {
  tfm_dtype dtype;
  const char *descr;
};
// numpy has no bfloat16: a bf16 tensor is stored as its bits, uint16, as
// ml_dtypes users write it (a.view(np.uint16)). So '<u2' reads as bf16; the
// runtime has no uint16 dtype for it to mean anything else.
constexpr DtypeCode kDtypeCodes[] = {
    {TFM_DTYPE_F32, "<f4"},  {TFM_DTYPE_F64, "<f8"},  {TFM_DTYPE_I32, "<i4"},
    {TFM_DTYPE_I64, "<i8"},  {TFM_DTYPE_BOOL, "|b1"}, {TFM_DTYPE_F16, "<f2"},
    {TFM_DTYPE_BF16, "<u2"}, {TFM_DTYPE_I8, "|i1"},   {TFM_DTYPE_U8, "|u1"}};

const char *descrOf(tfm_dtype dtype) {
  for (const DtypeCode &code : kDtypeCodes)
    if (code.dtype == dtype)
      return code.descr;
  return nullptr;
}

/// "(3, 2)", "(3,)" or "()", as Python writes a tuple.
std::string pythonTuple(const std::vector<int64_t> &dims) {
  std::string text = "(";
  for (size_t i = 0; i < dims.size(); ++i)
    text += fmt::format("{}{}", i ? ", " : "", dims[i]);
  return text + (dims.size() == 1 ? ",)" : ")");
}

struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the dict literal of a header. Only the subset of Python that numpy
/// writes is accepted: string keys, and string, bool or int-tuple values.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  /// Returns an error message, or nullopt on success.
  std::optional<std::string> parse(NpyHeader &header) {
    bool seenDescr = false, seenOrder = false, seenShape = false;
    skipSpace();
    if (!consume('{'))
      return "the header is not a Python dict";
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::optional<std::string> key = parseString();
      if (!key)
        return fmt::format("expected a quoted key at header offset {}", pos);
      skipSpace();
      if (!consume(':'))
        return fmt::format("expected ':' after key '{}'", printable(*key, 32));
      skipSpace();
      if (*key == "descr") {
        std::optional<std::string> descr = parseString();
        if (!descr || seenDescr)
          return "'descr' must appear once, as a string";
        header.descr = *descr;
        seenDescr = true;
      } else if (*key == "fortran_order") {
        std::optional<bool> order = parseBool();
        if (!order || seenOrder)
          return "'fortran_order' must appear once, as True or False";
        header.fortranOrder = *order;
        seenOrder = true;
      } else if (*key == "shape") {
        if (seenShape)
          return "'shape' appears twice";
        if (std::optional<std::string> error = parseShape(header.shape))
          return error;
        seenShape = true;
      } else {
        return fmt::format("unexpected key '{}' in the header",
                           printable(*key, 32));
      }
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (!consume('}'))
        return fmt::format("expected ',' or '}}' at header offset {}", pos);
      break;
    }
    skipSpace();
    if (pos != text.size())
      return fmt::format("unexpected text after the header dict at offset {}",
                         pos);
    if (!seenDescr || !seenOrder || !seenShape)
      return "the header lacks one of 'descr', 'fortran_order', 'shape'";
    return std::nullopt;
  }

private:
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                                 text[pos] == '\t' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  bool consumeWord(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }

  std::optional<std::string> parseString() {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return std::nullopt;
    char quote = text[pos];
    size_t end = text.find(quote, pos + 1);
    if (end == std::string_view::npos)
      return std::nullopt;
    std::string value(text.substr(pos + 1, end - pos - 1));
    pos = end + 1;
    return value;
  }

  std::optional<bool> parseBool() {
    if (consumeWord("True"))
      return true;
    if (consumeWord("False"))
      return false;
    return std::nullopt;
  }

  std::optional<std::string> parseShape(std::vector<int64_t> &shape) {
    if (!consume('('))
      return "'shape' must be a tuple";
    while (true) {
      skipSpace();
      if (consume(')'))
        return std::nullopt;
      if (pos >= text.size() || text[pos] < '0' || text[pos] > '9')
        return fmt::format("expected a dimension at header offset {}", pos);
      int64_t dim = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        int digit = text[pos++] - '0';
        if (dim > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return "a dimension in 'shape' is too large";
        dim = dim * 10 + digit;
      }
      // Python 2 wrote longs as "3L".
      consume('L');
      shape.push_back(dim);
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume(')'))
        return std::nullopt;
      return fmt::format("expected ',' or ')' in 'shape' at header offset {}",
                         pos);
    }
  }

  std::string_view text;
  size_t pos = 0;
};

uint32_t readLittleEndian(const unsigned char *bytes, int count) {
  uint32_t value = 0;
  for (int i = count - 1; i >= 0; --i)
    value = value << 8 | bytes[i];
  return value;
}

tfm_status formatError(const std::string &message) {
  return makeStatus(TFM_STATUS_FORMAT_ERROR, message);
}

tfm_status readNpy(const std::string &path, tfm_tensor &out) {
  InputFile file;
  std::string error;
  bool notFound;
  if (!file.open(path, error, notFound))
    return makeStatus(notFound ? TFM_STATUS_NOT_FOUND : TFM_STATUS_IO_ERROR,
                      error);

  // Magic, major and minor version, then a 2-byte (1.0) or 4-byte length.
  unsigned char prefix[12];
  if (file.size() < 10)
    return formatError(fmt::format("{}: not a .npy file: it has only {} bytes",
                                   path, file.size()));
  if (!file.readAt(0, prefix, 10, error))
    return makeStatus(TFM_STATUS_IO_ERROR, error);
  if (std::memcmp(prefix, kMagic, kMagicSize) != 0)
    return formatError(
        fmt::format("{}: not a .npy file: bad magic string", path));
  int major = prefix[6], minor = prefix[7];
  if (major < 1 || major > 3 || minor != 0)
    return formatError(fmt::format("{}: unsupported .npy format version {}.{}",
                                   path, major, minor));
  int lengthBytes = major == 1 ? 2 : 4;
  int64_t prefixSize = 8 + lengthBytes;
  if (file.size() < prefixSize)
    return formatError(
        fmt::format("{}: truncated .npy header: the file has only {} bytes",
                    path, file.size()));
  if (lengthBytes == 4 && !file.readAt(10, prefix + 10, 2, error))
    return makeStatus(TFM_STATUS_IO_ERROR, error);
  int64_t headerLength = readLittleEndian(prefix + 8, lengthBytes);
  if (headerLength > file.size() - prefixSize)
    return formatError(fmt::format(
        "{}: truncated .npy header: it is {} bytes long but the file has "
        "only {} bytes after the header length",
        path, headerLength, file.size() - prefixSize));

  std::string headerText(static_cast<size_t>(headerLength), '\0');
  if (!file.readAt(prefixSize, headerText.data(), headerLength, error))
    return makeStatus(TFM_STATUS_IO_ERROR, error);
  NpyHeader header;
  if (std::optional<std::string> parseError =
          HeaderParser(headerText).parse(header))
    return formatError(
        fmt::format("{}: malformed .npy header: {}", path, *parseError));

  tfm_dtype dtype = TFM_DTYPE_INVALID;
  for (const DtypeCode &code : kDtypeCodes)
    if (header.descr == code.descr)
      dtype = code.dtype;
  // numpy writes '|' for one-byte types and '=' never, so a '>' is the one
  // spelling of a big-endian file worth a specific message.
  if (dtype == TFM_DTYPE_INVALID && !header.descr.empty() &&
      header.descr[0] == '>')
    return formatError(
        fmt::format("{}: big-endian dtype '{}' is not supported; convert with "
                    "a.astype(a.dtype.newbyteorder('<'))",
                    path, printable(header.descr, 32)));
  // ml_dtypes' bfloat16 saves as two opaque bytes; its bits are what to save.
  if (dtype == TFM_DTYPE_INVALID &&
      (header.descr == "<V2" || header.descr == "|V2"))
    return formatError(
        fmt::format("{}: unsupported dtype '{}': for a bfloat16 array (which "
                    "numpy saves as opaque bytes) save a.view(np.uint16), "
                    "which tfm reads as bf16",
                    path, header.descr));
  if (dtype == TFM_DTYPE_INVALID)
    return formatError(fmt::format(
        "{}: unsupported dtype '{}' (supported: <f4, <f8, <f2, <i4, <i8, |i1, "
        "|u1, |b1, and <u2 as the bits of bf16)",
        path, printable(header.descr, 32)));
  if (header.shape.size() > TFM_MAX_RANK)
    return formatError(fmt::format("{}: rank {} exceeds the maximum of {}",
                                   path, header.shape.size(), TFM_MAX_RANK));
  // For rank <= 1 both orders are the same layout.
  if (header.fortranOrder && header.shape.size() > 1)
    return formatError(
        fmt::format("{}: Fortran-order arrays are not supported; save "
                    "np.ascontiguousarray(a) instead",
                    path));

  int32_t rank = static_cast<int32_t>(header.shape.size());
  std::optional<int64_t> count = elementCount(header.shape.data(), rank);
  std::optional<int64_t> bytes =
      count ? byteSize(*count, tfm_dtype_size(dtype)) : std::nullopt;
  if (!bytes)
    return formatError(fmt::format("{}: shape {} is too large", path,
                                   pythonTuple(header.shape)));
  int64_t dataOffset = prefixSize + headerLength;
  int64_t dataBytes = file.size() - dataOffset;
  if (dataBytes != *bytes)
    return formatError(fmt::format(
        "{}: header says shape {} of '{}' ({} bytes) but the file has {} "
        "bytes of data",
        path, pythonTuple(header.shape), header.descr, *bytes, dataBytes));

  tfm_tensor tensor{};
  if (tfm_status status =
          tfm_tensor_allocate(dtype, rank, header.shape.data(), &tensor)) {
    return status;
  }
  if (!file.readAt(dataOffset, tensor.data, *bytes, error)) {
    tfm_tensor_release_data(&tensor);
    return makeStatus(TFM_STATUS_IO_ERROR, error);
  }
  // numpy's bool_ is one byte holding 0 or 1; anything else would read as
  // true in some compiled code and false in other.
  if (dtype == TFM_DTYPE_BOOL) {
    const auto *data = static_cast<const unsigned char *>(tensor.data);
    for (int64_t i = 0; i < *bytes; ++i)
      if (data[i] > 1) {
        int byte = data[i];
        tfm_tensor_release_data(&tensor);
        return formatError(fmt::format(
            "{}: bool element {} is the byte {}, not 0 or 1", path, i, byte));
      }
  }
  out = tensor;
  return nullptr;
}

tfm_status writeNpy(const std::string &path, const tfm_tensor &tensor) {
  const char *descr = descrOf(tensor.dtype);
  if (!descr)
    return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                      fmt::format("{}: cannot write a tensor of invalid dtype "
                                  "{}",
                                  path, int(tensor.dtype)));
  if (tensor.rank < 0 || tensor.rank > TFM_MAX_RANK)
    return makeStatus(
        TFM_STATUS_INVALID_ARGUMENT,
        fmt::format("{}: cannot write a tensor of rank {}", path, tensor.rank));
  int64_t bytes = tfm_tensor_byte_size(&tensor);
  if (bytes < 0)
    return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                      fmt::format("{}: cannot write a tensor of shape {}", path,
                                  formatShape(tensor.shape, tensor.rank)));
  if (!tensor.data)
    return makeStatus(
        TFM_STATUS_INVALID_ARGUMENT,
        fmt::format("{}: cannot write a tensor whose data is NULL", path));
  // numpy's '|b1' holds 0 or 1; tfm_npy_read refuses any other byte, so
  // writing one would produce a file this runtime cannot read back.
  if (tensor.dtype == TFM_DTYPE_BOOL) {
    const auto *data = static_cast<const unsigned char *>(tensor.data);
    for (int64_t i = 0; i < bytes; ++i)
      if (data[i] > 1)
        return makeStatus(
            TFM_STATUS_INVALID_ARGUMENT,
            fmt::format("{}: cannot write bool element {}: it is the byte {}, "
                        "not 0 or 1",
                        path, i, data[i]));
  }

  std::vector<int64_t> shape(tensor.shape, tensor.shape + tensor.rank);
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                  descr, pythonTuple(shape));
  // Version 1.0 unless the length overflows its 2 bytes, as numpy does.
  size_t prefixSize = kMagicSize + 2 + 2;
  size_t padded = (prefixSize + dict.size() + 1 + kHeaderAlignment - 1) /
                  kHeaderAlignment * kHeaderAlignment;
  int major = 1;
  if (padded - prefixSize > std::numeric_limits<uint16_t>::max()) {
    major = 2;
    prefixSize += 2;
    padded = (prefixSize + dict.size() + 1 + kHeaderAlignment - 1) /
             kHeaderAlignment * kHeaderAlignment;
  }
  size_t headerLength = padded - prefixSize;
  std::string header(kMagic, kMagicSize);
  header += static_cast<char>(major);
  header += '\0';
  for (size_t i = 0; i < prefixSize - 8; ++i)
    header += static_cast<char>((headerLength >> (8 * i)) & 0xff);
  header += dict;
  header.append(padded - header.size() - 1, ' ');
  header += '\n';

  std::string error;
  if (!writeFile(path,
                 {{header.data(), header.size()},
                  {tensor.data, static_cast<size_t>(bytes)}},
                 error))
    return makeStatus(TFM_STATUS_IO_ERROR, error);
  return nullptr;
}

} // namespace

extern "C" {

tfm_status tfm_npy_read(const char *path, tfm_tensor *out_tensor) {
  return guard("tfm_npy_read", [&]() -> tfm_status {
    if (!out_tensor)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        "tfm_npy_read: argument 'out_tensor' is NULL");
    out_tensor->data = nullptr;
    if (!path)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        "tfm_npy_read: argument 'path' is NULL");
    return readNpy(path, *out_tensor);
  });
}

tfm_status tfm_npy_write(const char *path, const tfm_tensor *tensor) {
  return guard("tfm_npy_write", [&]() -> tfm_status {
    if (!path)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        "tfm_npy_write: argument 'path' is NULL");
    if (!tensor)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        "tfm_npy_write: argument 'tensor' is NULL");
    return writeNpy(path, *tensor);
  });
}

} // extern "C"
