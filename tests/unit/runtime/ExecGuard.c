/*===- ExecGuard.c - tfm/runtime.h next to a generated header ----*- C -*-===*\
|*                                                                            *|
|* Generated model headers declare tfm_exec under TFM_EXEC_DEFINED, as        *|
|* tfm/runtime.h does; a C99 file must be able to include both, in either     *|
|* order (TFM_EXEC_FIRST picks which comes first).                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TFM_EXEC_FIRST
#include "tfm/runtime.h"
#endif

/* What tfm-compile --header emits. */
#include <stdint.h>
#ifndef TFM_EXEC_DEFINED
#define TFM_EXEC_DEFINED
typedef void (*tfm_task_fn)(void *args, int64_t begin, int64_t end);
typedef struct tfm_exec {
  uint32_t abi_version; /* 1 */
  uint32_t num_threads;
  void (*parallel_for)(void *context, int64_t count, tfm_task_fn task,
                       void *args);
  void *context;
} tfm_exec;
#endif
int32_t tfm_m_run_packed(void *const *buffers, const int64_t *symbols,
                         const tfm_exec *exec);

#ifdef TFM_EXEC_FIRST
#include "tfm/runtime.h"
#endif

/* The generated entry point is a tfm_run_packed_fn. */
tfm_run_packed_fn tfm_m_entry = tfm_m_run_packed;

/* A pool's exec can be handed to the generated code. */
int32_t tfm_m_run_on(tfm_thread_pool *pool, void *const *buffers,
                     const int64_t *symbols);
int32_t tfm_m_run_on(tfm_thread_pool *pool, void *const *buffers,
                     const int64_t *symbols) {
  return tfm_m_run_packed(buffers, symbols, tfm_thread_pool_exec(pool));
}
