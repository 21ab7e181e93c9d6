//===- Tensor.cpp - Element types and tensor buffers ------------*- C++ -*-===//

#include "Tensor.h"
#include "Status.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <limits>

namespace tfm::rt {

namespace {
constexpr int64_t kAlignment = 64;
} // namespace

std::optional<tfm_dtype> parseDtypeName(std::string_view name) {
  for (tfm_dtype dtype : {TFM_DTYPE_F32, TFM_DTYPE_F64, TFM_DTYPE_I32,
                          TFM_DTYPE_I64, TFM_DTYPE_BOOL, TFM_DTYPE_F16,
                          TFM_DTYPE_BF16, TFM_DTYPE_I8, TFM_DTYPE_U8})
    if (name == tfm_dtype_name(dtype))
      return dtype;
  return std::nullopt;
}

std::optional<int64_t> elementCount(const int64_t *dims, int64_t rank) {
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (dims[i] < 0)
      return std::nullopt;
    // Keep checking the remaining dims for negatives even after a zero.
    if (dims[i] != 0 && count > std::numeric_limits<int64_t>::max() / dims[i])
      return std::nullopt;
    count *= dims[i];
  }
  return count;
}

std::optional<int64_t> byteSize(int64_t count, size_t elementSize) {
  if (count < 0 || elementSize == 0 ||
      count > std::numeric_limits<int64_t>::max() /
                  static_cast<int64_t>(elementSize))
    return std::nullopt;
  return count * static_cast<int64_t>(elementSize);
}

std::string formatShape(const int64_t *dims, int64_t rank) {
  std::string text = "[";
  for (int64_t i = 0; i < rank; ++i)
    text += fmt::format("{}{}", i ? ", " : "", dims[i]);
  return text + "]";
}

void *allocateAligned(int64_t bytes) noexcept {
  if (bytes < 0 || bytes > std::numeric_limits<int64_t>::max() - kAlignment)
    return nullptr;
  // aligned_alloc wants a multiple of the alignment.
  size_t rounded = static_cast<size_t>(
      bytes == 0 ? kAlignment
                 : (bytes + kAlignment - 1) / kAlignment * kAlignment);
  void *data = std::aligned_alloc(kAlignment, rounded);
  if (data)
    std::memset(data, 0, rounded);
  return data;
}

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

} // namespace tfm::rt

using namespace tfm::rt;

extern "C" {

size_t tfm_dtype_size(tfm_dtype dtype) {
  switch (dtype) {
  case TFM_DTYPE_BOOL:
  case TFM_DTYPE_I8:
  case TFM_DTYPE_U8:
    return 1;
  case TFM_DTYPE_F16:
  case TFM_DTYPE_BF16:
    return 2;
  case TFM_DTYPE_F32:
  case TFM_DTYPE_I32:
    return 4;
  case TFM_DTYPE_F64:
  case TFM_DTYPE_I64:
    return 8;
  case TFM_DTYPE_INVALID:
    break;
  }
  return 0;
}

const char *tfm_dtype_name(tfm_dtype dtype) {
  switch (dtype) {
  case TFM_DTYPE_F32:
    return "f32";
  case TFM_DTYPE_F64:
    return "f64";
  case TFM_DTYPE_I32:
    return "i32";
  case TFM_DTYPE_I64:
    return "i64";
  case TFM_DTYPE_BOOL:
    return "bool";
  case TFM_DTYPE_F16:
    return "f16";
  case TFM_DTYPE_BF16:
    return "bf16";
  case TFM_DTYPE_I8:
    return "i8";
  case TFM_DTYPE_U8:
    return "u8";
  case TFM_DTYPE_INVALID:
    break;
  }
  return "invalid";
}

float tfm_f16_to_f32(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) // Infinities and NaNs keep their payload.
    return bitsToFloat(sign | 0x7f800000 | mantissa << 13);
  if (exponent == 0) {
    // Zeros and subnormals: mantissa * 2^-24, exact in f32.
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  // Rebias the exponent from 15 to 127.
  return bitsToFloat(sign | (exponent + 112) << 23 | mantissa << 13);
}

uint16_t tfm_f32_to_f16(float value) {
  uint32_t bits = floatBits(value);
  auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000)
    return sign | 0x7e00;
  // 65520, halfway between the largest f16 (65504) and 2^16, rounds to even:
  // to infinity, as does everything above it.
  if (magnitude >= 0x477ff000)
    return sign | 0x7c00;
  if (magnitude >= 0x38800000) {
    // A normal f16 (2^-14 and up): round the 13 dropped bits to even, letting
    // a carry run into the exponent, then rebias it from 127 to 15.
    uint32_t rounded = magnitude + 0xfff + ((magnitude >> 13) & 1);
    return sign | static_cast<uint16_t>((rounded - 0x38000000) >> 13);
  }
  // Below half the smallest subnormal (2^-25; 2^-25 itself is a tie that
  // rounds to the even zero).
  if (magnitude < 0x33000000)
    return sign;
  // A subnormal f16 counts units of 2^-24: the significand shifted right by
  // 14 to 24 bits, rounded to even (rounding up may give the smallest normal,
  // which the same bits encode).
  uint32_t exponent = magnitude >> 23;
  uint32_t significand = (magnitude & 0x7fffff) | 0x800000;
  uint32_t shift = 126 - exponent;
  uint32_t units = significand >> shift;
  uint32_t rest = significand & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (units & 1)))
    ++units;
  return sign | static_cast<uint16_t>(units);
}

float tfm_bf16_to_f32(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t tfm_f32_to_bf16(float value) {
  uint32_t bits = floatBits(value);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>(((bits >> 16) & 0x8000) | 0x7fc0);
  // Round the dropped half to even; a carry runs into the exponent, up to
  // infinity for values past the largest bf16.
  return static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

int64_t tfm_tensor_element_count(const tfm_tensor *tensor) {
  if (!tensor || tensor->rank < 0 || tensor->rank > TFM_MAX_RANK)
    return -1;
  return elementCount(tensor->shape, tensor->rank).value_or(-1);
}

int64_t tfm_tensor_byte_size(const tfm_tensor *tensor) {
  int64_t count = tfm_tensor_element_count(tensor);
  if (count < 0)
    return -1;
  return byteSize(count, tfm_dtype_size(tensor->dtype)).value_or(-1);
}

tfm_status tfm_tensor_allocate(tfm_dtype dtype, int32_t rank,
                               const int64_t *shape, tfm_tensor *out_tensor) {
  return guard("tfm_tensor_allocate", [&]() -> tfm_status {
    if (!out_tensor)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        "tfm_tensor_allocate: argument 'out_tensor' is NULL");
    out_tensor->data = nullptr;
    if (tfm_dtype_size(dtype) == 0)
      return makeStatus(
          TFM_STATUS_INVALID_ARGUMENT,
          fmt::format("tfm_tensor_allocate: invalid dtype {}", int(dtype)));
    if (rank < 0 || rank > TFM_MAX_RANK)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        fmt::format("tfm_tensor_allocate: rank {} is not in "
                                    "[0, {}]",
                                    rank, TFM_MAX_RANK));
    if (rank > 0 && !shape)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        "tfm_tensor_allocate: argument 'shape' is NULL");
    std::optional<int64_t> count = elementCount(shape, rank);
    std::optional<int64_t> bytes =
        count ? byteSize(*count, tfm_dtype_size(dtype)) : std::nullopt;
    if (!bytes)
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        fmt::format("tfm_tensor_allocate: invalid shape {}",
                                    formatShape(shape, rank)));
    void *data = allocateAligned(*bytes);
    if (!data)
      return makeStatus(TFM_STATUS_IO_ERROR,
                        fmt::format("tfm_tensor_allocate: out of memory "
                                    "allocating {} bytes for {}{}",
                                    *bytes, tfm_dtype_name(dtype),
                                    formatShape(shape, rank)));
    out_tensor->dtype = dtype;
    out_tensor->rank = rank;
    for (int32_t i = 0; i < TFM_MAX_RANK; ++i)
      out_tensor->shape[i] = i < rank ? shape[i] : 0;
    out_tensor->data = data;
    return nullptr;
  });
}

void tfm_tensor_release_data(tfm_tensor *tensor) {
  if (!tensor)
    return;
  std::free(tensor->data);
  tensor->data = nullptr;
}

} // extern "C"
