/* llama-c: text in, text out in plain C with a Llama-family decoder compiled
 * from a GGUF file together with the file's own tokenizer
 * (tfm_add_model(... TOKENIZER model.gguf), docs/tokenizers.md).
 *
 *   llama-c N_NEW "prompt text"
 *
 * tokenizes the prompt with the embedded vocabulary, runs it once (prefill),
 * then one decode step per new token with key/value caches this program
 * owns, and prints the ids and the text (prompt and continuation). Built
 * over a model without a tokenizer (no TFM_LLAMA_HAS_TOKENIZER in llama.h),
 * it takes and prints token ids only:
 *
 *   llama-c N_NEW ID [ID ...] */
#include "llama.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* From the generated header: the caches' capacity (their position dim) and
 * the vocabulary (the logits of one token). */
#define CAPACITY TFM_LLAMA_K_CACHE_DIM3
#define VOCAB TFM_LLAMA_LOGITS_COUNT(1, 1)

static int64_t argmax(const float *row) {
  int64_t best = 0;
  for (int64_t i = 1; i < VOCAB; ++i)
    if (row[i] > row[best])
      best = i;
  return best;
}

int main(int argc, char **argv) {
  static int64_t tokens[CAPACITY];
  int64_t promptLength = 0;
#ifdef TFM_LLAMA_HAS_TOKENIZER
  if (argc != 3) {
    fprintf(stderr, "usage: llama-c N_NEW \"prompt text\"\n");
    return 2;
  }
  /* With the tokenizer's special tokens: Llama's <s> first. */
  int32_t rc = tfm_llama_tokenize(argv[2], strlen(argv[2]), 1, tokens, CAPACITY,
                                  &promptLength);
  if (rc != 0 || promptLength < 1) {
    fprintf(stderr, "llama-c: cannot tokenize the prompt (status %d)\n",
            (int)rc);
    return 1;
  }
#else
  if (argc < 3 || argc - 2 > CAPACITY) {
    fprintf(stderr, "usage: llama-c N_NEW ID [ID ...] (at most %d ids)\n",
            (int)CAPACITY);
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    char *end = NULL;
    long long id = strtoll(argv[i], &end, 10);
    if (*argv[i] == '\0' || *end != '\0' || id < 0 || id >= VOCAB) {
      fprintf(stderr, "llama-c: '%s' is not a token id in [0, %d)\n", argv[i],
              (int)VOCAB);
      return 2;
    }
    tokens[promptLength++] = id;
  }
#endif
  long newTokens = strtol(argv[1], NULL, 10);
  if (newTokens < 1 || promptLength + newTokens > CAPACITY) {
    fprintf(stderr,
            "llama-c: prompt (%lld tokens) + new tokens must be 1 to "
            "%d\n",
            (long long)promptLength, (int)CAPACITY);
    return 2;
  }

  /* One sequence (batch 1): the caches live as long as the generation.
   * Their element type is the artifact's (float, or uint16_t bits when
   * compiled with --kv-cache-dtype bf16/f16): the header's typedefs. */
  tfm_llama_k_cache_t *kCache =
      calloc((size_t)TFM_LLAMA_K_CACHE_COUNT(1), sizeof(tfm_llama_k_cache_t));
  tfm_llama_v_cache_t *vCache =
      calloc((size_t)TFM_LLAMA_V_CACHE_COUNT(1), sizeof(tfm_llama_v_cache_t));
  float *logits =
      malloc((size_t)TFM_LLAMA_LOGITS_COUNT(1, promptLength) * sizeof(float));
  if (!kCache || !vCache || !logits) {
    fprintf(stderr, "llama-c: out of memory\n");
    return 1;
  }

  int64_t length = promptLength, past = 0;
  int32_t status =
      tfm_llama_run(tokens, &past, kCache, vCache, logits, 1, promptLength);
  const float *row = logits + (promptLength - 1) * VOCAB;
  for (long step = 0; status == 0; ++step) {
    tokens[length++] = argmax(row);
    if (step + 1 == newTokens)
      break;
    past = length - 1;
    status = tfm_llama_run(tokens + past, &past, kCache, vCache, logits, 1, 1);
    row = logits;
  }
  if (status != 0) {
    fprintf(stderr, "llama-c: the model returned status %d\n", (int)status);
    return 1;
  }

  printf("ids:");
  for (int64_t i = 0; i < length; ++i)
    printf(" %lld", (long long)tokens[i]);
  printf("\n");
#ifdef TFM_LLAMA_HAS_TOKENIZER
  /* The text without special tokens. A buffer too small (one byte here)
   * writes nothing and says how many bytes the text needs. */
  int64_t size = 0;
  char probe[1];
  rc = tfm_llama_detokenize(tokens, length, 1, probe, 1, &size);
  char *text = malloc((size_t)size + 1);
  if (!text || (rc != 0 && rc != 5) ||
      tfm_llama_detokenize(tokens, length, 1, text, size + 1, &size) != 0) {
    fprintf(stderr, "llama-c: cannot decode the ids\n");
    return 1;
  }
  printf("text: %s\n", text);
  free(text);
#endif
  free(kCache);
  free(vCache);
  free(logits);
  return 0;
}
