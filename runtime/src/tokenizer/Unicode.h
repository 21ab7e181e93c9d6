//===- Unicode.h - Unicode properties and normalization ---------*- C++ -*-===//
//
// What the tokenizers need of Unicode, from tables that gen_unicode_tables.py
// generates from Python's unicodedata: general categories, White_Space,
// NFD/NFC and single-character lower-casing, and a UTF-8 decoder that
// replaces ill-formed bytes with U+FFFD exactly as Python's
// bytes.decode("utf-8", errors="replace") does.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_TOKENIZER_UNICODE_H
#define TFM_RUNTIME_TOKENIZER_UNICODE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tfm::rt::tok {

/// General categories, in the order of gen_unicode_tables.py's CATEGORIES.
enum class Category : uint8_t {
  Cn,
  Lu,
  Ll,
  Lt,
  Lm,
  Lo,
  Mn,
  Mc,
  Me,
  Nd,
  Nl,
  No,
  Pc,
  Pd,
  Ps,
  Pe,
  Pi,
  Pf,
  Po,
  Sm,
  Sc,
  Sk,
  So,
  Zs,
  Zl,
  Zp,
  Cc,
  Cf,
  Cs,
  Co,
};

/// The Unicode version of the tables ("14.0.0").
const char *unicodeVersion();

Category category(uint32_t cp);
/// \p{L}.
bool isLetter(uint32_t cp);
/// \p{N}.
bool isNumber(uint32_t cp);
/// The White_Space property: Rust's char::is_whitespace, Oniguruma's and
/// Rust regex's Unicode \s.
bool isWhitespace(uint32_t cp);
/// \p{P}.
bool isPunctuation(uint32_t cp);
/// Mn.
bool isMarkNonspacing(uint32_t cp);
/// Cc, Cf, Cn, Co, Cs: what the unicode_categories crate calls is_other.
bool isOther(uint32_t cp);
/// Rust regex's Unicode \w, approximated by categories: letters, marks,
/// decimal and letter numbers, connector punctuation.
bool isWordChar(uint32_t cp);

uint8_t combiningClass(uint32_t cp);
/// Appends the full canonical decomposition of `cp` (itself when it has
/// none).
void appendDecomposition(uint32_t cp, std::vector<uint32_t> &out);
/// The primary composite of `first` and `second`, or 0.
uint32_t compose(uint32_t first, uint32_t second);
/// Appends the lower case of `cp` taken alone (one or more code points).
void appendLowercase(uint32_t cp, std::vector<uint32_t> &out);

/// Appends the UTF-8 encoding of `cp`.
void appendUtf8(std::string &out, uint32_t cp);
inline std::string toUtf8(uint32_t cp) {
  std::string out;
  appendUtf8(out, cp);
  return out;
}

/// Decodes UTF-8, replacing each maximal ill-formed subpart (Unicode's
/// recommended practice, which Python follows) by U+FFFD. Calls
/// `emit(cp, begin, end)` with each code point and its bytes in `text`.
template <typename Emit> void decodeUtf8(std::string_view text, Emit &&emit) {
  const auto *s = reinterpret_cast<const unsigned char *>(text.data());
  size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      emit(uint32_t(c), i, i + 1);
      ++i;
      continue;
    }
    size_t need;
    uint32_t cp;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      cp = c & 0x0F;
      if (c == 0xE0)
        lo = 0xA0;
      else if (c == 0xED)
        hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      cp = c & 0x07;
      if (c == 0xF0)
        lo = 0x90;
      else if (c == 0xF4)
        hi = 0x8F;
    } else {
      emit(uint32_t(0xFFFD), i, i + 1);
      ++i;
      continue;
    }
    size_t j = i + 1;
    bool ok = true;
    for (size_t k = 0; k < need; ++k, ++j) {
      // Only the second byte has a narrowed range.
      unsigned char l = k == 0 ? lo : 0x80, h = k == 0 ? hi : 0xBF;
      if (j >= n || s[j] < l || s[j] > h) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (s[j] & 0x3F);
    }
    if (!ok) {
      // The maximal subpart: the lead byte and the continuation bytes that
      // were valid so far, replaced by one U+FFFD.
      emit(uint32_t(0xFFFD), i, j);
      i = j;
      continue;
    }
    emit(cp, i, j);
    i = j;
  }
}

/// Whether `text` is well-formed UTF-8.
bool isValidUtf8(std::string_view text);
/// `text` with ill-formed subparts replaced by U+FFFD (Rust's
/// String::from_utf8_lossy, Python's errors="replace").
std::string toValidUtf8(std::string_view text);

} // namespace tfm::rt::tok

#endif // TFM_RUNTIME_TOKENIZER_UNICODE_H
