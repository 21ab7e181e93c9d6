//===- PostProcessors.cpp - Templates, BERT's, byte level -----------------===//
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

} // namespace

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

} // namespace tfm::rt::tok
