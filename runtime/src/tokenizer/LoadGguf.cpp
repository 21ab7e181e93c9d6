//===- LoadGguf.cpp - Tokenizers from GGUF metadata ------------*- C++ -*-===//
//
// A GGUF file's tokenizer.ggml.* keys mapped to the parts of Tokenizer.h as
// llama.cpp reads them; a missing or ill-typed key is named in the message.
//
//===----------------------------------------------------------------------===//

#include "Tokenizer.h"
#include "Unicode.h"
#include "tfm/gguf.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace tfm::rt::tok {

namespace {
std::unique_ptr<Tokenizer> loadFromGguf(const GgufFile *file,
                                        const std::string &path);
} // namespace

std::unique_ptr<Tokenizer> loadTokenizerGguf(const std::string &path) {
  std::string error;
  std::unique_ptr<GgufFile> file = GgufFile::open(path, error);
  if (!file)
    throw TokenizerError(error);
  return loadFromGguf(file.get(), path);
}

std::unique_ptr<Tokenizer> loadTokenizerGgufMemory(const void *data,
                                                   size_t size,
                                                   const std::string &name) {
  std::string error;
  std::unique_ptr<GgufFile> file =
      GgufFile::openMemory(data, size, name, error);
  if (!file)
    throw TokenizerError(error);
  return loadFromGguf(file.get(), name);
}

namespace {
std::unique_ptr<Tokenizer> loadFromGguf(const GgufFile *file,
                                        const std::string &path) {
  auto fail = [&](const std::string &key, const std::string &what) {
    throw TokenizerError(fmt::format("{}: {}: {}", path, key, what));
  };
  auto find = [&](const char *key, GgufValue::Kind kind,
                  bool required) -> const GgufValue * {
    const GgufValue *v = file->find(key);
    if (!v) {
      if (required)
        fail(key, "missing (the file has no tokenizer)");
      return nullptr;
    }
    if (v->kind != kind && !(kind == GgufValue::Kind::U32 && v->isInteger()))
      fail(key, fmt::format("is {}, expected {}", GgufValue::kindName(v->kind),
                            GgufValue::kindName(kind)));
    return v;
  };
  auto stringArray = [&](const char *key, bool required) {
    std::vector<std::string> out;
    const GgufValue *v = find(key, GgufValue::Kind::Array, required);
    if (!v)
      return out;
    if (v->elementKind != GgufValue::Kind::String)
      fail(key, fmt::format("is an array of {}, expected strings",
                            GgufValue::kindName(v->elementKind)));
    for (size_t i = 0; i < v->array.size(); ++i) {
      if (!isValidUtf8(v->array[i].string))
        fail(fmt::format("{}[{}]", key, i), "is not valid UTF-8");
      out.push_back(v->array[i].string);
    }
    return out;
  };
  auto flag = [&](const char *key, bool fallback) {
    const GgufValue *v = find(key, GgufValue::Kind::Bool, false);
    return v ? v->integer != 0 : fallback;
  };

  const GgufValue *modelName =
      find("tokenizer.ggml.model", GgufValue::Kind::String, true);
  std::string kind = modelName->string;
  if (kind != "llama" && kind != "gpt2")
    fail("tokenizer.ggml.model",
         fmt::format("'{}' is not supported (llama: SentencePiece BPE, gpt2: "
                     "byte-level BPE)",
                     printableToken(kind)));
  std::vector<std::string> tokens = stringArray("tokenizer.ggml.tokens", true);
  if (tokens.empty())
    fail("tokenizer.ggml.tokens", "is empty");
  if (int64_t(tokens.size()) > kMaxTokenId + 1)
    fail("tokenizer.ggml.tokens", fmt::format("has {} tokens, more than {}",
                                              tokens.size(), kMaxTokenId + 1));
  size_t n = tokens.size();
  std::vector<int32_t> types(n, 1);
  if (const GgufValue *v =
          find("tokenizer.ggml.token_type", GgufValue::Kind::Array, false)) {
    if (v->array.size() != n)
      fail("tokenizer.ggml.token_type",
           fmt::format("has {} entries for {} tokens", v->array.size(), n));
    for (size_t i = 0; i < n; ++i) {
      if (!v->array[i].isInteger())
        fail("tokenizer.ggml.token_type", "is not an array of integers");
      types[i] = int32_t(v->array[i].integer);
    }
  }
  std::vector<double> scores(n, 0);
  if (const GgufValue *v =
          find("tokenizer.ggml.scores", GgufValue::Kind::Array, false)) {
    if (v->array.size() != n)
      fail("tokenizer.ggml.scores",
           fmt::format("has {} entries for {} tokens", v->array.size(), n));
    for (size_t i = 0; i < n; ++i) {
      if (!v->array[i].isFloat() && !v->array[i].isInteger())
        fail("tokenizer.ggml.scores", "is not an array of numbers");
      scores[i] = v->array[i].number;
    }
  }
  auto roleId = [&](const char *key) -> int64_t {
    const GgufValue *v = find(key, GgufValue::Kind::U32, false);
    if (!v)
      return -1;
    if (v->integer < 0 || size_t(v->integer) >= n)
      fail(key, fmt::format("{} is not a token id (the vocabulary has {})",
                            v->integer, n));
    return v->integer;
  };

  auto t = std::make_unique<Tokenizer>();
  const char *kRoles[][2] = {{"bos", "tokenizer.ggml.bos_token_id"},
                             {"eos", "tokenizer.ggml.eos_token_id"},
                             {"unk", "tokenizer.ggml.unknown_token_id"},
                             {"pad", "tokenizer.ggml.padding_token_id"},
                             {"sep", "tokenizer.ggml.seperator_token_id"},
                             {"cls", "tokenizer.ggml.cls_token_id"}};
  for (const auto &r : kRoles)
    if (int64_t id = roleId(r[1]); id >= 0)
      t->roles[r[0]] = id;

  // Later duplicates win for text -> id, as in llama.cpp.
  BpeConfig config;
  for (size_t i = 0; i < n; ++i)
    config.vocab[tokens[i]] = int32_t(i);
  // Unknown (2), control (3) and user-defined (4) tokens are matched in the
  // raw text, as llama.cpp's special-token partition does.
  for (size_t i = 0; i < n; ++i) {
    if (types[i] < 2 || types[i] > 4)
      continue;
    AddedToken a;
    a.id = int32_t(i);
    a.content = tokens[i];
    a.special = types[i] != 4;
    t->added.push_back(std::move(a));
  }
  bool addBos = flag("tokenizer.ggml.add_bos_token", kind == "llama");
  bool addEos = flag("tokenizer.ggml.add_eos_token", false);
  if ((addBos && !t->roles.count("bos")) || (addEos && !t->roles.count("eos")))
    fail(addBos && !t->roles.count("bos") ? "tokenizer.ggml.add_bos_token"
                                          : "tokenizer.ggml.add_eos_token",
         "is true but the file has no token id for it");

  if (kind == "llama") {
    // SentencePiece BPE merges the adjacent pair whose concatenation is the
    // highest-scoring token, leftmost first on ties. As ranked merges: each
    // split of each normal token into two tokens, ranked by the token's
    // score (equal scores, equal ranks).
    std::vector<std::pair<double, size_t>> order;
    for (size_t i = 0; i < n; ++i)
      if (types[i] == 1 && config.vocab.at(tokens[i]) == int32_t(i))
        order.emplace_back(-scores[i], i);
    std::sort(order.begin(), order.end());
    uint32_t rank = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      if (k > 0 && order[k].first != order[k - 1].first)
        ++rank;
      const std::string &tok = tokens[order[k].second];
      for (size_t cut = 1; cut < tok.size(); ++cut) {
        if ((static_cast<unsigned char>(tok[cut]) & 0xC0) == 0x80)
          continue; // Not a character boundary.
        std::string left = tok.substr(0, cut), right = tok.substr(cut);
        if (config.vocab.count(left) && config.vocab.count(right)) {
          config.merges.emplace_back(std::move(left), std::move(right));
          config.ranks.push_back(rank);
        }
      }
    }
    if (t->roles.count("unk")) {
      config.unk = tokens[size_t(t->roles["unk"])];
      config.hasUnk = true;
    }
    config.byteFallback = true;
    config.fuseUnk = true;
    bool spacePrefix = flag("tokenizer.ggml.add_space_prefix", true);
    std::vector<std::unique_ptr<Normalizer>> norms;
    if (spacePrefix)
      norms.push_back(makePrepend("\xE2\x96\x81"));
    norms.push_back(makeReplace(" ", "\xE2\x96\x81"));
    t->normalizer = makeNormalizerSequence(std::move(norms));
    std::vector<std::unique_ptr<Decoder>> decs;
    decs.push_back(makeReplaceDecoder("\xE2\x96\x81", " "));
    decs.push_back(makeByteFallbackDecoder());
    decs.push_back(makeFuseDecoder());
    if (spacePrefix)
      decs.push_back(makeStripDecoder(' ', 1, 0));
    t->decoder = makeDecoderSequence(std::move(decs));
  } else {
    std::vector<std::string> merges =
        stringArray("tokenizer.ggml.merges", true);
    for (size_t i = 0; i < merges.size(); ++i) {
      size_t space = merges[i].find(' ');
      if (space == std::string::npos ||
          merges[i].find(' ', space + 1) != std::string::npos)
        fail(fmt::format("tokenizer.ggml.merges[{}]", i),
             fmt::format("'{}' is not two tokens joined by one space",
                         printableToken(merges[i])));
      config.merges.emplace_back(merges[i].substr(0, space),
                                 merges[i].substr(space + 1));
    }
    std::string pre = "default";
    if (const GgufValue *v =
            find("tokenizer.ggml.pre", GgufValue::Kind::String, false))
      pre = v->string;
    // llama.cpp's names (llama-vocab.cpp) for the regexes tfm knows.
    KnownRegex regex = KnownRegex::Gpt2;
    // SmolLM's and its siblings': every digit a piece of its own (the
    // tokenizers package's Digits(individual_digits)), then GPT-2's regex.
    bool digitsFirst = false;
    if (pre == "default" || pre == "gpt-2" || pre == "gpt2" || pre == "phi-2")
      regex = KnownRegex::Gpt2;
    else if (pre == "llama-bpe" || pre == "llama3")
      regex = KnownRegex::Llama3;
    else if (pre == "qwen2" || pre == "deepseek-r1-qwen")
      regex = KnownRegex::Qwen2;
    else if (pre == "smollm" || pre == "starcoder" || pre == "refact" ||
             pre == "command-r" || pre == "codeshell" || pre == "exaone" ||
             pre == "minerva")
      digitsFirst = true;
    else
      fail("tokenizer.ggml.pre",
           fmt::format("'{}' is not supported (default, gpt-2, phi-2, "
                       "llama-bpe, qwen2, deepseek-r1-qwen, smollm, "
                       "starcoder, refact, command-r, codeshell, exaone, "
                       "minerva)",
                       printableToken(pre)));
    config.ignoreMerges = regex == KnownRegex::Llama3;
    std::vector<std::unique_ptr<PreTokenizer>> pres;
    if (digitsFirst)
      pres.push_back(makeDigits(true));
    pres.push_back(makeRegexSplit(regex, SplitBehavior::Isolated, false));
    pres.push_back(makeByteLevelPreTokenizer(false, false));
    t->preTokenizer = makePreTokenizerSequence(std::move(pres));
    if (regex == KnownRegex::Qwen2)
      t->normalizer = makeNfc();
    t->decoder = makeByteLevelDecoder();
  }
  try {
    t->model = makeBpe(std::move(config));
  } catch (const TokenizerError &e) {
    throw TokenizerError(fmt::format("{}: {}", path, e.what()));
  }
  // Every id keeps its own token, duplicates included.
  t->model->vocab = tokens;

  if (addBos || addEos) {
    std::vector<TemplatePiece> single, pair;
    std::unordered_map<std::string, std::vector<int64_t>> specials;
    auto special = [&](const char *role) {
      specials[role] = {t->roles[role]};
      return TemplatePiece{false, 0, role, 0};
    };
    for (int s = 0; s < 2; ++s) {
      std::vector<TemplatePiece> &pieces = s == 0 ? single : pair;
      for (int k = 0; k <= s; ++k) {
        if (addBos)
          pieces.push_back(special("bos"));
        pieces.push_back(TemplatePiece{true, k, "", int64_t(k)});
        if (addEos)
          pieces.push_back(special("eos"));
      }
    }
    t->postProcessor =
        makeTemplate(std::move(single), std::move(pair), std::move(specials));
  }
  t->finish();
  return t;
}
} // namespace

} // namespace tfm::rt::tok
