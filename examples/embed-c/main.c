/* embed-c: runs the seed-000 self-attention model (self_attention.tfm)
 * compiled ahead of time into self_attention.o, through nothing but its
 * generated header: once on the calling thread, once on the app's threads.
 *
 *   tfm-compile examples/embed-c/self_attention.tfm \
 *       --weights examples/seeds/000_self_attention/weights.safetensors \
 *       -o self_attention.o --header self_attention.h
 *   cc main.c self_attention.o -lm -lpthread -o embed-c
 */
#include "self_attention.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bring-your-own threads: a tfm_exec whose parallel_for splits the task range
 * in two halves, one on a new thread and one on the calling thread. An app
 * would hand its own pool here; tfm's runtime has one (tfm_thread_pool). */
struct half {
  tfm_task_fn task;
  void *args;
  int64_t begin, end;
};

static void *run_half(void *p) {
  struct half *h = p;
  if (h->begin < h->end)
    h->task(h->args, h->begin, h->end);
  return NULL;
}

static void parallel_for_two_threads(void *context, int64_t count,
                                     tfm_task_fn task, void *args) {
  ++*(int *)context; /* count the parallel regions, for the printout */
  struct half first = {task, args, 0, count / 2};
  struct half second = {task, args, count / 2, count};
  pthread_t thread;
  if (pthread_create(&thread, NULL, run_half, &first) != 0) {
    run_half(&first); /* no thread: run it here */
    run_half(&second);
    return;
  }
  run_half(&second);
  pthread_join(thread, NULL);
}

int main(void) {
  /* The notebook's three tokens with d_model = 2, as [batch=1, seq=3, 2]. */
  enum { BATCH = 1, SEQ = 3 };
  static float x[BATCH * SEQ * 2] = {1.16f, 0.23f, 0.57f, 1.36f, 4.41f, -2.16f};

  /* Output sizes come from the header's macros for the chosen dimensions. */
  float *y = malloc(sizeof(float) * TFM_SELF_ATTENTION_Y_COUNT(BATCH, SEQ));
  float *y2 = malloc(sizeof(float) * TFM_SELF_ATTENTION_Y_COUNT(BATCH, SEQ));
  if (!y || !y2) {
    fprintf(stderr, "embed-c: out of memory\n");
    return 1;
  }

  int32_t rc = tfm_self_attention_run(x, y, BATCH, SEQ);
  if (rc != 0) {
    fprintf(stderr, "embed-c: the model failed with status %d\n", (int)rc);
    return 1;
  }
  printf("self-attention output [%d, %d, 2]:\n", BATCH, SEQ);
  for (int i = 0; i < SEQ; ++i)
    printf("  %.4f %.4f\n", y[2 * i], y[2 * i + 1]);

  /* The same run with the app's threads: the typed entry point takes a
   * tfm_exec after the named dims. */
  int regions = 0;
  tfm_exec exec = {1, 2, parallel_for_two_threads, &regions};
  rc = tfm_self_attention_run_with_exec(x, y2, BATCH, SEQ, &exec);
  if (rc != 0) {
    fprintf(stderr, "embed-c: the threaded run failed with status %d\n",
            (int)rc);
    return 1;
  }
  size_t bytes = sizeof(float) * TFM_SELF_ATTENTION_Y_COUNT(BATCH, SEQ);
  printf("on the app's threads (%d parallel region%s): %s\n", regions,
         regions == 1 ? "" : "s",
         memcmp(y, y2, bytes) == 0 ? "same output" : "DIFFERENT output");

  free(y);
  free(y2);
  return 0;
}
