/*===- GpuApp.c - A GPU artifact in an app on a machine without a GPU ----===*\
|*                                                                            *|
|* The app links seed 000's attention compiled with --target cuda and the     *|
|* runtime, and runs with TFM_CUDA_LIBRARY naming no library: it must start   *|
|* (the artifact's kernel module loads from a constructor before main), and   *|
|* the run must return TFM_GPU_ERROR_STATUS with the runtime saying why,      *|
|* whatever the machine has.                                                  *|
\*===----------------------------------------------------------------------===*/
#include "gpu_attention.h"
#include "tfm/runtime.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  tfm_status status = tfm_gpu_init();
  if (tfm_status_code(status) != TFM_STATUS_RUNTIME_ERROR ||
      !strstr(tfm_status_message(status), "no CUDA driver")) {
    fprintf(stderr, "tfm_gpu_init: expected 'no CUDA driver', got '%s'\n",
            status ? tfm_status_message(status) : "success");
    return 1;
  }
  tfm_status_free(status);

  /* Device pointers in a real app; nothing is dereferenced without a GPU. */
  float x[2 * 3 * 2] = {0}, y[2 * 3 * 2] = {0};
  int32_t rc = tfm_gpu_attention_run(x, y, 2, 3);
  if (rc != TFM_GPU_ERROR_STATUS) {
    fprintf(stderr, "run returned %d, expected TFM_GPU_ERROR_STATUS\n", rc);
    return 1;
  }
  status = tfm_gpu_take_error();
  if (!status || !strstr(tfm_status_message(status), "no CUDA driver")) {
    fprintf(stderr, "tfm_gpu_take_error: expected 'no CUDA driver'\n");
    return 1;
  }
  printf("GPU artifact without a driver: %s\n", tfm_status_message(status));
  tfm_status_free(status);
  return 0;
}
