//===- SafeTensorsTest.cpp - Tests of the safetensors reader ----*- C++ -*-===//

#include "tfm/safetensors.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace tfm;

namespace {

std::string tempPath(const std::string &name) {
  return std::string(TFM_TEST_TMPDIR) + "/st-" + name;
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// A file with `header` as its JSON and `dataSize` bytes of data.
std::string safeTensorsFile(const std::string &header, size_t dataSize) {
  uint64_t size = header.size();
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &size, 8);
  return bytes + header + std::string(dataSize, '\x01');
}

/// Expects opening `bytes` to fail with exactly `message` after "PATH: ".
void expectError(const std::string &bytes, const std::string &message) {
  std::string path = tempPath("bad.safetensors");
  writeBytes(path, bytes);
  std::string error;
  std::unique_ptr<SafeTensorsFile> file = SafeTensorsFile::open(path, error);
  CHECK(file == nullptr);
  CHECK(error == path + ": " + message);
}

std::string entry(const std::string &name, const std::string &body) {
  return "{\"" + name + "\": " + body + "}";
}

} // namespace

TEST_CASE("safetensors write and read back", "[safetensors]") {
  std::vector<float> q(12);
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = static_cast<float>(i) * 0.25f;
  std::vector<int64_t> ids = {5, -6, 7};
  std::string path = tempPath("valid.safetensors");
  std::string error;
  bool written =
      writeSafeTensors(path,
                       {{"W_q.weight", "F32", {3, 4}, q.data()},
                        {"ids", "I64", {3}, ids.data()},
                        {"empty", "F32", {0, 4}, nullptr},
                        {"scalar", "F64", {}, std::vector<double>{2.5}.data()}},
                       error, {{"format", "pt"}});
  INFO(error);
  REQUIRE(written);
  // The data section starts 64-byte aligned (so also 8-byte).
  std::string bytes = readBytes(path);
  uint64_t headerSize;
  std::memcpy(&headerSize, bytes.data(), 8);
  CHECK((8 + headerSize) % 64 == 0);

  std::unique_ptr<SafeTensorsFile> file = SafeTensorsFile::open(path, error);
  INFO(error);
  REQUIRE(file);
  CHECK(file->path() == path);
  REQUIRE(file->entries().size() == 4);
  CHECK(file->metadata().at("format") == "pt");

  const SafeTensorEntry *weight = file->find("W_q.weight");
  REQUIRE(weight);
  CHECK(weight->dtype == "F32");
  CHECK(weight->shape == std::vector<int64_t>{3, 4});
  REQUIRE(weight->byteSize == 48);
  CHECK(std::memcmp(weight->data, q.data(), 48) == 0);

  const SafeTensorEntry *idsEntry = file->find("ids");
  REQUIRE(idsEntry);
  CHECK(idsEntry->byteSize == 24);
  CHECK(std::memcmp(idsEntry->data, ids.data(), 24) == 0);
  CHECK(file->find("empty")->byteSize == 0);
  double scalar;
  REQUIRE(file->find("scalar")->byteSize == 8);
  std::memcpy(&scalar, file->find("scalar")->data, 8);
  CHECK(scalar == 2.5);
  CHECK(file->find("missing") == nullptr);
  // Entries come in the order of their data.
  CHECK(file->entries().front().name == "W_q.weight");
}

TEST_CASE("writeSafeTensors rejects bad entries", "[safetensors]") {
  std::string path = tempPath("w.safetensors");
  std::string error;
  float data[4] = {};
  CHECK_FALSE(writeSafeTensors(path, {{"a", "F17", {4}, data}}, error));
  CHECK(error == path + ": tensor 'a': unknown dtype 'F17'");
  CHECK_FALSE(writeSafeTensors(
      path, {{"a", "F32", {4}, data}, {"a", "F32", {4}, data}}, error));
  CHECK_FALSE(writeSafeTensors(path, {{"a", "F32", {-4}, data}}, error));
  CHECK_FALSE(writeSafeTensors(path, {{"a", "F32", {4}, nullptr}}, error));
  CHECK_FALSE(writeSafeTensors("/nonexistent/w.safetensors",
                               {{"a", "F32", {4}, data}}, error));
  CHECK(error.rfind("/nonexistent/w.safetensors: cannot create", 0) == 0);
}

TEST_CASE("safetensors validation errors", "[safetensors]") {
  const std::string good =
      R"({"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]})";

  expectError("abc", "the file has 3 bytes, too few for the 8-byte header "
                     "size");
  expectError(std::string("\xff\x00\x00\x00\x00\x00\x00\x00{}", 10),
              "header size 255 is larger than the rest of the file (2 bytes)");
  expectError(safeTensorsFile("{\"a\": ", 16), "the header is not valid JSON");
  expectError(safeTensorsFile("[1, 2]", 0),
              "the header is a JSON array, not an object");
  expectError(safeTensorsFile(entry("a", "3"), 16),
              "tensor 'a': expected an object, got number");
  expectError(
      safeTensorsFile(
          entry("a", R"({"shape": [2, 2], "data_offsets": [0, 16]})"), 16),
      "tensor 'a': \"dtype\" is missing or not a string");
  expectError(
      safeTensorsFile(
          entry("a",
                R"({"dtype": 4, "shape": [2, 2], "data_offsets": [0, 16]})"),
          16),
      "tensor 'a': \"dtype\" is missing or not a string");
  expectError(safeTensorsFile(entry("a", R"({"dtype": "F7", "shape": [2, 2],
                                             "data_offsets": [0, 16]})"),
                              16),
              "tensor 'a': unknown dtype 'F7'");
  expectError(
      safeTensorsFile(
          entry("a", R"({"dtype": "F32", "data_offsets": [0, 16]})"), 16),
      "tensor 'a': \"shape\" is missing or not an array");
  expectError(safeTensorsFile(entry("a", R"({"dtype": "F32", "shape": [2, -2],
                                             "data_offsets": [0, 16]})"),
                              16),
              "tensor 'a': dim 1 is negative (-2)");
  expectError(safeTensorsFile(entry("a", R"({"dtype": "F32", "shape": [2, 2.5],
                                             "data_offsets": [0, 16]})"),
                              16),
              "tensor 'a': dim 1 is 2.5, not a non-negative integer");
  expectError(
      safeTensorsFile(entry("a", R"({"dtype": "F32", "shape": [2, 2]})"), 16),
      "tensor 'a': \"data_offsets\" must be two non-negative integers");
  expectError(safeTensorsFile(entry("a", R"({"dtype": "F32", "shape": [2, 2],
                                             "data_offsets": [0]})"),
                              16),
              "tensor 'a': \"data_offsets\" must be two non-negative integers");
  expectError(safeTensorsFile(entry("a", R"({"dtype": "F32", "shape": [2, 2],
                                             "data_offsets": [-1, 15]})"),
                              16),
              "tensor 'a': \"data_offsets\" must be two non-negative integers");
  expectError(safeTensorsFile(entry("a", R"({"dtype": "F32", "shape": [2, 2],
                                             "data_offsets": [16, 0]})"),
                              16),
              "tensor 'a': data_offsets [16, 0) end before they begin");
  expectError(safeTensorsFile(entry("W_q.weight",
                                    R"({"dtype": "F32", "shape": [4, 4],
                                        "data_offsets": [0, 64]})"),
                              48),
              "tensor 'W_q.weight': data_offsets [0, 64) end past the data "
              "section (48 bytes)");
  expectError(safeTensorsFile(entry("a", R"({"dtype": "F32", "shape": [2, 3],
                                             "data_offsets": [0, 16]})"),
                              16),
              "tensor 'a': shape [2, 3] of F32 needs 24 bytes but "
              "data_offsets [0, 16) hold 16");
  expectError(safeTensorsFile(entry("a", R"({"dtype": "F32",
                                 "shape": [4294967296, 4294967296, 4294967296],
                                 "data_offsets": [0, 16]})"),
                              16),
              "tensor 'a': shape [4294967296, 4294967296, 4294967296] is too "
              "large");
  expectError(safeTensorsFile(R"({"a": )" + good + R"(, "b": {"dtype": "F32",
                                  "shape": [2], "data_offsets": [8, 16]}})",
                              16),
              "tensors 'a' [0, 16) and 'b' [8, 16) overlap");
  expectError(
      safeTensorsFile(R"({"a": )" + good + R"(, "b": )" + good + "}", 16),
      "tensors 'a' [0, 16) and 'b' [0, 16) overlap");
  expectError(safeTensorsFile(R"({"__metadata__": {"format": 1}})", 0),
              "\"__metadata__\" entry 'format' is number, not a string");
  expectError(safeTensorsFile(R"({"__metadata__": []})", 0),
              "\"__metadata__\" must be an object of strings");

  // A shape nested a hundred thousand levels deep: refused before anything
  // recurses, and never dumped into the message.
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  expectError(
      safeTensorsFile(entry("a", R"({"dtype": "F32", "shape": )" + deep +
                                     R"(, "data_offsets": [0, 16]})"),
                      16),
      "the header nests deeper than 16 levels");
  expectError(safeTensorsFile(entry("a", R"({"dtype": "F32", "shape": [[2], 2],
                                             "data_offsets": [0, 16]})"),
                              16),
              "tensor 'a': dim 0 is array, not a non-negative integer");

  std::string error;
  CHECK(SafeTensorsFile::open("/nonexistent.safetensors", error) == nullptr);
  CHECK(error ==
        "/nonexistent.safetensors: cannot open: No such file or directory");
}

TEST_CASE("safetensors rejects hidden bytes and repeated names",
          "[safetensors]") {
  const std::string a =
      R"("a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})";
  // The format requires the tensors to cover the data without holes.
  expectError(safeTensorsFile(R"({"a": {"dtype": "BF16", "shape": [2],
                                        "data_offsets": [8, 12]}})",
                              12),
              "the data bytes [0, 8) belong to no tensor (before 'a')");
  expectError(safeTensorsFile("{" + a + R"(, "b": {"dtype": "F32",
                                  "shape": [1], "data_offsets": [12, 16]}})",
                              16),
              "the data bytes [8, 12) belong to no tensor (before 'b')");
  expectError(safeTensorsFile("{" + a + "}", 12),
              "the data bytes [8, 12) at the end belong to no tensor");
  expectError(safeTensorsFile("{}", 4),
              "the data bytes [0, 4) at the end belong to no tensor");
  // A JSON parser stops at NUL: whatever follows must not hide there.
  expectError(safeTensorsFile("{" + a + std::string("}\0 {{{ junk", 11), 8),
              "the header has a NUL byte at offset " +
                  std::to_string(8 + a.size() + 2));
  // nlohmann would keep the last of two equal keys, another reader the first.
  expectError(safeTensorsFile("{" + a + ", " + a + "}", 8),
              "the header repeats the key 'a' in one object");
  expectError(safeTensorsFile(R"({"a": {"dtype": "F32", "dtype": "I32",
                                        "shape": [2], "data_offsets": [0, 8]}})",
                              8),
              "the header repeats the key 'dtype' in one object");
  // The empty key is a key like any other.
  expectError(safeTensorsFile(R"({"": {"dtype": "F32", "shape": [2],
                                       "data_offsets": [0, 8]},
                                  "": {"dtype": "F32", "shape": [2],
                                       "data_offsets": [0, 8]}})",
                              8),
              "the header repeats the key '' in one object");
  // Keys are per object: the same key in two objects is fine.
  std::string path = tempPath("same-keys.safetensors");
  writeBytes(path, safeTensorsFile("{" + a + R"(, "b": {"dtype": "F32",
                                  "shape": [1], "data_offsets": [8, 12]}})",
                                   12));
  std::string error;
  CHECK(SafeTensorsFile::open(path, error) != nullptr);
  INFO(error);
}

TEST_CASE("safetensors errors quote names on one line", "[safetensors]") {
  // JSON escapes let a name hold a newline (found by tfm-fuzz-safetensors):
  // the message shows it escaped, on the message's one line.
  expectError(safeTensorsFile(R"({"\nx": {"dtype": "F32", "shape": [4],
                                          "data_offsets": [0, 16]}})",
                              8),
              "tensor '\\x0ax': data_offsets [0, 16) end past the data "
              "section (8 bytes)");
  expectError(safeTensorsFile(R"({"a\tb": {"dtype": "F32", "shape": [1],
                                          "data_offsets": [4, 8]}})",
                              8),
              "the data bytes [0, 4) belong to no tensor (before "
              "'a\\x09b')");
}

TEST_CASE("safetensors accepts empty tensors and padding", "[safetensors]") {
  std::string path = tempPath("padding.safetensors");
  // Spaces pad the header (the format allows them); an empty tensor sits
  // anywhere, even past the data.
  writeBytes(path, safeTensorsFile(R"({"a": {"dtype": "BF16", "shape": [2],
                                       "data_offsets": [0, 4]},
                                 "e": {"dtype": "F32", "shape": [0],
                                       "data_offsets": [4, 4]}}   )",
                                   4));
  std::string error;
  std::unique_ptr<SafeTensorsFile> file = SafeTensorsFile::open(path, error);
  INFO(error);
  REQUIRE(file);
  CHECK(file->entries().size() == 2);
  CHECK(file->metadata().empty());
}

TEST_CASE("a FIFO is refused as a safetensors file, not waited on",
          "[safetensors]") {
  std::string path = tempPath("fifo.safetensors");
  ::unlink(path.c_str());
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  std::string error;
  CHECK(SafeTensorsFile::open(path, error) == nullptr);
  CHECK(error == path + ": not a regular file");
  ::unlink(path.c_str());
}

TEST_CASE("safetensors survives corrupted files", "[safetensors]") {
  std::vector<float> data(6, 1.0f);
  std::string path = tempPath("fuzz-source.safetensors");
  std::string error;
  REQUIRE(writeSafeTensors(
      path, {{"a", "F32", {2, 3}, data.data()}, {"b", "F16", {2}, data.data()}},
      error, {{"k", "v"}}));
  const std::string valid = readBytes(path);
  std::string fuzzPath = tempPath("fuzz.safetensors");

  // Every proper prefix cuts into the data or the header: always an error.
  for (size_t length = 0; length < valid.size(); ++length) {
    writeBytes(fuzzPath, valid.substr(0, length));
    INFO("length " << length);
    CHECK(SafeTensorsFile::open(fuzzPath, error) == nullptr);
    CHECK(error.rfind(fuzzPath + ": ", 0) == 0);
  }

  // Flipping bits of the size and the header must not crash; when the file
  // still opens, every entry must lie inside it.
  uint64_t headerSize;
  std::memcpy(&headerSize, valid.data(), 8);
  for (size_t offset = 0; offset < 8 + headerSize; ++offset) {
    for (unsigned char mask : {0x01, 0x08, 0x20, 0x80, 0xff}) {
      std::string corrupt = valid;
      corrupt[offset] = static_cast<char>(corrupt[offset] ^ mask);
      writeBytes(fuzzPath, corrupt);
      std::unique_ptr<SafeTensorsFile> file =
          SafeTensorsFile::open(fuzzPath, error);
      if (!file) {
        CHECK(error.rfind(fuzzPath + ": ", 0) == 0);
        CHECK(error.find('\n') == std::string::npos);
        continue;
      }
      // Touch every byte: an entry outside the mapping would crash here.
      unsigned sum = 0;
      for (const SafeTensorEntry &e : file->entries())
        for (size_t i = 0; i < e.byteSize; ++i)
          sum += static_cast<const unsigned char *>(e.data)[i];
      CHECK(sum <= corrupt.size() * 255);
    }
  }
}

TEST_CASE("safetensors holds the runtime's f16, bf16, i8 and u8 tensors",
          "[safetensors]") {
  // Every bit pattern: NaNs with payloads, infinities, subnormals, -0.
  std::vector<uint16_t> halves(65536);
  for (size_t i = 0; i < halves.size(); ++i)
    halves[i] = static_cast<uint16_t>(i);
  std::vector<int8_t> bytes(256);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<int8_t>(i);
  const std::pair<tfm_dtype, const char *> names[] = {
      {TFM_DTYPE_F32, "F32"},   {TFM_DTYPE_F64, "F64"},
      {TFM_DTYPE_I32, "I32"},   {TFM_DTYPE_I64, "I64"},
      {TFM_DTYPE_BOOL, "BOOL"}, {TFM_DTYPE_F16, "F16"},
      {TFM_DTYPE_BF16, "BF16"}, {TFM_DTYPE_I8, "I8"},
      {TFM_DTYPE_U8, "U8"}};
  for (auto [dtype, name] : names) {
    CHECK(safeTensorsDtypeName(dtype) == name);
    CHECK(dtypeOfSafeTensors(name) == dtype);
    CHECK(safeTensorsDtypeSize(name) == tfm_dtype_size(dtype));
  }
  CHECK(safeTensorsDtypeName(TFM_DTYPE_INVALID).empty());
  for (const char *other : {"U16", "I16", "U32", "U64", "F8_E4M3", "F17"})
    CHECK(dtypeOfSafeTensors(other) == TFM_DTYPE_INVALID);

  std::string path = tempPath("low-precision.safetensors");
  std::string error;
  auto name = [](tfm_dtype dtype) {
    return std::string(safeTensorsDtypeName(dtype));
  };
  bool written =
      writeSafeTensors(path,
                       {{"h", name(TFM_DTYPE_F16), {256, 256}, halves.data()},
                        {"b", name(TFM_DTYPE_BF16), {65536}, halves.data()},
                        {"i", name(TFM_DTYPE_I8), {16, 16}, bytes.data()},
                        {"u", name(TFM_DTYPE_U8), {256}, bytes.data()}},
                       error);
  INFO(error);
  REQUIRE(written);
  std::unique_ptr<SafeTensorsFile> file = SafeTensorsFile::open(path, error);
  INFO(error);
  REQUIRE(file);
  for (auto [tensor, dtype, data, size] :
       {std::tuple("h", TFM_DTYPE_F16, static_cast<const void *>(halves.data()),
                   size_t(131072)),
        std::tuple("b", TFM_DTYPE_BF16,
                   static_cast<const void *>(halves.data()), size_t(131072)),
        std::tuple("i", TFM_DTYPE_I8, static_cast<const void *>(bytes.data()),
                   size_t(256)),
        std::tuple("u", TFM_DTYPE_U8, static_cast<const void *>(bytes.data()),
                   size_t(256))}) {
    const SafeTensorEntry *entry = file->find(tensor);
    INFO(tensor);
    REQUIRE(entry);
    CHECK(dtypeOfSafeTensors(entry->dtype) == dtype);
    REQUIRE(entry->byteSize == size);
    CHECK(std::memcmp(entry->data, data, size) == 0);
  }
  // A BF16 tensor's size is checked at two bytes per element.
  expectError(safeTensorsFile(entry("b", R"({"dtype": "BF16", "shape": [3],)"
                                         R"( "data_offsets": [0, 5]})"),
                              5),
              "tensor 'b': shape [3] of BF16 needs 6 bytes but data_offsets "
              "[0, 5) hold 5");
}
