//===- Tokenizer.cpp - The tokenizer pipeline -------------------*- C++ -*-===//
//
// The steps of TokenizerImpl::encode_single_sequence, post_process and decode
// in the `tokenizers` package (tokenizers/src/tokenizer/mod.rs and
// added_vocabulary.rs), in the same order.
//
//===----------------------------------------------------------------------===//

#include "Tokenizer.h"
#include "../Json.h"
#include "Unicode.h"

#include <fmt/format.h>

#include <algorithm>

namespace tfm::rt::tok {

std::string toUtf8(const NString &s) { return toUtf8(s, 0, s.size()); }

std::string toUtf8(const NString &s, size_t begin, size_t end) {
  std::string out;
  out.reserve(end - begin);
  for (size_t i = begin; i < end; ++i)
    appendUtf8(out, s[i].cp);
  return out;
}

std::string printableToken(std::string_view token) {
  return rt::printable(token, 48);
}

void Encoding::append(const Encoding &o) {
  auto add = [](auto &a, const auto &b) {
    a.insert(a.end(), b.begin(), b.end());
  };
  add(ids, o.ids);
  add(typeIds, o.typeIds);
  add(specialMask, o.specialMask);
  add(attention, o.attention);
  add(begins, o.begins);
  add(ends, o.ends);
  add(sequenceIds, o.sequenceIds);
}

void Encoding::truncate(size_t length, bool left) {
  if (length >= size())
    return;
  auto cut = [&](auto &v) {
    if (left)
      v.erase(v.begin(), v.end() - long(length));
    else
      v.resize(length);
  };
  cut(ids);
  cut(typeIds);
  cut(specialMask);
  cut(attention);
  cut(begins);
  cut(ends);
  cut(sequenceIds);
}

void Tokenizer::finish() {
  size_t size = model ? model->vocab.size() : 0;
  for (const AddedToken &t : added)
    size = std::max(size, size_t(t.id) + 1);
  idToToken.assign(size, std::string());
  present.assign(size, false);
  special.assign(size, false);
  if (model)
    for (size_t i = 0; i < model->vocab.size(); ++i)
      if (!model->vocab[i].empty()) {
        idToToken[i] = model->vocab[i];
        present[i] = true;
      }
  for (const AddedToken &t : added) {
    idToToken[size_t(t.id)] = t.content;
    present[size_t(t.id)] = true;
    special[size_t(t.id)] = t.special;
  }
  tokenToId.clear();
  tokenToId.reserve(size);
  for (size_t i = 0; i < size; ++i)
    if (present[i])
      tokenToId.emplace(idToToken[i], int64_t(i));
  for (const AddedToken &t : added)
    tokenToId[t.content] = t.id;

  rawByFirst.clear();
  normByFirst.clear();
  decodeForm.clear();
  for (size_t i = 0; i < added.size(); ++i) {
    AddedToken &t = added[i];
    NString s;
    decodeUtf8(t.content, [&](uint32_t cp, size_t b, size_t e) {
      s.push_back({cp, uint32_t(b), uint32_t(e)});
    });
    if (t.normalized && normalizer)
      normalizer->normalize(s);
    t.pattern.clear();
    for (const NChar &c : s)
      t.pattern.push_back(c.cp);
    if (t.normalized && normalizer && toUtf8(s) != t.content)
      decodeForm[t.id] = toUtf8(s);
    if (t.pattern.empty())
      continue; // Matches nothing, as an empty pattern in the package.
    (t.normalized ? normByFirst : rawByFirst)[t.pattern[0]].push_back(i);
  }
  for (auto *map : {&rawByFirst, &normByFirst})
    for (auto &[cp, list] : *map)
      std::sort(list.begin(), list.end(), [&](size_t a, size_t b) {
        size_t la = added[a].pattern.size(), lb = added[b].pattern.size();
        return la != lb ? la > lb : a < b;
      });
}

const std::string *Tokenizer::token(int64_t id) const {
  if (id < 0 || size_t(id) >= idToToken.size() || !present[size_t(id)])
    return nullptr;
  return &idToToken[size_t(id)];
}

int64_t Tokenizer::id(std::string_view token) const {
  auto it = tokenToId.find(std::string(token));
  return it == tokenToId.end() ? -1 : it->second;
}

bool Tokenizer::isSpecial(int64_t id) const {
  return id >= 0 && size_t(id) < special.size() && special[size_t(id)];
}

void Tokenizer::splitAdded(
    const NString &s, bool normalizedSet,
    std::vector<std::pair<NString, int32_t>> &out) const {
  const auto &byFirst = normalizedSet ? normByFirst : rawByFirst;
  if (byFirst.empty()) {
    out.emplace_back(s, -1);
    return;
  }
  size_t n = s.size(), startOffset = 0;
  for (size_t p = 0; p < n;) {
    auto candidates = byFirst.find(s[p].cp);
    const AddedToken *match = nullptr;
    if (candidates != byFirst.end()) {
      for (size_t index : candidates->second) {
        const std::vector<uint32_t> &pattern = added[index].pattern;
        if (p + pattern.size() > n)
          continue;
        size_t k = 0;
        while (k < pattern.size() && s[p + k].cp == pattern[k])
          ++k;
        if (k == pattern.size()) {
          match = &added[index];
          break;
        }
      }
    }
    if (!match) {
      ++p;
      continue;
    }
    size_t b = p, e = p + match->pattern.size();
    p = e;
    if (match->singleWord) {
      bool startSpace = b == 0 || !isWordChar(s[b - 1].cp);
      bool stopSpace = e == n || !isWordChar(s[e].cp);
      if (!startSpace || !stopSpace)
        continue;
    }
    if (match->lstrip) {
      size_t nb = b;
      while (nb > 0 && isWhitespace(s[nb - 1].cp))
        --nb;
      b = std::max(nb, startOffset);
    }
    if (match->rstrip) {
      while (e < n && isWhitespace(s[e].cp))
        ++e;
      p = e;
    }
    if (startOffset < b)
      out.emplace_back(NString(s.begin() + startOffset, s.begin() + b), -1);
    out.emplace_back(NString(s.begin() + b, s.begin() + e), match->id);
    startOffset = e;
  }
  if (startOffset != n)
    out.emplace_back(NString(s.begin() + startOffset, s.end()), -1);
}

void Tokenizer::encodeSequence(std::string_view text, int64_t typeId,
                               int32_t sequence, Encoding &out) const {
  NString s;
  s.reserve(text.size());
  decodeUtf8(text, [&](uint32_t cp, size_t b, size_t e) {
    s.push_back({cp, uint32_t(b), uint32_t(e)});
  });
  auto pushAdded = [&](const NString &piece, int32_t id) {
    out.push(id, typeId, false, piece.front().begin, piece.back().end,
             sequence);
  };
  std::vector<std::pair<NString, int32_t>> pieces, parts;
  std::vector<NString> words;
  std::vector<ModelToken> tokens;
  splitAdded(s, false, pieces);
  for (auto &[piece, addedId] : pieces) {
    if (piece.empty())
      continue;
    if (addedId >= 0) {
      pushAdded(piece, addedId);
      continue;
    }
    if (normalizer)
      normalizer->normalize(piece);
    parts.clear();
    splitAdded(piece, true, parts);
    for (auto &[part, partId] : parts) {
      if (part.empty())
        continue;
      if (partId >= 0) {
        pushAdded(part, partId);
        continue;
      }
      words.clear();
      words.push_back(std::move(part));
      if (preTokenizer)
        preTokenizer->preTokenize(words);
      for (const NString &word : words) {
        tokens.clear();
        model->tokenize(word, tokens);
        for (const ModelToken &t : tokens)
          out.push(t.id, typeId, false, word[t.first].begin,
                   word[t.last - 1].end, sequence);
      }
    }
  }
}

void Tokenizer::encode(std::string_view text, const std::string_view *pair,
                       const Options &options, Encoding &out) const {
  std::vector<Encoding> encodings(pair ? 2 : 1);
  encodeSequence(text, 0, 0, encodings[0]);
  if (pair)
    encodeSequence(*pair, 1, 1, encodings[1]);

  if (options.maxLength > 0) {
    size_t addedCount = options.addSpecial && postProcessor
                            ? postProcessor->addedTokens(pair != nullptr)
                            : 0;
    if (options.maxLength < addedCount)
      throw TokenizerError(fmt::format(
          "max_length {} cannot hold the {} special tokens the tokenizer "
          "adds",
          options.maxLength, addedCount));
    size_t maxLength = options.maxLength - addedCount;
    size_t n1 = encodings[0].size(), n2 = pair ? encodings[1].size() : 0;
    size_t total = n1 + n2;
    if (total > maxLength) {
      size_t remove = total - maxLength;
      bool left = options.truncateLeft;
      if (options.strategy == 0) { // Longest first.
        if (pair) {
          bool swapped = n1 > n2;
          size_t a = std::min(n1, n2), b;
          if (a > maxLength)
            b = a;
          else
            b = std::max(a, maxLength - a);
          if (a + b > maxLength) {
            a = maxLength / 2;
            b = a + maxLength % 2;
          }
          if (swapped)
            std::swap(a, b);
          encodings[0].truncate(a, left);
          encodings[1].truncate(b, left);
        } else {
          encodings[0].truncate(total - remove, left);
        }
      } else {
        bool second = options.strategy == 2;
        if (second && !pair)
          throw TokenizerError(
              "truncation ONLY_SECOND needs a pair to truncate");
        Encoding &target = encodings[second ? 1 : 0];
        if (target.size() <= remove)
          throw TokenizerError(fmt::format(
              "truncation {}: the {} sequence has {} tokens, but {} must go",
              second ? "ONLY_SECOND" : "ONLY_FIRST",
              second ? "second" : "first", target.size(), remove));
        target.truncate(target.size() - remove, left);
      }
    }
  }

  if (postProcessor)
    postProcessor->process(*this, encodings, options.addSpecial);
  out = Encoding();
  for (const Encoding &e : encodings)
    out.append(e);

  size_t length = std::max(out.size(), options.padTo);
  if (options.multipleOf > 0 && length % options.multipleOf != 0)
    length += options.multipleOf - length % options.multipleOf;
  pad(out, length, options.padLeft);
}

void Tokenizer::pad(Encoding &e, size_t length, bool left) const {
  if (e.size() >= length)
    return;
  Encoding pads;
  for (size_t i = e.size(); i < length; ++i)
    pads.push(padding.padId, padding.padTypeId, true, 0, 0, -1);
  std::fill(pads.attention.begin(), pads.attention.end(), 0);
  if (left) {
    pads.append(e);
    e = std::move(pads);
  } else {
    e.append(pads);
  }
}

std::string Tokenizer::decode(const int64_t *ids, size_t count,
                              bool skipSpecial) const {
  std::vector<std::string> tokens;
  tokens.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const std::string *t = token(ids[i]);
    if (!t || (skipSpecial && isSpecial(ids[i])))
      continue;
    auto form = decodeForm.find(ids[i]);
    tokens.push_back(form == decodeForm.end() ? *t : form->second);
  }
  std::string text;
  if (decoder) {
    decoder->decodeChain(tokens);
    for (const std::string &t : tokens)
      text += t;
  } else {
    for (size_t i = 0; i < tokens.size(); ++i)
      text += (i ? " " : "") + tokens[i];
  }
  return toValidUtf8(text);
}

} // namespace tfm::rt::tok
