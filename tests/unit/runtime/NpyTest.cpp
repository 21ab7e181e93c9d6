//===- NpyTest.cpp - Tests of .npy reading and writing ----------*- C++ -*-===//

#include "tfm/runtime.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

std::string tempPath(const std::string &name) {
  return std::string(TFM_TEST_TMPDIR) + "/npy-" + name;
}

struct Status {
  explicit Status(tfm_status status)
      : code(tfm_status_code(status)), message(tfm_status_message(status)) {
    tfm_status_free(status);
  }
  tfm_status_code_t code;
  std::string message;
};

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// A .npy file with `dict` as its header, padded as numpy pads it.
std::string npyFile(const std::string &dict, const std::string &data) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string file = "\x93NUMPY\x01";
  file += '\0';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  return file + header + data;
}

/// Reads `bytes` as a .npy file and expects a FORMAT_ERROR containing
/// `needle`.
void expectFormatError(const std::string &name, const std::string &bytes,
                       const std::string &needle) {
  std::string path = tempPath(name);
  writeBytes(path, bytes);
  tfm_tensor tensor{};
  tensor.data = &tensor; // Must be reset on failure.
  Status status(tfm_npy_read(path.c_str(), &tensor));
  INFO(status.message);
  CHECK(status.code == TFM_STATUS_FORMAT_ERROR);
  CHECK(status.message.rfind(path + ": ", 0) == 0);
  CHECK(status.message.find(needle) != std::string::npos);
  CHECK(tensor.data == nullptr);
}

template <typename T>
void roundTrip(tfm_dtype dtype, std::vector<int64_t> shape) {
  tfm_tensor tensor{};
  REQUIRE(tfm_tensor_allocate(dtype, static_cast<int32_t>(shape.size()),
                              shape.data(), &tensor) == nullptr);
  int64_t count = tfm_tensor_element_count(&tensor);
  T *values = static_cast<T *>(tensor.data);
  for (int64_t i = 0; i < count; ++i)
    values[i] = static_cast<T>(i * 3 - 7) / static_cast<T>(2);

  std::string path = tempPath(std::string(tfm_dtype_name(dtype)) + "-rank" +
                              std::to_string(shape.size()) + ".npy");
  Status written(tfm_npy_write(path.c_str(), &tensor));
  INFO(written.message);
  REQUIRE(written.code == TFM_STATUS_OK);
  std::string bytes = readBytes(path);
  // numpy aligns the data to 64 bytes.
  CHECK((bytes.size() - tfm_tensor_byte_size(&tensor)) % 64 == 0);

  tfm_tensor read{};
  Status status(tfm_npy_read(path.c_str(), &read));
  INFO(status.message);
  REQUIRE(status.code == TFM_STATUS_OK);
  CHECK(read.dtype == dtype);
  REQUIRE(read.rank == tensor.rank);
  for (int32_t d = 0; d < read.rank; ++d)
    CHECK(read.shape[d] == tensor.shape[d]);
  CHECK(std::memcmp(read.data, tensor.data, tfm_tensor_byte_size(&tensor)) ==
        0);
  CHECK(reinterpret_cast<uintptr_t>(read.data) % 64 == 0);
  tfm_tensor_release_data(&read);
  tfm_tensor_release_data(&tensor);
}

} // namespace

TEST_CASE("npy round trip", "[npy]") {
  roundTrip<float>(TFM_DTYPE_F32, {3, 2});
  roundTrip<double>(TFM_DTYPE_F64, {4});
  roundTrip<int32_t>(TFM_DTYPE_I32, {2, 3, 4});
  roundTrip<int64_t>(TFM_DTYPE_I64, {});
  roundTrip<float>(TFM_DTYPE_F32, {2, 0, 5});
  roundTrip<double>(TFM_DTYPE_F64, {1, 1, 1, 1, 1, 1, 1, 2});
}

TEST_CASE("npy header is what numpy writes", "[npy]") {
  tfm_tensor tensor{};
  int64_t shape[] = {3};
  REQUIRE(tfm_tensor_allocate(TFM_DTYPE_I32, 1, shape, &tensor) == nullptr);
  std::string path = tempPath("header.npy");
  REQUIRE(tfm_npy_write(path.c_str(), &tensor) == nullptr);
  tfm_tensor_release_data(&tensor);
  CHECK(readBytes(path) ==
        npyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }",
                std::string(12, '\0')));
}

TEST_CASE("npy reads headers written by other numpy versions", "[npy]") {
  std::string data(8, '\0');
  std::string path = tempPath("variants.npy");
  for (const char *dict :
       {"{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }",
        "{\"descr\": \"<i8\", \"shape\": (1L,), \"fortran_order\": True}",
        "{'shape': (1, ), 'fortran_order': False, 'descr': '<i8'}"}) {
    writeBytes(path, npyFile(dict, data));
    tfm_tensor tensor{};
    Status status(tfm_npy_read(path.c_str(), &tensor));
    INFO(dict << ": " << status.message);
    CHECK(status.code == TFM_STATUS_OK);
    CHECK(tensor.rank == 1);
    tfm_tensor_release_data(&tensor);
  }

  // Format 2.0 has a 4-byte header length.
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (), }";
  dict.append(64 - (12 + dict.size()) % 64 - 1, ' ');
  dict += '\n';
  std::string file = std::string("\x93NUMPY\x02", 7) + '\0';
  for (int i = 0; i < 4; ++i)
    file += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  writeBytes(path, file + dict + std::string(4, '\0'));
  tfm_tensor tensor{};
  Status status(tfm_npy_read(path.c_str(), &tensor));
  INFO(status.message);
  CHECK(status.code == TFM_STATUS_OK);
  CHECK(tensor.rank == 0);
  tfm_tensor_release_data(&tensor);
}

TEST_CASE("malformed npy files are errors", "[npy]") {
  const std::string good =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }";
  const std::string data(24, '\0');

  expectFormatError("empty.npy", "", "it has only 0 bytes");
  expectFormatError("magic.npy", "PK\x03\x04 this is a zip file",
                    "bad magic string");
  expectFormatError("version.npy",
                    std::string("\x93NUMPY\x04\x00\x10\x00", 10) +
                        std::string(16, ' '),
                    "unsupported .npy format version 4.0");
  expectFormatError("truncated-header.npy", npyFile(good, data).substr(0, 40),
                    "truncated .npy header");
  expectFormatError("not-a-dict.npy", npyFile("[1, 2, 3]", data),
                    "not a Python dict");
  expectFormatError("unterminated.npy",
                    npyFile("{'descr': '<f4', 'shape': (3, 2)", data),
                    "malformed .npy header");
  expectFormatError("bad-shape.npy",
                    npyFile("{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (3, -2), }",
                            data),
                    "expected a dimension");
  expectFormatError("missing-key.npy",
                    npyFile("{'descr': '<f4', 'shape': (3, 2), }", data),
                    "lacks one of");
  expectFormatError("extra-key.npy",
                    npyFile("{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (3, 2), 'x': 1}",
                            data),
                    "unexpected key 'x'");
  expectFormatError("fortran.npy",
                    npyFile("{'descr': '<f4', 'fortran_order': True, "
                            "'shape': (3, 2), }",
                            data),
                    "Fortran-order arrays are not supported");
  expectFormatError("big-endian.npy",
                    npyFile("{'descr': '>f4', 'fortran_order': False, "
                            "'shape': (3, 2), }",
                            data),
                    "big-endian dtype '>f4' is not supported");
  expectFormatError("i2.npy",
                    npyFile("{'descr': '<i2', 'fortran_order': False, "
                            "'shape': (3, 2), }",
                            std::string(12, '\0')),
                    "unsupported dtype '<i2'");
  expectFormatError("big-endian-f2.npy",
                    npyFile("{'descr': '>f2', 'fortran_order': False, "
                            "'shape': (3, 2), }",
                            std::string(12, '\0')),
                    "big-endian dtype '>f2' is not supported");
  // What np.save writes for an ml_dtypes.bfloat16 array.
  expectFormatError("v2.npy",
                    npyFile("{'descr': '<V2', 'fortran_order': False, "
                            "'shape': (3, 2), }",
                            std::string(12, '\0')),
                    "unsupported dtype '<V2': for a bfloat16 array (which "
                    "numpy saves as opaque bytes) save a.view(np.uint16), "
                    "which tfm reads as bf16");
  expectFormatError("bool-byte-2.npy",
                    npyFile("{'descr': '|b1', 'fortran_order': False, "
                            "'shape': (3,), }",
                            std::string("\x01\x00\x02", 3)),
                    "bool element 2 is the byte 2, not 0 or 1");
  expectFormatError("u4.npy",
                    npyFile("{'descr': '<u4', 'fortran_order': False, "
                            "'shape': (3,), }",
                            std::string(12, '\0')),
                    "unsupported dtype '<u4' (supported: <f4, <f8, <f2, <i4, "
                    "<i8, |i1, |u1, |b1, and <u2 as the bits of bf16)");
  // A bf16 file's data is two bytes per element, like any '<u2'.
  expectFormatError("u2-short.npy",
                    npyFile("{'descr': '<u2', 'fortran_order': False, "
                            "'shape': (3,), }",
                            std::string(5, '\0')),
                    "header says shape (3,) of '<u2' (6 bytes) but the file "
                    "has 5 bytes of data");
  expectFormatError("rank9.npy",
                    npyFile("{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }",
                            data),
                    "rank 9 exceeds");
  expectFormatError("huge.npy",
                    npyFile("{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (99999999999999999999, ), }",
                            data),
                    "too large");

  // Header text in a message is cut short and its control characters
  // escaped, so the message stays one line (found by tfm-fuzz-npy:
  // tests/fuzz/corpus/tfm-fuzz-npy/regress-newline-in-key).
  expectFormatError("newline-key.npy", npyFile("{'des }\n   \n' 1}", data),
                    "expected ':' after key 'des }\\x0a   \\x0a'");
  expectFormatError("newline-descr.npy",
                    npyFile("{'descr': '<f4\n" + std::string(100, 'x') +
                                "', 'fortran_order': False, 'shape': (3, 2), }",
                            data),
                    "unsupported dtype '<f4\\x0axxxxxxxxxxxxxxxxxxxxxxxxx...'");
  expectFormatError("long-key.npy",
                    npyFile("{'" + std::string(200, 'k') + "': 1}", data),
                    "unexpected key '" + std::string(32, 'k') + "...'");

  std::string path = tempPath("short-data.npy");
  writeBytes(path, npyFile(good, std::string(16, '\0')));
  tfm_tensor tensor{};
  Status status(tfm_npy_read(path.c_str(), &tensor));
  CHECK(status.code == TFM_STATUS_FORMAT_ERROR);
  CHECK(status.message ==
        path + ": header says shape (3, 2) of '<f4' (24 bytes) but the file "
               "has 16 bytes of data");
  expectFormatError("long-data.npy", npyFile(good, data + "x"),
                    "the file has 25 bytes of data");

  // Every truncation of a valid file is an error, never a crash.
  std::string valid = npyFile(good, data);
  for (size_t length = 0; length < valid.size(); ++length) {
    std::string cut = tempPath("cut.npy");
    writeBytes(cut, valid.substr(0, length));
    tfm_tensor t{};
    Status cutStatus(tfm_npy_read(cut.c_str(), &t));
    INFO("length " << length << ": " << cutStatus.message);
    CHECK(cutStatus.code == TFM_STATUS_FORMAT_ERROR);
    CHECK(t.data == nullptr);
  }
}

TEST_CASE("npy I/O errors and bad arguments", "[npy]") {
  tfm_tensor tensor{};
  Status missing(tfm_npy_read("/nonexistent/x.npy", &tensor));
  CHECK(missing.code == TFM_STATUS_NOT_FOUND);
  CHECK(missing.message ==
        "/nonexistent/x.npy: cannot open: No such file or directory");
  CHECK(Status(tfm_npy_read(TFM_TEST_TMPDIR, &tensor)).code ==
        TFM_STATUS_IO_ERROR);
  CHECK(Status(tfm_npy_read(nullptr, &tensor)).code ==
        TFM_STATUS_INVALID_ARGUMENT);
  CHECK(Status(tfm_npy_read("x.npy", nullptr)).code ==
        TFM_STATUS_INVALID_ARGUMENT);

  float value = 1;
  tfm_tensor scalar{TFM_DTYPE_F32, 0, {}, &value};
  Status unwritable(tfm_npy_write("/nonexistent/dir/x.npy", &scalar));
  CHECK(unwritable.code == TFM_STATUS_IO_ERROR);
  CHECK(unwritable.message.rfind("/nonexistent/dir/x.npy: cannot create", 0) ==
        0);
  CHECK(Status(tfm_npy_write(nullptr, &scalar)).code ==
        TFM_STATUS_INVALID_ARGUMENT);
  CHECK(Status(tfm_npy_write("x.npy", nullptr)).code ==
        TFM_STATUS_INVALID_ARGUMENT);
  tfm_tensor noData{TFM_DTYPE_F32, 0, {}, nullptr};
  CHECK(Status(tfm_npy_write(tempPath("w.npy").c_str(), &noData)).code ==
        TFM_STATUS_INVALID_ARGUMENT);
  tfm_tensor badDtype{TFM_DTYPE_INVALID, 0, {}, &value};
  CHECK(Status(tfm_npy_write(tempPath("w.npy").c_str(), &badDtype)).code ==
        TFM_STATUS_INVALID_ARGUMENT);
  tfm_tensor badRank{TFM_DTYPE_F32, -1, {}, &value};
  CHECK(Status(tfm_npy_write(tempPath("w.npy").c_str(), &badRank)).code ==
        TFM_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("npy refuses to write bool bytes it would not read back", "[npy]") {
  unsigned char bytes[4] = {0, 1, 7, 1};
  tfm_tensor tensor{TFM_DTYPE_BOOL, 1, {4}, bytes};
  std::string path = tempPath("bad-bool-write.npy");
  ::unlink(path.c_str());
  Status status(tfm_npy_write(path.c_str(), &tensor));
  CHECK(status.code == TFM_STATUS_INVALID_ARGUMENT);
  CHECK(status.message ==
        path + ": cannot write bool element 2: it is the byte 7, not 0 or 1");
  CHECK(::access(path.c_str(), F_OK) != 0); // nothing was written
  bytes[2] = 1;
  CHECK(Status(tfm_npy_write(path.c_str(), &tensor)).code == TFM_STATUS_OK);
  tfm_tensor back{};
  Status read(tfm_npy_read(path.c_str(), &back));
  CHECK(read.code == TFM_STATUS_OK);
  tfm_tensor_release_data(&back);
}

TEST_CASE("a FIFO is refused as .npy input, not waited on", "[npy]") {
  // Opening a FIFO for reading blocks until a writer shows up; the reader
  // must refuse it without opening it that way.
  std::string path = tempPath("fifo.npy");
  ::unlink(path.c_str());
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  tfm_tensor tensor{};
  Status status(tfm_npy_read(path.c_str(), &tensor));
  CHECK(status.code == TFM_STATUS_IO_ERROR);
  CHECK(status.message == path + ": not a regular file");
  ::unlink(path.c_str());
}

TEST_CASE("npy bool arrays are numpy's '|b1'", "[npy]") {
  tfm_tensor tensor{};
  int64_t shape[] = {2, 3};
  REQUIRE(tfm_tensor_allocate(TFM_DTYPE_BOOL, 2, shape, &tensor) == nullptr);
  CHECK(tfm_tensor_byte_size(&tensor) == 6);
  unsigned char values[6] = {1, 0, 0, 1, 1, 0};
  std::memcpy(tensor.data, values, 6);
  std::string path = tempPath("bool.npy");
  REQUIRE(tfm_npy_write(path.c_str(), &tensor) == nullptr);
  tfm_tensor_release_data(&tensor);
  CHECK(readBytes(path) ==
        npyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }",
                std::string(reinterpret_cast<char *>(values), 6)));

  tfm_tensor read{};
  Status status(tfm_npy_read(path.c_str(), &read));
  INFO(status.message);
  REQUIRE(status.code == TFM_STATUS_OK);
  CHECK(read.dtype == TFM_DTYPE_BOOL);
  REQUIRE(read.rank == 2);
  CHECK(read.shape[0] == 2);
  CHECK(read.shape[1] == 3);
  CHECK(std::memcmp(read.data, values, 6) == 0);
  tfm_tensor_release_data(&read);
}

namespace {
/// Writes every value of a 16- or 8-bit dtype (all 65536 or 256 bit
/// patterns: for the float types NaNs with payloads, infinities, subnormals
/// and negative zero), checks the header's descr and reads the file back
/// bit for bit.
void allBitPatterns(tfm_dtype dtype, const std::string &descr) {
  size_t size = tfm_dtype_size(dtype);
  int64_t count = int64_t(1) << (8 * size);
  tfm_tensor tensor{};
  int64_t shape[] = {count / 16, 16};
  REQUIRE(tfm_tensor_allocate(dtype, 2, shape, &tensor) == nullptr);
  for (int64_t i = 0; i < count; ++i) {
    if (size == 2) {
      auto bits = static_cast<uint16_t>(i);
      std::memcpy(static_cast<char *>(tensor.data) + 2 * i, &bits, 2);
    } else {
      static_cast<unsigned char *>(tensor.data)[i] =
          static_cast<unsigned char>(i);
    }
  }
  std::string path =
      tempPath(std::string("all-") + tfm_dtype_name(dtype) + ".npy");
  Status written(tfm_npy_write(path.c_str(), &tensor));
  INFO(written.message);
  REQUIRE(written.code == TFM_STATUS_OK);
  std::string bytes = readBytes(path);
  CHECK(bytes.find("{'descr': '" + descr +
                   "', 'fortran_order': False, 'shape': (" +
                   std::to_string(count / 16) + ", 16), }") == 10);
  CHECK(bytes.size() % 64 == 0);

  tfm_tensor read{};
  Status status(tfm_npy_read(path.c_str(), &read));
  INFO(status.message);
  REQUIRE(status.code == TFM_STATUS_OK);
  CHECK(read.dtype == dtype);
  REQUIRE(read.rank == 2);
  CHECK(read.shape[0] == count / 16);
  CHECK(std::memcmp(read.data, tensor.data,
                    static_cast<size_t>(count) * size) == 0);
  tfm_tensor_release_data(&read);
  tfm_tensor_release_data(&tensor);
}
} // namespace

TEST_CASE("npy reads and writes f16, bf16 (as uint16), i8 and u8", "[npy]") {
  CHECK(tfm_dtype_size(TFM_DTYPE_F16) == 2);
  CHECK(tfm_dtype_size(TFM_DTYPE_BF16) == 2);
  CHECK(tfm_dtype_size(TFM_DTYPE_I8) == 1);
  CHECK(tfm_dtype_size(TFM_DTYPE_U8) == 1);
  CHECK(std::string(tfm_dtype_name(TFM_DTYPE_F16)) == "f16");
  CHECK(std::string(tfm_dtype_name(TFM_DTYPE_BF16)) == "bf16");
  CHECK(std::string(tfm_dtype_name(TFM_DTYPE_I8)) == "i8");
  CHECK(std::string(tfm_dtype_name(TFM_DTYPE_U8)) == "u8");
  // The values of the enum are part of the ABI: the new ones come after.
  CHECK(TFM_DTYPE_BOOL == 5);
  CHECK(TFM_DTYPE_F16 == 6);
  CHECK(TFM_DTYPE_BF16 == 7);
  CHECK(TFM_DTYPE_I8 == 8);
  CHECK(TFM_DTYPE_U8 == 9);
  allBitPatterns(TFM_DTYPE_F16, "<f2");
  allBitPatterns(TFM_DTYPE_BF16, "<u2");
  allBitPatterns(TFM_DTYPE_I8, "|i1");
  allBitPatterns(TFM_DTYPE_U8, "|u1");
}

TEST_CASE("a uint16 .npy file is bf16 bits, as ml_dtypes users save them",
          "[npy]") {
  // np.array([1, -2.5, nan, inf, 1e-40, 3.14159], np.float32)
  //   .astype(ml_dtypes.bfloat16).view(np.uint16), saved by numpy.
  const uint16_t bits[] = {0x3f80, 0xc020, 0x7fc0, 0x7f80, 0x0001, 0x4049};
  std::string path = tempPath("ml-dtypes-bf16.npy");
  writeBytes(path,
             npyFile("{'descr': '<u2', 'fortran_order': False, "
                     "'shape': (6,), }",
                     std::string(reinterpret_cast<const char *>(bits), 12)));
  tfm_tensor tensor{};
  Status status(tfm_npy_read(path.c_str(), &tensor));
  INFO(status.message);
  REQUIRE(status.code == TFM_STATUS_OK);
  CHECK(tensor.dtype == TFM_DTYPE_BF16);
  REQUIRE(tensor.rank == 1);
  REQUIRE(tensor.shape[0] == 6);
  const auto *data = static_cast<const uint16_t *>(tensor.data);
  CHECK(tfm_bf16_to_f32(data[0]) == 1.0f);
  CHECK(tfm_bf16_to_f32(data[1]) == -2.5f);
  CHECK(std::isnan(tfm_bf16_to_f32(data[2])));
  CHECK(std::isinf(tfm_bf16_to_f32(data[3])));
  CHECK(tfm_bf16_to_f32(data[4]) == 0x1p-133f); // The smallest subnormal.
  CHECK(tfm_bf16_to_f32(data[5]) == 3.140625f);
  tfm_tensor_release_data(&tensor);
}
