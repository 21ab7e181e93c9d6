//===- Components.cpp - Normalizers, pre-tokenizers, models ... -*- C++ -*-===//
//
// Each part does what the `tokenizers` package's part of the same name does
// (tokenizers/src/{normalizers,pre_tokenizers,models,processors,decoders}),
// on code points that remember the input bytes they came from.
//
//===----------------------------------------------------------------------===//

#include "Tokenizer.h"
#include "Unicode.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>

namespace tfm::rt::tok {

std::string toUtf8(const NString &s) { return toUtf8(s, 0, s.size()); }

std::string toUtf8(const NString &s, size_t begin, size_t end) {
  std::string out;
  out.reserve(end - begin);
  for (size_t i = begin; i < end; ++i)
    appendUtf8(out, s[i].cp);
  return out;
}

namespace {

NString slice(const NString &s, size_t begin, size_t end) {
  return NString(s.begin() + begin, s.begin() + end);
}

/// Code points of a UTF-8 string (well-formed: it comes from JSON or GGUF
/// and was checked).
std::vector<uint32_t> codePoints(std::string_view text) {
  std::vector<uint32_t> out;
  decodeUtf8(text, [&](uint32_t cp, size_t, size_t) { out.push_back(cp); });
  return out;
}

//===----------------------------------------------------------------------===//
// Normalizers
//===----------------------------------------------------------------------===//

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

/// Every non-overlapping occurrence of `pattern`, leftmost first.
std::vector<std::pair<size_t, size_t>>
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

//===----------------------------------------------------------------------===//
// Pre-tokenizers
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

uint64_t pairKey(int32_t a, int32_t b) {
  return (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
}

struct Bpe : Model {
  std::unordered_map<std::string, int32_t> ids;
  /// (left, right) -> (rank, merged id).
  std::unordered_map<uint64_t, std::pair<uint32_t, int32_t>> merges;
  int32_t unk = -1;
  std::string prefix, suffix;
  bool fuseUnk = false, byteFallback = false, ignoreMerges = false;
  int32_t byteIds[256];

  struct Symbol {
    int32_t id;
    int32_t prev, next;
    uint32_t first, last; // chars of the word
    bool alive;
  };

  void tokenize(const NString &word,
                std::vector<ModelToken> &out) const override {
    if (word.empty())
      return;
    std::string whole = toUtf8(word);
    if (ignoreMerges) {
      auto it = ids.find(whole);
      if (it != ids.end()) {
        out.push_back({it->second, 0, uint32_t(word.size())});
        return;
      }
    }
    std::vector<Symbol> symbols;
    symbols.reserve(word.size());
    auto add = [&](int32_t id, uint32_t first, uint32_t last) {
      int32_t index = int32_t(symbols.size());
      symbols.push_back({id, index - 1, index + 1, first, last, true});
    };
    // A pending unknown: id and its chars.
    bool pending = false;
    uint32_t unkFirst = 0, unkLast = 0;
    std::string piece;
    for (uint32_t i = 0; i < word.size(); ++i) {
      piece.clear();
      if (i > 0)
        piece += prefix;
      appendUtf8(piece, word[i].cp);
      if (i + 1 == word.size())
        piece += suffix;
      auto it = ids.find(piece);
      if (it != ids.end()) {
        if (pending) {
          add(unk, unkFirst, unkLast);
          pending = false;
        }
        add(it->second, i, i + 1);
        continue;
      }
      if (byteFallback) {
        bool all = true;
        for (unsigned char b : piece)
          all = all && byteIds[b] >= 0;
        if (all) {
          for (unsigned char b : piece)
            add(byteIds[b], i, i + 1);
          continue;
        }
      }
      if (unk < 0)
        continue; // No unknown token: the char is dropped.
      if (pending && fuseUnk) {
        unkLast = i + 1;
      } else {
        if (pending)
          add(unk, unkFirst, unkLast);
        pending = true;
        unkFirst = i;
        unkLast = i + 1;
      }
    }
    if (pending)
      add(unk, unkFirst, unkLast);
    if (symbols.empty())
      return;
    symbols.back().next = -1;
    merge(symbols);
    for (const Symbol &s : symbols)
      if (s.alive)
        out.push_back({s.id, s.first, s.last});
  }

  void merge(std::vector<Symbol> &symbols) const {
    struct Candidate {
      uint32_t rank;
      int32_t pos;
      int32_t id;
      bool operator<(const Candidate &o) const {
        // std::priority_queue pops the largest: the lowest rank, then the
        // leftmost position, must compare largest.
        return rank != o.rank ? rank > o.rank : pos > o.pos;
      }
    };
    std::priority_queue<Candidate> queue;
    auto consider = [&](int32_t pos) {
      int32_t next = symbols[pos].next;
      if (next < 0)
        return;
      auto it = merges.find(pairKey(symbols[pos].id, symbols[next].id));
      if (it != merges.end())
        queue.push({it->second.first, pos, it->second.second});
    };
    for (int32_t i = 0; i + 1 < int32_t(symbols.size()); ++i)
      consider(i);
    while (!queue.empty()) {
      Candidate top = queue.top();
      queue.pop();
      Symbol &left = symbols[top.pos];
      if (!left.alive || left.next < 0)
        continue;
      Symbol &right = symbols[left.next];
      auto it = merges.find(pairKey(left.id, right.id));
      if (it == merges.end() || it->second.second != top.id)
        continue; // Stale.
      left.id = top.id;
      left.last = right.last;
      left.next = right.next;
      right.alive = false;
      if (left.next >= 0)
        symbols[left.next].prev = top.pos;
      if (left.prev >= 0)
        consider(left.prev);
      consider(top.pos);
    }
  }
};

struct WordPiece : Model {
  std::unordered_map<std::string, int32_t> ids;
  int32_t unk = -1;
  std::string unkToken, prefix;
  size_t maxChars = 100;

  void tokenize(const NString &word,
                std::vector<ModelToken> &out) const override {
    if (word.empty())
      return;
    auto unknown = [&] {
      if (unk < 0)
        throw TokenizerError(fmt::format(
            "WordPiece: the unknown token '{}' is not in the vocabulary",
            unkToken));
      out.push_back({unk, 0, uint32_t(word.size())});
    };
    if (word.size() > maxChars)
      return unknown();
    size_t mark = out.size();
    std::string piece;
    for (size_t start = 0; start < word.size();) {
      size_t end = word.size();
      int32_t found = -1;
      for (; end > start; --end) {
        piece = start > 0 ? prefix : std::string();
        piece += toUtf8(word, start, end);
        auto it = ids.find(piece);
        if (it != ids.end()) {
          found = it->second;
          break;
        }
      }
      if (found < 0) {
        out.resize(mark);
        return unknown();
      }
      out.push_back({found, uint32_t(start), uint32_t(end)});
      start = end;
    }
  }
};

struct WordLevel : Model {
  std::unordered_map<std::string, int32_t> ids;
  int32_t unk = -1;
  std::string unkToken;
  void tokenize(const NString &word,
                std::vector<ModelToken> &out) const override {
    if (word.empty())
      return;
    auto it = ids.find(toUtf8(word));
    if (it != ids.end())
      out.push_back({it->second, 0, uint32_t(word.size())});
    else if (unk >= 0)
      out.push_back({unk, 0, uint32_t(word.size())});
    else
      throw TokenizerError(fmt::format(
          "WordLevel: the unknown token '{}' is not in the vocabulary",
          unkToken));
  }
};

std::vector<std::string>
vocabById(const std::unordered_map<std::string, int32_t> &ids) {
  int32_t size = 0;
  for (const auto &[token, id] : ids)
    size = std::max(size, id + 1);
  std::vector<std::string> out;
  out.resize(size_t(size));
  for (const auto &[token, id] : ids)
    out[size_t(id)] = token;
  return out;
}

//===----------------------------------------------------------------------===//
// Post-processors
//===----------------------------------------------------------------------===//

struct Template : PostProcessor {
  std::vector<TemplatePiece> single, pair;
  std::unordered_map<std::string, std::vector<int64_t>> specials;

  size_t addedTokens(bool isPair) const override {
    size_t n = 0;
    for (const TemplatePiece &p : isPair ? pair : single)
      if (!p.isSequence)
        n += specials.at(p.special).size();
    return n;
  }
  void process(const Tokenizer &, std::vector<Encoding> &encodings,
               bool addSpecial) const override {
    const auto &pieces = encodings.size() == 2 ? pair : single;
    std::vector<Encoding> out;
    for (const TemplatePiece &p : pieces) {
      if (p.isSequence) {
        Encoding e = encodings[size_t(p.sequence)];
        std::fill(e.typeIds.begin(), e.typeIds.end(), p.typeId);
        out.push_back(std::move(e));
      } else if (addSpecial) {
        Encoding e;
        for (int64_t id : specials.at(p.special))
          e.push(id, p.typeId, true, 0, 0, -1);
        out.push_back(std::move(e));
      }
    }
    encodings = std::move(out);
  }
};

struct BertProcessing : PostProcessor {
  int64_t cls, sep;
  size_t addedTokens(bool isPair) const override { return isPair ? 3 : 2; }
  void process(const Tokenizer &, std::vector<Encoding> &encodings,
               bool addSpecial) const override {
    if (!addSpecial)
      return;
    std::vector<Encoding> out;
    Encoding head;
    head.push(cls, 0, true, 0, 0, -1);
    out.push_back(head);
    for (size_t i = 0; i < encodings.size(); ++i) {
      Encoding e = encodings[i];
      std::fill(e.typeIds.begin(), e.typeIds.end(), int64_t(i));
      out.push_back(std::move(e));
      Encoding tail;
      tail.push(sep, int64_t(i), true, 0, 0, -1);
      out.push_back(tail);
    }
    encodings = std::move(out);
  }
};

/// ByteLevel's process_offsets: offsets leave out leading and trailing
/// spaces (the byte-level space 'Ġ' or whitespace) of each token.
void trimOffsets(const Tokenizer &tokenizer, Encoding &e, bool addPrefixSpace) {
  for (size_t i = 0; i < e.size(); ++i) {
    const std::string *text = tokenizer.token(e.ids[i]);
    if (!text)
      continue;
    std::vector<uint32_t> cps = codePoints(*text);
    auto space = [](uint32_t cp) { return cp == 0x120 || isWhitespace(cp); };
    size_t leading = 0, trailing = 0;
    while (leading < cps.size() && space(cps[leading]))
      ++leading;
    while (trailing < cps.size() && space(cps[cps.size() - 1 - trailing]))
      ++trailing;
    if (leading > 0) {
      bool first = i == 0 || e.begins[i] == 0;
      if (first && addPrefixSpace && leading == 1)
        leading = 0;
      e.begins[i] = std::min(e.begins[i] + int64_t(leading), e.ends[i]);
    }
    if (trailing > 0 && e.ends[i] >= int64_t(trailing))
      e.ends[i] = std::max(e.ends[i] - int64_t(trailing), e.begins[i]);
  }
}

struct ByteLevelProcessing : PostProcessor {
  bool trim, addPrefixSpace;
  size_t addedTokens(bool) const override { return 0; }
  void process(const Tokenizer &tokenizer, std::vector<Encoding> &encodings,
               bool) const override {
    if (trim)
      for (Encoding &e : encodings)
        trimOffsets(tokenizer, e, addPrefixSpace);
  }
};

struct ProcessorSequence : PostProcessor {
  std::vector<std::unique_ptr<PostProcessor>> parts;
  size_t addedTokens(bool isPair) const override {
    size_t n = 0;
    for (const auto &p : parts)
      n += p->addedTokens(isPair);
    return n;
  }
  void process(const Tokenizer &tokenizer, std::vector<Encoding> &encodings,
               bool addSpecial) const override {
    for (const auto &p : parts)
      p->process(tokenizer, encodings, addSpecial);
  }
};

//===----------------------------------------------------------------------===//
// Decoders
//===----------------------------------------------------------------------===//

struct ByteLevelDecoder : Decoder {
  void decodeChain(std::vector<std::string> &tokens) const override {
    std::string bytes;
    for (const std::string &t : tokens) {
      std::vector<uint32_t> cps = codePoints(t);
      bool all = std::all_of(cps.begin(), cps.end(),
                             [](uint32_t cp) { return charToByte(cp) >= 0; });
      if (!all) {
        bytes += t;
        continue;
      }
      for (uint32_t cp : cps)
        bytes += char(charToByte(cp));
    }
    tokens.assign(1, toValidUtf8(bytes));
  }
};

std::string replaceAll(std::string s, std::string_view from,
                       std::string_view to) {
  if (from.empty())
    return s;
  std::string out;
  size_t at = 0;
  for (size_t p; (p = s.find(from, at)) != std::string::npos;
       at = p + from.size())
    out.append(s, at, p - at).append(to);
  return out.append(s, at, std::string::npos);
}

struct WordPieceDecoder : Decoder {
  std::string prefix;
  bool cleanup;
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string &t = tokens[i];
      if (i != 0) {
        if (t.compare(0, prefix.size(), prefix) == 0)
          t.erase(0, prefix.size());
        else
          t.insert(0, " ");
      }
      if (cleanup) {
        static const char *const kPairs[][2] = {
            {" .", "."},     {" ?", "?"},           {" !", "!"},
            {" ,", ","},     {" ' ", "'"},          {" n't", "n't"},
            {" 'm", "'m"},   {" do not", " don't"}, {" 's", "'s"},
            {" 've", "'ve"}, {" 're", "'re"}};
        for (const auto &p : kPairs)
          t = replaceAll(std::move(t), p[0], p[1]);
      }
    }
  }
};

struct MetaspaceDecoder : Decoder {
  uint32_t replacement;
  PrependScheme scheme;
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      for (uint32_t cp : codePoints(tokens[i])) {
        if (cp != replacement)
          appendUtf8(out, cp);
        else if (!(i == 0 && scheme != PrependScheme::Never))
          out += ' ';
      }
      tokens[i] = std::move(out);
    }
  }
};

struct ReplaceDecoder : Decoder {
  std::string pattern, content;
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (std::string &t : tokens)
      t = replaceAll(std::move(t), pattern, content);
  }
};

struct ByteFallbackDecoder : Decoder {
  static int byteOf(const std::string &t) {
    auto hex = [](char c) {
      return c >= '0' && c <= '9'   ? c - '0'
             : c >= 'A' && c <= 'F' ? c - 'A' + 10
             : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                    : -1;
    };
    if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>')
      return -1;
    int hi = hex(t[3]), lo = hex(t[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
  }
  void decodeChain(std::vector<std::string> &tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    auto flush = [&] {
      if (bytes.empty())
        return;
      if (isValidUtf8(bytes))
        out.push_back(bytes);
      else
        for (size_t i = 0; i < bytes.size(); ++i)
          out.push_back("\xEF\xBF\xBD");
      bytes.clear();
    };
    for (std::string &t : tokens) {
      int b = byteOf(t);
      if (b >= 0) {
        bytes += char(b);
        continue;
      }
      flush();
      out.push_back(std::move(t));
    }
    flush();
    tokens = std::move(out);
  }
};

struct FuseDecoder : Decoder {
  void decodeChain(std::vector<std::string> &tokens) const override {
    std::string all;
    for (const std::string &t : tokens)
      all += t;
    tokens.assign(1, std::move(all));
  }
};

struct StripDecoder : Decoder {
  uint32_t content;
  size_t start, stop;
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (std::string &t : tokens) {
      std::vector<uint32_t> cps = codePoints(t);
      size_t b = 0, e = cps.size();
      for (size_t i = 0; i < start && i < cps.size() && cps[i] == content; ++i)
        b = i + 1;
      for (size_t i = 0; i < stop && i < cps.size(); ++i) {
        size_t index = cps.size() - i - 1;
        if (cps[index] != content)
          break;
        e = index;
      }
      std::string out;
      for (size_t i = b; i < e; ++i)
        appendUtf8(out, cps[i]);
      t = std::move(out);
    }
  }
};

struct BpeDecoder : Decoder {
  std::string suffix;
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i)
      tokens[i] = replaceAll(std::move(tokens[i]), suffix,
                             i + 1 == tokens.size() ? "" : " ");
  }
};

struct DecoderSequence : Decoder {
  std::vector<std::unique_ptr<Decoder>> parts;
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (const auto &p : parts)
      p->decodeChain(tokens);
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Factories
//===----------------------------------------------------------------------===//

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

std::unique_ptr<Model> makeBpe(BpeConfig config) {
  auto bpe = std::make_unique<Bpe>();
  auto lookup = [&](const std::string &token) {
    auto it = config.vocab.find(token);
    if (it == config.vocab.end())
      throw TokenizerError(
          fmt::format("BPE: the merge's token '{}' is not in the vocabulary",
                      printableToken(token)));
    return it->second;
  };
  bpe->merges.reserve(config.merges.size());
  for (size_t i = 0; i < config.merges.size(); ++i) {
    const auto &[a, b] = config.merges[i];
    int32_t left = lookup(a), right = lookup(b);
    if (b.compare(0, config.prefix.size(), config.prefix) != 0)
      throw TokenizerError(fmt::format(
          "BPE: the merge's token '{}' lacks the continuing prefix '{}'",
          printableToken(b), config.prefix));
    int32_t merged = lookup(a + b.substr(config.prefix.size()));
    uint32_t rank = config.ranks.empty() ? uint32_t(i) : config.ranks[i];
    // A repeated pair keeps its last rank, as the package's map does.
    bpe->merges[pairKey(left, right)] = {rank, merged};
  }
  if (config.hasUnk) {
    auto it = config.vocab.find(config.unk);
    if (it == config.vocab.end())
      throw TokenizerError(
          fmt::format("BPE: the unknown token '{}' is not in the vocabulary",
                      printableToken(config.unk)));
    bpe->unk = it->second;
  }
  for (int b = 0; b < 256; ++b) {
    auto it = config.vocab.find(fmt::format("<0x{:02X}>", b));
    bpe->byteIds[b] = it == config.vocab.end() ? -1 : it->second;
  }
  bpe->prefix = std::move(config.prefix);
  bpe->suffix = std::move(config.suffix);
  bpe->fuseUnk = config.fuseUnk;
  bpe->byteFallback = config.byteFallback;
  bpe->ignoreMerges = config.ignoreMerges;
  bpe->vocab = vocabById(config.vocab);
  bpe->ids = std::move(config.vocab);
  return bpe;
}

std::unique_ptr<Model>
makeWordPiece(std::unordered_map<std::string, int32_t> vocab,
              const std::string &unk, const std::string &prefix,
              size_t maxChars) {
  auto wp = std::make_unique<WordPiece>();
  auto it = vocab.find(unk);
  wp->unk = it == vocab.end() ? -1 : it->second;
  wp->unkToken = unk;
  wp->prefix = prefix;
  wp->maxChars = maxChars;
  wp->vocab = vocabById(vocab);
  wp->ids = std::move(vocab);
  return wp;
}

std::unique_ptr<Model>
makeWordLevel(std::unordered_map<std::string, int32_t> vocab,
              const std::string &unk) {
  auto wl = std::make_unique<WordLevel>();
  auto it = vocab.find(unk);
  wl->unk = it == vocab.end() ? -1 : it->second;
  wl->unkToken = unk;
  wl->vocab = vocabById(vocab);
  wl->ids = std::move(vocab);
  return wl;
}

std::unique_ptr<PostProcessor> makeTemplate(
    std::vector<TemplatePiece> single, std::vector<TemplatePiece> pair,
    std::unordered_map<std::string, std::vector<int64_t>> specialTokens) {
  auto t = std::make_unique<Template>();
  t->single = std::move(single);
  t->pair = std::move(pair);
  t->specials = std::move(specialTokens);
  return t;
}
std::unique_ptr<PostProcessor> makeBertProcessing(int64_t cls, int64_t sep) {
  auto b = std::make_unique<BertProcessing>();
  b->cls = cls;
  b->sep = sep;
  return b;
}
std::unique_ptr<PostProcessor> makeByteLevelProcessing(bool trimOffsets,
                                                       bool addPrefixSpace) {
  auto b = std::make_unique<ByteLevelProcessing>();
  b->trim = trimOffsets;
  b->addPrefixSpace = addPrefixSpace;
  return b;
}
std::unique_ptr<PostProcessor>
makeProcessorSequence(std::vector<std::unique_ptr<PostProcessor>> parts) {
  auto s = std::make_unique<ProcessorSequence>();
  s->parts = std::move(parts);
  return s;
}

std::unique_ptr<Decoder> makeByteLevelDecoder() {
  return std::make_unique<ByteLevelDecoder>();
}
std::unique_ptr<Decoder> makeWordPieceDecoder(const std::string &prefix,
                                              bool cleanup) {
  auto d = std::make_unique<WordPieceDecoder>();
  d->prefix = prefix;
  d->cleanup = cleanup;
  return d;
}
std::unique_ptr<Decoder> makeMetaspaceDecoder(uint32_t replacement,
                                              PrependScheme scheme) {
  auto d = std::make_unique<MetaspaceDecoder>();
  d->replacement = replacement;
  d->scheme = scheme;
  return d;
}
std::unique_ptr<Decoder> makeReplaceDecoder(const std::string &pattern,
                                            const std::string &content) {
  auto d = std::make_unique<ReplaceDecoder>();
  d->pattern = pattern;
  d->content = content;
  return d;
}
std::unique_ptr<Decoder> makeByteFallbackDecoder() {
  return std::make_unique<ByteFallbackDecoder>();
}
std::unique_ptr<Decoder> makeFuseDecoder() {
  return std::make_unique<FuseDecoder>();
}
std::unique_ptr<Decoder> makeStripDecoder(uint32_t content, size_t start,
                                          size_t stop) {
  auto d = std::make_unique<StripDecoder>();
  d->content = content;
  d->start = start;
  d->stop = stop;
  return d;
}
std::unique_ptr<Decoder> makeBpeDecoder(const std::string &suffix) {
  auto d = std::make_unique<BpeDecoder>();
  d->suffix = suffix;
  return d;
}
std::unique_ptr<Decoder>
makeDecoderSequence(std::vector<std::unique_ptr<Decoder>> parts) {
  auto s = std::make_unique<DecoderSequence>();
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
