//===- PreTokenizers.cpp - Pre-tokenizers: splits, byte level, metaspace --===//
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

/// Splits `word` at `matches` (sorted, disjoint) as NormalizedString::split
/// does, appending the non-empty pieces to `out`.
void splitAt(const NString &word,
             const std::vector<std::pair<size_t, size_t>> &matches,
             SplitBehavior behavior, bool invert, std::vector<NString> &out) {
  struct Span {
    size_t b, e;
    bool match;
  };
  std::vector<Span> spans;
  size_t prev = 0;
  for (auto [b, e] : matches) {
    if (prev != b)
      spans.push_back({prev, b, invert});
    spans.push_back({b, e, !invert});
    prev = e;
  }
  if (prev != word.size())
    spans.push_back({prev, word.size(), invert});

  std::vector<std::pair<size_t, size_t>> keep;
  switch (behavior) {
  case SplitBehavior::Isolated:
    for (const Span &s : spans)
      keep.emplace_back(s.b, s.e);
    break;
  case SplitBehavior::Removed:
    for (const Span &s : spans)
      if (!s.match)
        keep.emplace_back(s.b, s.e);
    break;
  case SplitBehavior::Contiguous: {
    bool previous = false;
    for (const Span &s : spans) {
      if (s.match == previous && !keep.empty())
        keep.back().second = s.e;
      else
        keep.emplace_back(s.b, s.e);
      previous = s.match;
    }
    break;
  }
  case SplitBehavior::MergedWithPrevious: {
    bool previous = false;
    for (const Span &s : spans) {
      if (s.match && !previous && !keep.empty())
        keep.back().second = s.e;
      else
        keep.emplace_back(s.b, s.e);
      previous = s.match;
    }
    break;
  }
  case SplitBehavior::MergedWithNext: {
    bool previous = false;
    for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
      if (it->match && !previous && !keep.empty())
        keep.back().first = it->b;
      else
        keep.emplace_back(it->b, it->e);
      previous = it->match;
    }
    std::reverse(keep.begin(), keep.end());
    break;
  }
  }
  for (auto [b, e] : keep)
    if (b < e)
      out.push_back(slice(word, b, e));
}

/// Each char for which `pred` holds is one match.
template <typename Pred>
std::vector<std::pair<size_t, size_t>> charMatches(const NString &word,
                                                   Pred pred) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < word.size(); ++i)
    if (pred(word[i].cp))
      out.emplace_back(i, i + 1);
  return out;
}

bool isBertPunctuation(uint32_t cp) {
  return (cp < 0x80 &&
          ((cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) ||
           (cp >= 0x5B && cp <= 0x60) || (cp >= 0x7B && cp <= 0x7E))) ||
         isPunctuation(cp);
}

/// Applies `fn(word, out)` to every word.
template <typename Fn> void eachWord(std::vector<NString> &words, Fn fn) {
  std::vector<NString> out;
  out.reserve(words.size());
  for (const NString &word : words)
    fn(word, out);
  words = std::move(out);
}

struct BertPreTokenizer : PreTokenizer {
  void preTokenize(std::vector<NString> &words) const override {
    eachWord(words, [](const NString &w, std::vector<NString> &out) {
      std::vector<NString> parts;
      splitAt(w, charMatches(w, isWhitespace), SplitBehavior::Removed, false,
              parts);
      for (const NString &p : parts)
        splitAt(p, charMatches(p, isBertPunctuation), SplitBehavior::Isolated,
                false, out);
    });
  }
};

struct WhitespaceSplit : PreTokenizer {
  void preTokenize(std::vector<NString> &words) const override {
    eachWord(words, [](const NString &w, std::vector<NString> &out) {
      splitAt(w, charMatches(w, isWhitespace), SplitBehavior::Removed, false,
              out);
    });
  }
};

struct PunctuationSplit : PreTokenizer {
  SplitBehavior behavior;
  explicit PunctuationSplit(SplitBehavior b) : behavior(b) {}
  void preTokenize(std::vector<NString> &words) const override {
    eachWord(words, [&](const NString &w, std::vector<NString> &out) {
      splitAt(w, charMatches(w, isBertPunctuation), behavior, false, out);
    });
  }
};

struct DigitsSplit : PreTokenizer {
  bool individual;
  explicit DigitsSplit(bool individual) : individual(individual) {}
  void preTokenize(std::vector<NString> &words) const override {
    eachWord(words, [&](const NString &w, std::vector<NString> &out) {
      splitAt(w, charMatches(w, isNumber),
              individual ? SplitBehavior::Isolated : SplitBehavior::Contiguous,
              false, out);
    });
  }
};

bool isCrLf(uint32_t cp) { return cp == '\r' || cp == '\n'; }
bool isOtherClass(uint32_t cp) {
  return !isWhitespace(cp) && !isLetter(cp) && !isNumber(cp);
}

/// 's 't 're 've 'm 'll 'd at `i`; the end or `i`. Case-insensitive matching
/// folds as Oniguruma does for these letters (U+017F is a long s).
size_t matchContraction(const NString &s, size_t i, bool ignoreCase) {
  size_t n = s.size();
  if (s[i].cp != '\'' || i + 1 >= n)
    return i;
  auto fold = [&](uint32_t cp) -> uint32_t {
    if (!ignoreCase)
      return cp;
    if (cp >= 'A' && cp <= 'Z')
      return cp + 32;
    return cp == 0x17F ? 's' : cp;
  };
  uint32_t a = fold(s[i + 1].cp);
  if (a == 's' || a == 't' || a == 'm' || a == 'd')
    return i + 2;
  if (i + 2 < n) {
    uint32_t b = fold(s[i + 2].cp);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') ||
        (a == 'l' && b == 'l'))
      return i + 3;
  }
  return i;
}

template <typename Pred> size_t runOf(const NString &s, size_t i, Pred pred) {
  while (i < s.size() && pred(s[i].cp))
    ++i;
  return i;
}

/// `\s+(?!\S)|\s+` at `i`, a whitespace char.
size_t matchTrailingSpaces(const NString &s, size_t i) {
  size_t e = runOf(s, i, isWhitespace);
  if (e == s.size() || e - i == 1)
    return e;
  return e - 1;
}

/// GPT-2's `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|
/// \s+(?!\S)|\s+` at `i`: the end of the match.
size_t matchGpt2(const NString &s, size_t i) {
  size_t n = s.size();
  if (size_t e = matchContraction(s, i, false); e != i)
    return e;
  uint32_t c = s[i].cp;
  bool (*classes[])(uint32_t) = {isLetter, isNumber, isOtherClass};
  for (auto cls : classes) {
    size_t j = (c == ' ' && i + 1 < n && cls(s[i + 1].cp)) ? i + 1 : i;
    if (cls(s[j].cp))
      return runOf(s, j, cls);
  }
  return matchTrailingSpaces(s, i);
}

/// Llama 3's `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|
/// \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`, and
/// Qwen 2's, which takes one digit at a time.
size_t matchLlama3(const NString &s, size_t i, size_t maxDigits) {
  size_t n = s.size();
  if (size_t e = matchContraction(s, i, true); e != i)
    return e;
  uint32_t c = s[i].cp;
  if (i + 1 < n && !isCrLf(c) && !isLetter(c) && !isNumber(c) &&
      isLetter(s[i + 1].cp))
    return runOf(s, i + 1, isLetter);
  if (isLetter(c))
    return runOf(s, i, isLetter);
  if (isNumber(c)) {
    size_t e = i;
    while (e < n && e - i < maxDigits && isNumber(s[e].cp))
      ++e;
    return e;
  }
  size_t j = (c == ' ' && i + 1 < n && isOtherClass(s[i + 1].cp)) ? i + 1 : i;
  if (isOtherClass(s[j].cp))
    return runOf(s, runOf(s, j, isOtherClass), isCrLf);
  // c is whitespace here.
  size_t e = runOf(s, i, isWhitespace);
  for (size_t p = e; p > i; --p)
    if (isCrLf(s[p - 1].cp))
      return p;
  return matchTrailingSpaces(s, i);
}

std::vector<std::pair<size_t, size_t>> regexMatches(KnownRegex regex,
                                                    const NString &word) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < word.size();) {
    size_t e = regex == KnownRegex::Gpt2     ? matchGpt2(word, i)
               : regex == KnownRegex::Llama3 ? matchLlama3(word, i, 3)
                                             : matchLlama3(word, i, 1);
    if (e == i) { // Not reached: every char matches some alternative.
      ++i;
      continue;
    }
    out.emplace_back(i, e);
    i = e;
  }
  return out;
}

struct RegexSplit : PreTokenizer {
  KnownRegex regex;
  SplitBehavior behavior;
  bool invert;
  RegexSplit(KnownRegex r, SplitBehavior b, bool i)
      : regex(r), behavior(b), invert(i) {}
  void preTokenize(std::vector<NString> &words) const override {
    eachWord(words, [&](const NString &w, std::vector<NString> &out) {
      splitAt(w, regexMatches(regex, w), behavior, invert, out);
    });
  }
};

struct StringSplit : PreTokenizer {
  std::vector<uint32_t> pattern;
  SplitBehavior behavior;
  bool invert;
  void preTokenize(std::vector<NString> &words) const override {
    eachWord(words, [&](const NString &w, std::vector<NString> &out) {
      splitAt(w, findLiteral(w, pattern), behavior, invert, out);
    });
  }
};

struct ByteLevelPreTokenizer : PreTokenizer {
  bool addPrefixSpace, useRegex;
  ByteLevelPreTokenizer(bool a, bool u) : addPrefixSpace(a), useRegex(u) {}
  void preTokenize(std::vector<NString> &words) const override {
    eachWord(words, [&](const NString &w, std::vector<NString> &out) {
      NString word = w;
      if (addPrefixSpace && !word.empty() && word[0].cp != ' ')
        word.insert(word.begin(), NChar{' ', word[0].begin, word[0].end});
      if (useRegex)
        splitAt(word, regexMatches(KnownRegex::Gpt2, word),
                SplitBehavior::Isolated, false, out);
      else
        out.push_back(std::move(word));
    });
    std::string bytes;
    for (NString &word : words) {
      NString mapped;
      mapped.reserve(word.size() * 2);
      for (const NChar &c : word) {
        bytes.clear();
        appendUtf8(bytes, c.cp);
        for (unsigned char b : bytes)
          mapped.push_back({byteToChar(b), c.begin, c.end});
      }
      word = std::move(mapped);
    }
  }
};

struct MetaspacePreTokenizer : PreTokenizer {
  uint32_t replacement;
  PrependScheme scheme;
  bool split;
  void preTokenize(std::vector<NString> &words) const override {
    eachWord(words, [&](const NString &w, std::vector<NString> &out) {
      NString word = w;
      for (NChar &c : word)
        if (c.cp == ' ')
          c.cp = replacement;
      bool prepend = !word.empty() && word[0].cp != replacement &&
                     (scheme == PrependScheme::Always ||
                      (scheme == PrependScheme::First && word[0].begin == 0));
      if (prepend)
        word.insert(word.begin(),
                    NChar{replacement, word[0].begin, word[0].end});
      if (split)
        splitAt(
            word,
            charMatches(word, [&](uint32_t cp) { return cp == replacement; }),
            SplitBehavior::MergedWithNext, false, out);
      else
        out.push_back(std::move(word));
    });
  }
};

struct PreTokenizerSequence : PreTokenizer {
  std::vector<std::unique_ptr<PreTokenizer>> parts;
  void preTokenize(std::vector<NString> &words) const override {
    for (const auto &part : parts)
      part->preTokenize(words);
  }
};

} // namespace

bool knownRegex(const std::string &pattern, KnownRegex &out) {
  static const char kGpt2[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| "
                              "?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
  static const char kLlama3[] =
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|"
      " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  static const char kQwen2[] =
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
      " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  if (pattern == kGpt2)
    out = KnownRegex::Gpt2;
  else if (pattern == kLlama3)
    out = KnownRegex::Llama3;
  else if (pattern == kQwen2)
    out = KnownRegex::Qwen2;
  else
    return false;
  return true;
}

std::unique_ptr<PreTokenizer> makeBertPreTokenizer() {
  return std::make_unique<BertPreTokenizer>();
}

std::unique_ptr<PreTokenizer> makeWhitespaceSplit() {
  return std::make_unique<WhitespaceSplit>();
}

std::unique_ptr<PreTokenizer> makeByteLevelPreTokenizer(bool addPrefixSpace,
                                                        bool useRegex) {
  return std::make_unique<ByteLevelPreTokenizer>(addPrefixSpace, useRegex);
}

std::unique_ptr<PreTokenizer>
makeRegexSplit(KnownRegex regex, SplitBehavior behavior, bool invert) {
  return std::make_unique<RegexSplit>(regex, behavior, invert);
}

std::unique_ptr<PreTokenizer> makeStringSplit(const std::string &pattern,
                                              SplitBehavior behavior,
                                              bool invert) {
  auto s = std::make_unique<StringSplit>();
  s->pattern = codePoints(pattern);
  s->behavior = behavior;
  s->invert = invert;
  return s;
}

std::unique_ptr<PreTokenizer> makePunctuation(SplitBehavior behavior) {
  return std::make_unique<PunctuationSplit>(behavior);
}

std::unique_ptr<PreTokenizer> makeDigits(bool individual) {
  return std::make_unique<DigitsSplit>(individual);
}

std::unique_ptr<PreTokenizer> makeMetaspace(uint32_t replacement,
                                            PrependScheme scheme, bool split) {
  auto m = std::make_unique<MetaspacePreTokenizer>();
  m->replacement = replacement;
  m->scheme = scheme;
  m->split = split;
  return m;
}

std::unique_ptr<PreTokenizer>
makePreTokenizerSequence(std::vector<std::unique_ptr<PreTokenizer>> parts) {
  auto s = std::make_unique<PreTokenizerSequence>();
  s->parts = std::move(parts);
  return s;
}

namespace {
/// GPT-2's bytes_to_unicode(): printable Latin-1 bytes stand for
/// themselves, the others for 256, 257, ... in byte order.
struct ByteMap {
  uint32_t toChar[256];
  int16_t toByte[324];
  ByteMap() {
    std::fill(std::begin(toByte), std::end(toByte), int16_t(-1));
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
                       (b >= 0xAE && b <= 0xFF);
      toChar[b] = printable ? uint32_t(b) : next++;
      toByte[toChar[b]] = int16_t(b);
    }
  }
};
const ByteMap &byteMap() {
  static const ByteMap map;
  return map;
}
} // namespace

uint32_t byteToChar(uint8_t byte) { return byteMap().toChar[byte]; }
int charToByte(uint32_t cp) { return cp < 324 ? byteMap().toByte[cp] : -1; }

} // namespace tfm::rt::tok
