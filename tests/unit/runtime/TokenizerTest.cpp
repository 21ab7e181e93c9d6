//===- TokenizerTest.cpp - Tokenizers against the tokenizers package ------===//
//
// Every case of tests/reference/tokenizers/<name>/expected.json (made by the
// `tokenizers` package: generate.py there) encoded by the runtime from the
// same tokenizer.json, and from the GGUF file carrying the same vocabulary
// where there is one: identical ids, type ids, masks and offsets, decoding
// with and without special tokens, the streaming decoder step by step, the
// padded batch. Then malformed files, each a clean status.
//
//===----------------------------------------------------------------------===//
#include "tfm/tokenizer.h"

#include "tokenizer/Unicode.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using json = nlohmann::json;

namespace {

std::string fixtureDir(const std::string &name) {
  return std::string(TFM_SOURCE_DIR) + "/tests/reference/tokenizers/" + name;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string fromHex(const std::string &hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += char(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

/// The status's message (empty for OK), freeing it.
std::string take(tfm_status status) {
  std::string message = status ? tfm_status_message(status) : "";
  tfm_status_free(status);
  return message;
}

struct TokenizerPtr {
  tfm_tokenizer *p = nullptr;
  ~TokenizerPtr() { tfm_tokenizer_release(p); }
};

/// Byte offset -> index of the code point starting there (or the count at
/// the end), with the runtime's U+FFFD rule; also the decoded text.
struct Chars {
  std::vector<int64_t> index;
  std::string text;
  explicit Chars(const std::string &bytes) : index(bytes.size() + 1, -1) {
    int64_t n = 0;
    tfm::rt::tok::decodeUtf8(bytes, [&](uint32_t cp, size_t b, size_t) {
      index[b] = n++;
      tfm::rt::tok::appendUtf8(text, cp);
    });
    index[bytes.size()] = n;
  }
  int64_t at(int64_t byte) const { return index[size_t(byte)]; }
};

tfm_encode_options optionsOf(const json &o) {
  tfm_encode_options options{};
  options.add_special_tokens = o.value("add_special_tokens", true) ? 1 : 0;
  options.max_length = o.value("max_length", 0);
  std::string strategy = o.value("strategy", "longest_first");
  options.truncation_strategy =
      strategy == "only_first"    ? TFM_TRUNCATE_ONLY_FIRST
      : strategy == "only_second" ? TFM_TRUNCATE_ONLY_SECOND
                                  : TFM_TRUNCATE_LONGEST_FIRST;
  options.truncate_left = o.value("truncate_left", false);
  options.pad_to_length = o.value("pad_to_length", 0);
  options.pad_to_multiple_of = o.value("pad_to_multiple_of", 0);
  options.pad_left = o.value("pad_left", false);
  return options;
}

template <typename T> std::vector<int64_t> toVector(const T *data, int64_t n) {
  return std::vector<int64_t>(data, data + n);
}

std::string decode(const tfm_tokenizer *t, const std::vector<int64_t> &ids,
                   bool skip) {
  char *text = nullptr;
  size_t size = 0;
  REQUIRE(take(tfm_tokenizer_decode(t, ids.data(), ids.size(), skip, &text,
                                    &size)) == "");
  std::string out(text, size);
  CHECK(std::strlen(text) <= size);
  tfm_tokenizer_free_text(text);
  return out;
}

/// Checks every case of one fixture against `t`; `idsOnly`: the GGUF
/// path, which must give the same ids (no options, offsets not compared).
void checkCases(const tfm_tokenizer *t, const json &expected, bool idsOnly) {
  size_t checked = 0;
  for (const json &c : expected["cases"]) {
    std::string text = fromHex(c["text"]["hex"]);
    Chars chars(text);
    // The runtime reads ill-formed UTF-8 exactly as Python's "replace".
    REQUIRE(chars.text == c["text"]["text"].get<std::string>());
    bool hasPair = c.contains("pair");
    if (idsOnly && (hasPair || c["options"].size() > 1 ||
                    (c["options"].size() == 1 &&
                     !c["options"].contains("add_special_tokens"))))
      continue;
    std::string pair = hasPair ? fromHex(c["pair"]["hex"]) : "";
    Chars pairChars(pair);
    tfm_encode_options options = optionsOf(c["options"]);
    tfm_encoding e{};
    INFO("text: " << c["text"]["text"].get<std::string>()
                  << (hasPair
                          ? " | pair: " + c["pair"]["text"].get<std::string>()
                          : "")
                  << " options: " << c["options"].dump());
    std::string error = take(tfm_tokenizer_encode(
        t, text.data(), text.size(), hasPair ? pair.data() : nullptr,
        pair.size(), &options, &e));
    if (c.contains("error")) {
      CHECK(error != "");
      CHECK(e.ids == nullptr);
      continue;
    }
    REQUIRE(error == "");
    ++checked;
    std::vector<int64_t> ids = toVector(e.ids, e.length);
    CHECK(ids == c["ids"].get<std::vector<int64_t>>());
    if (!idsOnly) {
      CHECK(toVector(e.type_ids, e.length) ==
            c["type_ids"].get<std::vector<int64_t>>());
      CHECK(toVector(e.attention_mask, e.length) ==
            c["attention_mask"].get<std::vector<int64_t>>());
      CHECK(toVector(e.special_tokens_mask, e.length) ==
            c["special_tokens_mask"].get<std::vector<int64_t>>());
      CHECK(toVector(e.sequence_ids, e.length) ==
            c["sequence_ids"].get<std::vector<int64_t>>());
      std::vector<std::vector<int64_t>> offsets;
      for (int64_t i = 0; i < e.length; ++i) {
        const Chars &of = e.sequence_ids[i] == 1 ? pairChars : chars;
        int64_t b = e.offsets[2 * i], en = e.offsets[2 * i + 1];
        offsets.push_back({of.at(b), of.at(en)});
      }
      CHECK(offsets == c["offsets"].get<std::vector<std::vector<int64_t>>>());
    }
    if (c.contains("decode")) {
      CHECK(decode(t, ids, true) == c["decode"].get<std::string>());
      CHECK(decode(t, ids, false) ==
            c["decode_with_special"].get<std::string>());
    }
    if (c.contains("stream")) {
      tfm_decode_stream *stream = nullptr;
      REQUIRE(take(tfm_decode_stream_create(t, 0, &stream)) == "");
      std::vector<std::string> steps;
      std::string all;
      for (int64_t id : ids) {
        const char *piece = nullptr;
        size_t size = 0;
        REQUIRE(take(tfm_decode_stream_step(stream, id, &piece, &size)) == "");
        steps.emplace_back(piece, size);
        all += steps.back();
      }
      if (!idsOnly)
        CHECK(steps == c["stream"].get<std::vector<std::string>>());
      const char *rest = nullptr;
      size_t size = 0;
      REQUIRE(take(tfm_decode_stream_finish(stream, &rest, &size)) == "");
      all.append(rest, size);
      // The steps add up to the whole text, never splitting a character.
      CHECK(all == decode(t, ids, false));
      tfm_decode_stream_release(stream);
    }
    tfm_encoding_release(&e);
  }
  CHECK(checked > 60);
}

void checkBatch(const tfm_tokenizer *t, const json &batch) {
  std::vector<std::string> texts;
  for (const json &h : batch["texts"])
    texts.push_back(fromHex(h));
  std::vector<const char *> pointers;
  for (const std::string &s : texts)
    pointers.push_back(s.c_str());
  tfm_encode_options options{};
  options.add_special_tokens = 1;
  tfm_tensor ids{}, types{}, mask{};
  REQUIRE(take(tfm_tokenizer_encode_batch(t, pointers.data(), nullptr,
                                          pointers.size(), &options, &ids,
                                          &types, &mask)) == "");
  auto rows = [](const tfm_tensor &x) {
    std::vector<std::vector<int64_t>> out;
    const auto *d = static_cast<const int64_t *>(x.data);
    for (int64_t r = 0; r < x.shape[0]; ++r)
      out.emplace_back(d + r * x.shape[1], d + (r + 1) * x.shape[1]);
    return out;
  };
  CHECK(ids.dtype == TFM_DTYPE_I64);
  CHECK(rows(ids) == batch["ids"].get<std::vector<std::vector<int64_t>>>());
  CHECK(rows(types) ==
        batch["type_ids"].get<std::vector<std::vector<int64_t>>>());
  CHECK(rows(mask) ==
        batch["attention_mask"].get<std::vector<std::vector<int64_t>>>());
  tfm_tensor_release_data(&ids);
  tfm_tensor_release_data(&types);
  tfm_tensor_release_data(&mask);
}

} // namespace

TEST_CASE("tokenizers match the tokenizers package on the corpus",
          "[tokenizer]") {
  for (const char *name :
       {"bert_uncased", "bert_cased", "bert_strip_accents", "gpt2", "llama3",
        "qwen2", "smollm", "llama2", "gemma"}) {
    DYNAMIC_SECTION(name) {
      json expected =
          json::parse(readFile(fixtureDir(name) + "/expected.json"));
      TokenizerPtr t;
      REQUIRE(take(tfm_tokenizer_load_json(fixtureDir(name).c_str(), &t.p)) ==
              "");
      checkCases(t.p, expected, false);
      checkBatch(t.p, expected["batch"]);
      if (!expected["gguf"].is_null()) {
        TokenizerPtr g;
        std::string path =
            fixtureDir(name) + "/" + expected["gguf"].get<std::string>();
        REQUIRE(take(tfm_tokenizer_load_gguf(path.c_str(), &g.p)) == "");
        CHECK(tfm_tokenizer_vocab_size(g.p) == tfm_tokenizer_vocab_size(t.p));
        checkCases(g.p, expected, true);
      }
    }
  }
}

TEST_CASE("tokenizer vocabulary queries", "[tokenizer]") {
  TokenizerPtr t;
  REQUIRE(take(tfm_tokenizer_load_json(
              (fixtureDir("bert_uncased") + "/tokenizer.json").c_str(),
              &t.p)) == "");
  CHECK(tfm_tokenizer_vocab_size(t.p) == 501);
  CHECK(tfm_tokenizer_token_to_id(t.p, "[CLS]") == 2);
  CHECK(std::string(tfm_tokenizer_id_to_token(t.p, 3)) == "[SEP]");
  CHECK(tfm_tokenizer_id_to_token(t.p, 100000) == nullptr);
  CHECK(tfm_tokenizer_id_to_token(t.p, -1) == nullptr);
  CHECK(tfm_tokenizer_is_special(t.p, 2) == 1);
  CHECK(tfm_tokenizer_is_special(t.p, 100) == 0);
  CHECK(tfm_tokenizer_special_id(t.p, "cls") == 2);
  CHECK(tfm_tokenizer_special_id(t.p, "sep") == 3);
  CHECK(tfm_tokenizer_special_id(t.p, "unk") == 1);
  CHECK(tfm_tokenizer_special_id(t.p, "bos") == -1);
  TokenizerPtr g;
  REQUIRE(take(tfm_tokenizer_load_gguf(
              (fixtureDir("llama2") + "/tokenizer.gguf").c_str(), &g.p)) == "");
  CHECK(tfm_tokenizer_special_id(g.p, "bos") == 1);
  CHECK(tfm_tokenizer_special_id(g.p, "eos") == 2);
  // Unknown ids are skipped when decoding, as the package does.
  int64_t ids[] = {999999, -5};
  CHECK(decode(g.p, std::vector<int64_t>(ids, ids + 2), false) == "");
}

namespace {

std::string loadError(const std::string &text) {
  tfm_tokenizer *t = nullptr;
  tfm_status status =
      tfm_tokenizer_load_json_string(text.data(), text.size(), &t);
  CHECK(t == nullptr);
  REQUIRE(status != nullptr);
  CHECK(tfm_status_code(status) == TFM_STATUS_FORMAT_ERROR);
  std::string message = take(status);
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.rfind("tokenizer.json: ", 0) == 0);
  return message;
}

} // namespace

TEST_CASE("malformed tokenizer.json files are clean errors", "[tokenizer]") {
  using Catch::Matchers::Contains;
  CHECK_THAT(loadError("{"), Contains("is not valid JSON"));
  CHECK_THAT(loadError("[]"), Contains("expected a JSON object"));
  CHECK_THAT(loadError("{}"), Contains("model: missing"));
  CHECK_THAT(loadError(std::string(40, '[') + std::string(40, ']')),
             Contains("nests deeper"));
  CHECK_THAT(loadError(R"({"model": {"type": "BPE"}})"),
             Contains("model.vocab: missing"));
  CHECK_THAT(loadError(R"({"model": {"type": "BPE", "vocab": {"a": -1}}})"),
             Contains("model.vocab['a']: -1 is out of range"));
  CHECK_THAT(
      loadError(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}}})"),
      Contains("is given to another token too"));
  CHECK_THAT(loadError(R"({"model": {"type": "BPE", "vocab": {"a": 0},
                          "merges": ["a b"]}})"),
             Contains("model: BPE: the merge's token 'b' is not in the "
                      "vocabulary"));
  CHECK_THAT(loadError(R"({"model": {"type": "BPE", "vocab": {"a": 0},
                          "merges": ["a"]}})"),
             Contains("model.merges[0]: 'a' is not two tokens"));
  CHECK_THAT(loadError(R"({"model": {"type": "BPE", "vocab": {"a": 0},
                          "merges": [3]}})"),
             Contains("model.merges[0]: expected"));
  CHECK_THAT(loadError(R"({"model": {"type": "Unigram", "vocab": []}})"),
             Contains("model.type: model 'Unigram' is not supported"));
  CHECK_THAT(
      loadError(R"({"model": {"type": "BPE", "vocab": {}, "dropout": 0.1}})"),
      Contains("dropout"));
  CHECK_THAT(loadError(R"({"model": {"type": "WordPiece", "vocab": {}},
                          "normalizer": {"type": "NFKC"}})"),
             Contains("normalizer.type: normalizer 'NFKC' is not supported"));
  CHECK_THAT(loadError(R"({"model": {"type": "WordPiece", "vocab": {}},
                          "pre_tokenizer": {"type": "Split",
                          "pattern": {"Regex": "\\w+"}}})"),
             Contains("pre_tokenizer.pattern.Regex: the regular expression "
                      "'\\w+' is not one this runtime implements"));
  CHECK_THAT(loadError(R"({"model": {"type": "WordPiece", "vocab": {}},
                          "pre_tokenizer": {"type": "Sequence",
                          "pretokenizers": [{"type": "Metaspace",
                          "replacement": "ab"}]}})"),
             Contains("pre_tokenizer.pretokenizers[0].replacement: expected "
                      "one character"));
  CHECK_THAT(loadError(R"({"model": {"type": "WordPiece", "vocab": {}},
                          "post_processor": {"type": "TemplateProcessing",
                          "single": [{"SpecialToken": {"id": "[CLS]"}}],
                          "special_tokens": {}}})"),
             Contains("'[CLS]' is not in special_tokens"));
  CHECK_THAT(loadError(R"({"model": {"type": "WordPiece", "vocab": {}},
                          "added_tokens": [{"id": 99999999, "content": "x"}]})"),
             Contains("added_tokens[0].id: 99999999 is out of range"));
  CHECK_THAT(loadError(R"({"model": {"type": "WordPiece", "vocab": {}},
                          "decoder": {"type": "CTC"}})"),
             Contains("decoder.type: decoder 'CTC' is not supported"));
  CHECK_THAT(
      loadError(
          R"({"model": {"type": "WordPiece", "vocab": {}, "a": 1, "a": 2}})"),
      Contains("repeats the key 'a'"));

  // A missing file, and NULL arguments.
  tfm_tokenizer *t = nullptr;
  tfm_status status =
      tfm_tokenizer_load_json("/no/such/dir/tokenizer.json", &t);
  CHECK(tfm_status_code(status) == TFM_STATUS_NOT_FOUND);
  take(status);
  status = tfm_tokenizer_load_json(nullptr, &t);
  CHECK(tfm_status_code(status) == TFM_STATUS_INVALID_ARGUMENT);
  take(status);
  tfm_encoding e{};
  status = tfm_tokenizer_encode(nullptr, "a", 1, nullptr, 0, nullptr, &e);
  CHECK(tfm_status_code(status) == TFM_STATUS_INVALID_ARGUMENT);
  take(status);
}

TEST_CASE("bad encode options are clean errors", "[tokenizer]") {
  TokenizerPtr t;
  REQUIRE(take(tfm_tokenizer_load_json(fixtureDir("bert_uncased").c_str(),
                                       &t.p)) == "");
  tfm_encode_options options;
  tfm_tokenizer_default_encode_options(t.p, &options);
  CHECK(options.add_special_tokens == 1);
  CHECK(options.max_length == 0);
  options.max_length = 1;
  tfm_encoding e{};
  std::string message =
      take(tfm_tokenizer_encode(t.p, "hello", 5, nullptr, 0, &options, &e));
  CHECK(message == "max_length 1 cannot hold the 2 special tokens the "
                   "tokenizer adds");
  options.max_length = -1;
  CHECK(take(tfm_tokenizer_encode(t.p, "hello", 5, nullptr, 0, &options, &e))
            .find("must not be negative") != std::string::npos);
  // An empty text is [CLS] [SEP].
  options.max_length = 0;
  REQUIRE(take(tfm_tokenizer_encode(t.p, "", 0, nullptr, 0, &options, &e)) ==
          "");
  CHECK(e.length == 2);
  tfm_encoding_release(&e);
}

namespace {

/// A GGUF file of metadata only.
struct Gguf {
  std::string bytes;
  uint64_t count = 0;
  template <typename T> void put(T v) {
    bytes.append(reinterpret_cast<const char *>(&v), sizeof v);
  }
  void str(const std::string &s) {
    put(uint64_t(s.size()));
    bytes += s;
  }
  Gguf &text(const std::string &key, const std::string &value) {
    str(key);
    put(uint32_t(8));
    str(value);
    ++count;
    return *this;
  }
  Gguf &strings(const std::string &key, const std::vector<std::string> &v) {
    str(key);
    put(uint32_t(9));
    put(uint32_t(8));
    put(uint64_t(v.size()));
    for (const std::string &s : v)
      str(s);
    ++count;
    return *this;
  }
  Gguf &u32(const std::string &key, uint32_t value) {
    str(key);
    put(uint32_t(4));
    put(value);
    ++count;
    return *this;
  }
  std::string file() const {
    std::string out = "GGUF";
    auto add = [&](auto v) {
      out.append(reinterpret_cast<const char *>(&v), sizeof v);
    };
    add(uint32_t(3));
    add(uint64_t(0));
    add(uint64_t(count));
    out += bytes;
    // The (empty) data section starts at the next multiple of 32.
    out.resize((out.size() + 31) / 32 * 32, '\0');
    return out;
  }
};

std::string ggufError(const Gguf &g) {
  std::string path = std::string(TFM_TEST_TMPDIR) + "/bad-tokenizer.gguf";
  std::ofstream(path, std::ios::binary) << g.file();
  tfm_tokenizer *t = nullptr;
  tfm_status status = tfm_tokenizer_load_gguf(path.c_str(), &t);
  CHECK(t == nullptr);
  REQUIRE(status != nullptr);
  CHECK(tfm_status_code(status) == TFM_STATUS_FORMAT_ERROR);
  std::string message = take(status);
  CHECK(message.rfind(path + ": ", 0) == 0);
  CHECK(message.find('\n') == std::string::npos);
  return message;
}

} // namespace

TEST_CASE("malformed GGUF vocabularies are clean errors", "[tokenizer]") {
  using Catch::Matchers::Contains;
  CHECK_THAT(ggufError(Gguf()), Contains("tokenizer.ggml.model: missing"));
  CHECK_THAT(ggufError(Gguf().text("tokenizer.ggml.model", "bert")),
             Contains("'bert' is not supported"));
  CHECK_THAT(ggufError(Gguf().text("tokenizer.ggml.model", "llama")),
             Contains("tokenizer.ggml.tokens: missing"));
  CHECK_THAT(ggufError(Gguf()
                           .text("tokenizer.ggml.model", "llama")
                           .text("tokenizer.ggml.tokens", "a")),
             Contains("tokenizer.ggml.tokens: is string, expected array"));
  CHECK_THAT(ggufError(Gguf()
                           .text("tokenizer.ggml.model", "llama")
                           .strings("tokenizer.ggml.tokens", {"a", "\xff"})),
             Contains("tokenizer.ggml.tokens[1]: is not valid UTF-8"));
  CHECK_THAT(ggufError(Gguf()
                           .text("tokenizer.ggml.model", "llama")
                           .strings("tokenizer.ggml.tokens", {"a", "b"})
                           .u32("tokenizer.ggml.bos_token_id", 7)),
             Contains("tokenizer.ggml.bos_token_id: 7 is not a token id"));
  CHECK_THAT(ggufError(Gguf()
                           .text("tokenizer.ggml.model", "llama")
                           .strings("tokenizer.ggml.tokens", {"a", "b"})),
             Contains("add_bos_token: is true but the file has no token id"));
  CHECK_THAT(ggufError(Gguf()
                           .text("tokenizer.ggml.model", "gpt2")
                           .strings("tokenizer.ggml.tokens", {"a", "b"})),
             Contains("tokenizer.ggml.merges: missing"));
  CHECK_THAT(ggufError(Gguf()
                           .text("tokenizer.ggml.model", "gpt2")
                           .strings("tokenizer.ggml.tokens", {"a", "b"})
                           .strings("tokenizer.ggml.merges", {"a c"})),
             Contains("the merge's token 'c' is not in the vocabulary"));
  CHECK_THAT(ggufError(Gguf()
                           .text("tokenizer.ggml.model", "gpt2")
                           .text("tokenizer.ggml.pre", "mystery")
                           .strings("tokenizer.ggml.tokens", {"a", "b"})
                           .strings("tokenizer.ggml.merges", {})),
             Contains("tokenizer.ggml.pre: 'mystery' is not supported"));
}

TEST_CASE("tokenizers from memory and embedded in artifacts", "[tokenizer]") {
  // A GGUF file's bytes: the same vocabulary as from the file, and the
  // header and key/values alone (what tfm-compile --tokenizer embeds) are
  // enough.
  // Static: tfm_tokenizer_embedded keys its tokenizers by the bytes'
  // address, which must stay valid for the process, as an artifact's do.
  static const std::string gguf =
      readFile(fixtureDir("llama2") + "/tokenizer.gguf");
  TokenizerPtr fromFile, fromMemory;
  REQUIRE(take(tfm_tokenizer_load_gguf(
              (fixtureDir("llama2") + "/tokenizer.gguf").c_str(),
              &fromFile.p)) == "");
  REQUIRE(take(tfm_tokenizer_load_gguf_memory(gguf.data(), gguf.size(),
                                              &fromMemory.p)) == "");
  CHECK(tfm_tokenizer_vocab_size(fromMemory.p) ==
        tfm_tokenizer_vocab_size(fromFile.p));
  const char *text = "Hello world, caf\xC3\xA9!";
  auto ids = [&](const tfm_tokenizer *t) {
    tfm_encoding e{};
    REQUIRE(take(tfm_tokenizer_encode(t, text, std::strlen(text), nullptr, 0,
                                      nullptr, &e)) == "");
    std::vector<int64_t> out(e.ids, e.ids + e.length);
    tfm_encoding_release(&e);
    return out;
  };
  std::vector<int64_t> want = ids(fromFile.p);
  CHECK(ids(fromMemory.p) == want);

  // Truncated GGUF bytes and a NULL pointer are clean errors.
  tfm_tokenizer *bad = nullptr;
  tfm_status status = tfm_tokenizer_load_gguf_memory(gguf.data(), 20, &bad);
  CHECK(tfm_status_code(status) == TFM_STATUS_FORMAT_ERROR);
  CHECK_THAT(take(status), Catch::Matchers::Contains("too few for a GGUF"));
  CHECK(bad == nullptr);
  status = tfm_tokenizer_load_gguf_memory(nullptr, 4, &bad);
  CHECK(tfm_status_code(status) == TFM_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(take(status), Catch::Matchers::Contains("data is NULL"));

  // tfm_embedded_tokenize / _detokenize: caller's memory, sizes on overflow.
  int64_t out[64], count = -1;
  REQUIRE(tfm_embedded_tokenize(gguf.data(), gguf.size(), text,
                                std::strlen(text), 1, out, 64, &count) == 0);
  CHECK(std::vector<int64_t>(out, out + count) == want);
  int64_t small[1] = {-7};
  CHECK(tfm_embedded_tokenize(gguf.data(), gguf.size(), text, std::strlen(text),
                              1, small, 1,
                              &count) == TFM_STATUS_SHAPE_MISMATCH);
  CHECK(count == int64_t(want.size()));
  CHECK(small[0] == -7);
  char decoded[64];
  int64_t size = -1;
  REQUIRE(tfm_embedded_detokenize(gguf.data(), gguf.size(), want.data(),
                                  int64_t(want.size()), 1, decoded, 64,
                                  &size) == 0);
  CHECK(std::string(decoded) == decode(fromFile.p, want, true));
  CHECK(size == int64_t(std::strlen(decoded)));
  CHECK(tfm_embedded_detokenize(gguf.data(), gguf.size(), want.data(),
                                int64_t(want.size()), 1, decoded, size,
                                &size) == TFM_STATUS_SHAPE_MISMATCH);
  CHECK(tfm_embedded_tokenize(gguf.data(), gguf.size(), text, 3, 1, out, 64,
                              nullptr) == TFM_STATUS_INVALID_ARGUMENT);
  // Bytes that are no tokenizer: a code, every time (nothing is cached).
  static const char junk[] = "{\"model\": 3}";
  for (int i = 0; i < 2; ++i)
    CHECK(tfm_embedded_tokenize(junk, sizeof junk - 1, text, 3, 1, out, 64,
                                &count) == TFM_STATUS_FORMAT_ERROR);
  // The same tokenizer for the same bytes, from any call.
  const tfm_tokenizer *a = nullptr, *b = nullptr;
  REQUIRE(take(tfm_tokenizer_embedded(gguf.data(), gguf.size(), &a)) == "");
  REQUIRE(take(tfm_tokenizer_embedded(gguf.data(), gguf.size(), &b)) == "");
  CHECK(a == b);
}
