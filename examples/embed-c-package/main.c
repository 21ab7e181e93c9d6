/* embed-c-package: a plain-C app built with find_package(tfm) and
 * tfm_add_model in a project that enables only C. It runs seed 004's
 * multi-head self-attention (mha.h, compiled at build time) once on the
 * calling thread with tfm_mha_run, then on a pool of two threads from the
 * runtime with tfm_mha_run_with_exec, and checks that both agree.
 *
 *   embed-c-package
 */
#include "mha.h" /* generated: tfm_mha_run, tfm_mha_run_with_exec, TFM_MHA_* */

#include "tfm/runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The generated header and the runtime must come from the same ABI. */
#if TFM_MHA_API_VERSION != TFM_API_VERSION
#error "mha.h and tfm/runtime.h are from different tfm releases"
#endif

int main(void) {
  enum { BATCH = 2, SEQ = 33 };
  printf("tfm %s, API version %d\n", tfm_version(), tfm_api_version());

  size_t inputCount = (size_t)TFM_MHA_X_COUNT(BATCH, SEQ);
  size_t outputCount = (size_t)TFM_MHA_ATTN_COUNT(BATCH, SEQ);
  float *x = malloc(inputCount * sizeof(float));
  float *serial = malloc(outputCount * sizeof(float));
  float *threaded = malloc(outputCount * sizeof(float));
  if (!x || !serial || !threaded) {
    fprintf(stderr, "embed-c-package: out of memory\n");
    return 1;
  }
  /* Deterministic inputs in [-1, 1). */
  unsigned state = 2024;
  for (size_t i = 0; i < inputCount; ++i) {
    state = state * 1664525u + 1013904223u;
    x[i] = (float)(state >> 8) / (float)(1 << 23) - 1.0f;
  }

  int32_t rc = tfm_mha_run(x, serial, BATCH, SEQ);
  if (rc != 0) {
    fprintf(stderr, "embed-c-package: tfm_mha_run returned %d\n", (int)rc);
    return 1;
  }

  tfm_thread_pool *pool = NULL;
  tfm_status status = tfm_thread_pool_create(2, &pool);
  if (status) {
    fprintf(stderr, "embed-c-package: %s\n", tfm_status_message(status));
    tfm_status_free(status);
    return 1;
  }
  /* The typed entry point with an exec: inputs, outputs, the named
   * dimensions, then who runs the parallel work. */
  rc = tfm_mha_run_with_exec(x, threaded, BATCH, SEQ,
                             tfm_thread_pool_exec(pool));
  tfm_thread_pool_release(pool);
  if (rc != 0) {
    fprintf(stderr, "embed-c-package: tfm_mha_run_with_exec returned %d\n",
            (int)rc);
    return 1;
  }

  double sum = 0;
  int finite = 1;
  for (size_t i = 0; i < outputCount; ++i) {
    finite = finite && isfinite(serial[i]);
    sum += fabs(serial[i]);
  }
  int same = memcmp(serial, threaded, outputCount * sizeof(float)) == 0;
  printf("mha: attn[%d, %d, 512], mean |attn| %.6f%s\n", BATCH, SEQ,
         sum / (double)outputCount, finite ? "" : " (NOT FINITE)");
  printf("on the runtime's two threads: %s\n",
         same ? "same output" : "DIFFERENT output");
  free(x);
  free(serial);
  free(threaded);
  return finite && sum > 0 && same ? 0 : 1;
}
