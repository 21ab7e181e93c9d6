//===- LoadJson.cpp - Tokenizers from tokenizer.json -----------*- C++ -*-===//
//
// tokenizer.json is read with nlohmann-json (through parseBoundedJson, which
// bounds nesting and refuses repeated keys) into the parts of Tokenizer.h;
// every field is checked and a bad one is named in the message, as
// "tokenizer.json: model.merges[3]: ...". GGUF metadata: LoadGguf.cpp.
//
//===----------------------------------------------------------------------===//

#include "../Json.h"
#include "Tokenizer.h"
#include "Unicode.h"
#include "tfm/gguf.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

using json = nlohmann::json;

namespace tfm::rt::tok {

namespace {

/// Where a value sits in the file, for messages.
struct At {
  const std::string &file;
  std::string path;
  At operator[](const std::string &key) const {
    return {file, path.empty() ? key : path + "." + key};
  }
  At operator[](size_t index) const {
    return {file, fmt::format("{}[{}]", path, index)};
  }
  [[noreturn]] void fail(const std::string &what) const {
    throw TokenizerError(fmt::format("{}: {}: {}", file, path, what));
  }
};

const json *member(const json &object, const char *key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

const json &object(const json &value, const At &at) {
  if (!value.is_object())
    at.fail(fmt::format("expected an object, got {}", describeJson(value)));
  return value;
}

const json &array(const json &value, const At &at) {
  if (!value.is_array())
    at.fail(fmt::format("expected an array, got {}", describeJson(value)));
  return value;
}

std::string str(const json &value, const At &at) {
  if (!value.is_string())
    at.fail(fmt::format("expected a string, got {}", describeJson(value)));
  return value.get<std::string>();
}

std::string stringOr(const json &obj, const char *key, const At &at,
                     const std::string &fallback) {
  const json *v = member(obj, key);
  return v ? str(*v, at[key]) : fallback;
}

bool boolOr(const json &obj, const char *key, const At &at, bool fallback) {
  const json *v = member(obj, key);
  if (!v)
    return fallback;
  if (!v->is_boolean())
    at[key].fail(
        fmt::format("expected true or false, got {}", describeJson(*v)));
  return v->get<bool>();
}

int64_t integer(const json &value, const At &at, int64_t min, int64_t max) {
  if (!value.is_number_integer())
    at.fail(fmt::format("expected an integer, got {}", describeJson(value)));
  int64_t v =
      value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(INT64_MAX)
          ? INT64_MAX
          : value.get<int64_t>();
  if (v < min || v > max)
    at.fail(fmt::format("{} is out of range ({} to {})", v, min, max));
  return v;
}

int64_t integerOr(const json &obj, const char *key, const At &at, int64_t min,
                  int64_t max, int64_t fallback) {
  const json *v = member(obj, key);
  return v ? integer(*v, at[key], min, max) : fallback;
}

std::string typeOf(const json &obj, const At &at) {
  const json *t = member(obj, "type");
  if (!t)
    at["type"].fail("missing");
  return str(*t, at["type"]);
}

/// A one-code-point string (Metaspace's replacement, Strip's content).
uint32_t oneChar(const std::string &s, const At &at) {
  std::vector<uint32_t> cps;
  decodeUtf8(s, [&](uint32_t cp, size_t, size_t) { cps.push_back(cp); });
  if (cps.size() != 1)
    at.fail(fmt::format("expected one character, got '{}'", printableToken(s)));
  return cps[0];
}

[[noreturn]] void unsupported(const At &at, const std::string &what,
                              const std::string &supported) {
  at.fail(fmt::format("{} is not supported (supported: {})", what, supported));
}

SplitBehavior behavior(const json &obj, const At &at, SplitBehavior fallback) {
  const json *v = member(obj, "behavior");
  if (!v)
    return fallback;
  std::string b = str(*v, at["behavior"]);
  static const std::map<std::string, SplitBehavior> kNames = {
      {"Removed", SplitBehavior::Removed},
      {"Isolated", SplitBehavior::Isolated},
      {"MergedWithPrevious", SplitBehavior::MergedWithPrevious},
      {"MergedWithNext", SplitBehavior::MergedWithNext},
      {"Contiguous", SplitBehavior::Contiguous}};
  auto it = kNames.find(b);
  if (it == kNames.end())
    at["behavior"].fail(
        fmt::format("unknown behavior '{}'", printableToken(b)));
  return it->second;
}

PrependScheme prependScheme(const json &obj, const At &at) {
  if (const json *v = member(obj, "prepend_scheme")) {
    std::string s = str(*v, at["prepend_scheme"]);
    if (s == "always")
      return PrependScheme::Always;
    if (s == "first")
      return PrependScheme::First;
    if (s == "never")
      return PrependScheme::Never;
    at["prepend_scheme"].fail(fmt::format(
        "unknown scheme '{}' (always, first, never)", printableToken(s)));
  }
  // Files older than prepend_scheme say add_prefix_space.
  return boolOr(obj, "add_prefix_space", at, true) ? PrependScheme::Always
                                                   : PrependScheme::Never;
}

/// {"String": s} or {"Regex": r}: the string, or `*regex` set for a regex.
std::string pattern(const json &obj, const At &at, bool *isRegex) {
  const json *p = member(obj, "pattern");
  At where = at["pattern"];
  if (!p)
    where.fail("missing");
  object(*p, where);
  if (const json *s = member(*p, "String")) {
    *isRegex = false;
    return str(*s, where["String"]);
  }
  if (const json *r = member(*p, "Regex")) {
    *isRegex = true;
    return str(*r, where["Regex"]);
  }
  where.fail("expected {\"String\": ...} or {\"Regex\": ...}");
}

std::unique_ptr<Normalizer> normalizer(const json &v, const At &at) {
  object(v, at);
  std::string type = typeOf(v, at);
  if (type == "BertNormalizer") {
    bool lower = boolOr(v, "lowercase", at, true);
    const json *strip = member(v, "strip_accents");
    bool stripAccents = strip ? boolOr(v, "strip_accents", at, lower) : lower;
    return makeBertNormalizer(boolOr(v, "clean_text", at, true),
                              boolOr(v, "handle_chinese_chars", at, true),
                              stripAccents, lower);
  }
  if (type == "NFD")
    return makeNfd();
  if (type == "NFC")
    return makeNfc();
  if (type == "Lowercase")
    return makeLowercase();
  if (type == "StripAccents")
    return makeStripAccents();
  if (type == "Strip")
    return makeStrip(boolOr(v, "strip_left", at, true),
                     boolOr(v, "strip_right", at, true));
  if (type == "Replace") {
    bool regex = false;
    std::string p = pattern(v, at, &regex);
    if (regex)
      unsupported(at["pattern"], "a Replace with a regular expression",
                  "String patterns");
    const json *content = member(v, "content");
    if (!content)
      at["content"].fail("missing");
    return makeReplace(p, str(*content, at["content"]));
  }
  if (type == "Prepend") {
    const json *p = member(v, "prepend");
    if (!p)
      at["prepend"].fail("missing");
    return makePrepend(str(*p, at["prepend"]));
  }
  if (type == "Sequence") {
    const json *list = member(v, "normalizers");
    if (!list)
      at["normalizers"].fail("missing");
    array(*list, at["normalizers"]);
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (size_t i = 0; i < list->size(); ++i)
      parts.push_back(normalizer((*list)[i], at["normalizers"][i]));
    return makeNormalizerSequence(std::move(parts));
  }
  unsupported(at["type"], fmt::format("normalizer '{}'", printableToken(type)),
              "BertNormalizer, NFD, NFC, Lowercase, StripAccents, Strip, "
              "Replace, Prepend, Sequence");
}

std::unique_ptr<PreTokenizer> preTokenizer(const json &v, const At &at) {
  object(v, at);
  std::string type = typeOf(v, at);
  if (type == "BertPreTokenizer")
    return makeBertPreTokenizer();
  if (type == "WhitespaceSplit")
    return makeWhitespaceSplit();
  if (type == "ByteLevel")
    return makeByteLevelPreTokenizer(boolOr(v, "add_prefix_space", at, true),
                                     boolOr(v, "use_regex", at, true));
  if (type == "Split") {
    bool regex = false;
    std::string p = pattern(v, at, &regex);
    SplitBehavior b = behavior(v, at, SplitBehavior::Isolated);
    bool invert = boolOr(v, "invert", at, false);
    if (!regex)
      return makeStringSplit(p, b, invert);
    KnownRegex known;
    if (!knownRegex(p, known))
      at["pattern"]["Regex"].fail(fmt::format(
          "the regular expression '{}' is not one this runtime implements "
          "(GPT-2's, Llama 3's and Qwen 2's are; docs/tokenizers.md)",
          rt::printable(p, 96)));
    return makeRegexSplit(known, b, invert);
  }
  if (type == "Metaspace") {
    std::string r = stringOr(v, "replacement", at, "\xE2\x96\x81");
    return makeMetaspace(oneChar(r, at["replacement"]), prependScheme(v, at),
                         boolOr(v, "split", at, true));
  }
  if (type == "Punctuation")
    return makePunctuation(behavior(v, at, SplitBehavior::Isolated));
  if (type == "Digits")
    return makeDigits(boolOr(v, "individual_digits", at, false));
  if (type == "Sequence") {
    const json *list = member(v, "pretokenizers");
    if (!list)
      at["pretokenizers"].fail("missing");
    array(*list, at["pretokenizers"]);
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (size_t i = 0; i < list->size(); ++i)
      parts.push_back(preTokenizer((*list)[i], at["pretokenizers"][i]));
    return makePreTokenizerSequence(std::move(parts));
  }
  unsupported(at["type"],
              fmt::format("pre-tokenizer '{}'", printableToken(type)),
              "BertPreTokenizer, WhitespaceSplit, ByteLevel, Split, "
              "Metaspace, Punctuation, Digits, Sequence");
}

std::unordered_map<std::string, int32_t> vocabulary(const json &v,
                                                    const At &at) {
  if (!v.is_object())
    at.fail(fmt::format("expected an object of token: id, got {}",
                        describeJson(v)));
  std::unordered_map<std::string, int32_t> vocab;
  vocab.reserve(v.size());
  std::vector<bool> seen;
  for (auto it = v.begin(); it != v.end(); ++it) {
    At where{at.file,
             fmt::format("{}['{}']", at.path, printableToken(it.key()))};
    int64_t id = integer(it.value(), where, 0, kMaxTokenId);
    if (size_t(id) >= seen.size())
      seen.resize(size_t(id) + 1, false);
    if (seen[size_t(id)])
      where.fail(fmt::format("id {} is given to another token too", id));
    seen[size_t(id)] = true;
    vocab.emplace(it.key(), int32_t(id));
  }
  return vocab;
}

std::unique_ptr<Model> model(const json &v, const At &at) {
  object(v, at);
  const json *vocabJson = member(v, "vocab");
  if (!vocabJson)
    at["vocab"].fail("missing");
  std::string type;
  if (member(v, "type"))
    type = typeOf(v, at);
  else if (member(v, "merges"))
    type = "BPE"; // Older files have no "type"; the package guesses too.
  else if (member(v, "max_input_chars_per_word"))
    type = "WordPiece";
  else if (vocabJson->is_array())
    type = "Unigram";
  else
    type = "WordLevel";
  if (type == "BPE") {
    BpeConfig config;
    config.vocab = vocabulary(*vocabJson, at["vocab"]);
    if (const json *d = member(v, "dropout")) {
      if (!d->is_number())
        at["dropout"].fail(
            fmt::format("expected a number, got {}", describeJson(*d)));
      if (d->get<double>() != 0)
        unsupported(at["dropout"], "BPE dropout (random merges)", "null or 0");
    }
    if (const json *merges = member(v, "merges")) {
      At where = at["merges"];
      array(*merges, where);
      config.merges.reserve(merges->size());
      for (size_t i = 0; i < merges->size(); ++i) {
        const json &m = (*merges)[i];
        if (m.is_string()) {
          // "a b": exactly one space, as the package's legacy format.
          const std::string &s = m.get_ref<const std::string &>();
          size_t space = s.find(' ');
          if (space == std::string::npos ||
              s.find(' ', space + 1) != std::string::npos)
            where[i].fail(fmt::format("'{}' is not two tokens joined by one "
                                      "space",
                                      printableToken(s)));
          config.merges.emplace_back(s.substr(0, space), s.substr(space + 1));
        } else if (m.is_array() && m.size() == 2) {
          config.merges.emplace_back(str(m[0], where[i][0]),
                                     str(m[1], where[i][1]));
        } else {
          where[i].fail(fmt::format("expected \"a b\" or [\"a\", \"b\"], got "
                                    "{}",
                                    describeJson(m)));
        }
      }
    }
    if (const json *unk = member(v, "unk_token")) {
      config.unk = str(*unk, at["unk_token"]);
      config.hasUnk = true;
    }
    config.prefix = stringOr(v, "continuing_subword_prefix", at, "");
    config.suffix = stringOr(v, "end_of_word_suffix", at, "");
    config.fuseUnk = boolOr(v, "fuse_unk", at, false);
    config.byteFallback = boolOr(v, "byte_fallback", at, false);
    config.ignoreMerges = boolOr(v, "ignore_merges", at, false);
    try {
      return makeBpe(std::move(config));
    } catch (const TokenizerError &e) {
      at.fail(e.what());
    }
  }
  if (type == "WordPiece")
    return makeWordPiece(vocabulary(*vocabJson, at["vocab"]),
                         stringOr(v, "unk_token", at, "[UNK]"),
                         stringOr(v, "continuing_subword_prefix", at, "##"),
                         size_t(integerOr(v, "max_input_chars_per_word", at, 0,
                                          INT64_MAX, 100)));
  if (type == "WordLevel")
    return makeWordLevel(vocabulary(*vocabJson, at["vocab"]),
                         stringOr(v, "unk_token", at, "<unk>"));
  unsupported(at["type"], fmt::format("model '{}'", printableToken(type)),
              "BPE, WordPiece, WordLevel");
}

std::unique_ptr<PostProcessor> postProcessor(const json &v, const At &at,
                                             Tokenizer &t) {
  object(v, at);
  std::string type = typeOf(v, at);
  if (type == "TemplateProcessing") {
    std::unordered_map<std::string, std::vector<int64_t>> specials;
    if (const json *s = member(v, "special_tokens")) {
      object(*s, at["special_tokens"]);
      for (auto it = s->begin(); it != s->end(); ++it) {
        At where = at["special_tokens"][it.key()];
        object(it.value(), where);
        const json *ids = member(it.value(), "ids");
        if (!ids)
          where["ids"].fail("missing");
        array(*ids, where["ids"]);
        std::vector<int64_t> list;
        for (size_t i = 0; i < ids->size(); ++i)
          list.push_back(integer((*ids)[i], where["ids"][i], 0, kMaxTokenId));
        specials[it.key()] = std::move(list);
      }
    }
    auto pieces = [&](const char *key) {
      std::vector<TemplatePiece> out;
      const json *list = member(v, key);
      if (!list)
        return out;
      At where = at[key];
      array(*list, where);
      for (size_t i = 0; i < list->size(); ++i) {
        const json &p = object((*list)[i], where[i]);
        TemplatePiece piece{};
        const json *body = nullptr;
        if ((body = member(p, "Sequence"))) {
          piece.isSequence = true;
          std::string id = stringOr(object(*body, where[i]["Sequence"]), "id",
                                    where[i]["Sequence"], "A");
          if (id != "A" && id != "B")
            where[i]["Sequence"]["id"].fail(
                fmt::format("expected A or B, got '{}'", printableToken(id)));
          piece.sequence = id == "A" ? 0 : 1;
          piece.typeId = integerOr(*body, "type_id", where[i]["Sequence"], 0,
                                   kMaxTokenId, 0);
        } else if ((body = member(p, "SpecialToken"))) {
          At sw = where[i]["SpecialToken"];
          object(*body, sw);
          const json *id = member(*body, "id");
          if (!id)
            sw["id"].fail("missing");
          piece.special = str(*id, sw["id"]);
          if (!specials.count(piece.special))
            sw["id"].fail(fmt::format("'{}' is not in special_tokens",
                                      printableToken(piece.special)));
          piece.typeId = integerOr(*body, "type_id", sw, 0, kMaxTokenId, 0);
        } else {
          where[i].fail("expected {\"Sequence\": ...} or {\"SpecialToken\": "
                        "...}");
        }
        out.push_back(std::move(piece));
      }
      return out;
    };
    std::vector<TemplatePiece> single = pieces("single"), pair = pieces("pair");
    for (const char *role : {"[CLS]", "[SEP]"})
      if (specials.count(role) && specials[role].size() == 1)
        t.roles[role[1] == 'C' ? "cls" : "sep"] = specials[role][0];
    return makeTemplate(std::move(single), std::move(pair),
                        std::move(specials));
  }
  if (type == "BertProcessing") {
    auto tokenId = [&](const char *key) {
      const json *p = member(v, key);
      if (!p || !p->is_array() || p->size() != 2)
        at[key].fail("expected [token, id]");
      return integer((*p)[1], at[key][1], 0, kMaxTokenId);
    };
    int64_t cls = tokenId("cls"), sep = tokenId("sep");
    t.roles["cls"] = cls;
    t.roles["sep"] = sep;
    return makeBertProcessing(cls, sep);
  }
  if (type == "ByteLevel")
    return makeByteLevelProcessing(boolOr(v, "trim_offsets", at, true),
                                   boolOr(v, "add_prefix_space", at, true));
  if (type == "Sequence") {
    const json *list = member(v, "processors");
    if (!list)
      at["processors"].fail("missing");
    array(*list, at["processors"]);
    std::vector<std::unique_ptr<PostProcessor>> parts;
    for (size_t i = 0; i < list->size(); ++i)
      parts.push_back(postProcessor((*list)[i], at["processors"][i], t));
    return makeProcessorSequence(std::move(parts));
  }
  unsupported(at["type"],
              fmt::format("post-processor '{}'", printableToken(type)),
              "TemplateProcessing, BertProcessing, ByteLevel, Sequence");
}

std::unique_ptr<Decoder> decoder(const json &v, const At &at) {
  object(v, at);
  std::string type = typeOf(v, at);
  if (type == "ByteLevel")
    return makeByteLevelDecoder();
  if (type == "WordPiece")
    return makeWordPieceDecoder(stringOr(v, "prefix", at, "##"),
                                boolOr(v, "cleanup", at, true));
  if (type == "Metaspace") {
    std::string r = stringOr(v, "replacement", at, "\xE2\x96\x81");
    return makeMetaspaceDecoder(oneChar(r, at["replacement"]),
                                prependScheme(v, at));
  }
  if (type == "Replace") {
    bool regex = false;
    std::string p = pattern(v, at, &regex);
    if (regex)
      unsupported(at["pattern"], "a Replace with a regular expression",
                  "String patterns");
    const json *content = member(v, "content");
    if (!content)
      at["content"].fail("missing");
    return makeReplaceDecoder(p, str(*content, at["content"]));
  }
  if (type == "ByteFallback")
    return makeByteFallbackDecoder();
  if (type == "Fuse")
    return makeFuseDecoder();
  if (type == "Strip") {
    std::string c = stringOr(v, "content", at, " ");
    return makeStripDecoder(oneChar(c, at["content"]),
                            size_t(integerOr(v, "start", at, 0, INT32_MAX, 0)),
                            size_t(integerOr(v, "stop", at, 0, INT32_MAX, 0)));
  }
  if (type == "BPEDecoder")
    return makeBpeDecoder(stringOr(v, "suffix", at, "</w>"));
  if (type == "Sequence") {
    const json *list = member(v, "decoders");
    if (!list)
      at["decoders"].fail("missing");
    array(*list, at["decoders"]);
    std::vector<std::unique_ptr<Decoder>> parts;
    for (size_t i = 0; i < list->size(); ++i)
      parts.push_back(decoder((*list)[i], at["decoders"][i]));
    return makeDecoderSequence(std::move(parts));
  }
  unsupported(at["type"], fmt::format("decoder '{}'", printableToken(type)),
              "ByteLevel, WordPiece, Metaspace, Replace, ByteFallback, Fuse, "
              "Strip, BPEDecoder, Sequence");
}

} // namespace

std::unique_ptr<Tokenizer> loadTokenizerJson(std::string_view text,
                                             const std::string &name) {
  json root;
  std::string error;
  if (!parseBoundedJson(text, root, error))
    throw TokenizerError(fmt::format("{}: {}", name, error));
  At at{name, ""};
  if (!root.is_object())
    throw TokenizerError(fmt::format("{}: expected a JSON object, got {}", name,
                                     describeJson(root)));
  auto t = std::make_unique<Tokenizer>();
  const json *m = member(root, "model");
  if (!m)
    at["model"].fail("missing");
  t->model = model(*m, at["model"]);
  if (const json *n = member(root, "normalizer"))
    t->normalizer = normalizer(*n, at["normalizer"]);
  if (const json *p = member(root, "pre_tokenizer"))
    t->preTokenizer = preTokenizer(*p, at["pre_tokenizer"]);
  if (const json *p = member(root, "post_processor"))
    t->postProcessor = postProcessor(*p, at["post_processor"], *t);
  if (const json *d = member(root, "decoder"))
    t->decoder = decoder(*d, at["decoder"]);
  if (const json *list = member(root, "added_tokens")) {
    At where = at["added_tokens"];
    array(*list, where);
    for (size_t i = 0; i < list->size(); ++i) {
      const json &a = object((*list)[i], where[i]);
      AddedToken token;
      const json *id = member(a, "id");
      const json *content = member(a, "content");
      if (!id)
        where[i]["id"].fail("missing");
      if (!content)
        where[i]["content"].fail("missing");
      token.id = int32_t(integer(*id, where[i]["id"], 0, kMaxTokenId));
      token.content = str(*content, where[i]["content"]);
      token.singleWord = boolOr(a, "single_word", where[i], false);
      token.lstrip = boolOr(a, "lstrip", where[i], false);
      token.rstrip = boolOr(a, "rstrip", where[i], false);
      token.special = boolOr(a, "special", where[i], false);
      token.normalized = boolOr(a, "normalized", where[i], !token.special);
      t->added.push_back(std::move(token));
    }
  }
  if (const json *tr = member(root, "truncation")) {
    At where = at["truncation"];
    object(*tr, where);
    t->truncation.maxLength =
        size_t(integerOr(*tr, "max_length", where, 0, INT32_MAX, 512));
    std::string strategy = stringOr(*tr, "strategy", where, "LongestFirst");
    if (strategy == "LongestFirst")
      t->truncation.strategy = 0;
    else if (strategy == "OnlyFirst")
      t->truncation.strategy = 1;
    else if (strategy == "OnlySecond")
      t->truncation.strategy = 2;
    else
      where["strategy"].fail(fmt::format(
          "unknown strategy '{}' (LongestFirst, OnlyFirst, OnlySecond)",
          printableToken(strategy)));
    t->truncation.left = stringOr(*tr, "direction", where, "Right") == "Left";
  }
  if (const json *pad = member(root, "padding")) {
    At where = at["padding"];
    object(*pad, where);
    PaddingConfig &p = t->padding;
    p.enabled = true;
    if (const json *s = member(*pad, "strategy")) {
      if (s->is_object()) {
        const json *fixed = member(*s, "Fixed");
        if (!fixed)
          where["strategy"].fail("expected \"BatchLongest\" or {\"Fixed\": n}");
        p.fixedLength =
            size_t(integer(*fixed, where["strategy"]["Fixed"], 0, INT32_MAX));
      } else if (str(*s, where["strategy"]) != "BatchLongest") {
        where["strategy"].fail("expected \"BatchLongest\" or {\"Fixed\": n}");
      }
    }
    p.left = stringOr(*pad, "direction", where, "Right") == "Left";
    p.multipleOf =
        size_t(integerOr(*pad, "pad_to_multiple_of", where, 0, INT32_MAX, 0));
    p.padId = integerOr(*pad, "pad_id", where, 0, kMaxTokenId, 0);
    p.padTypeId = integerOr(*pad, "pad_type_id", where, 0, kMaxTokenId, 0);
    p.padToken = stringOr(*pad, "pad_token", where, "[PAD]");
    t->roles["pad"] = p.padId;
  }
  t->finish();
  for (const char *unk : {"[UNK]", "<unk>"})
    if (!t->roles.count("unk") && t->id(unk) >= 0)
      t->roles["unk"] = t->id(unk);
  return t;
}

void applyTokenizerConfig(Tokenizer &t, std::string_view text,
                          const std::string &name) {
  json root;
  std::string error;
  if (!parseBoundedJson(text, root, error))
    throw TokenizerError(fmt::format("{}: {}", name, error));
  if (!root.is_object())
    throw TokenizerError(fmt::format("{}: expected a JSON object", name));
  At at{name, ""};
  for (const char *role : {"bos", "eos", "pad", "unk", "cls", "sep"}) {
    std::string key = std::string(role) + "_token";
    const json *v = member(root, key.c_str());
    if (!v)
      continue;
    // A string, or an AddedToken object with "content".
    std::string content;
    if (v->is_object()) {
      const json *c = member(*v, "content");
      if (!c)
        at[key]["content"].fail("missing");
      content = str(*c, at[key]["content"]);
    } else {
      content = str(*v, at[key]);
    }
    int64_t id = t.id(content);
    if (id < 0)
      at[key].fail(fmt::format("the token '{}' is not in the vocabulary",
                               printableToken(content)));
    t.roles[role] = id;
  }
}

} // namespace tfm::rt::tok
