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

/* What tfm-compile --header emits: tfm/exec.h's text, copied in. */
#include "tfm/exec.h"
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
