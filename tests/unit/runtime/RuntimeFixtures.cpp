//===- RuntimeFixtures.cpp - .npy files for the tfm-run tests ---*- C++ -*-===//
//
// A test helper with four commands:
//   add DIR            inputs and expected outputs for the TestModel artifacts
//   arange DIR         arrays that the numpy test checks (see CMakeLists.txt)
//   check DIR PREFIX   checks PREFIX<name>.npy written by numpy, and that the
//                      layouts numpy can write but tfm cannot are rejected
//   equal A B          whether two .npy files hold the same tensor
// It exits 0 on success and 1 with a message otherwise.
//
//===----------------------------------------------------------------------===//

#include "tfm/runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string &message) {
  fmt::print(stderr, "tfm-runtime-fixtures: {}\n", message);
  std::exit(1);
}

void check(tfm_status status) {
  if (status) {
    std::string message = tfm_status_message(status);
    tfm_status_free(status);
    fail(message);
  }
}

void write(const std::string &path, tfm_dtype dtype,
           const std::vector<int64_t> &shape, const void *data) {
  tfm_tensor tensor{};
  tensor.dtype = dtype;
  tensor.rank = static_cast<int32_t>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    tensor.shape[d] = shape[d];
  tensor.data = const_cast<void *>(data);
  check(tfm_npy_write(path.c_str(), &tensor));
}

void writeAdd(const std::string &dir) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<float> y = {0.5f, -1, 0.25f, 10, -20, 1e-3f};
  std::vector<float> sum(6);
  for (size_t i = 0; i < sum.size(); ++i)
    sum[i] = x[i] + y[i];
  write(dir + "/x.npy", TFM_DTYPE_F32, {3, 2}, x.data());
  write(dir + "/y.npy", TFM_DTYPE_F32, {3, 2}, y.data());
  write(dir + "/sum.npy", TFM_DTYPE_F32, {3, 2}, sum.data());
  std::vector<float> wrong = sum;
  wrong[3] += 0.01f;
  write(dir + "/wrong.npy", TFM_DTYPE_F32, {3, 2}, wrong.data());
  write(dir + "/short.npy", TFM_DTYPE_F32, {2, 2}, sum.data());
  std::vector<int32_t> ints = {1, 2, 3, 4, 5, 6};
  write(dir + "/x_i32.npy", TFM_DTYPE_I32, {3, 2}, ints.data());
  // The test artifact fails when seq is 7.
  std::vector<float> seven(14, 1.0f);
  write(dir + "/x7.npy", TFM_DTYPE_F32, {7, 2}, seven.data());
  // More than 1000 elements, so tfm-run summarises it.
  std::vector<float> big(1200);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<float>(i);
  write(dir + "/big.npy", TFM_DTYPE_F32, {600, 2}, big.data());
  std::vector<float> bigSum = big;
  for (float &value : bigSum)
    value *= 2;
  write(dir + "/big_sum.npy", TFM_DTYPE_F32, {600, 2}, bigSum.data());
  // For the bool model (TestModel.cpp with TFM_TEST_BOOL_MODEL).
  std::vector<float> x3 = {1, 2, 3};
  write(dir + "/x3.npy", TFM_DTYPE_F32, {3}, x3.data());
  unsigned char m[] = {0, 1, 0}, notM[] = {1, 0, 1}, bad[] = {0, 2, 0};
  write(dir + "/m.npy", TFM_DTYPE_BOOL, {3}, m);
  write(dir + "/not_m.npy", TFM_DTYPE_BOOL, {3}, notM);
  // tfm_npy_read rejects this. tfm_npy_write refuses to write it, so write
  // a valid file and patch its last data bytes (the data ends the file).
  unsigned char valid[] = {0, 0, 0};
  write(dir + "/m_bad.npy", TFM_DTYPE_BOOL, {3}, valid);
  // For the model with 8- and 16-bit tensors (TFM_TEST_HALF_MODEL): bf16 as
  // the bits in a '<u2' file, and what its outputs should be, in f32 too.
  std::vector<float> values = {1.0f, -2.5f, 3.140625f, 0x1p-133f};
  std::vector<uint16_t> bf16, f16, negatedF16;
  for (float v : values) {
    bf16.push_back(tfm_f32_to_bf16(v));
    f16.push_back(tfm_f32_to_f16(v));
    negatedF16.push_back(tfm_f32_to_f16(-v));
  }
  std::vector<float> f16Values = {1.0f, -2.5f, 3.140625f, 0.0f};
  std::vector<float> negatedValues;
  for (float v : f16Values)
    negatedValues.push_back(-v);
  int8_t q[] = {-128, -1, 0, 127};
  int8_t negatedQ[] = {-128, 1, 0, -127};
  uint8_t shifted[] = {0, 127, 128, 255};
  write(dir + "/x_bf16.npy", TFM_DTYPE_BF16, {4}, bf16.data());
  write(dir + "/h_f16.npy", TFM_DTYPE_F16, {4}, f16.data());
  write(dir + "/q_i8.npy", TFM_DTYPE_I8, {4}, q);
  write(dir + "/y_f32.npy", TFM_DTYPE_F32, {4}, values.data());
  write(dir + "/g_f16.npy", TFM_DTYPE_F16, {4}, negatedF16.data());
  write(dir + "/g_f32.npy", TFM_DTYPE_F32, {4}, negatedValues.data());
  write(dir + "/r_i8.npy", TFM_DTYPE_I8, {4}, negatedQ);
  write(dir + "/u_u8.npy", TFM_DTYPE_U8, {4}, shifted);
  // 1 + 2^-8 is not a bf16: y compared with it is off by 2^-8.
  std::vector<float> offByHalfUlp = values;
  offByHalfUlp[0] = 1.0f + 0x1p-8f;
  write(dir + "/y_off.npy", TFM_DTYPE_F32, {4}, offByHalfUlp.data());
  std::fstream file(dir + "/m_bad.npy",
                    std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(-3, std::ios::end);
  file.write(reinterpret_cast<const char *>(bad), sizeof bad);
  if (!file)
    fail(dir + "/m_bad.npy: cannot patch");
}

struct Case {
  const char *name;
  tfm_dtype dtype;
  std::vector<int64_t> shape;
};

// Keep in sync with the numpy commands in CMakeLists.txt.
const std::vector<Case> kCases = {
    {"f32_2x3", TFM_DTYPE_F32, {2, 3}},
    {"f64_4", TFM_DTYPE_F64, {4}},
    {"i32_scalar", TFM_DTYPE_I32, {}},
    {"i64_2x0x3", TFM_DTYPE_I64, {2, 0, 3}},
    {"f32_2x3x4", TFM_DTYPE_F32, {2, 3, 4}},
    {"i64_5", TFM_DTYPE_I64, {5}},
    {"bool_2x4", TFM_DTYPE_BOOL, {2, 4}},
    {"f16_3x2", TFM_DTYPE_F16, {3, 2}},
    {"i8_5", TFM_DTYPE_I8, {5}},
    {"u8_2x2", TFM_DTYPE_U8, {2, 2}},
    {"bf16_4", TFM_DTYPE_BF16, {4}},
};

/// Element i of every case: arange * 0.5 - 1 for floats, * 3 - 4 for signed
/// ints, * 3 + 4 for u8, arange % 3 == 0 for bools.
double caseValue(tfm_dtype dtype, int64_t i) {
  if (dtype == TFM_DTYPE_BOOL)
    return i % 3 == 0 ? 1 : 0;
  if (dtype == TFM_DTYPE_U8)
    return static_cast<double>(i * 3 + 4);
  bool isFloat = dtype == TFM_DTYPE_F32 || dtype == TFM_DTYPE_F64 ||
                 dtype == TFM_DTYPE_F16 || dtype == TFM_DTYPE_BF16;
  return isFloat ? static_cast<double>(i) * 0.5 - 1
                 : static_cast<double>(i * 3 - 4);
}

void setValue(tfm_tensor &tensor, int64_t i, double value) {
  switch (tensor.dtype) {
  case TFM_DTYPE_F32:
    static_cast<float *>(tensor.data)[i] = static_cast<float>(value);
    break;
  case TFM_DTYPE_F64:
    static_cast<double *>(tensor.data)[i] = value;
    break;
  case TFM_DTYPE_I32:
    static_cast<int32_t *>(tensor.data)[i] = static_cast<int32_t>(value);
    break;
  case TFM_DTYPE_I64:
    static_cast<int64_t *>(tensor.data)[i] = static_cast<int64_t>(value);
    break;
  case TFM_DTYPE_BOOL:
    static_cast<unsigned char *>(tensor.data)[i] = value != 0;
    break;
  case TFM_DTYPE_F16:
    static_cast<uint16_t *>(tensor.data)[i] =
        tfm_f32_to_f16(static_cast<float>(value));
    break;
  case TFM_DTYPE_BF16:
    static_cast<uint16_t *>(tensor.data)[i] =
        tfm_f32_to_bf16(static_cast<float>(value));
    break;
  case TFM_DTYPE_I8:
    static_cast<int8_t *>(tensor.data)[i] = static_cast<int8_t>(value);
    break;
  case TFM_DTYPE_U8:
    static_cast<uint8_t *>(tensor.data)[i] = static_cast<uint8_t>(value);
    break;
  case TFM_DTYPE_INVALID:
    break;
  }
}

double getValue(const tfm_tensor &tensor, int64_t i) {
  switch (tensor.dtype) {
  case TFM_DTYPE_F32:
    return static_cast<const float *>(tensor.data)[i];
  case TFM_DTYPE_F64:
    return static_cast<const double *>(tensor.data)[i];
  case TFM_DTYPE_I32:
    return static_cast<const int32_t *>(tensor.data)[i];
  case TFM_DTYPE_I64:
    return static_cast<double>(static_cast<const int64_t *>(tensor.data)[i]);
  case TFM_DTYPE_BOOL:
    return static_cast<const unsigned char *>(tensor.data)[i];
  case TFM_DTYPE_F16:
    return tfm_f16_to_f32(static_cast<const uint16_t *>(tensor.data)[i]);
  case TFM_DTYPE_BF16:
    return tfm_bf16_to_f32(static_cast<const uint16_t *>(tensor.data)[i]);
  case TFM_DTYPE_I8:
    return static_cast<const int8_t *>(tensor.data)[i];
  case TFM_DTYPE_U8:
    return static_cast<const uint8_t *>(tensor.data)[i];
  case TFM_DTYPE_INVALID:
    break;
  }
  return 0;
}

void writeArange(const std::string &dir) {
  for (const Case &c : kCases) {
    tfm_tensor tensor{};
    check(tfm_tensor_allocate(c.dtype, static_cast<int32_t>(c.shape.size()),
                              c.shape.data(), &tensor));
    for (int64_t i = 0; i < tfm_tensor_element_count(&tensor); ++i)
      setValue(tensor, i, caseValue(c.dtype, i));
    check(tfm_npy_write(fmt::format("{}/arange_{}.npy", dir, c.name).c_str(),
                        &tensor));
    tfm_tensor_release_data(&tensor);
  }
}

void checkNumpyFiles(const std::string &dir, const std::string &prefix) {
  for (const Case &c : kCases) {
    std::string path = fmt::format("{}/{}{}.npy", dir, prefix, c.name);
    tfm_tensor tensor{};
    check(tfm_npy_read(path.c_str(), &tensor));
    if (tensor.dtype != c.dtype ||
        tensor.rank != static_cast<int32_t>(c.shape.size()) ||
        !std::equal(c.shape.begin(), c.shape.end(), tensor.shape))
      fail(fmt::format("{}: wrong dtype or shape", path));
    for (int64_t i = 0; i < tfm_tensor_element_count(&tensor); ++i)
      if (getValue(tensor, i) != caseValue(c.dtype, i))
        fail(fmt::format("{}: element {} is {}, expected {}", path, i,
                         getValue(tensor, i), caseValue(c.dtype, i)));
    tfm_tensor_release_data(&tensor);
  }
  for (const char *name : {"fortran", "big_endian", "i16"}) {
    std::string path = fmt::format("{}/{}{}.npy", dir, prefix, name);
    tfm_tensor tensor{};
    tfm_status status = tfm_npy_read(path.c_str(), &tensor);
    tfm_status_code_t code = tfm_status_code(status);
    fmt::print("{}\n", tfm_status_message(status));
    tfm_status_free(status);
    if (code != TFM_STATUS_FORMAT_ERROR)
      fail(fmt::format("{}: expected a format error", path));
  }
}

void checkEqual(const std::string &a, const std::string &b) {
  tfm_tensor left{}, right{};
  check(tfm_npy_read(a.c_str(), &left));
  check(tfm_npy_read(b.c_str(), &right));
  bool same =
      left.dtype == right.dtype && left.rank == right.rank &&
      std::equal(left.shape, left.shape + left.rank, right.shape) &&
      std::memcmp(left.data, right.data,
                  static_cast<size_t>(tfm_tensor_byte_size(&left))) == 0;
  tfm_tensor_release_data(&left);
  tfm_tensor_release_data(&right);
  if (!same)
    fail(fmt::format("{} and {} differ", a, b));
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "add")
    writeAdd(args[1]);
  else if (args.size() == 2 && args[0] == "arange")
    writeArange(args[1]);
  else if (args.size() == 3 && args[0] == "check")
    checkNumpyFiles(args[1], args[2]);
  else if (args.size() == 3 && args[0] == "equal")
    checkEqual(args[1], args[2]);
  else
    fail("usage: tfm-runtime-fixtures add|arange DIR | check DIR PREFIX | "
         "equal A B");
  return 0;
}
