/*===- tokenizer.h - Text to token ids and back ------------------*- C -*-===*\
|*                                                                            *|
|* The tokenizer of a checkpoint, read from a Hugging Face tokenizer.json or  *|
|* from the tokenizer.ggml.* metadata of a GGUF file, so that an app goes     *|
|* from text to a model's inputs and from generated ids back to text in C     *|
|* (docs/tokenizers.md). It encodes as the `tokenizers` package does: the     *|
|* same ids, type ids, masks and offsets. Families: WordPiece (BERT),         *|
|* byte-level BPE (GPT-2, Llama 3, Qwen 2) and SentencePiece-style BPE with   *|
|* byte fallback (Llama 2, Gemma).                                            *|
|*                                                                            *|
|* Conventions are runtime.h's: a tfm_status per fallible call (NULL is OK),  *|
|* `out_` parameters, opaque handles with create/release pairs, no C++        *|
|* exception crosses the API and a NULL pointer is INVALID_ARGUMENT.          *|
|*                                                                            *|
|* Text is UTF-8. Bytes that are not well-formed UTF-8 are read as U+FFFD,    *|
|* one per maximal ill-formed subpart (what Python's                          *|
|* bytes.decode("utf-8", "replace") gives), and offsets still count the       *|
|* input's bytes.                                                             *|
|*                                                                            *|
|* Threads: a tfm_tokenizer is immutable once loaded; every function may be   *|
|* called on one tokenizer from several threads at once, as long as none      *|
|* overlaps tfm_tokenizer_release. A tfm_decode_stream is used by one thread  *|
|* at a time and must be released before its tokenizer.                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TFM_TOKENIZER_H
#define TFM_TOKENIZER_H

#include "tfm/runtime.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfm_tokenizer_t tfm_tokenizer;

/*===----------------------------------------------------------------------===*\
|* Loading                                                                    *|
\*===----------------------------------------------------------------------===*/

/* Reads a Hugging Face tokenizer.json: `path` is the file, or a directory
   holding tokenizer.json (a checkpoint's folder). A tokenizer_config.json
   beside it, when there is one, names the bos/eos tokens
   (tfm_tokenizer_special_id). NOT_FOUND for a missing file, FORMAT_ERROR
   naming the file and the field for a malformed or unsupported one. */
tfm_status tfm_tokenizer_load_json(const char *path,
                                   tfm_tokenizer **out_tokenizer);

/* The same from the `size` bytes of a tokenizer.json's text at `json`
   (messages say "tokenizer.json"). */
tfm_status tfm_tokenizer_load_json_string(const char *json, size_t size,
                                          tfm_tokenizer **out_tokenizer);

/* Reads the tokenizer of a GGUF file (llama.cpp's): tokenizer.ggml.model
   "llama" (SentencePiece BPE over tokens and scores, with byte fallback) or
   "gpt2" (byte-level BPE over tokens and merges, the pre-tokenizer named by
   tokenizer.ggml.pre), token types (control and user-defined tokens are
   matched in the text first), the bos/eos/unk/pad ids and add_bos_token /
   add_eos_token / add_space_prefix. */
tfm_status tfm_tokenizer_load_gguf(const char *path,
                                   tfm_tokenizer **out_tokenizer);

/* The same from the `size` bytes of a GGUF file at `data` (its header and
   metadata suffice: tensor infos and data may be absent). The bytes are
   needed only during the call. Messages say "GGUF". */
tfm_status tfm_tokenizer_load_gguf_memory(const void *data, size_t size,
                                          tfm_tokenizer **out_tokenizer);

/* Frees the tokenizer. NULL is a no-op. */
void tfm_tokenizer_release(tfm_tokenizer *tokenizer);

/*===----------------------------------------------------------------------===*\
|* Vocabulary                                                                 *|
\*===----------------------------------------------------------------------===*/

/* One more than the largest id (model vocabulary and added tokens); 0 for
   NULL. */
int64_t tfm_tokenizer_vocab_size(const tfm_tokenizer *tokenizer);

/* The token of `id` (NUL-terminated, owned by the tokenizer), or NULL for an
   id no token has. */
const char *tfm_tokenizer_id_to_token(const tfm_tokenizer *tokenizer,
                                      int64_t id);

/* The id of the token `token` (NUL-terminated), or -1. */
int64_t tfm_tokenizer_token_to_id(const tfm_tokenizer *tokenizer,
                                  const char *token);

/* 1 when `id` is a special added token ([CLS], <s>, <|endoftext|>): one that
   decoding with skip_special_tokens leaves out; else 0. */
int32_t tfm_tokenizer_is_special(const tfm_tokenizer *tokenizer, int64_t id);

/* The id of a special token by role: "bos", "eos", "unk", "pad", "cls",
   "sep"; -1 when the tokenizer has none. Sources: GGUF's
   tokenizer.ggml.<role>_token_id; for tokenizer.json the model's unk token,
   the padding's pad id, the post-processor's [CLS]/[SEP] and
   tokenizer_config.json's bos_token/eos_token. */
int64_t tfm_tokenizer_special_id(const tfm_tokenizer *tokenizer,
                                 const char *role);

/*===----------------------------------------------------------------------===*\
|* Encoding                                                                   *|
\*===----------------------------------------------------------------------===*/

typedef enum tfm_truncation_strategy_t {
  /* Takes tokens from the longer of text and pair, one at a time. */
  TFM_TRUNCATE_LONGEST_FIRST = 0,
  TFM_TRUNCATE_ONLY_FIRST = 1,
  TFM_TRUNCATE_ONLY_SECOND = 2,
} tfm_truncation_strategy;

typedef struct tfm_encode_options_t {
  /* 1: the post-processor's special tokens ([CLS] A [SEP] B [SEP], <s>
     ...); 0: the text's tokens only. */
  int32_t add_special_tokens;
  /* > 0: at most this many ids, special tokens included (what is cut is
     lost, as with the `tokenizers` package's stride 0); 0: no limit. */
  int64_t max_length;
  tfm_truncation_strategy truncation_strategy;
  /* 1: cut from the start of the text instead of its end. */
  int32_t truncate_left;
  /* > 0: pad to at least this length; 0: no padding (a batch still pads
     to its longest encoding). */
  int64_t pad_to_length;
  /* > 0: pad the length up to a multiple of this. */
  int64_t pad_to_multiple_of;
  /* 1: padding goes before the tokens. */
  int32_t pad_left;
} tfm_encode_options;

/* The options a tokenizer's file asks for: its "truncation" and "padding"
   (a Fixed padding length becomes pad_to_length), add_special_tokens 1.
   All zeros but add_special_tokens for a NULL tokenizer. */
void tfm_tokenizer_default_encode_options(const tfm_tokenizer *tokenizer,
                                          tfm_encode_options *out_options);

/* One encoded text: `length` tokens, each array `length` long (offsets
   2 * length), allocated by the runtime. */
typedef struct tfm_encoding_t {
  int64_t length;
  int64_t *ids;
  /* 0 for the text, 1 for the pair (as the post-processor says). */
  int64_t *type_ids;
  /* 1 for tokens, 0 for padding. */
  int64_t *attention_mask;
  /* 1 for the tokens the post-processor added and for padding. */
  int64_t *special_tokens_mask;
  /* [begin, end) of each token in bytes of the text it came from (text or
     pair, sequence_ids says which); 0, 0 for added special tokens and
     padding. */
  int64_t *offsets;
  /* 0: from the text, 1: from the pair, -1: added by the post-processor or
     padding. */
  int32_t *sequence_ids;
} tfm_encoding;

/* Encodes `text_size` bytes of `text` (and, when `pair` is not NULL,
   `pair_size` bytes of a second sequence) with `options` (NULL: the
   tokenizer's defaults). On failure `*out_encoding` is all zeros.
   INVALID_ARGUMENT when max_length cannot hold the special tokens, or
   ONLY_FIRST/ONLY_SECOND truncation would need to cut more than that
   sequence has. */
tfm_status tfm_tokenizer_encode(const tfm_tokenizer *tokenizer,
                                const char *text, size_t text_size,
                                const char *pair, size_t pair_size,
                                const tfm_encode_options *options,
                                tfm_encoding *out_encoding);

/* Frees the arrays of an encoding and zeros it. NULL is a no-op. */
void tfm_encoding_release(tfm_encoding *encoding);

/* Encodes `count` NUL-terminated texts (and pairs: NULL, or `count`
   strings) and writes the model inputs of a BERT-style encoder: i64
   tensors [count, L] padded to the longest encoding (or further, as the
   options say) with the padding's pad id and type id. Any of the out
   tensors may be NULL; the others are allocated as by tfm_tensor_allocate
   and freed with tfm_tensor_release_data. */
tfm_status tfm_tokenizer_encode_batch(const tfm_tokenizer *tokenizer,
                                      const char *const *texts,
                                      const char *const *pairs, size_t count,
                                      const tfm_encode_options *options,
                                      tfm_tensor *out_input_ids,
                                      tfm_tensor *out_token_type_ids,
                                      tfm_tensor *out_attention_mask);

/*===----------------------------------------------------------------------===*\
|* Decoding                                                                   *|
\*===----------------------------------------------------------------------===*/

/* The text of `count` ids through the tokenizer's decoder (byte-level
   bytes, ## continuations, the SentencePiece space): `*out_text` is
   NUL-terminated UTF-8 of `*out_size` bytes (out_size may be NULL), freed
   with tfm_tokenizer_free_text. With `skip_special_tokens` special tokens
   are left out. Ids that no token has are skipped, as the `tokenizers`
   package does. Bytes that do not form UTF-8 become U+FFFD. */
tfm_status tfm_tokenizer_decode(const tfm_tokenizer *tokenizer,
                                const int64_t *ids, size_t count,
                                int32_t skip_special_tokens, char **out_text,
                                size_t *out_size);

/* Frees a text from tfm_tokenizer_decode. NULL is a no-op. */
void tfm_tokenizer_free_text(char *text);

/* Decodes generated ids one at a time, as the `tokenizers` package's
   DecodeStream does: each step gives the text the new id completes, never a
   part of a UTF-8 character, and the steps' texts add up to
   tfm_tokenizer_decode of all the ids. */
typedef struct tfm_decode_stream_t tfm_decode_stream;

tfm_status tfm_decode_stream_create(const tfm_tokenizer *tokenizer,
                                    int32_t skip_special_tokens,
                                    tfm_decode_stream **out_stream);

/* Adds `id`; `*out_text` is the new text (possibly empty: "" with
   `*out_size` 0), owned by the stream and valid until its next call. */
tfm_status tfm_decode_stream_step(tfm_decode_stream *stream, int64_t id,
                                  const char **out_text, size_t *out_size);

/* The text still held back at the end of a generation (an incomplete UTF-8
   character, as U+FFFD), and resets the stream. Same ownership as
   tfm_decode_stream_step. */
tfm_status tfm_decode_stream_finish(tfm_decode_stream *stream,
                                    const char **out_text, size_t *out_size);

/* NULL is a no-op. */
void tfm_decode_stream_release(tfm_decode_stream *stream);

/*===----------------------------------------------------------------------===*\
|* Tokenizers embedded in artifacts                                           *|
\*===----------------------------------------------------------------------===*/

/* An artifact compiled with `tfm-compile --tokenizer` holds the tokenizer's
   bytes (tfm_<model>_tokenizer_data, TFM_<MODEL>_TOKENIZER_SIZE in its
   header): a tokenizer.json, or the header and metadata of a GGUF file (the
   bytes start with "GGUF"). These read them (docs/tokenizers.md). */

/* The tokenizer of the `size` bytes at `data`, loaded at the first call for
   `data` and kept until the process exits; later calls (from any thread)
   return the same one. It belongs to the runtime: never release it. The
   bytes must stay valid and unchanged for the process's life (an
   artifact's constant data does). */
tfm_status tfm_tokenizer_embedded(const void *data, size_t size,
                                  const tfm_tokenizer **out_tokenizer);

/* The tokenizer embedded in a loaded artifact (tfm_model_load of a .so
   compiled with --tokenizer): loaded at the first call, owned by the model
   and valid until tfm_model_release. NOT_FOUND when the artifact has none
   (also for tfm_model_create_from_symbols models), FORMAT_ERROR when it
   does not load. Thread-safe. */
tfm_status tfm_model_tokenizer(const tfm_model *model,
                               const tfm_tokenizer **out_tokenizer);

/* What a generated header's tfm_<model>_tokenize calls: encodes
   `text_size` bytes of `text` with the tokenizer's own options (truncation
   as its file says, no padding), with or without its special tokens, and
   writes the ids to `ids` when `capacity` holds them. `*out_count` is the
   number of ids either way. Returns a tfm_status_code: TFM_STATUS_OK, or
   TFM_STATUS_SHAPE_MISMATCH when the ids do not fit (none are written; call
   again with *out_count), TFM_STATUS_FORMAT_ERROR when the embedded
   tokenizer does not load, TFM_STATUS_INVALID_ARGUMENT for NULL pointers.
   Thread-safe. */
int32_t tfm_embedded_tokenize(const void *data, size_t size, const char *text,
                              size_t text_size, int32_t add_special_tokens,
                              int64_t *ids, int64_t capacity,
                              int64_t *out_count);

/* What tfm_<model>_detokenize calls: the text of `count` ids (as
   tfm_tokenizer_decode), NUL-terminated into `text` when `capacity` bytes
   hold it and its NUL; `*out_size` is its size without the NUL either way.
   Same codes as tfm_embedded_tokenize. */
int32_t tfm_embedded_detokenize(const void *data, size_t size,
                                const int64_t *ids, int64_t count,
                                int32_t skip_special_tokens, char *text,
                                int64_t capacity, int64_t *out_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TFM_TOKENIZER_H */
