/* One object and one header from text to outputs: the BERT of examples/bert
 * and the Llama of examples/llama compiled with tfm-compile --tokenizer
 * (tfm_add_model TOKENIZER, as text_bert and text_llama), so that their
 * headers' tfm_<model>_tokenize / _detokenize read the tokenizers embedded
 * in the objects.
 *
 *   tfm-embed-text EMBEDDINGS.txt
 *
 * Checks the ids and texts against the `tokenizers` package's (written
 * below; tests/reference/text/README.md), the too-small-buffer protocol,
 * and that BERT's sentence embedding of the tokenized text matches the first
 * line of EMBEDDINGS.txt (tests/reference/text/embeddings.txt: the same
 * text, a float64 reference) to 1e-5. Prints "ok" lines; exit 1 on a
 * mismatch. */
#include "text_bert.h"
#include "text_llama.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect_ids(const char *what, const int64_t *got, int64_t count,
                       const int64_t *want, int64_t wantCount) {
  int same = count == wantCount;
  for (int64_t i = 0; same && i < count; ++i)
    same = got[i] == want[i];
  printf("%s: %lld ids: %s\n", what, (long long)count,
         same ? "ok" : "MISMATCH");
  failures += !same;
}

static void expect_text(const char *what, const char *got, const char *want) {
  int same = strcmp(got, want) == 0;
  printf("%s: \"%s\": %s\n", what, got, same ? "ok" : "MISMATCH");
  failures += !same;
}

static void expect_code(const char *what, int32_t got, int32_t want) {
  printf("%s: status %d: %s\n", what, (int)got,
         got == want ? "ok" : "MISMATCH");
  failures += got != want;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tfm-embed-text EMBEDDINGS.txt\n");
    return 2;
  }
  /* BERT: WordPiece from tokenizer.json, [CLS] ... [SEP]. */
  const char *text = "Hello, world!";
  static const int64_t bertIds[] = {2, 326, 136, 348, 5, 3};
  int64_t ids[64], count = -1;
  expect_code("bert tokenize",
              tfm_text_bert_tokenize(text, strlen(text), 1, ids, 64, &count),
              0);
  expect_ids("bert tokenize", ids, count, bertIds, 6);
  int64_t small[2] = {-1, -1};
  expect_code("bert tokenize into 2 ids",
              tfm_text_bert_tokenize(text, strlen(text), 1, small, 2, &count),
              5);
  printf("  needs %lld, wrote nothing: %s\n", (long long)count,
         count == 6 && small[0] == -1 ? "ok" : "MISMATCH");
  failures += !(count == 6 && small[0] == -1);
  static const int64_t plainIds[] = {326, 136, 348, 5};
  expect_code("bert tokenize without special tokens",
              tfm_text_bert_tokenize(text, strlen(text), 0, ids, 64, &count),
              0);
  expect_ids("bert tokenize without special tokens", ids, count, plainIds, 4);

  char decoded[256];
  int64_t size = -1;
  expect_code("bert detokenize",
              tfm_text_bert_detokenize(bertIds, 6, 1, decoded, 256, &size), 0);
  expect_text("bert detokenize", decoded, "hello, world!");
  expect_code("bert detokenize with special tokens",
              tfm_text_bert_detokenize(bertIds, 6, 0, decoded, 256, &size), 0);
  expect_text("bert detokenize with special tokens", decoded,
              "[CLS] hello, world! [SEP]");
  expect_code("bert detokenize into 5 bytes",
              tfm_text_bert_detokenize(bertIds, 6, 1, decoded, 5, &size), 5);
  printf("  needs %lld bytes and a NUL: %s\n", (long long)size,
         size == 13 ? "ok" : "MISMATCH");
  failures += size != 13;

  /* Text -> ids -> the model -> a sentence embedding. */
  int64_t seq = 6, types[6] = {0}, mask[6] = {1, 1, 1, 1, 1, 1};
  static float hidden[TFM_TEXT_BERT_LAST_HIDDEN_STATE_COUNT(1, 6)];
  static float pooler[TFM_TEXT_BERT_POOLER_OUTPUT_COUNT(1)];
  static float sentence[TFM_TEXT_BERT_SENTENCE_EMBEDDING_COUNT(1)];
  expect_code(
      "bert run",
      tfm_text_bert_run(bertIds, types, mask, hidden, pooler, sentence, 1, seq),
      0);
  FILE *file = fopen(argv[1], "r");
  if (!file) {
    fprintf(stderr, "tfm-embed-text: cannot open %s\n", argv[1]);
    return 2;
  }
  double worst = 0;
  for (int j = 0; j < TFM_TEXT_BERT_SENTENCE_EMBEDDING_COUNT(1); ++j) {
    double want = NAN;
    if (fscanf(file, "%lf", &want) != 1)
      worst = INFINITY;
    double error = fabs(sentence[j] - want);
    worst = error > worst || error != error ? error : worst;
  }
  fclose(file);
  printf("bert sentence embedding: max abs error %.1e: %s\n", worst,
         worst <= 1e-5 ? "ok" : "MISMATCH");
  failures += !(worst <= 1e-5);

  /* Llama: SentencePiece BPE from the GGUF file's metadata, <s> first. */
  const char *prompt = "hello world";
  static const int64_t llamaIds[] = {1, 23, 28};
  expect_code(
      "llama tokenize",
      tfm_text_llama_tokenize(prompt, strlen(prompt), 1, ids, 64, &count), 0);
  expect_ids("llama tokenize", ids, count, llamaIds, 3);
  static const int64_t generated[] = {1, 23, 28, 11, 17, 6, 10, 25, 25, 25, 31};
  expect_code("llama detokenize",
              tfm_text_llama_detokenize(generated, 11, 1, decoded, 256, &size),
              0);
  expect_text("llama detokenize", decoded, "hello worldr tdoororor cat");

  /* Bad arguments are a code, never a crash. */
  expect_code("NULL out_count",
              tfm_text_bert_tokenize(text, strlen(text), 1, ids, 64, NULL), 1);
  expect_code("negative count",
              tfm_text_bert_detokenize(bertIds, -1, 1, decoded, 256, &size), 1);
  return failures ? 1 : 0;
}
