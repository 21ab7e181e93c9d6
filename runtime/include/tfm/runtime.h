/*===- runtime.h - C API of the tfm runtime ----------------------*- C -*-===*\
|*                                                                            *|
|* Loads a compiled model (see docs/artifact.md), validates tensors against   *|
|* its signature and runs it, optionally on a thread pool. Also reads and     *|
|* writes .npy files.                                                         *|
|*                                                                            *|
|* Conventions, borrowed from IREE:                                           *|
|*  - Functions that can fail return a tfm_status; NULL means success. A      *|
|*    non-NULL status is owned by the caller and freed with tfm_status_free.  *|
|*  - Results come back through `out_` parameters, which are only written     *|
|*    when documented (on failure, handles are set to NULL).                  *|
|*  - Objects are opaque handles with a create/release pair.                  *|
|*  - No function lets a C++ exception escape, and a NULL pointer argument    *|
|*    is reported as TFM_STATUS_INVALID_ARGUMENT, never dereferenced.         *|
|*  - Every function may be called from any thread. Each one's comment says   *|
|*    what it may overlap with; the rule is that objects are immutable or     *|
|*    internally synchronized, except that releasing an object must not       *|
|*    overlap any other use of it (docs/embedding.md).                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TFM_RUNTIME_H
#define TFM_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*\
|* Versions                                                                   *|
\*===----------------------------------------------------------------------===*/

/* The version of this C API and of the compiled artifacts' ABI (the
   metadata's "abi", docs/artifact.md). It changes whenever a declaration
   here or in a generated header changes incompatibly, including the layout
   of tfm_tensor and tfm_exec. Each generated model header defines
   TFM_<MODEL>_API_VERSION to the version it was generated for, so that an app
   that uses both can check at compile time that they agree:
     static_assert(TFM_MYMODEL_API_VERSION == TFM_API_VERSION, "rebuild"); */
#define TFM_API_VERSION 1

/* The runtime library's release, "MAJOR.MINOR.PATCH": a static string.
   Pure; callable from any thread. */
const char *tfm_version(void);

/* The TFM_API_VERSION the runtime library was built with. An app that links
   the library dynamically, or ships headers apart from it, compares this with
   the macro at run time. Pure; callable from any thread. */
int32_t tfm_api_version(void);

/*===----------------------------------------------------------------------===*\
|* Status                                                                     *|
\*===----------------------------------------------------------------------===*/

typedef enum tfm_status_code_t {
  TFM_STATUS_OK = 0,
  /* A NULL pointer, a wrong count or dtype, or a bad value from the caller. */
  TFM_STATUS_INVALID_ARGUMENT = 1,
  /* A file or a symbol does not exist. */
  TFM_STATUS_NOT_FOUND = 2,
  /* Reading or writing a file failed, or memory or threads ran out. */
  TFM_STATUS_IO_ERROR = 3,
  /* A file (artifact, metadata, .npy) is malformed or unsupported. */
  TFM_STATUS_FORMAT_ERROR = 4,
  /* A tensor's rank or dims disagree with the model's signature. */
  TFM_STATUS_SHAPE_MISMATCH = 5,
  /* The compiled code reported an error. */
  TFM_STATUS_RUNTIME_ERROR = 6,
} tfm_status_code_t;

/* NULL means OK. Otherwise the caller owns it and must tfm_status_free it.
   A status is not tied to any thread: it may be read from several threads at
   once and freed on another one, but not freed while it is being read. */
typedef struct tfm_status_t *tfm_status;

/* The code of `status`; TFM_STATUS_OK for NULL. */
tfm_status_code_t tfm_status_code(tfm_status status);

/* A one-line, NUL-terminated description, owned by `status` and valid until
   it is freed; "OK" for NULL. */
const char *tfm_status_message(tfm_status status);

/* Frees `status`; NULL is a no-op. */
void tfm_status_free(tfm_status status);

/* The name of a code, e.g. "INVALID_ARGUMENT"; a static string. Pure, as
   are tfm_dtype_size and tfm_dtype_name below. */
const char *tfm_status_code_name(tfm_status_code_t code);

/*===----------------------------------------------------------------------===*\
|* Element types                                                              *|
\*===----------------------------------------------------------------------===*/

typedef enum tfm_dtype_t {
  /* Zero, so that a zero-initialised tensor is rejected, not misread. */
  TFM_DTYPE_INVALID = 0,
  TFM_DTYPE_F32 = 1,
  TFM_DTYPE_F64 = 2,
  TFM_DTYPE_I32 = 3,
  TFM_DTYPE_I64 = 4,
  /* One byte per element holding 0 (false) or 1 (true), as numpy's bool_;
     e.g. attention masks. */
  TFM_DTYPE_BOOL = 5,
  /* IEEE 754 binary16, numpy's float16 ('<f2'). */
  TFM_DTYPE_F16 = 6,
  /* bfloat16: the upper half of an f32's bits. numpy has no such type, so a
     .npy file holds the bits as uint16 ('<u2'), which is what
     a.view(np.uint16) gives for an ml_dtypes.bfloat16 array `a`. */
  TFM_DTYPE_BF16 = 7,
  /* Signed and unsigned bytes, numpy's int8 ('|i1') and uint8 ('|u1'). */
  TFM_DTYPE_I8 = 8,
  TFM_DTYPE_U8 = 9,
} tfm_dtype;

/* Bytes per element; 0 for an invalid dtype. */
size_t tfm_dtype_size(tfm_dtype dtype);

/* "f32", "f64", "i32", "i64", "bool", "f16", "bf16", "i8", "u8" as in the
   metadata; "invalid" otherwise. */
const char *tfm_dtype_name(tfm_dtype dtype);

/* The 16-bit float types' bits to and from f32. Widening is exact. Narrowing
   rounds to the nearest value, ties to even, as PyTorch's .to(torch.bfloat16)
   and .to(torch.float16) do: values beyond the largest finite one become
   infinities, and a NaN stays a NaN (a quiet one, 0x7fc0 for bf16 and 0x7e00
   for f16, with the input's sign). Pure; callable from any thread. */
float tfm_f16_to_f32(uint16_t bits);
uint16_t tfm_f32_to_f16(float value);
float tfm_bf16_to_f32(uint16_t bits);
uint16_t tfm_f32_to_bf16(float value);

/*===----------------------------------------------------------------------===*\
|* Tensors                                                                    *|
\*===----------------------------------------------------------------------===*/

/* Part of the ABI (tfm_tensor's layout): changing it changes
   TFM_API_VERSION. tfm-compile refuses models with a tensor of higher rank,
   so every artifact's tensors fit. */
#define TFM_MAX_RANK 8

/* A dense, row-major tensor. The struct itself never owns `data`: whoever
   filled it in decides. Data from tfm_tensor_allocate or tfm_npy_read is
   released with tfm_tensor_release_data; other data belongs to the caller.
   The functions below only read the tensors they are given (except
   tfm_tensor_allocate's out_tensor and tfm_tensor_release_data's tensor), so
   a tensor may be read from several threads at once; writing it (its data
   too) must not overlap any other use. */
typedef struct tfm_tensor_t {
  tfm_dtype dtype;
  int32_t rank; /* 0 (a scalar) to TFM_MAX_RANK */
  int64_t shape[TFM_MAX_RANK];
  void *data;
} tfm_tensor;

/* The number of elements (1 for a scalar); -1 when `tensor` is NULL, its rank
   is out of range, a dim is negative or the count overflows int64_t. */
int64_t tfm_tensor_element_count(const tfm_tensor *tensor);

/* element count * dtype size; -1 in the cases above or for an invalid
   dtype. */
int64_t tfm_tensor_byte_size(const tfm_tensor *tensor);

/* Fills `out_tensor` with `dtype`, `rank`, `shape` and a fresh, zeroed,
   64-byte aligned buffer (never NULL, even for zero elements). `shape` may be
   NULL when `rank` is 0. Release the buffer with tfm_tensor_release_data.
   Callable from any thread. */
tfm_status tfm_tensor_allocate(tfm_dtype dtype, int32_t rank,
                               const int64_t *shape, tfm_tensor *out_tensor);

/* Frees `tensor->data`, which must come from tfm_tensor_allocate or
   tfm_npy_read (or be NULL), and sets it to NULL. NULL `tensor` is a no-op.
   Must not overlap any other use of the tensor or its data. */
void tfm_tensor_release_data(tfm_tensor *tensor);

/*===----------------------------------------------------------------------===*\
|* .npy files                                                                 *|
\*===----------------------------------------------------------------------===*/

/* Reads a NumPy .npy file (format 1.0, 2.0 or 3.0) of dtype '<f4', '<f8',
   '<i4', '<i8', '|b1' (bool; a byte other than 0 or 1 is a FORMAT_ERROR),
   '<f2', '|i1', '|u1' or '<u2' (read as TFM_DTYPE_BF16: the bits of
   bfloat16 values) in C order into a fresh tensor, as tfm_tensor_allocate
   would. On failure `*out_tensor` has NULL data and nothing to release. Safe
   to call from several threads at once. */
tfm_status tfm_npy_read(const char *path, tfm_tensor *out_tensor);

/* Writes `tensor` as a format 1.0 .npy file that numpy.load reads (format 2.0
   if the header would not fit 1.0); a bf16 tensor as its bits, '<u2'. A bool
   tensor must hold only the bytes 0 and 1 (TFM_STATUS_INVALID_ARGUMENT
   otherwise, and nothing is written). Callable from several threads at once,
   for distinct paths. */
tfm_status tfm_npy_write(const char *path, const tfm_tensor *tensor);

/*===----------------------------------------------------------------------===*\
|* Threads                                                                    *|
\*===----------------------------------------------------------------------===*/

#include "tfm/exec.h"

/* The abi_version this runtime fills in and accepts. */
#define TFM_EXEC_ABI_VERSION 1

/* A fixed set of threads that runs the tasks of parallel_for. */
typedef struct tfm_thread_pool_t tfm_thread_pool;

/* Creates a pool of `num_threads` threads, 0 meaning one per hardware thread.
   The thread that calls parallel_for counts as one of them and works too, so
   the pool starts num_threads - 1 workers (none for 1). On success the caller
   owns `*out_pool` and releases it with tfm_thread_pool_release; on failure
   (IO_ERROR when the system cannot start the threads) `*out_pool` is NULL. */
tfm_status tfm_thread_pool_create(uint32_t num_threads,
                                  tfm_thread_pool **out_pool);

/* Stops and joins the workers and frees `pool`. No parallel_for on it may be
   running or start later. NULL is a no-op. */
void tfm_thread_pool_release(tfm_thread_pool *pool);

/* The pool's tfm_exec, owned by the pool and valid until it is released; NULL
   for a NULL pool. Its parallel_for hands out tasks in chunks (about a
   quarter of count / num_threads, at least 1) to the workers and the calling
   thread (dynamic scheduling) and returns when all are done; a count <= 0
   returns at once and a count of 1 runs on the calling thread. Idle workers
   poll for the next call for about 100 microseconds before they sleep, as
   a model's calls come back to back. It may be called from several threads at
   once: calls on one pool take turns, each using every thread. A parallel_for
   called from inside a task of the same pool runs its range serially on the
   calling thread. Tasks must not throw C++ exceptions. */
const tfm_exec *tfm_thread_pool_exec(tfm_thread_pool *pool);

/*===----------------------------------------------------------------------===*\
|* Models                                                                     *|
\*===----------------------------------------------------------------------===*/

/* A loaded model: its signature and entry points. Its signature is
   immutable once created, and its one piece of mutable state, the
   workspaces its runs reuse, is guarded by a lock inside it: every function
   below may be called from several threads at once on the same model,
   provided no call overlaps tfm_model_release. */
typedef struct tfm_model_t tfm_model;

/* The packed entry point of docs/artifact.md. */
typedef int32_t (*tfm_run_packed_fn)(void *const *buffers,
                                     const int64_t *symbols,
                                     const tfm_exec *exec);

/* The packed entry point that takes the caller's workspace, and the function
   giving the workspace's size for symbol values (docs/artifact.md). */
typedef int32_t (*tfm_run_packed_workspace_fn)(void *const *buffers,
                                               const int64_t *symbols,
                                               const tfm_exec *exec,
                                               void *workspace,
                                               int64_t workspace_bytes);
typedef int64_t (*tfm_workspace_size_fn)(const int64_t *symbols);

/* The alignment, in bytes, of a workspace passed to
   tfm_model_run_with_workspace (and to the generated _with_workspace entry
   points). */
#define TFM_WORKSPACE_ALIGNMENT 64

/* dlopens the artifact at `path` (a .so from tfm-compile), reads its
   `tfm_artifact_metadata` and looks up its entry point. On success the caller
   owns `*out_model` and releases it with tfm_model_release; on failure
   `*out_model` is NULL. Callable from several threads at once; loading one
   file twice gives two independent models over one mapping of the library. */
tfm_status tfm_model_load(const char *path, tfm_model **out_model);

/* tfm_model_load for an artifact compiled with `--weights-mode external`,
   with its weights file at `weights_path` (NULL: the file the manifest names,
   in the artifact's directory, which is what tfm_model_load does). The file
   is mapped read-only, never copied, and checked against the artifact's
   manifest first (names, dtypes, shapes, offsets, a content hash of each
   tensor): a file the model was not compiled with is refused with
   TFM_STATUS_FORMAT_ERROR and a message naming the first difference. Models
   of one artifact share one binding, which lives until the last of them is
   released. For an artifact with embedded weights, `weights_path` must be
   NULL. */
tfm_status tfm_model_load_with_weights(const char *path,
                                       const char *weights_path,
                                       tfm_model **out_model);

/* Makes a model of a statically linked artifact from its metadata JSON (which
   is copied) and its packed entry point. Ownership as for tfm_model_load.
   Callable from any thread; one artifact may back several models. */
tfm_status tfm_model_create_from_symbols(const char *metadata_json,
                                         tfm_run_packed_fn entry,
                                         tfm_model **out_model);

/* tfm_model_create_from_symbols, also given the artifact's
   tfm_<model>_run_packed_with_workspace and tfm_<model>_workspace_size_packed,
   so that runs reuse the model's workspaces (tfm_model_run) and may take the
   caller's (tfm_model_run_with_workspace), as for a loaded model. */
tfm_status tfm_model_create_from_symbols_with_workspace(
    const char *metadata_json, tfm_run_packed_fn entry,
    tfm_run_packed_workspace_fn entry_with_workspace,
    tfm_workspace_size_fn workspace_size, tfm_model **out_model);

/* External weights of a linked artifact (docs/embedding.md): maps the
   .safetensors file at `path` read-only and checks it against the artifact's
   manifest (`tfm_<m>_weights_manifest()`), as tfm_model_load_with_weights
   does. Then `tfm_<m>_bind_weights(tfm_weights_data(w), tfm_weights_size(w))`
   binds it; `w` must outlive every run, and release comes after unbinding.
   Callable from any thread. */
typedef struct tfm_weights_t tfm_weights;
typedef int32_t (*tfm_bind_weights_fn)(const void *data, int64_t bytes);
tfm_status tfm_weights_open(const char *path, const char *manifest_json,
                            tfm_weights **out_weights);
/* The mapped data section (64-byte aligned) and its size; NULL and 0 for a
   NULL `weights`. */
const void *tfm_weights_data(const tfm_weights *weights);
int64_t tfm_weights_size(const tfm_weights *weights);
/* Unmaps the file. NULL is a no-op. */
void tfm_weights_release(tfm_weights *weights);

/* Releases `model` and, for a loaded one, closes its library: every string
   the model returned becomes invalid. NULL is a no-op. Must not overlap any
   other call on the same model (a run included). */
void tfm_model_release(tfm_model *model);

/* The accessors below return strings owned by the model, valid until it is
   released. For a NULL model or an index out of range they return NULL, 0,
   -1 or TFM_DTYPE_INVALID. */

/* The model's name ("model" in the metadata). */
const char *tfm_model_name(const tfm_model *model);

/* Where the model's buffers live: "cpu" (host memory), or "cuda" for a GPU
   artifact (tfm-compile --target cuda), whose runs take device pointers in
   every tfm_tensor.data (see the GPU section below); NULL for a NULL
   model. */
const char *tfm_model_device(const tfm_model *model);

size_t tfm_model_input_count(const tfm_model *model);
size_t tfm_model_output_count(const tfm_model *model);
/* The symbolic dimensions, in the order the entry point takes their values. */
size_t tfm_model_symbol_count(const tfm_model *model);
const char *tfm_model_symbol_name(const tfm_model *model, size_t index);

const char *tfm_model_input_name(const tfm_model *model, size_t index);
const char *tfm_model_output_name(const tfm_model *model, size_t index);
tfm_dtype tfm_model_input_dtype(const tfm_model *model, size_t index);
/* 1 when input `index` is a cache (docs/generation.md): the model reads it
   and writes its new rows into the same memory, so a run modifies that
   input's data; 0 for other inputs and bad indices. */
int32_t tfm_model_input_is_cache(const tfm_model *model, size_t index);
tfm_dtype tfm_model_output_dtype(const tfm_model *model, size_t index);
int32_t tfm_model_input_rank(const tfm_model *model, size_t index);
int32_t tfm_model_output_rank(const tfm_model *model, size_t index);

/* The declared size of dim `dim` of an input or output: its static size, or
   -1 for a symbolic dim, in which case `*out_symbol` (when `out_symbol` is not
   NULL) is the symbol's name; it is NULL for a static dim or a bad index. */
int64_t tfm_model_input_dim(const tfm_model *model, size_t index, int32_t dim,
                            const char **out_symbol);
int64_t tfm_model_output_dim(const tfm_model *model, size_t index, int32_t dim,
                             const char **out_symbol);

/* Checks `inputs` against the signature (count, dtype, rank, static dims and
   a consistent binding of every symbol; `data` is not looked at and may be
   NULL) and sets dtype, rank and shape of each of the `n_outputs` outputs,
   leaving their `data` alone. `n_outputs` must be the model's output count. */
tfm_status tfm_model_infer_output_shapes(const tfm_model *model,
                                         const tfm_tensor *inputs,
                                         size_t n_inputs, tfm_tensor *outputs,
                                         size_t n_outputs);

/* Runs the model: validates `inputs` as tfm_model_infer_output_shapes does,
   checks that each output view has the derived dtype and shape, that no data
   pointer is NULL, that every byte of a bool input is 0 or 1
   (INVALID_ARGUMENT otherwise) and that no output overlaps another buffer,
   then calls the entry point, which writes the outputs, with exec = NULL: all
   the work runs on the calling thread. For a "cuda" model (tfm_model_device)
   every data pointer is device memory and bool inputs are not looked at;
   the run returns once the device has finished, and a GPU failure (no
   driver, a failed launch) is a RUNTIME_ERROR with the driver's message.
   Inputs are only read, except caches (tfm_model_input_is_cache), whose data
   the model updates in place. Reentrant: a
   model may run on several threads at once (the compiled code keeps no state
   between runs but a CPU-feature cache it sets atomically), and concurrent
   runs may share inputs; they must write distinct outputs.
   The model's scratch memory comes from workspaces the model keeps: a run
   takes one (under a lock), grows it when these shapes need more, and gives
   it back, so runs after the first allocate nothing as long as the shapes
   do not grow (one workspace per concurrent run; they are freed by
   tfm_model_release). A model created by tfm_model_create_from_symbols has
   no workspace entry points, and its runs allocate inside the entry
   point. */
tfm_status tfm_model_run(const tfm_model *model, const tfm_tensor *inputs,
                         size_t n_inputs, tfm_tensor *outputs,
                         size_t n_outputs);

/* tfm_model_run, handing the model's parallel work to `exec` (e.g. from
   tfm_thread_pool_exec, or the caller's own pool); NULL, or a NULL
   parallel_for, runs it all on the calling thread. An exec whose abi_version
   is not TFM_EXEC_ABI_VERSION is an INVALID_ARGUMENT. Concurrent runs may
   share one exec if its parallel_for allows concurrent calls (the pool's
   does). */
tfm_status tfm_model_run_with_exec(const tfm_model *model,
                                   const tfm_tensor *inputs, size_t n_inputs,
                                   tfm_tensor *outputs, size_t n_outputs,
                                   const tfm_exec *exec);

/* The bytes of workspace a run on inputs of these shapes needs
   (tfm_model_run_with_workspace); 0 when the model needs none. Checks the
   inputs as tfm_model_infer_output_shapes does and never reads their data.
   A workspace sized for some shapes serves any shapes that are not larger.
   RUNTIME_ERROR when the size exceeds 2^56 bytes; INVALID_ARGUMENT for a
   model without workspace entry points (tfm_model_create_from_symbols). */
tfm_status tfm_model_workspace_size(const tfm_model *model,
                                    const tfm_tensor *inputs, size_t n_inputs,
                                    int64_t *out_bytes);

/* tfm_model_run_with_exec in the caller's workspace: `workspace_bytes` bytes
   at `workspace`, aligned to TFM_WORKSPACE_ALIGNMENT and at least
   tfm_model_workspace_size for these inputs. The run then allocates nothing
   (neither does the runtime around it). A NULL workspace with 0 bytes runs
   as tfm_model_run_with_exec does. INVALID_ARGUMENT, with nothing computed,
   for a negative size, NULL with a non-zero size, a misaligned pointer, a
   workspace smaller than needed or one that overlaps an input or output, and
   for a model without workspace entry points. A workspace belongs to the
   caller and serves one run at a time: concurrent runs need one each. */
tfm_status tfm_model_run_with_workspace(const tfm_model *model,
                                        const tfm_tensor *inputs,
                                        size_t n_inputs, tfm_tensor *outputs,
                                        size_t n_outputs, const tfm_exec *exec,
                                        void *workspace,
                                        int64_t workspace_bytes);

/*===----------------------------------------------------------------------===*\
|* GPU (CUDA)                                                                 *|
\*===----------------------------------------------------------------------===*/

/* A GPU artifact (tfm-compile --target cuda, docs/gpu.md) runs on device 0
   of the CUDA driver, which the runtime opens with dlopen ("libcuda.so.1", or
   the path in the environment variable TFM_CUDA_LIBRARY) the first time GPU
   code or one of these functions needs it: apps link and start on machines
   without a driver or GPU, and get a RUNTIME_ERROR saying so when they use
   one. The model's buffers (tfm_tensor.data, the buffers of
   tfm_<model>_run_packed) are then device pointers from tfm_gpu_alloc or the
   app's own CUDA allocations, not host memory; a run is synchronous (it
   returns after the device has finished). All functions below are callable
   from any thread. */

/* Loads and initializes the driver once. NULL when device 0 is usable, else
   a RUNTIME_ERROR naming what is missing (no libcuda.so.1, no device, a
   driver that fails to initialize). Later calls give the same answer. */
tfm_status tfm_gpu_init(void);

/* Device 0's name (NUL-terminated, truncated to `name_size` bytes) and
   compute capability. Any out pointer may be NULL. */
tfm_status tfm_gpu_device_info(char *name, size_t name_size, int32_t *out_major,
                               int32_t *out_minor);

/* Device memory: `*out_ptr` is NULL on failure. tfm_gpu_free(NULL) is a
   no-op. */
tfm_status tfm_gpu_alloc(size_t bytes, void **out_ptr);
void tfm_gpu_free(void *ptr);

/* Synchronous copies between host and device memory. */
tfm_status tfm_gpu_copy_to_device(void *device_dst, const void *host_src,
                                  size_t bytes);
tfm_status tfm_gpu_copy_to_host(void *host_dst, const void *device_src,
                                size_t bytes);

/* The first GPU error since the last call (a failed kernel module load, an
   allocation, a launch, a kernel fault), as a RUNTIME_ERROR, clearing it;
   NULL when there is none. tfm_model_run reports it for GPU artifacts; an
   app calling a GPU artifact's entry points directly gets the status
   TFM_GPU_ERROR_STATUS from them and the message here. */
tfm_status tfm_gpu_take_error(void);

/* What a GPU artifact's entry points return when a GPU call failed. */
#define TFM_GPU_ERROR_STATUS (-5)

/* Device time: a timer records an event on the default stream, with which
   the artifacts' streams synchronize. tfm_gpu_timer_stop records a second
   one, waits for it, writes the milliseconds between them and releases the
   timer (also on failure). */
typedef struct tfm_gpu_timer_t tfm_gpu_timer;
tfm_status tfm_gpu_timer_start(tfm_gpu_timer **out_timer);
tfm_status tfm_gpu_timer_stop(tfm_gpu_timer *timer, double *out_milliseconds);

/* Called by the generated host code after its last kernel: 0, or
   TFM_GPU_ERROR_STATUS while a GPU error is pending (the error stays pending
   for tfm_gpu_take_error). */
int32_t tfm_gpu_status(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TFM_RUNTIME_H */
