//===- Tensor.h - Internal helpers for tfm_tensor ---------------*- C++ -*-===//

#ifndef TFM_RUNTIME_TENSOR_H
#define TFM_RUNTIME_TENSOR_H

#include "tfm/runtime.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tfm::rt {

/// The dtype spelled `name` in the metadata ("f32", ...), if any.
std::optional<tfm_dtype> parseDtypeName(std::string_view name);

/// The product of `dims`, or nullopt when a dim is negative or it overflows.
std::optional<int64_t> elementCount(const int64_t *dims, int64_t rank);

/// `count * size` in bytes, or nullopt when it overflows.
std::optional<int64_t> byteSize(int64_t count, size_t elementSize);

/// "[3, 2]" for error messages.
std::string formatShape(const int64_t *dims, int64_t rank);

/// Allocates a zeroed, 64-byte aligned buffer of at least one cache line, so a
/// zero-byte tensor still gets a non-NULL pointer; free it with std::free.
void *allocateAligned(int64_t bytes) noexcept;

/// The bits of an f32, and the f32 with these bits.
uint32_t floatBits(float value);
float bitsToFloat(uint32_t bits);

} // namespace tfm::rt

#endif // TFM_RUNTIME_TENSOR_H
