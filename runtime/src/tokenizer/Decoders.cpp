//===- Decoders.cpp - Decoders: byte level, WordPiece, metaspace, BPE -----===//
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

} // namespace tfm::rt::tok
