/* generate-c: greedy generation with a GPT-2 compiled by tfm-compile, in
 * plain C (no runtime library, no tokenizer): token ids in, token ids out.
 *
 *   generate-c [--logits FILE] N_NEW ID ID ...
 *
 * runs the prompt once (prefill), then one decode step per new token, each
 * appending to key/value caches that this program owns, and prints the
 * prompt and the N_NEW generated ids. With --logits, the logits that chose
 * each new token are also written to FILE (float32, N_NEW rows of the
 * vocabulary size). */
#include "gpt2.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Capacity and vocabulary from the generated header: the cache's position
 * dim, and the logits of one token. */
#define CAPACITY TFM_GPT2_K_CACHE_DIM3
#define VOCAB TFM_GPT2_LOGITS_COUNT(1, 1)

static int64_t argmax(const float *row) {
  int64_t best = 0;
  for (int64_t i = 1; i < VOCAB; ++i)
    if (row[i] > row[best])
      best = i;
  return best;
}

static int usage(void) {
  fprintf(stderr, "usage: generate-c [--logits FILE] N_NEW ID ID ...\n");
  return 2;
}

int main(int argc, char **argv) {
  int arg = 1;
  const char *logitsPath = NULL;
  if (arg + 1 < argc && strcmp(argv[arg], "--logits") == 0) {
    logitsPath = argv[arg + 1];
    arg += 2;
  }
  if (argc - arg < 2)
    return usage();
  long newTokens = strtol(argv[arg++], NULL, 10);
  int64_t promptLength = argc - arg;
  if (newTokens < 1 || promptLength + newTokens > CAPACITY) {
    fprintf(stderr, "generate-c: prompt + new tokens must be 1 to %d\n",
            (int)CAPACITY);
    return 2;
  }
  int64_t tokens[CAPACITY];
  for (int64_t i = 0; i < promptLength; ++i)
    tokens[i] = strtoll(argv[arg + i], NULL, 10);

  /* The caches live as long as the generation; one sequence (batch 1). */
  float *kCache = calloc((size_t)TFM_GPT2_K_CACHE_COUNT(1), sizeof(float));
  float *vCache = calloc((size_t)TFM_GPT2_V_CACHE_COUNT(1), sizeof(float));
  float *logits =
      malloc((size_t)TFM_GPT2_LOGITS_COUNT(1, promptLength) * sizeof(float));
  float *chosen = malloc((size_t)(newTokens * VOCAB) * sizeof(float));
  if (!kCache || !vCache || !logits || !chosen) {
    fprintf(stderr, "generate-c: out of memory\n");
    return 1;
  }

  int64_t length = promptLength, past = 0;
  /* Prefill: the whole prompt at position 0; its last row picks token 1. */
  int32_t status =
      tfm_gpt2_run(tokens, &past, kCache, vCache, logits, 1, promptLength);
  const float *row = logits + (promptLength - 1) * VOCAB;
  for (long step = 0; status == 0; ++step) {
    memcpy(chosen + step * VOCAB, row, VOCAB * sizeof(float));
    tokens[length++] = argmax(row);
    if (step + 1 == newTokens)
      break;
    /* Decode: the one new token, after the `past` tokens in the cache. */
    past = length - 1;
    status = tfm_gpt2_run(tokens + past, &past, kCache, vCache, logits, 1, 1);
    row = logits;
  }
  if (status != 0) {
    fprintf(stderr, "generate-c: the model returned status %d\n", (int)status);
    return 1;
  }

  for (int64_t i = 0; i < length; ++i)
    printf("%s%lld", i ? " " : "", (long long)tokens[i]);
  printf("\n");
  if (logitsPath) {
    FILE *f = fopen(logitsPath, "wb");
    if (!f || fwrite(chosen, sizeof(float), (size_t)(newTokens * VOCAB), f) !=
                  (size_t)(newTokens * VOCAB)) {
      fprintf(stderr, "generate-c: cannot write %s\n", logitsPath);
      return 1;
    }
    fclose(f);
  }
  free(kCache);
  free(vCache);
  free(logits);
  free(chosen);
  return 0;
}
