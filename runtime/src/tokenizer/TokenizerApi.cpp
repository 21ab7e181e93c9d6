//===- TokenizerApi.cpp - The C API of tfm/tokenizer.h ----------*- C++ -*-===//
//
// Wraps tfm::rt::tok::Tokenizer: arguments are checked here, exceptions
// become statuses (TokenizerError: its message; anything else through
// guard()), and results are copied into malloc'd C arrays.
//
//===----------------------------------------------------------------------===//

#include "tfm/tokenizer.h"

#include "../File.h"
#include "../Status.h"
#include "Tokenizer.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sys/stat.h>

using tfm::rt::guard;
using tfm::rt::makeStatus;
using tfm::rt::tok::Tokenizer;
using tfm::rt::tok::TokenizerError;

struct tfm_tokenizer_t {
  std::unique_ptr<Tokenizer> impl;
};

struct tfm_decode_stream_t {
  const Tokenizer *tokenizer;
  bool skipSpecial;
  std::vector<int64_t> ids;
  std::string prefix;
  size_t prefixIndex = 0;
  std::string text;
};

namespace {

/// Reads a whole file; false with `error` ("PATH: ...") and `notFound`.
bool readWholeFile(const std::string &path, std::string &out,
                   std::string &error, bool &notFound) {
  tfm::rt::InputFile file;
  if (!file.open(path, error, notFound))
    return false;
  out.resize(size_t(file.size()));
  return file.readAt(0, out.data(), file.size(), error);
}

tfm_status nullArgument(const char *function, const char *argument) {
  return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                    fmt::format("{}: {} is NULL", function, argument));
}

/// Runs `body` and turns a TokenizerError into a status with `code`.
template <typename Body>
tfm_status run(const char *function, tfm_status_code_t code, Body &&body) {
  return guard(function, [&]() -> tfm_status {
    try {
      return body();
    } catch (const TokenizerError &e) {
      return makeStatus(code, e.what());
    }
  });
}

bool endsWithReplacement(const std::string &s) {
  return s.size() >= 3 && s.compare(s.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}

Tokenizer::Options toOptions(const tfm_tokenizer *tokenizer,
                             const tfm_encode_options *options) {
  tfm_encode_options o;
  if (options)
    o = *options;
  else
    tfm_tokenizer_default_encode_options(tokenizer, &o);
  if (o.max_length < 0 || o.pad_to_length < 0 || o.pad_to_multiple_of < 0)
    throw TokenizerError("options: max_length, pad_to_length and "
                         "pad_to_multiple_of must not be negative");
  if (o.truncation_strategy < TFM_TRUNCATE_LONGEST_FIRST ||
      o.truncation_strategy > TFM_TRUNCATE_ONLY_SECOND)
    throw TokenizerError(fmt::format("options: unknown truncation strategy {}",
                                     int(o.truncation_strategy)));
  Tokenizer::Options out;
  out.addSpecial = o.add_special_tokens != 0;
  out.maxLength = size_t(o.max_length);
  out.strategy = int(o.truncation_strategy);
  out.truncateLeft = o.truncate_left != 0;
  out.padTo = size_t(o.pad_to_length);
  out.multipleOf = size_t(o.pad_to_multiple_of);
  out.padLeft = o.pad_left != 0;
  return out;
}

template <typename T> T *copyArray(const std::vector<T> &v) {
  T *out =
      static_cast<T *>(std::malloc(std::max<size_t>(1, v.size()) * sizeof(T)));
  if (!out)
    throw std::bad_alloc();
  if (!v.empty())
    std::memcpy(out, v.data(), v.size() * sizeof(T));
  return out;
}

} // namespace

extern "C" {

tfm_status tfm_tokenizer_load_json(const char *path,
                                   tfm_tokenizer **out_tokenizer) {
  if (out_tokenizer)
    *out_tokenizer = nullptr;
  if (!path)
    return nullArgument("tfm_tokenizer_load_json", "path");
  if (!out_tokenizer)
    return nullArgument("tfm_tokenizer_load_json", "out_tokenizer");
  return run("tfm_tokenizer_load_json", TFM_STATUS_FORMAT_ERROR, [&] {
    std::string file = path, dir;
    struct stat info;
    if (::stat(path, &info) == 0 && S_ISDIR(info.st_mode)) {
      dir = file;
      file += "/tokenizer.json";
    } else {
      size_t slash = file.rfind('/');
      dir = slash == std::string::npos ? "." : file.substr(0, slash);
    }
    std::string text, error;
    bool notFound = false;
    if (!readWholeFile(file, text, error, notFound))
      return makeStatus(notFound ? TFM_STATUS_NOT_FOUND : TFM_STATUS_IO_ERROR,
                        error);
    auto tokenizer = std::make_unique<tfm_tokenizer_t>();
    tokenizer->impl = tfm::rt::tok::loadTokenizerJson(text, file);
    std::string configPath = dir + "/tokenizer_config.json", config;
    if (readWholeFile(configPath, config, error, notFound))
      tfm::rt::tok::applyTokenizerConfig(*tokenizer->impl, config, configPath);
    else if (!notFound)
      return makeStatus(TFM_STATUS_IO_ERROR, error);
    *out_tokenizer = tokenizer.release();
    return tfm_status(nullptr);
  });
}

tfm_status tfm_tokenizer_load_json_string(const char *json, size_t size,
                                          tfm_tokenizer **out_tokenizer) {
  if (out_tokenizer)
    *out_tokenizer = nullptr;
  if (!json && size)
    return nullArgument("tfm_tokenizer_load_json_string", "json");
  if (!out_tokenizer)
    return nullArgument("tfm_tokenizer_load_json_string", "out_tokenizer");
  return run("tfm_tokenizer_load_json_string", TFM_STATUS_FORMAT_ERROR, [&] {
    auto tokenizer = std::make_unique<tfm_tokenizer_t>();
    tokenizer->impl = tfm::rt::tok::loadTokenizerJson(
        std::string_view(json ? json : "", size), "tokenizer.json");
    *out_tokenizer = tokenizer.release();
    return tfm_status(nullptr);
  });
}

tfm_status tfm_tokenizer_load_gguf(const char *path,
                                   tfm_tokenizer **out_tokenizer) {
  if (out_tokenizer)
    *out_tokenizer = nullptr;
  if (!path)
    return nullArgument("tfm_tokenizer_load_gguf", "path");
  if (!out_tokenizer)
    return nullArgument("tfm_tokenizer_load_gguf", "out_tokenizer");
  return run("tfm_tokenizer_load_gguf", TFM_STATUS_FORMAT_ERROR, [&] {
    struct stat info;
    if (::stat(path, &info) != 0)
      return makeStatus(TFM_STATUS_NOT_FOUND,
                        fmt::format("{}: {}", path, std::strerror(errno)));
    auto tokenizer = std::make_unique<tfm_tokenizer_t>();
    tokenizer->impl = tfm::rt::tok::loadTokenizerGguf(path);
    *out_tokenizer = tokenizer.release();
    return tfm_status(nullptr);
  });
}

tfm_status tfm_tokenizer_load_gguf_memory(const void *data, size_t size,
                                          tfm_tokenizer **out_tokenizer) {
  if (out_tokenizer)
    *out_tokenizer = nullptr;
  if (!data && size)
    return nullArgument("tfm_tokenizer_load_gguf_memory", "data");
  if (!out_tokenizer)
    return nullArgument("tfm_tokenizer_load_gguf_memory", "out_tokenizer");
  return run("tfm_tokenizer_load_gguf_memory", TFM_STATUS_FORMAT_ERROR, [&] {
    auto tokenizer = std::make_unique<tfm_tokenizer_t>();
    tokenizer->impl =
        tfm::rt::tok::loadTokenizerGgufMemory(data ? data : "", size, "GGUF");
    *out_tokenizer = tokenizer.release();
    return tfm_status(nullptr);
  });
}

void tfm_tokenizer_release(tfm_tokenizer *tokenizer) { delete tokenizer; }

tfm_status tfm_tokenizer_embedded(const void *data, size_t size,
                                  const tfm_tokenizer **out_tokenizer) {
  if (out_tokenizer)
    *out_tokenizer = nullptr;
  if (!data)
    return nullArgument("tfm_tokenizer_embedded", "data");
  if (!out_tokenizer)
    return nullArgument("tfm_tokenizer_embedded", "out_tokenizer");
  // One tokenizer per artifact's bytes, for the process's life. Loading
  // under the lock keeps two threads from loading the same one twice.
  static std::mutex mutex;
  static auto *loaded = new std::map<const void *, tfm_tokenizer *>();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded->find(data); it != loaded->end()) {
    *out_tokenizer = it->second;
    return nullptr;
  }
  tfm_tokenizer *tokenizer = nullptr;
  bool gguf = size >= 4 && std::memcmp(data, "GGUF", 4) == 0;
  tfm_status status =
      gguf ? tfm_tokenizer_load_gguf_memory(data, size, &tokenizer)
           : tfm_tokenizer_load_json_string(static_cast<const char *>(data),
                                            size, &tokenizer);
  if (status)
    return status;
  (*loaded)[data] = tokenizer;
  *out_tokenizer = tokenizer;
  return nullptr;
}

namespace {
/// The code of `status`, which it frees.
int32_t codeOf(tfm_status status) {
  int32_t code = tfm_status_code(status);
  tfm_status_free(status);
  return code;
}
} // namespace

int32_t tfm_embedded_tokenize(const void *data, size_t size, const char *text,
                              size_t text_size, int32_t add_special_tokens,
                              int64_t *ids, int64_t capacity,
                              int64_t *out_count) {
  if (out_count)
    *out_count = 0;
  if (!out_count || (!text && text_size) || (!ids && capacity > 0))
    return TFM_STATUS_INVALID_ARGUMENT;
  const tfm_tokenizer *tokenizer = nullptr;
  if (tfm_status status = tfm_tokenizer_embedded(data, size, &tokenizer))
    return codeOf(status);
  tfm_encode_options options;
  tfm_tokenizer_default_encode_options(tokenizer, &options);
  options.add_special_tokens = add_special_tokens != 0;
  options.pad_to_length = 0;
  options.pad_to_multiple_of = 0;
  tfm_encoding encoding{};
  if (tfm_status status =
          tfm_tokenizer_encode(tokenizer, text ? text : "", text_size, nullptr,
                               0, &options, &encoding))
    return codeOf(status);
  *out_count = encoding.length;
  bool fits = encoding.length <= capacity;
  if (fits && encoding.length > 0)
    std::memcpy(ids, encoding.ids, size_t(encoding.length) * sizeof(int64_t));
  tfm_encoding_release(&encoding);
  return fits ? TFM_STATUS_OK : TFM_STATUS_SHAPE_MISMATCH;
}

int32_t tfm_embedded_detokenize(const void *data, size_t size,
                                const int64_t *ids, int64_t count,
                                int32_t skip_special_tokens, char *text,
                                int64_t capacity, int64_t *out_size) {
  if (out_size)
    *out_size = 0;
  if (!out_size || count < 0 || (!ids && count) || (!text && capacity > 0))
    return TFM_STATUS_INVALID_ARGUMENT;
  const tfm_tokenizer *tokenizer = nullptr;
  if (tfm_status status = tfm_tokenizer_embedded(data, size, &tokenizer))
    return codeOf(status);
  char *decoded = nullptr;
  size_t decodedSize = 0;
  if (tfm_status status =
          tfm_tokenizer_decode(tokenizer, ids, size_t(count),
                               skip_special_tokens, &decoded, &decodedSize))
    return codeOf(status);
  *out_size = int64_t(decodedSize);
  bool fits = int64_t(decodedSize) < capacity;
  if (fits)
    std::memcpy(text, decoded, decodedSize + 1);
  tfm_tokenizer_free_text(decoded);
  return fits ? TFM_STATUS_OK : TFM_STATUS_SHAPE_MISMATCH;
}

int64_t tfm_tokenizer_vocab_size(const tfm_tokenizer *tokenizer) {
  return tokenizer ? int64_t(tokenizer->impl->vocabSize()) : 0;
}

const char *tfm_tokenizer_id_to_token(const tfm_tokenizer *tokenizer,
                                      int64_t id) {
  if (!tokenizer)
    return nullptr;
  const std::string *t = tokenizer->impl->token(id);
  return t ? t->c_str() : nullptr;
}

int64_t tfm_tokenizer_token_to_id(const tfm_tokenizer *tokenizer,
                                  const char *token) {
  if (!tokenizer || !token)
    return -1;
  try {
    return tokenizer->impl->id(token);
  } catch (...) {
    return -1;
  }
}

int32_t tfm_tokenizer_is_special(const tfm_tokenizer *tokenizer, int64_t id) {
  return tokenizer && tokenizer->impl->isSpecial(id) ? 1 : 0;
}

int64_t tfm_tokenizer_special_id(const tfm_tokenizer *tokenizer,
                                 const char *role) {
  if (!tokenizer || !role)
    return -1;
  try {
    auto it = tokenizer->impl->roles.find(role);
    return it == tokenizer->impl->roles.end() ? -1 : it->second;
  } catch (...) {
    return -1;
  }
}

void tfm_tokenizer_default_encode_options(const tfm_tokenizer *tokenizer,
                                          tfm_encode_options *out_options) {
  if (!out_options)
    return;
  *out_options = tfm_encode_options{};
  out_options->add_special_tokens = 1;
  if (!tokenizer)
    return;
  const Tokenizer &t = *tokenizer->impl;
  out_options->max_length = int64_t(t.truncation.maxLength);
  out_options->truncation_strategy =
      tfm_truncation_strategy(t.truncation.strategy);
  out_options->truncate_left = t.truncation.left;
  if (t.padding.enabled) {
    out_options->pad_to_length = int64_t(t.padding.fixedLength);
    out_options->pad_to_multiple_of = int64_t(t.padding.multipleOf);
    out_options->pad_left = t.padding.left;
  }
}

tfm_status tfm_tokenizer_encode(const tfm_tokenizer *tokenizer,
                                const char *text, size_t text_size,
                                const char *pair, size_t pair_size,
                                const tfm_encode_options *options,
                                tfm_encoding *out_encoding) {
  if (out_encoding)
    *out_encoding = tfm_encoding{};
  if (!tokenizer)
    return nullArgument("tfm_tokenizer_encode", "tokenizer");
  if (!text && text_size)
    return nullArgument("tfm_tokenizer_encode", "text");
  if (!out_encoding)
    return nullArgument("tfm_tokenizer_encode", "out_encoding");
  return run("tfm_tokenizer_encode", TFM_STATUS_INVALID_ARGUMENT, [&] {
    Tokenizer::Options o = toOptions(tokenizer, options);
    std::string_view first(text ? text : "", text_size);
    std::string_view second(pair ? pair : "", pair ? pair_size : 0);
    tfm::rt::tok::Encoding e;
    tokenizer->impl->encode(first, pair ? &second : nullptr, o, e);
    std::vector<int64_t> offsets(2 * e.size());
    for (size_t i = 0; i < e.size(); ++i) {
      offsets[2 * i] = e.begins[i];
      offsets[2 * i + 1] = e.ends[i];
    }
    tfm_encoding out{};
    out.length = int64_t(e.size());
    try {
      out.ids = copyArray(e.ids);
      out.type_ids = copyArray(e.typeIds);
      out.attention_mask = copyArray(e.attention);
      out.special_tokens_mask = copyArray(e.specialMask);
      out.offsets = copyArray(offsets);
      out.sequence_ids = copyArray(e.sequenceIds);
    } catch (...) {
      tfm_encoding_release(&out);
      throw;
    }
    *out_encoding = out;
    return tfm_status(nullptr);
  });
}

void tfm_encoding_release(tfm_encoding *encoding) {
  if (!encoding)
    return;
  std::free(encoding->ids);
  std::free(encoding->type_ids);
  std::free(encoding->attention_mask);
  std::free(encoding->special_tokens_mask);
  std::free(encoding->offsets);
  std::free(encoding->sequence_ids);
  *encoding = tfm_encoding{};
}

tfm_status tfm_tokenizer_encode_batch(const tfm_tokenizer *tokenizer,
                                      const char *const *texts,
                                      const char *const *pairs, size_t count,
                                      const tfm_encode_options *options,
                                      tfm_tensor *out_input_ids,
                                      tfm_tensor *out_token_type_ids,
                                      tfm_tensor *out_attention_mask) {
  for (tfm_tensor *t : {out_input_ids, out_token_type_ids, out_attention_mask})
    if (t)
      *t = tfm_tensor{};
  if (!tokenizer)
    return nullArgument("tfm_tokenizer_encode_batch", "tokenizer");
  if (!texts && count)
    return nullArgument("tfm_tokenizer_encode_batch", "texts");
  for (size_t i = 0; i < count; ++i)
    if (!texts[i] || (pairs && !pairs[i]))
      return makeStatus(TFM_STATUS_INVALID_ARGUMENT,
                        fmt::format("tfm_tokenizer_encode_batch: {}[{}] is "
                                    "NULL",
                                    texts[i] ? "pairs" : "texts", i));
  return run("tfm_tokenizer_encode_batch", TFM_STATUS_INVALID_ARGUMENT, [&] {
    Tokenizer::Options o = toOptions(tokenizer, options);
    std::vector<tfm::rt::tok::Encoding> encodings(count);
    size_t longest = 0;
    for (size_t i = 0; i < count; ++i) {
      std::string_view pair = pairs ? std::string_view(pairs[i]) : "";
      tokenizer->impl->encode(texts[i], pairs ? &pair : nullptr, o,
                              encodings[i]);
      longest = std::max(longest, encodings[i].size());
    }
    for (auto &e : encodings)
      tokenizer->impl->pad(e, longest, o.padLeft);
    int64_t shape[2] = {int64_t(count), int64_t(longest)};
    tfm_tensor *outs[3] = {out_input_ids, out_token_type_ids,
                           out_attention_mask};
    for (int k = 0; k < 3; ++k) {
      if (!outs[k])
        continue;
      tfm_tensor t{};
      if (tfm_status s = tfm_tensor_allocate(TFM_DTYPE_I64, 2, shape, &t)) {
        for (int j = 0; j < k; ++j)
          if (outs[j])
            tfm_tensor_release_data(outs[j]);
        return s;
      }
      auto *data = static_cast<int64_t *>(t.data);
      for (size_t i = 0; i < count; ++i) {
        const auto &e = encodings[i];
        const std::vector<int64_t> &src = k == 0   ? e.ids
                                          : k == 1 ? e.typeIds
                                                   : e.attention;
        std::copy(src.begin(), src.end(), data + i * longest);
      }
      *outs[k] = t;
    }
    return tfm_status(nullptr);
  });
}

tfm_status tfm_tokenizer_decode(const tfm_tokenizer *tokenizer,
                                const int64_t *ids, size_t count,
                                int32_t skip_special_tokens, char **out_text,
                                size_t *out_size) {
  if (out_text)
    *out_text = nullptr;
  if (out_size)
    *out_size = 0;
  if (!tokenizer)
    return nullArgument("tfm_tokenizer_decode", "tokenizer");
  if (!ids && count)
    return nullArgument("tfm_tokenizer_decode", "ids");
  if (!out_text)
    return nullArgument("tfm_tokenizer_decode", "out_text");
  return run("tfm_tokenizer_decode", TFM_STATUS_INVALID_ARGUMENT, [&] {
    std::string text =
        tokenizer->impl->decode(ids, count, skip_special_tokens != 0);
    char *out = static_cast<char *>(std::malloc(text.size() + 1));
    if (!out)
      throw std::bad_alloc();
    std::memcpy(out, text.c_str(), text.size() + 1);
    *out_text = out;
    if (out_size)
      *out_size = text.size();
    return tfm_status(nullptr);
  });
}

void tfm_tokenizer_free_text(char *text) { std::free(text); }

tfm_status tfm_decode_stream_create(const tfm_tokenizer *tokenizer,
                                    int32_t skip_special_tokens,
                                    tfm_decode_stream **out_stream) {
  if (out_stream)
    *out_stream = nullptr;
  if (!tokenizer)
    return nullArgument("tfm_decode_stream_create", "tokenizer");
  if (!out_stream)
    return nullArgument("tfm_decode_stream_create", "out_stream");
  return run("tfm_decode_stream_create", TFM_STATUS_INVALID_ARGUMENT, [&] {
    auto stream = std::make_unique<tfm_decode_stream_t>();
    stream->tokenizer = tokenizer->impl.get();
    stream->skipSpecial = skip_special_tokens != 0;
    *out_stream = stream.release();
    return tfm_status(nullptr);
  });
}

tfm_status tfm_decode_stream_step(tfm_decode_stream *stream, int64_t id,
                                  const char **out_text, size_t *out_size) {
  if (out_text)
    *out_text = nullptr;
  if (out_size)
    *out_size = 0;
  if (!stream)
    return nullArgument("tfm_decode_stream_step", "stream");
  if (!out_text)
    return nullArgument("tfm_decode_stream_step", "out_text");
  return run("tfm_decode_stream_step", TFM_STATUS_RUNTIME_ERROR, [&] {
    // The package's step_decode_stream: the text of the ids since the last
    // complete step, less what those ids decoded to without the new one.
    tfm_decode_stream_t &s = *stream;
    auto decode = [&](const std::vector<int64_t> &ids) {
      return s.tokenizer->decode(ids.data(), ids.size(), s.skipSpecial);
    };
    s.text.clear();
    if (s.prefix.empty() && !s.ids.empty()) {
      std::string prefix = decode(s.ids);
      if (!endsWithReplacement(prefix)) {
        s.prefix = std::move(prefix);
        s.prefixIndex = s.ids.size();
      }
    }
    s.ids.push_back(id);
    std::string all = decode(s.ids);
    if (all.size() > s.prefix.size() && !endsWithReplacement(all)) {
      if (all.compare(0, s.prefix.size(), s.prefix) != 0)
        throw TokenizerError(fmt::format(
            "tfm_decode_stream_step: decoding id {} changed the text before "
            "it ('{}' no longer starts it)",
            id, tfm::rt::tok::printableToken(s.prefix)));
      s.text = all.substr(s.prefix.size());
      size_t newIndex = s.ids.size() - s.prefixIndex;
      s.ids.erase(s.ids.begin(), s.ids.begin() + long(s.prefixIndex));
      s.prefix = decode(s.ids);
      s.prefixIndex = newIndex;
    }
    *out_text = s.text.c_str();
    if (out_size)
      *out_size = s.text.size();
    return tfm_status(nullptr);
  });
}

tfm_status tfm_decode_stream_finish(tfm_decode_stream *stream,
                                    const char **out_text, size_t *out_size) {
  if (out_text)
    *out_text = nullptr;
  if (out_size)
    *out_size = 0;
  if (!stream)
    return nullArgument("tfm_decode_stream_finish", "stream");
  if (!out_text)
    return nullArgument("tfm_decode_stream_finish", "out_text");
  return run("tfm_decode_stream_finish", TFM_STATUS_RUNTIME_ERROR, [&] {
    tfm_decode_stream_t &s = *stream;
    std::string all =
        s.tokenizer->decode(s.ids.data(), s.ids.size(), s.skipSpecial);
    s.text.clear();
    if (all.size() > s.prefix.size() &&
        all.compare(0, s.prefix.size(), s.prefix) == 0)
      s.text = all.substr(s.prefix.size());
    s.ids.clear();
    s.prefix.clear();
    s.prefixIndex = 0;
    *out_text = s.text.c_str();
    if (out_size)
      *out_size = s.text.size();
    return tfm_status(nullptr);
  });
}

void tfm_decode_stream_release(tfm_decode_stream *stream) { delete stream; }

} // extern "C"
