//===- ComponentUtils.h - What the tokenizer's parts share -------*- C++
//-*-===//
//
// Helpers of the normalizers, pre-tokenizers, models and decoders
// (Normalizers.cpp ... Decoders.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_TOKENIZER_COMPONENTUTILS_H
#define TFM_RUNTIME_TOKENIZER_COMPONENTUTILS_H

#include "Tokenizer.h"
#include "Unicode.h"

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace tfm::rt::tok {

inline NString slice(const NString &s, size_t begin, size_t end) {
  return NString(s.begin() + begin, s.begin() + end);
}

/// Code points of a UTF-8 string (well-formed: it comes from JSON or GGUF
/// and was checked).
inline std::vector<uint32_t> codePoints(std::string_view text) {
  std::vector<uint32_t> out;
  decodeUtf8(text, [&](uint32_t cp, size_t, size_t) { out.push_back(cp); });
  return out;
}

/// Every non-overlapping occurrence of `pattern`, leftmost first.
inline std::vector<std::pair<size_t, size_t>>
findLiteral(const NString &s, const std::vector<uint32_t> &pattern) {
  std::vector<std::pair<size_t, size_t>> out;
  if (pattern.empty())
    return out;
  for (size_t i = 0; i + pattern.size() <= s.size();) {
    size_t k = 0;
    while (k < pattern.size() && s[i + k].cp == pattern[k])
      ++k;
    if (k == pattern.size()) {
      out.emplace_back(i, i + k);
      i += k;
    } else {
      ++i;
    }
  }
  return out;
}

} // namespace tfm::rt::tok

#endif // TFM_RUNTIME_TOKENIZER_COMPONENTUTILS_H
