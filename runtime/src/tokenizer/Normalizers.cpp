//===- Normalizers.cpp - Normalizers: NFD, NFC, lowercase, BERT's, strip --===//
//
// Each part does what the `tokenizers` package's part of the same name does,
// on code points that remember the input bytes they came from.
//
//===----------------------------------------------------------------------===//

#include "ComponentUtils.h"
#include "Tokenizer.h"
#include "Unicode.h"

#include <fmt/format.h>

#include <algorithm>

namespace tfm::rt::tok {

namespace {

/// Canonical decomposition and reordering (NFD), each new code point keeping
/// the bytes of the one it came from.
void nfd(NString &s) {
  NString out;
  out.reserve(s.size());
  std::vector<uint32_t> parts;
  for (const NChar &c : s) {
    if (c.cp < 0xC0) {
      out.push_back(c);
      continue;
    }
    parts.clear();
    appendDecomposition(c.cp, parts);
    for (uint32_t p : parts)
      out.push_back({p, c.begin, c.end});
  }
  // Canonical ordering: a stable sort of each run of non-starters by class.
  for (size_t i = 0; i < out.size();) {
    if (combiningClass(out[i].cp) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < out.size() && combiningClass(out[j].cp) != 0)
      ++j;
    // Insertion sort: stable, and runs of marks are short. Only the code
    // points move: each position keeps its bytes, as the package's aligned
    // normalization does.
    for (size_t k = i + 1; k < j; ++k) {
      uint32_t cp = out[k].cp;
      uint8_t cls = combiningClass(cp);
      size_t m = k;
      for (; m > i && combiningClass(out[m - 1].cp) > cls; --m)
        out[m].cp = out[m - 1].cp;
      out[m].cp = cp;
    }
    i = j;
  }
  s = std::move(out);
}

/// NFD, then canonical composition.
void nfc(NString &s) {
  nfd(s);
  NString out;
  out.reserve(s.size());
  long starter = -1;
  int lastClass = 0;
  for (const NChar &c : s) {
    int cls = combiningClass(c.cp);
    if (starter >= 0) {
      bool adjacent = size_t(starter) + 1 == out.size();
      bool blocked = !adjacent && (lastClass == 0 || lastClass >= cls);
      if (!blocked) {
        if (uint32_t composite = compose(out[starter].cp, c.cp)) {
          // The composite keeps the starter's bytes, as the package's
          // aligned NFC does (offsets of the mark are dropped).
          out[starter].cp = composite;
          continue;
        }
      }
    }
    if (cls == 0) {
      starter = long(out.size());
      lastClass = 0;
    } else {
      lastClass = cls;
    }
    out.push_back(c);
  }
  s = std::move(out);
}

void lowercase(NString &s) {
  NString out;
  out.reserve(s.size());
  std::vector<uint32_t> parts;
  for (const NChar &c : s) {
    parts.clear();
    appendLowercase(c.cp, parts);
    for (uint32_t p : parts)
      out.push_back({p, c.begin, c.end});
  }
  s = std::move(out);
}

bool isChinese(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

struct BertNormalizer : Normalizer {
  bool clean, chinese, strip, lower;
  BertNormalizer(bool clean, bool chinese, bool strip, bool lower)
      : clean(clean), chinese(chinese), strip(strip), lower(lower) {}
  void normalize(NString &s) const override {
    if (clean) {
      NString out;
      out.reserve(s.size());
      for (NChar c : s) {
        bool tabOrNewline = c.cp == '\t' || c.cp == '\n' || c.cp == '\r';
        if (c.cp == 0 || c.cp == 0xFFFD || (!tabOrNewline && isOther(c.cp)))
          continue;
        if (tabOrNewline || isWhitespace(c.cp))
          c.cp = ' ';
        out.push_back(c);
      }
      s = std::move(out);
    }
    if (chinese) {
      NString out;
      out.reserve(s.size());
      for (const NChar &c : s) {
        if (isChinese(c.cp)) {
          out.push_back({' ', c.begin, c.end});
          out.push_back(c);
          out.push_back({' ', c.begin, c.end});
        } else {
          out.push_back(c);
        }
      }
      s = std::move(out);
    }
    if (strip) {
      nfd(s);
      s.erase(
          std::remove_if(s.begin(), s.end(),
                         [](const NChar &c) { return isMarkNonspacing(c.cp); }),
          s.end());
    }
    if (lower)
      lowercase(s);
  }
};

struct FnNormalizer : Normalizer {
  void (*fn)(NString &);
  explicit FnNormalizer(void (*fn)(NString &)) : fn(fn) {}
  void normalize(NString &s) const override { fn(s); }
};

struct StripNormalizer : Normalizer {
  bool left, right;
  StripNormalizer(bool left, bool right) : left(left), right(right) {}
  void normalize(NString &s) const override {
    size_t b = 0, e = s.size();
    if (left)
      while (b < e && isWhitespace(s[b].cp))
        ++b;
    if (right)
      while (e > b && isWhitespace(s[e - 1].cp))
        --e;
    s = slice(s, b, e);
  }
};

struct ReplaceNormalizer : Normalizer {
  std::vector<uint32_t> pattern, content;
  void normalize(NString &s) const override {
    auto matches = findLiteral(s, pattern);
    if (matches.empty())
      return;
    NString out;
    size_t at = 0;
    for (auto [b, e] : matches) {
      out.insert(out.end(), s.begin() + at, s.begin() + b);
      // The new text stands for the bytes of what it replaces.
      for (uint32_t cp : content)
        out.push_back({cp, s[b].begin, s[e - 1].end});
      at = e;
    }
    out.insert(out.end(), s.begin() + at, s.end());
    s = std::move(out);
  }
};

struct PrependNormalizer : Normalizer {
  std::vector<uint32_t> prepend;
  void normalize(NString &s) const override {
    if (s.empty())
      return;
    NString out;
    for (uint32_t cp : prepend)
      out.push_back({cp, s[0].begin, s[0].end});
    out.insert(out.end(), s.begin(), s.end());
    s = std::move(out);
  }
};

struct NormalizerSequence : Normalizer {
  std::vector<std::unique_ptr<Normalizer>> parts;
  void normalize(NString &s) const override {
    for (const auto &part : parts)
      part->normalize(s);
  }
};

} // namespace

std::unique_ptr<Normalizer> makeBertNormalizer(bool cleanText, bool chinese,
                                               bool stripAccents,
                                               bool lowercase) {
  return std::make_unique<BertNormalizer>(cleanText, chinese, stripAccents,
                                          lowercase);
}

std::unique_ptr<Normalizer> makeNfd() {
  return std::make_unique<FnNormalizer>(nfd);
}

std::unique_ptr<Normalizer> makeNfc() {
  return std::make_unique<FnNormalizer>(nfc);
}

std::unique_ptr<Normalizer> makeLowercase() {
  return std::make_unique<FnNormalizer>(lowercase);
}

std::unique_ptr<Normalizer> makeStripAccents() {
  // Combining marks of every kind (Mn, Mc, Me), as the package's
  // is_combining_mark.
  return std::make_unique<FnNormalizer>([](NString &s) {
    s.erase(std::remove_if(s.begin(), s.end(),
                           [](const NChar &c) {
                             Category k = category(c.cp);
                             return k >= Category::Mn && k <= Category::Me;
                           }),
            s.end());
  });
}

std::unique_ptr<Normalizer> makeStrip(bool left, bool right) {
  return std::make_unique<StripNormalizer>(left, right);
}

std::unique_ptr<Normalizer> makeReplace(const std::string &pattern,
                                        const std::string &content) {
  auto r = std::make_unique<ReplaceNormalizer>();
  r->pattern = codePoints(pattern);
  r->content = codePoints(content);
  return r;
}

std::unique_ptr<Normalizer> makePrepend(const std::string &prepend) {
  auto p = std::make_unique<PrependNormalizer>();
  p->prepend = codePoints(prepend);
  return p;
}

std::unique_ptr<Normalizer>
makeNormalizerSequence(std::vector<std::unique_ptr<Normalizer>> parts) {
  auto s = std::make_unique<NormalizerSequence>();
  s->parts = std::move(parts);
  return s;
}

} // namespace tfm::rt::tok
