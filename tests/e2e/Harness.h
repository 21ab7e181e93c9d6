//===- Harness.h - Compile, load and run models in e2e tests ----*- C++ -*-===//
//
// Writes a .tfm source string and a set of weights to a fresh directory,
// compiles them to a shared library with mlir::tfm::compileModel (capturing
// its diagnostics), loads the library with the runtime and runs it on host
// tensors. Also: a numpy-allclose style comparison, and random data from a
// fixed-seed std::mt19937.
//
// Failures to compile or load throw std::runtime_error with the compiler's
// diagnostics, so that Catch2 reports them as the failure message.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TESTS_E2E_HARNESS_H
#define TFM_TESTS_E2E_HARNESS_H

#include "tfm/runtime.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace e2e {

/// The source tree (for examples/seeds).
std::string sourceDir();
/// examples/seeds/<name>.
std::string seedDir(const std::string &name);
bool fileExists(const std::string &path);

/// "[2, 3]".
std::string formatShape(const std::vector<int64_t> &shape);
int64_t elementCount(const std::vector<int64_t> &shape);

//===----------------------------------------------------------------------===//
// Host tensors
//===----------------------------------------------------------------------===//

/// An owning, dense, row-major tensor of any runtime dtype.
struct HostTensor {
  tfm_dtype dtype = TFM_DTYPE_F32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  static HostTensor f32(std::vector<int64_t> shape,
                        const std::vector<float> &values);
  /// Float values given as doubles, rounded to float.
  static HostTensor f32(std::vector<int64_t> shape,
                        const std::vector<double> &values);
  static HostTensor f64(std::vector<int64_t> shape,
                        const std::vector<double> &values);
  static HostTensor i64(std::vector<int64_t> shape,
                        const std::vector<int64_t> &values);
  static HostTensor i32(std::vector<int64_t> shape,
                        const std::vector<int32_t> &values);
  static HostTensor i8(std::vector<int64_t> shape,
                       const std::vector<int8_t> &values);
  /// bf16 or f16 from float values, rounded to nearest even
  /// (tfm_f32_to_bf16/f16), or from their bits.
  static HostTensor bf16(std::vector<int64_t> shape,
                         const std::vector<float> &values);
  static HostTensor f16(std::vector<int64_t> shape,
                        const std::vector<float> &values);
  static HostTensor halfBits(tfm_dtype dtype, std::vector<int64_t> shape,
                             const std::vector<uint16_t> &bits);
  /// A zeroed tensor.
  static HostTensor zeros(tfm_dtype dtype, std::vector<int64_t> shape);
  /// Reads a .npy file; throws on failure.
  static HostTensor readNpy(const std::string &path);

  int64_t numel() const { return elementCount(shape); }
  /// Every element converted to double (any dtype).
  std::vector<double> toDoubles() const;
  /// The elements of a bf16 or f16 tensor as their bits.
  std::vector<uint16_t> halfBits() const;
  /// A non-owning runtime view (rank must be <= TFM_MAX_RANK).
  tfm_tensor view() const;
  std::string describe() const; // "f32[2, 3]"
};

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

/// A weight: float32 `data`, or, when `data64` is not empty, float64.
struct Weight {
  std::vector<int64_t> shape;
  std::vector<float> data;
  std::vector<double> data64;
};
using Weights = std::map<std::string, Weight>;

//===----------------------------------------------------------------------===//
// Random data
//===----------------------------------------------------------------------===//

/// Deterministic random data: uniform floats in [lo, hi) and integers.
class Random {
public:
  explicit Random(uint32_t seed) : gen(seed) {}
  std::vector<float> uniform(int64_t n, float lo = -1.0f, float hi = 1.0f);
  /// Integers in [lo, hi], as floats (exactly representable).
  std::vector<float> integers(int64_t n, int lo, int hi);
  std::vector<int64_t> ids(int64_t n, int64_t lo, int64_t hi);
  Weight weight(std::vector<int64_t> shape, float lo = -1.0f, float hi = 1.0f);
  HostTensor f32(std::vector<int64_t> shape, float lo = -1.0f, float hi = 1.0f);

private:
  std::mt19937 gen;
};

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

/// Compiler settings the tests vary. Unset fields take the values of the
/// environment (TFM_E2E_FUSE_ATTENTION=0|1, TFM_E2E_CPU=<LLVM cpu name>,
/// so that ctest can rerun whole groups in another configuration), else the
/// driver's defaults.
struct BuildOptions {
  std::optional<bool> fuseAttention;
  std::optional<std::string> cpu;
  /// Also print a remark for each attention chain fused or not.
  bool remarks = false;
  /// Also write the C header (CompileResult::headerPath).
  bool header = false;
  /// --weights-mode external: the weights go to model.weights.safetensors
  /// next to model.so (CompileResult::sidecarPath).
  bool externalWeights = false;
  /// --dtype: the contractions' operand type ("bf16" on the CPU: linear
  /// layers in bf16 with f32 accumulation); unset: the driver's f32.
  std::optional<std::string> dtype;
  /// --quantize ("int8": linear layers quantized); unset: none.
  std::optional<std::string> quantize;
  /// --kv-cache-dtype ("bf16", "f16", "f32": every cache retyped); unset:
  /// as the model declares.
  std::optional<std::string> kvCacheDtype;
  /// --keep-fp32, once per glob: weights that stay f32 under dtype/quantize.
  std::vector<std::string> keepFp32;
  /// --set, once per "KEY=VALUE": config() keys answered before the
  /// weights file's.
  std::vector<std::string> configOverrides;
};

/// The environment's settings (see BuildOptions), for messages.
std::string describeEnvironment();

/// Whether this machine runs code compiled for `cpu` (x86-64-v2/v3/v4,
/// host; other names are assumed to run).
bool hostRuns(const std::string &cpu);

/// The result of one compileModel call.
struct CompileResult {
  bool ok = false;
  /// Everything the compiler reported: errors, remarks, the linker's output.
  std::string diagnostics;
  std::string dir, modelPath, weightsPath, libraryPath;
  /// The C header, when asked for.
  std::string headerPath;
  /// The external weights, when asked for.
  std::string sidecarPath;
};

/// Writes `source` (and `weights`, if any, as F32/F64 safetensors) into a fresh
/// directory and compiles them to a shared library. Never throws on a
/// compile error: look at `ok` and `diagnostics`.
CompileResult compileSource(const std::string &source,
                            const Weights &weights = {},
                            const BuildOptions &options = {});
/// Compiles existing files to a shared library in a fresh directory.
CompileResult compileFiles(const std::string &modelPath,
                           const std::string &weightsPath,
                           const BuildOptions &options = {});

/// A fresh directory under the tests' temporary directory (remove it with
/// removeTempDir or a TempDirGuard).
std::string makeTempDir();

/// Removes a directory made by compileSource/compileFiles, unless the
/// environment sets TFM_E2E_KEEP.
void removeTempDir(const std::string &dir);

/// Calls removeTempDir on scope exit (also when a REQUIRE throws).
struct TempDirGuard {
  std::string dir;
  explicit TempDirGuard(std::string dir) : dir(std::move(dir)) {}
  ~TempDirGuard() { removeTempDir(dir); }
  TempDirGuard(const TempDirGuard &) = delete;
  TempDirGuard &operator=(const TempDirGuard &) = delete;
};

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// What one tfm_model_run call returned.
struct RunResult {
  tfm_status_code_t code = TFM_STATUS_OK;
  std::string message;
  std::vector<std::string> names;
  std::vector<HostTensor> outputs;

  bool ok() const { return code == TFM_STATUS_OK; }
  /// The output called `name`; throws if there is none.
  const HostTensor &operator[](const std::string &name) const;
};

/// A compiled, loaded model. Unloads the library and removes its directory
/// when destroyed.
class Model {
public:
  /// Compiles `source` with `weights` and loads it; throws
  /// std::runtime_error with the diagnostics on failure.
  static std::shared_ptr<Model> build(const std::string &source,
                                      const Weights &weights = {},
                                      const BuildOptions &options = {});
  /// Same, for files on disk.
  static std::shared_ptr<Model> buildFiles(const std::string &modelPath,
                                           const std::string &weightsPath,
                                           const BuildOptions &options = {});
  /// The same artifact loaded anew from a copy in a fresh directory: its
  /// globals start over, so that what the artifact caches at its first run
  /// (the CPU level its kernel variants are chosen by, which TFM_CPU_LEVEL
  /// caps) is read again without compiling the model again.
  std::shared_ptr<Model> reload() const;
  ~Model();
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  const tfm_model *handle() const { return model; }
  const std::string &libraryPath() const { return compiled.libraryPath; }
  /// What the compiler printed (remarks, when asked for).
  const std::string &diagnostics() const { return compiled.diagnostics; }
  std::vector<std::string> inputNames() const;
  std::vector<std::string> outputNames() const;
  /// -1 if there is no such input/output.
  int inputIndex(const std::string &name) const;
  int outputIndex(const std::string &name) const;

  /// Runs on `inputs` (in the model's input order). Outputs are allocated
  /// from tfm_model_infer_output_shapes. Never throws for a status error:
  /// look at `code`.
  /// With `exec`, parallel work goes to it (tfm_model_run_with_exec).
  RunResult run(const std::vector<HostTensor> &inputs,
                const tfm_exec *exec = nullptr) const;
  /// Runs on inputs given by name; throws if a name is unknown or missing.
  RunResult runNamed(const std::map<std::string, HostTensor> &inputs) const;
  /// run(), throwing std::runtime_error if the status is not OK.
  RunResult runOk(const std::vector<HostTensor> &inputs,
                  const tfm_exec *exec = nullptr) const;
  RunResult runOkNamed(const std::map<std::string, HostTensor> &inputs) const;

private:
  Model() = default;
  static std::shared_ptr<Model> load(CompileResult compiled);

  CompileResult compiled;
  tfm_model *model = nullptr;
};

//===----------------------------------------------------------------------===//
// Comparing
//===----------------------------------------------------------------------===//

/// numpy.allclose: |got - ref| <= atol + rtol * |ref| for every element, and
/// no NaN or infinity in `got` unless `ref` has the same one.
struct Comparison {
  bool ok = true;
  double maxAbsError = 0, maxRelError = 0;
  int64_t worstIndex = -1, failures = 0, count = 0;
  std::string message;
};
Comparison allClose(const std::vector<double> &got,
                    const std::vector<double> &ref, double rtol = 1e-4,
                    double atol = 1e-5,
                    const std::vector<double> *extraAtol = nullptr);
/// Also checks that the shapes agree.
Comparison allClose(const HostTensor &got, const std::vector<int64_t> &refShape,
                    const std::vector<double> &ref, double rtol = 1e-4,
                    double atol = 1e-5,
                    const std::vector<double> *extraAtol = nullptr);

/// True if every element is finite.
bool allFinite(const std::vector<double> &values);

/// A runtime thread pool for the duration of a test; throws if it cannot
/// be created.
struct Pool {
  tfm_thread_pool *pool = nullptr;
  explicit Pool(uint32_t threads) {
    if (tfm_status status = tfm_thread_pool_create(threads, &pool)) {
      std::string message = tfm_status_message(status);
      tfm_status_free(status);
      throw std::runtime_error("tfm_thread_pool_create: " + message);
    }
  }
  ~Pool() { tfm_thread_pool_release(pool); }
  Pool(const Pool &) = delete;
  Pool &operator=(const Pool &) = delete;
  const tfm_exec *exec() const { return tfm_thread_pool_exec(pool); }
};

} // namespace e2e

/// Compares a HostTensor with a reference (shape, values) and reports the
/// worst error on failure. Works inside Catch2 TEST_CASEs.
#define E2E_CHECK_CLOSE(got, ref, ...)                                         \
  do {                                                                         \
    ::e2e::Comparison e2e_cmp_ =                                               \
        ::e2e::allClose((got), (ref).shape, (ref).data, ##__VA_ARGS__);        \
    INFO(#got << " vs " << #ref << ": " << e2e_cmp_.message);                  \
    CHECK(e2e_cmp_.ok);                                                        \
  } while (0)

#endif // TFM_TESTS_E2E_HARNESS_H
