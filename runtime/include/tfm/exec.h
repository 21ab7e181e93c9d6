/* How a model runs its parallel work (docs/artifact.md). Compiled code owns
 * no threads: it hands ranges of independent tasks to `parallel_for`. This is
 * the one declaration: tfm/runtime.h includes it, and tfm-compile copies it
 * into every generated model header, under the same guard, so that any of
 * them can be included together. */
#ifndef TFM_EXEC_DEFINED
#define TFM_EXEC_DEFINED
#include <stdint.h>
typedef void (*tfm_task_fn)(void *args, int64_t begin, int64_t end);
typedef struct tfm_exec {
  uint32_t abi_version; /* 1 */
  uint32_t num_threads; /* threads parallel_for uses; tasks are sized by it */
  /* Runs task(args, b, e) over sub-ranges [b, e) covering [0, count), in any
   * order and on any threads, and returns when all are done. NULL: serial. */
  void (*parallel_for)(void *context, int64_t count, tfm_task_fn task,
                       void *args);
  void *context;
} tfm_exec;
#endif
