//===- Unicode.cpp - Unicode properties and normalization -------*- C++ -*-===//

#include "Unicode.h"

#include <algorithm>
#include <iterator>

namespace tfm::rt::tok {

namespace {

struct MappingEntry {
  uint32_t cp;
  uint16_t offset;
  uint8_t length;
};

struct CompositionEntry {
  uint32_t first, second, composite;
};

#include "UnicodeTables.inc"

// Hangul syllables decompose and compose arithmetically (Unicode 3.12).
constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161,
                   kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr uint32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

/// The value of the run containing `cp` in a table of (start << shift) |
/// value entries.
template <size_t N>
uint32_t runValue(const uint32_t (&runs)[N], uint32_t cp, unsigned shift) {
  uint32_t key = (cp << shift) | ((1u << shift) - 1);
  const uint32_t *it = std::upper_bound(std::begin(runs), std::end(runs), key);
  return it == std::begin(runs) ? 0 : *(it - 1) & ((1u << shift) - 1);
}

template <size_t N>
const MappingEntry *findMapping(const MappingEntry (&table)[N], uint32_t cp) {
  const MappingEntry *it = std::lower_bound(
      std::begin(table), std::end(table), cp,
      [](const MappingEntry &e, uint32_t c) { return e.cp < c; });
  return it != std::end(table) && it->cp == cp ? it : nullptr;
}

} // namespace

const char *unicodeVersion() { return TFM_UNICODE_VERSION; }

Category category(uint32_t cp) {
  if (cp > 0x10FFFF)
    return Category::Cn;
  return Category(runValue(kCategoryRuns, cp, 5));
}

bool isLetter(uint32_t cp) {
  Category c = category(cp);
  return c >= Category::Lu && c <= Category::Lo;
}

bool isNumber(uint32_t cp) {
  Category c = category(cp);
  return c >= Category::Nd && c <= Category::No;
}

bool isWhitespace(uint32_t cp) {
  switch (cp) {
  case 0x09:
  case 0x0A:
  case 0x0B:
  case 0x0C:
  case 0x0D:
  case 0x20:
  case 0x85:
  case 0xA0:
  case 0x1680:
  case 0x2028:
  case 0x2029:
  case 0x202F:
  case 0x205F:
  case 0x3000:
    return true;
  default:
    return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool isPunctuation(uint32_t cp) {
  Category c = category(cp);
  return c >= Category::Pc && c <= Category::Po;
}

bool isMarkNonspacing(uint32_t cp) { return category(cp) == Category::Mn; }

bool isOther(uint32_t cp) {
  Category c = category(cp);
  return c == Category::Cn || c >= Category::Cc;
}

bool isWordChar(uint32_t cp) {
  Category c = category(cp);
  return (c >= Category::Lu && c <= Category::Nl) || c == Category::Pc ||
         cp == 0x200C || cp == 0x200D;
}

uint8_t combiningClass(uint32_t cp) {
  if (cp > 0x10FFFF)
    return 0;
  return uint8_t(runValue(kCombiningClassRuns, cp, 8));
}

void appendDecomposition(uint32_t cp, std::vector<uint32_t> &out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    uint32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount)
      out.push_back(kTBase + s % kTCount);
    return;
  }
  if (const MappingEntry *e = findMapping(kDecompositions, cp)) {
    out.insert(out.end(), kDecompositionPool + e->offset,
               kDecompositionPool + e->offset + e->length);
    return;
  }
  out.push_back(cp);
}

uint32_t compose(uint32_t first, uint32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase &&
      second < kVBase + kVCount)
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  if (first >= kSBase && first < kSBase + kSCount &&
      (first - kSBase) % kTCount == 0 && second > kTBase &&
      second < kTBase + kTCount)
    return first + (second - kTBase);
  const CompositionEntry *it = std::lower_bound(
      std::begin(kCompositions), std::end(kCompositions), first,
      [&](const CompositionEntry &e, uint32_t) {
        return e.first < first || (e.first == first && e.second < second);
      });
  if (it != std::end(kCompositions) && it->first == first &&
      it->second == second)
    return it->composite;
  return 0;
}

void appendLowercase(uint32_t cp, std::vector<uint32_t> &out) {
  if (cp < 0x80) {
    out.push_back(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
    return;
  }
  if (const MappingEntry *e = findMapping(kLowercase, cp)) {
    out.insert(out.end(), kLowercasePool + e->offset,
               kLowercasePool + e->offset + e->length);
    return;
  }
  out.push_back(cp);
}

void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

bool isValidUtf8(std::string_view text) {
  bool valid = true;
  decodeUtf8(text, [&](uint32_t cp, size_t begin, size_t end) {
    // A real U+FFFD in the text is three bytes EF BF BD.
    if (cp == 0xFFFD && !(end - begin == 3 && text[begin] == '\xEF'))
      valid = false;
  });
  return valid;
}

std::string toValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  decodeUtf8(text, [&](uint32_t cp, size_t begin, size_t end) {
    if (cp == 0xFFFD && !(end - begin == 3 && text[begin] == '\xEF'))
      appendUtf8(out, cp);
    else
      out.append(text.data() + begin, end - begin);
  });
  return out;
}

} // namespace tfm::rt::tok
