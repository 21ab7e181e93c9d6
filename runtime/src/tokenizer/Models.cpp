//===- Models.cpp - Models: BPE, WordPiece, WordLevel ---------------------===//
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
#include <queue>

namespace tfm::rt::tok {

namespace {

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

} // namespace

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

} // namespace tfm::rt::tok
