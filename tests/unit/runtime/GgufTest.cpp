//===- GgufTest.cpp - GGUF files: metadata, tensors, dequantization -------===//
//
// The fixture (tests/reference/gguf, made by llama.cpp's own `gguf` package)
// read back: every metadata type, every tensor's shape, and each type's
// dequantization bit for bit against the package's. Then malformed files,
// built byte by byte, each refused with a message naming the file.
//
//===----------------------------------------------------------------------===//
#include "tfm/gguf.h"
#include "tfm/runtime.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace tfm;

namespace {

std::string fixture(const std::string &name) {
  return std::string(TFM_SOURCE_DIR) + "/tests/reference/gguf/" + name;
}

std::string tempPath(const std::string &name) {
  return std::string(TFM_TEST_TMPDIR) + "/" + name;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// A GGUF file written field by field.
struct Builder {
  std::string bytes;
  template <typename T> Builder &put(T value) {
    bytes.append(reinterpret_cast<const char *>(&value), sizeof(T));
    return *this;
  }
  Builder &string(const std::string &s) {
    put(uint64_t(s.size()));
    bytes += s;
    return *this;
  }
  Builder &header(uint64_t tensors, uint64_t values, uint32_t version = 3) {
    bytes += "GGUF";
    return put(version).put(tensors).put(values);
  }
  /// A tensor info: name, dims (fastest first), type, offset.
  Builder &tensor(const std::string &name, std::vector<uint64_t> dims,
                  uint32_t type, uint64_t offset) {
    string(name).put(uint32_t(dims.size()));
    for (uint64_t d : dims)
      put(d);
    return put(type).put(offset);
  }
  Builder &alignTo(size_t alignment) {
    bytes.resize((bytes.size() + alignment - 1) / alignment * alignment, '\0');
    return *this;
  }
};

std::string openError(const std::string &bytes) {
  std::string path = tempPath("bad.gguf");
  writeFile(path, bytes);
  std::string error;
  std::unique_ptr<GgufFile> file = GgufFile::open(path, error);
  CHECK(file == nullptr);
  CHECK(error.rfind(path + ": ", 0) == 0);
  return error;
}

} // namespace

TEST_CASE("GGUF: metadata of every type and the tensors' shapes", "[gguf]") {
  std::string error;
  std::unique_ptr<GgufFile> file = GgufFile::open(fixture("types.gguf"), error);
  INFO(error);
  REQUIRE(file);
  CHECK(file->version() == 3);
  CHECK(file->alignment() == 32);
  nlohmann::json expected =
      nlohmann::json::parse(readFile(fixture("metadata.json")));
  for (const auto &[key, value] : expected.items()) {
    INFO(key);
    const GgufValue *got = file->find(key);
    REQUIRE(got);
    if (value.is_boolean()) {
      CHECK(got->kind == GgufValue::Kind::Bool);
      CHECK(got->integer == int64_t(value.get<bool>()));
    } else if (value.is_number_integer()) {
      CHECK(got->isInteger());
      CHECK(got->integer == value.get<int64_t>());
    } else if (value.is_number_float()) {
      CHECK(got->isFloat());
      CHECK(got->number == value.get<double>());
    } else if (value.is_string()) {
      CHECK(got->kind == GgufValue::Kind::String);
      CHECK(got->string == value.get<std::string>());
    } else {
      REQUIRE(got->kind == GgufValue::Kind::Array);
      REQUIRE(got->array.size() == value.size());
      for (size_t i = 0; i < value.size(); ++i) {
        if (value[i].is_string())
          CHECK(got->array[i].string == value[i].get<std::string>());
        else
          CHECK(got->array[i].integer == value[i].get<int64_t>());
      }
    }
  }
  CHECK(file->find("test.f32")->kind == GgufValue::Kind::F32);
  CHECK(file->find("test.u64")->kind == GgufValue::Kind::U64);
  CHECK(file->find("no.such.key") == nullptr);
  CHECK(file->tensors().size() == 11);
  for (const GgufTensor &t : file->tensors()) {
    INFO(t.name);
    // GGUF stores [512, 3] (fastest first): PyTorch's [3, 512].
    CHECK(t.shape == std::vector<int64_t>{3, 512});
    CHECK(t.elementCount() == 3 * 512);
  }
  CHECK(file->findTensor("t.Q4_K") != nullptr);
  CHECK(file->findTensor("t.missing") == nullptr);
}

TEST_CASE("GGUF: dequantization matches the gguf package bit for bit",
          "[gguf]") {
  std::string error;
  std::unique_ptr<GgufFile> file = GgufFile::open(fixture("types.gguf"), error);
  REQUIRE(file);
  for (const char *name : {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0",
                           "Q5_1", "Q4_K", "Q5_K", "Q6_K"}) {
    INFO(name);
    const GgufTensor *t = file->findTensor(std::string("t.") + name);
    REQUIRE(t);
    const GgufTypeInfo *info = ggufTypeInfo(t->type);
    REQUIRE(info);
    CHECK(std::string(info->name) == name);
    CHECK(t->byteSize ==
          size_t(t->elementCount() / info->blockElements * info->blockBytes));
    std::vector<float> got(size_t(t->elementCount()));
    REQUIRE(ggufDequantize(t->type, t->data, t->elementCount(), got.data()));
    tfm_tensor want;
    std::string npy = fixture(std::string("types.") + name + ".npy");
    tfm_status status = tfm_npy_read(npy.c_str(), &want);
    REQUIRE(status == nullptr);
    REQUIRE(tfm_tensor_element_count(&want) == t->elementCount());
    const auto *expected = static_cast<const float *>(want.data);
    size_t differing = 0;
    for (size_t i = 0; i < got.size(); ++i)
      differing += std::memcmp(&got[i], &expected[i], 4) != 0;
    CHECK(differing == 0);
    tfm_tensor_release_data(&want);
  }
  // Types it does not dequantize say so.
  float out[256];
  CHECK_FALSE(ggufDequantize(uint32_t(GgufType::Q2_K), out, 256, out));
  CHECK_FALSE(ggufDequantize(4, out, 32, out));
  CHECK_FALSE(ggufDequantize(uint32_t(GgufType::Q8_0), out, 31, out));
  // An empty tensor of any type converts to nothing, its pointers unread
  // (a zero-element tensor's data and an empty vector's may be null; the
  // fuzzer found memcpy handed them).
  for (GgufType type : {GgufType::F32, GgufType::F16, GgufType::Q8_0,
                        GgufType::Q4_K, GgufType::Q6_K})
    CHECK(ggufDequantize(uint32_t(type), nullptr, 0, nullptr));
}

TEST_CASE("GGUF: every truncation of a valid file is refused", "[gguf]") {
  std::string bytes = readFile(fixture("types.gguf"));
  REQUIRE(bytes.size() > 1000);
  // Headers, metadata, infos and the data section, at odd lengths.
  for (size_t length = 0; length < bytes.size(); length += 97) {
    INFO("length " << length);
    CHECK_FALSE(openError(bytes.substr(0, length)).empty());
  }
}

TEST_CASE("GGUF: malformed files get a message that says why", "[gguf]") {
  auto expect = [](const std::string &bytes, const std::string &message) {
    std::string error = openError(bytes);
    INFO(error);
    CHECK(error.find(message) != std::string::npos);
  };
  expect("GGUX" + std::string(20, '\0'), "not a GGUF file");
  expect(Builder().header(0, 0, 1).bytes, "GGUF version 1 is not supported");
  expect(Builder().header(0, uint64_t(1) << 60).bytes,
         "claims 1152921504606846976 key/values");
  expect(Builder().header(uint64_t(1) << 40, 0).bytes,
         "claims 1099511627776 tensors");
  // A key whose length runs past the end.
  expect(Builder().header(0, 1).put(uint64_t(1) << 50).bytes +
             std::string(16, '\0'),
         "a key at offset 24 is 1125899906842624 bytes long");
  expect(Builder().header(0, 1).string("k").put(uint32_t(99)).put(0).bytes,
         "key 'k' has the unknown value type 99");
  expect(
      Builder().header(0, 1).string("k").put(uint32_t(7)).put(uint8_t(2)).bytes,
      "a bool at offset 37 is 2, not 0 or 1");
  expect(Builder()
             .header(0, 2)
             .string("k")
             .put(uint32_t(4))
             .put(uint32_t(1))
             .string("k")
             .put(uint32_t(4))
             .put(uint32_t(2))
             .bytes,
         "the key 'k' appears twice");
  expect(Builder()
             .header(0, 1)
             .string("k")
             .put(uint32_t(9))
             .put(uint32_t(4))
             .put(uint64_t(1) << 40)
             .bytes,
         "claims 1099511627776 elements");
  expect(Builder()
             .header(0, 1)
             .string("general.alignment")
             .put(uint32_t(4))
             .put(uint32_t(3))
             .bytes,
         "general.alignment must be a u32 power of two, got u32 3");
  expect(Builder().header(1, 0).tensor("w", {1, 2, 3, 4, 5}, 0, 0).bytes,
         "tensor 'w' has 5 dims (1 to 4 are allowed)");
  expect(Builder().header(1, 0).tensor("w", {32}, 4, 0).bytes,
         "tensor 'w' has the unknown type 4");
  expect(Builder().header(1, 0).tensor("w", {33}, 8, 0).bytes,
         "rows of 33 elements are not whole Q8_0 blocks of 32");
  expect(Builder().header(1, 0).tensor("w", {4}, 0, 8).bytes,
         "offset 8 is not a multiple of the alignment 32");
  expect(
      Builder().header(1, 0).tensor("w", {uint64_t(1) << 62, 16}, 0, 0).bytes,
      "tensor 'w' has too many elements");
  expect(Builder().header(1, 0).tensor("w", {64}, 0, 0).alignTo(32).bytes +
             std::string(100, '\0'),
         "tensor 'w': bytes [0, 256) of the data section end past it "
         "(100 bytes)");
  expect(Builder()
                 .header(2, 0)
                 .tensor("w", {8}, 0, 0)
                 .tensor("w", {8}, 0, 32)
                 .alignTo(32)
                 .bytes +
             std::string(64, '\0'),
         "tensor 'w' appears twice");
  expect(Builder()
                 .header(2, 0)
                 .tensor("a", {16}, 0, 0)
                 .tensor("b", {16}, 0, 32)
                 .alignTo(32)
                 .bytes +
             std::string(96, '\0'),
         "overlaps tensor 'a'");
  // A name with a newline stays on the message's one line.
  std::string error =
      openError(Builder().header(1, 0).tensor("a\nb", {7}, 4, 0).bytes);
  CHECK(error.find('\n') == std::string::npos);
  CHECK(error.find("a\\x0ab") != std::string::npos);
}

TEST_CASE("GGUF: a valid file built by hand", "[gguf]") {
  // Two f32 tensors at 32-byte offsets, alignment 32: [2, 3] and [4].
  Builder b;
  b.header(2, 1).string("general.name").put(uint32_t(8)).string("tiny");
  b.tensor("m", {3, 2}, 0, 0).tensor("v", {4}, 0, 32).alignTo(32);
  std::string data(64, '\0');
  for (int i = 0; i < 6; ++i) {
    float f = float(i);
    std::memcpy(&data[size_t(4 * i)], &f, 4);
  }
  std::string path = tempPath("tiny.gguf");
  writeFile(path, b.bytes + data);
  std::string error;
  std::unique_ptr<GgufFile> file = GgufFile::open(path, error);
  INFO(error);
  REQUIRE(file);
  CHECK(file->find("general.name")->string == "tiny");
  const GgufTensor *m = file->findTensor("m");
  REQUIRE(m);
  CHECK(m->shape == std::vector<int64_t>{2, 3});
  float values[6];
  std::memcpy(values, m->data, sizeof values);
  CHECK(values[5] == 5.0f);
  CHECK(file->findTensor("v")->shape == std::vector<int64_t>{4});
}
