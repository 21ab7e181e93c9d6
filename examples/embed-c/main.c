/* embed-c: runs the seed-000 self-attention model compiled ahead of time
 * into self_attention.o, through nothing but its generated header.
 *
 *   tfm-compile examples/seeds/000_self_attention/model.tfm \
 *       --weights examples/seeds/000_self_attention/weights.safetensors \
 *       -o self_attention.o --header self_attention.h
 *   cc main.c self_attention.o -lm -o embed-c
 */
#include "self_attention.h"

#include <stdio.h>
#include <stdlib.h>

int main(void) {
  /* The notebook's three tokens with d_model = 2, as [batch=1, seq=3, 2]. */
  enum { BATCH = 1, SEQ = 3 };
  static const float x[BATCH * SEQ * 2] = {1.16f, 0.23f, 0.57f,
                                           1.36f, 4.41f, -2.16f};

  /* Output sizes come from the header's macros for the chosen dimensions. */
  float *y = malloc(sizeof(float) * TFM_SELF_ATTENTION_Y_COUNT(BATCH, SEQ));
  float *q = malloc(sizeof(float) * TFM_SELF_ATTENTION_Q_COUNT(BATCH, SEQ));
  float *sims =
      malloc(sizeof(float) * TFM_SELF_ATTENTION_SIMS_COUNT(BATCH, SEQ));
  float *scaled =
      malloc(sizeof(float) * TFM_SELF_ATTENTION_SCALED_SIMS_COUNT(BATCH, SEQ));
  float *percents = malloc(
      sizeof(float) * TFM_SELF_ATTENTION_ATTENTION_PERCENTS_COUNT(BATCH, SEQ));
  if (!y || !q || !sims || !scaled || !percents) {
    fprintf(stderr, "embed-c: out of memory\n");
    return 1;
  }

  int32_t rc = tfm_self_attention_run(x, y, q, sims, scaled, percents, BATCH,
                                      SEQ);
  if (rc != 0) {
    fprintf(stderr, "embed-c: the model failed with status %d\n", (int)rc);
    return 1;
  }
  printf("self-attention output [%d, %d, 2]:\n", BATCH, SEQ);
  for (int i = 0; i < SEQ; ++i)
    printf("  %.4f %.4f\n", y[2 * i], y[2 * i + 1]);

  free(y);
  free(q);
  free(sims);
  free(scaled);
  free(percents);
  return 0;
}
