/* embed-text-c: sentence embeddings from strings, in plain C. The BERT of
 * examples/bert compiled ahead of time (bert.o + bert.h) and the runtime's
 * tokenizer (tfm/tokenizer.h): text -> input_ids, token_type_ids and
 * attention_mask -> the model -> the mean of the last hidden state over each
 * text's real tokens, L2-normalised (sentence-transformers' Pooling(mean) +
 * Normalize()).
 *
 *   embed-text-c [--expected FILE] [--tolerance T] TOKENIZER TEXT...
 *
 * TOKENIZER is a tokenizer.json (or its directory, or a .gguf file). Prints
 * each text's token count, the first values of its embedding and the cosine
 * similarity of every pair. With --expected, compares the embeddings with
 * FILE (one line of floats per text) and exits 1 when an element differs by
 * more than T (default 1e-4). Exit 2 on bad input (a missing or malformed
 * tokenizer, text that is not UTF-8 or is empty, a token id the model's
 * vocabulary does not have). */
#include "bert.h"
#include "tfm/tokenizer.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIDDEN TFM_BERT_POOLER_OUTPUT_COUNT(1)
/* The vocabulary of the word embedding (examples/bert's checkpoint). */
#define VOCAB 503

static int usage(void) {
  fprintf(stderr, "usage: embed-text-c [--expected FILE] [--tolerance T] "
                  "TOKENIZER TEXT...\n");
  return 2;
}

/* Reports a failed runtime call; returns 1 when `status` is an error. */
static int failed(tfm_status status, const char *what) {
  if (!status)
    return 0;
  fprintf(stderr, "embed-text-c: %s: %s\n", what, tfm_status_message(status));
  tfm_status_free(status);
  return 1;
}

/* 1 when `text` is well-formed UTF-8 (no overlong forms, surrogates or code
 * points past U+10FFFF): the tokenizer would read other bytes as U+FFFD, an
 * app usually wants to know. */
static int is_utf8(const unsigned char *s) {
  while (*s) {
    unsigned char c = *s;
    int n = c < 0x80                 ? 1
            : c >= 0xC2 && c <= 0xDF ? 2
            : c >= 0xE0 && c <= 0xEF ? 3
            : c >= 0xF0 && c <= 0xF4 ? 4
                                     : 0;
    if (n == 0)
      return 0;
    unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    for (int k = 1; k < n; ++k) {
      unsigned char b = s[k];
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF))
        return 0; /* also the terminating NUL of a cut sequence */
    }
    s += n;
  }
  return 1;
}

int main(int argc, char **argv) {
  const char *expectedPath = NULL;
  double tolerance = 1e-4;
  int arg = 1;
  for (; arg + 1 < argc && strncmp(argv[arg], "--", 2) == 0; arg += 2) {
    if (strcmp(argv[arg], "--expected") == 0)
      expectedPath = argv[arg + 1];
    else if (strcmp(argv[arg], "--tolerance") == 0)
      tolerance = strtod(argv[arg + 1], NULL);
    else
      return usage();
  }
  if (argc - arg < 2)
    return usage();
  const char *tokenizerPath = argv[arg++];
  const char *const *texts = (const char *const *)argv + arg;
  size_t count = (size_t)(argc - arg);
  for (size_t i = 0; i < count; ++i) {
    if (!texts[i][0] || !is_utf8((const unsigned char *)texts[i])) {
      fprintf(stderr, "embed-text-c: text %zu is %s\n", i,
              texts[i][0] ? "not valid UTF-8" : "empty");
      return 2;
    }
  }

  size_t pathLength = strlen(tokenizerPath);
  int gguf =
      pathLength > 5 && strcmp(tokenizerPath + pathLength - 5, ".gguf") == 0;
  tfm_tokenizer *tokenizer = NULL;
  if (failed(gguf ? tfm_tokenizer_load_gguf(tokenizerPath, &tokenizer)
                  : tfm_tokenizer_load_json(tokenizerPath, &tokenizer),
             "loading the tokenizer"))
    return 2;

  /* One padded batch: [count, seq] ids, type ids and mask. */
  tfm_tensor ids, types, mask;
  if (failed(tfm_tokenizer_encode_batch(tokenizer, texts, NULL, count, NULL,
                                        &ids, &types, &mask),
             "tokenizing")) {
    tfm_tokenizer_release(tokenizer);
    return 2;
  }
  int64_t batch = ids.shape[0], seq = ids.shape[1];
  const int64_t *idData = ids.data;
  for (int64_t i = 0; i < batch * seq; ++i)
    if (idData[i] < 0 || idData[i] >= VOCAB) {
      fprintf(stderr,
              "embed-text-c: text %lld has the token id %lld, outside the "
              "model's vocabulary of %d (a tokenizer of another model?)\n",
              (long long)(i / seq), (long long)idData[i], VOCAB);
      return 2;
    }

  float *hidden = malloc(sizeof(float) *
                         (size_t)TFM_BERT_LAST_HIDDEN_STATE_COUNT(batch, seq));
  float *pooler =
      malloc(sizeof(float) * (size_t)TFM_BERT_POOLER_OUTPUT_COUNT(batch));
  float *sentence =
      malloc(sizeof(float) * (size_t)TFM_BERT_SENTENCE_EMBEDDING_COUNT(batch));
  double *embedding = malloc(sizeof(double) * (size_t)(batch * HIDDEN));
  if (!hidden || !pooler || !sentence || !embedding) {
    fprintf(stderr, "embed-text-c: out of memory\n");
    return 1;
  }
  int32_t status = tfm_bert_run(ids.data, types.data, mask.data, hidden, pooler,
                                sentence, batch, seq);
  if (status != 0) {
    fprintf(stderr, "embed-text-c: the model failed with status %d\n",
            (int)status);
    return 1;
  }

  /* Mean pooling over the real tokens (mask 1), then L2 normalisation. */
  const int64_t *maskData = mask.data;
  for (int64_t b = 0; b < batch; ++b) {
    double *e = embedding + b * HIDDEN, tokens = 0, norm = 0;
    memset(e, 0, sizeof(double) * HIDDEN);
    for (int64_t t = 0; t < seq; ++t) {
      if (!maskData[b * seq + t])
        continue;
      tokens += 1;
      for (int64_t j = 0; j < HIDDEN; ++j)
        e[j] += hidden[(b * seq + t) * HIDDEN + j];
    }
    for (int64_t j = 0; j < HIDDEN; ++j) {
      e[j] /= tokens > 0 ? tokens : 1;
      norm += e[j] * e[j];
    }
    norm = sqrt(norm) > 1e-12 ? sqrt(norm) : 1e-12;
    for (int64_t j = 0; j < HIDDEN; ++j)
      e[j] /= norm;
    printf("text %lld: %lld tokens, embedding[%d] = %.4f %.4f %.4f %.4f ...\n",
           (long long)b, (long long)tokens, (int)HIDDEN, e[0], e[1], e[2],
           e[3]);
  }
  for (int64_t a = 0; a < batch; ++a)
    for (int64_t b = a + 1; b < batch; ++b) {
      double dot = 0;
      for (int64_t j = 0; j < HIDDEN; ++j)
        dot += embedding[a * HIDDEN + j] * embedding[b * HIDDEN + j];
      printf("cosine(%lld, %lld) = %.4f\n", (long long)a, (long long)b, dot);
    }

  int exitCode = 0;
  if (expectedPath) {
    FILE *file = fopen(expectedPath, "r");
    if (!file) {
      fprintf(stderr, "embed-text-c: cannot open %s\n", expectedPath);
      return 2;
    }
    double worst = 0;
    for (int64_t i = 0; i < batch * HIDDEN; ++i) {
      double want;
      if (fscanf(file, "%lf", &want) != 1) {
        fprintf(stderr, "embed-text-c: %s has fewer than %lld values\n",
                expectedPath, (long long)(batch * HIDDEN));
        return 2;
      }
      double error = fabs(embedding[i] - want);
      worst = error > worst || error != error ? error : worst;
    }
    fclose(file);
    exitCode = worst <= tolerance ? 0 : 1;
    printf("max abs error vs %s: %.2e (tolerance %.0e): %s\n",
           strrchr(expectedPath, '/') ? strrchr(expectedPath, '/') + 1
                                      : expectedPath,
           worst, tolerance, exitCode ? "MISMATCH" : "ok");
  }
  free(hidden);
  free(pooler);
  free(sentence);
  free(embedding);
  tfm_tensor_release_data(&ids);
  tfm_tensor_release_data(&types);
  tfm_tensor_release_data(&mask);
  tfm_tokenizer_release(tokenizer);
  return exitCode;
}
