//===- FuzzTokenizer.cpp - Fuzz the tokenizer.json loader and encoder -----===//
//
// An input is a text and a tokenizer.json: two little-endian bytes give the
// text's length, the text follows, the rest is the JSON (or, when it starts
// with "GGUF", a GGUF file's vocabulary from memory). A file that does not
// load must give a one-line FORMAT_ERROR; one that loads must encode the
// text (any bytes) into ids of its vocabulary whose offsets lie inside the
// text, decode them into well-formed UTF-8, and stream-decode them into the
// same text.
//
//===----------------------------------------------------------------------===//
#include "MemoryFile.h"

#include "tfm/tokenizer.h"

#include <cstring>
#include <string>

namespace {

bool isUtf8(const std::string &s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = s[i];
    size_t len = c < 0x80         ? 1
                 : (c >> 5) == 6  ? 2
                 : (c >> 4) == 14 ? 3
                 : (c >> 3) == 30 ? 4
                                  : 0;
    if (len == 0 || i + len > n)
      return false;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
        return false;
    i += len;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  size_t textSize = std::min<size_t>(size - 2, data[0] | (data[1] << 8));
  std::string text(reinterpret_cast<const char *>(data) + 2, textSize);
  const char *json = reinterpret_cast<const char *>(data) + 2 + textSize;
  size_t jsonSize = size - 2 - textSize;

  // Bytes that start as a GGUF file are a GGUF vocabulary, as tfm-compile
  // --tokenizer embeds them (tfm_tokenizer_embedded tells them apart so).
  tfm_tokenizer *tokenizer = nullptr;
  bool gguf = jsonSize >= 4 && std::memcmp(json, "GGUF", 4) == 0;
  tfm_status status =
      gguf ? tfm_tokenizer_load_gguf_memory(json, jsonSize, &tokenizer)
           : tfm_tokenizer_load_json_string(json, jsonSize, &tokenizer);
  if (status) {
    TFM_FUZZ_CHECK(tokenizer == nullptr);
    TFM_FUZZ_CHECK(tfm_status_code(status) == TFM_STATUS_FORMAT_ERROR);
    TFM_FUZZ_CHECK(std::strchr(tfm_status_message(status), '\n') == nullptr);
    tfm_status_free(status);
    return 0;
  }
  tfm_encoding e{};
  status = tfm_tokenizer_encode(tokenizer, text.data(), text.size(), nullptr, 0,
                                nullptr, &e);
  if (status) {
    // Only a tokenizer without the unknown token it needs may refuse.
    TFM_FUZZ_CHECK(std::strchr(tfm_status_message(status), '\n') == nullptr);
    tfm_status_free(status);
    tfm_tokenizer_release(tokenizer);
    return 0;
  }
  int64_t vocab = tfm_tokenizer_vocab_size(tokenizer);
  for (int64_t i = 0; i < e.length; ++i) {
    TFM_FUZZ_CHECK(e.ids[i] >= 0 && e.ids[i] < vocab);
    TFM_FUZZ_CHECK(e.offsets[2 * i] >= 0 &&
                   e.offsets[2 * i] <= e.offsets[2 * i + 1] &&
                   e.offsets[2 * i + 1] <= int64_t(text.size()));
  }
  char *decoded = nullptr;
  size_t decodedSize = 0;
  status = tfm_tokenizer_decode(tokenizer, e.ids, size_t(e.length), 0, &decoded,
                                &decodedSize);
  TFM_FUZZ_CHECK(status == nullptr);
  std::string whole(decoded, decodedSize);
  TFM_FUZZ_CHECK(isUtf8(whole));
  tfm_tokenizer_free_text(decoded);

  tfm_decode_stream *stream = nullptr;
  TFM_FUZZ_CHECK(tfm_decode_stream_create(tokenizer, 0, &stream) == nullptr);
  std::string streamed;
  for (int64_t i = 0; i < e.length; ++i) {
    const char *piece = nullptr;
    size_t pieceSize = 0;
    status = tfm_decode_stream_step(stream, e.ids[i], &piece, &pieceSize);
    if (status) {
      // A decoder whose output for a prefix is not a prefix of the whole
      // (possible with odd Replace/Strip chains) is reported, not hidden.
      tfm_status_free(status);
      streamed.clear();
      break;
    }
    TFM_FUZZ_CHECK(isUtf8(std::string(piece, pieceSize)));
    streamed.append(piece, pieceSize);
  }
  tfm_decode_stream_release(stream);
  TFM_FUZZ_CHECK(streamed.empty() || whole.rfind(streamed, 0) == 0);
  tfm_encoding_release(&e);
  tfm_tokenizer_release(tokenizer);
  return 0;
}
