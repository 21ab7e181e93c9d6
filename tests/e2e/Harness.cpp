//===- Harness.cpp - Compile, load and run models in e2e tests ------------===//
#include "Harness.h"

#include "compiler/Driver/Driver.h"
#include "tfm/safetensors.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace fs = std::filesystem;

namespace e2e {

std::string sourceDir() { return TFM_SOURCE_DIR; }

std::string seedDir(const std::string &name) {
  return sourceDir() + "/examples/seeds/" + name;
}

bool fileExists(const std::string &path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

namespace {
template <typename T>
HostTensor makeTensor(tfm_dtype dtype, std::vector<int64_t> shape,
                      const std::vector<T> &values) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  if (int64_t(values.size()) != t.numel())
    throw std::logic_error("HostTensor: " + std::to_string(values.size()) +
                           " values for shape " + formatShape(t.shape));
  t.bytes.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

std::string takeMessage(tfm_status status) {
  std::string message = tfm_status_message(status);
  tfm_status_free(status);
  return message;
}
} // namespace

HostTensor HostTensor::f32(std::vector<int64_t> shape,
                           const std::vector<float> &values) {
  return makeTensor(TFM_DTYPE_F32, std::move(shape), values);
}

HostTensor HostTensor::f32(std::vector<int64_t> shape,
                           const std::vector<double> &values) {
  return f32(std::move(shape),
             std::vector<float>(values.begin(), values.end()));
}

HostTensor HostTensor::f64(std::vector<int64_t> shape,
                           const std::vector<double> &values) {
  return makeTensor(TFM_DTYPE_F64, std::move(shape), values);
}

HostTensor HostTensor::i64(std::vector<int64_t> shape,
                           const std::vector<int64_t> &values) {
  return makeTensor(TFM_DTYPE_I64, std::move(shape), values);
}

HostTensor HostTensor::i32(std::vector<int64_t> shape,
                           const std::vector<int32_t> &values) {
  return makeTensor(TFM_DTYPE_I32, std::move(shape), values);
}

HostTensor HostTensor::i8(std::vector<int64_t> shape,
                          const std::vector<int8_t> &values) {
  return makeTensor(TFM_DTYPE_I8, std::move(shape), values);
}

HostTensor HostTensor::halfBits(tfm_dtype dtype, std::vector<int64_t> shape,
                                const std::vector<uint16_t> &bits) {
  return makeTensor(dtype, std::move(shape), bits);
}

HostTensor HostTensor::bf16(std::vector<int64_t> shape,
                            const std::vector<float> &values) {
  std::vector<uint16_t> bits;
  for (float v : values)
    bits.push_back(tfm_f32_to_bf16(v));
  return halfBits(TFM_DTYPE_BF16, std::move(shape), bits);
}

HostTensor HostTensor::f16(std::vector<int64_t> shape,
                           const std::vector<float> &values) {
  std::vector<uint16_t> bits;
  for (float v : values)
    bits.push_back(tfm_f32_to_f16(v));
  return halfBits(TFM_DTYPE_F16, std::move(shape), bits);
}

std::vector<uint16_t> HostTensor::halfBits() const {
  if (dtype != TFM_DTYPE_BF16 && dtype != TFM_DTYPE_F16)
    throw std::logic_error("HostTensor: " + describe() + " is not bf16/f16");
  std::vector<uint16_t> bits(static_cast<size_t>(numel()));
  if (!bits.empty())
    std::memcpy(bits.data(), bytes.data(), bits.size() * 2);
  return bits;
}

HostTensor HostTensor::zeros(tfm_dtype dtype, std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.assign(size_t(t.numel()) * tfm_dtype_size(dtype), 0);
  return t;
}

HostTensor HostTensor::readNpy(const std::string &path) {
  tfm_tensor t{};
  if (tfm_status status = tfm_npy_read(path.c_str(), &t))
    throw std::runtime_error("reading " + path + ": " + takeMessage(status));
  HostTensor h;
  h.dtype = t.dtype;
  h.shape.assign(t.shape, t.shape + t.rank);
  h.bytes.resize(size_t(tfm_tensor_byte_size(&t)));
  if (!h.bytes.empty())
    std::memcpy(h.bytes.data(), t.data, h.bytes.size());
  tfm_tensor_release_data(&t);
  return h;
}

std::vector<double> HostTensor::toDoubles() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  auto convert = [&](auto tag) {
    using T = decltype(tag);
    if (bytes.size() != out.size() * sizeof(T))
      throw std::logic_error("HostTensor: byte size does not match " +
                             describe());
    for (size_t i = 0; i < out.size(); ++i) {
      T v;
      std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
      out[i] = double(v);
    }
  };
  switch (dtype) {
  case TFM_DTYPE_F32:
    convert(float());
    break;
  case TFM_DTYPE_F64:
    convert(double());
    break;
  case TFM_DTYPE_I32:
    convert(int32_t());
    break;
  case TFM_DTYPE_I64:
    convert(int64_t());
    break;
  case TFM_DTYPE_BOOL:
  case TFM_DTYPE_U8:
    convert(uint8_t());
    break;
  case TFM_DTYPE_I8:
    convert(int8_t());
    break;
  case TFM_DTYPE_F16:
  case TFM_DTYPE_BF16: {
    std::vector<uint16_t> bits = halfBits();
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = dtype == TFM_DTYPE_F16 ? tfm_f16_to_f32(bits[i])
                                      : tfm_bf16_to_f32(bits[i]);
    break;
  }
  default:
    throw std::logic_error("HostTensor: invalid dtype");
  }
  return out;
}

tfm_tensor HostTensor::view() const {
  if (shape.size() > TFM_MAX_RANK)
    throw std::logic_error("HostTensor: rank too large for a view");
  tfm_tensor t{};
  t.dtype = dtype;
  t.rank = int32_t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    t.shape[i] = shape[i];
  // The runtime rejects NULL data, even for zero elements.
  static unsigned char empty[64];
  t.data = bytes.empty() ? static_cast<void *>(empty)
                         : const_cast<unsigned char *>(bytes.data());
  return t;
}

std::string HostTensor::describe() const {
  return std::string(tfm_dtype_name(dtype)) + formatShape(shape);
}

//===----------------------------------------------------------------------===//
// Random
//===----------------------------------------------------------------------===//

std::vector<float> Random::uniform(int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = dist(gen);
  return v;
}

std::vector<float> Random::integers(int64_t n, int lo, int hi) {
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = float(dist(gen));
  return v;
}

std::vector<int64_t> Random::ids(int64_t n, int64_t lo, int64_t hi) {
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t &x : v)
    x = dist(gen);
  return v;
}

Weight Random::weight(std::vector<int64_t> shape, float lo, float hi) {
  Weight w;
  w.data = uniform(elementCount(shape), lo, hi);
  w.shape = std::move(shape);
  return w;
}

HostTensor Random::f32(std::vector<int64_t> shape, float lo, float hi) {
  std::vector<float> values = uniform(elementCount(shape), lo, hi);
  return HostTensor::f32(std::move(shape), values);
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

std::string makeTempDir() {
  std::string base = TFM_E2E_TMPDIR;
  std::error_code ec;
  fs::create_directories(base, ec);
  std::string pattern = base + "/compile-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!::mkdtemp(buffer.data()))
    throw std::runtime_error("mkdtemp(" + pattern +
                             ") failed: " + std::strerror(errno));
  return buffer.data();
}

namespace {

void writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

std::optional<std::string> envValue(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return std::nullopt;
  return std::string(v);
}

CompileResult compileIn(CompileResult result, const BuildOptions &build) {
  result.libraryPath = result.dir + "/model.so";
  if (build.header)
    result.headerPath = result.dir + "/model.h";
  mlir::tfm::CompileOptions options;
  options.modelPath = result.modelPath;
  options.weightsPath = result.weightsPath;
  options.outputPath = result.libraryPath;
  options.headerPath = result.headerPath;
  options.remarks = build.remarks;
  if (build.externalWeights) {
    result.sidecarPath = result.dir + "/model.weights.safetensors";
    options.externalWeights = true;
    options.weightsOutputPath = result.sidecarPath;
  }
  if (build.fuseAttention)
    options.fuseAttention = *build.fuseAttention;
  else if (std::optional<std::string> env = envValue("TFM_E2E_FUSE_ATTENTION"))
    options.fuseAttention = *env != "0";
  if (std::optional<std::string> env = envValue("TFM_E2E_TILE_ATTENTION"))
    options.tileAttention = std::stoll(*env);
  if (build.dtype)
    options.dtype = *build.dtype;
  if (build.quantize)
    options.quantize = *build.quantize;
  if (build.kvCacheDtype)
    options.kvCacheDtype = *build.kvCacheDtype;
  options.keepFp32 = build.keepFp32;
  options.configOverrides = build.configOverrides;
  if (build.cpu)
    options.cpu = *build.cpu;
  else if (std::optional<std::string> env = envValue("TFM_E2E_CPU"))
    // A CPU level this machine cannot run falls back to the default.
    options.cpu = hostRuns(*env) ? *env : "x86-64-v2";
  llvm::raw_string_ostream diagnostics(result.diagnostics);
  result.ok = mlir::succeeded(mlir::tfm::compileModel(options, diagnostics));
  return result;
}
} // namespace

CompileResult compileSource(const std::string &source, const Weights &weights,
                            const BuildOptions &options) {
  CompileResult result;
  result.dir = makeTempDir();
  result.modelPath = result.dir + "/model.tfm";
  writeFile(result.modelPath, source);
  if (!weights.empty()) {
    result.weightsPath = result.dir + "/weights.safetensors";
    std::vector<tfm::SafeTensorWriteEntry> entries;
    for (const auto &[name, w] : weights) {
      bool f64 = !w.data64.empty();
      size_t size = f64 ? w.data64.size() : w.data.size();
      if (int64_t(size) != elementCount(w.shape))
        throw std::logic_error("weight '" + name + "' has " +
                               std::to_string(size) + " values for shape " +
                               formatShape(w.shape));
      if (f64)
        entries.push_back({name, "F64", w.shape, w.data64.data()});
      else
        entries.push_back({name, "F32", w.shape, w.data.data()});
    }
    std::string error;
    if (!tfm::writeSafeTensors(result.weightsPath, entries, error))
      throw std::runtime_error(error);
  }
  return compileIn(std::move(result), options);
}

CompileResult compileFiles(const std::string &modelPath,
                           const std::string &weightsPath,
                           const BuildOptions &options) {
  CompileResult result;
  result.dir = makeTempDir();
  result.modelPath = modelPath;
  result.weightsPath = weightsPath;
  return compileIn(std::move(result), options);
}

std::string describeEnvironment() {
  std::string s;
  for (const char *name :
       {"TFM_E2E_FUSE_ATTENTION", "TFM_E2E_CPU", "TFM_E2E_TILE_ATTENTION"})
    if (std::optional<std::string> v = envValue(name))
      s += std::string(s.empty() ? "" : ", ") + name + "=" + *v;
  return s.empty() ? "driver defaults" : s;
}

bool hostRuns(const std::string &cpu) {
  __builtin_cpu_init();
  if (cpu == "x86-64-v3")
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("bmi2");
  if (cpu == "x86-64-v4")
    return __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
  return true;
}

void removeTempDir(const std::string &dir) {
  if (dir.empty() || std::getenv("TFM_E2E_KEEP"))
    return;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

const HostTensor &RunResult::operator[](const std::string &name) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name)
      return outputs[i];
  throw std::runtime_error("the model has no output '" + name + "'");
}

std::shared_ptr<Model> Model::load(CompileResult compiled) {
  if (!compiled.ok) {
    std::string message = "compiling " + compiled.modelPath + " (" +
                          describeEnvironment() + ") failed:\n" +
                          compiled.diagnostics;
    removeTempDir(compiled.dir);
    throw std::runtime_error(message);
  }
  std::shared_ptr<Model> m(new Model());
  m->compiled = std::move(compiled);
  if (tfm_status status =
          tfm_model_load(m->compiled.libraryPath.c_str(), &m->model))
    throw std::runtime_error("tfm_model_load(" + m->compiled.libraryPath +
                             "): " + takeMessage(status));
  return m;
}

std::shared_ptr<Model> Model::build(const std::string &source,
                                    const Weights &weights,
                                    const BuildOptions &options) {
  return load(compileSource(source, weights, options));
}

std::shared_ptr<Model> Model::buildFiles(const std::string &modelPath,
                                         const std::string &weightsPath,
                                         const BuildOptions &options) {
  return load(compileFiles(modelPath, weightsPath, options));
}

std::shared_ptr<Model> Model::reload() const {
  CompileResult copy = compiled;
  copy.dir = makeTempDir();
  auto copyInto = [&](std::string &path) {
    if (path.empty())
      return;
    std::string to = copy.dir + "/" + fs::path(path).filename().string();
    std::error_code ec;
    fs::copy_file(path, to, ec);
    if (ec) {
      removeTempDir(copy.dir);
      throw std::runtime_error("copying " + path + ": " + ec.message());
    }
    path = to;
  };
  // The library, and the weights it maps beside it.
  copyInto(copy.libraryPath);
  copyInto(copy.sidecarPath);
  copy.headerPath.clear();
  return load(std::move(copy));
}

Model::~Model() {
  tfm_model_release(model);
  removeTempDir(compiled.dir);
}

std::vector<std::string> Model::inputNames() const {
  std::vector<std::string> names;
  for (size_t i = 0; i < tfm_model_input_count(model); ++i)
    names.push_back(tfm_model_input_name(model, i));
  return names;
}

std::vector<std::string> Model::outputNames() const {
  std::vector<std::string> names;
  for (size_t i = 0; i < tfm_model_output_count(model); ++i)
    names.push_back(tfm_model_output_name(model, i));
  return names;
}

int Model::inputIndex(const std::string &name) const {
  for (size_t i = 0; i < tfm_model_input_count(model); ++i)
    if (name == tfm_model_input_name(model, i))
      return int(i);
  return -1;
}

int Model::outputIndex(const std::string &name) const {
  for (size_t i = 0; i < tfm_model_output_count(model); ++i)
    if (name == tfm_model_output_name(model, i))
      return int(i);
  return -1;
}

RunResult Model::run(const std::vector<HostTensor> &inputs,
                     const tfm_exec *exec) const {
  RunResult result;
  result.names = outputNames();
  std::vector<tfm_tensor> in;
  for (const HostTensor &t : inputs)
    in.push_back(t.view());
  std::vector<tfm_tensor> out(result.names.size());
  if (tfm_status status = tfm_model_infer_output_shapes(
          model, in.data(), in.size(), out.data(), out.size())) {
    result.code = tfm_status_code(status);
    result.message = takeMessage(status);
    return result;
  }
  for (tfm_tensor &t : out) {
    HostTensor h = HostTensor::zeros(
        t.dtype, std::vector<int64_t>(t.shape, t.shape + t.rank));
    // Poison float outputs with NaN so that an element the model never writes
    // cannot pass as a correct 0.
    if (h.dtype == TFM_DTYPE_F32)
      for (size_t i = 0; i < h.bytes.size(); i += 4) {
        float nan = std::nanf("");
        std::memcpy(h.bytes.data() + i, &nan, 4);
      }
    if (h.dtype == TFM_DTYPE_F64)
      for (size_t i = 0; i < h.bytes.size(); i += 8) {
        double nan = std::nan("");
        std::memcpy(h.bytes.data() + i, &nan, 8);
      }
    result.outputs.push_back(std::move(h));
  }
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = result.outputs[i].view();
  tfm_status status =
      exec ? tfm_model_run_with_exec(model, in.data(), in.size(), out.data(),
                                     out.size(), exec)
           : tfm_model_run(model, in.data(), in.size(), out.data(), out.size());
  if (status) {
    result.code = tfm_status_code(status);
    result.message = takeMessage(status);
  }
  return result;
}

RunResult
Model::runNamed(const std::map<std::string, HostTensor> &inputs) const {
  std::vector<HostTensor> ordered;
  for (const std::string &name : inputNames()) {
    auto it = inputs.find(name);
    if (it == inputs.end())
      throw std::runtime_error("no value given for input '" + name + "'");
    ordered.push_back(it->second);
  }
  if (ordered.size() != inputs.size())
    throw std::runtime_error("some inputs given are not inputs of the model");
  return run(ordered);
}

namespace {
RunResult checked(RunResult r) {
  if (!r.ok())
    throw std::runtime_error(std::string("tfm_model_run failed: ") +
                             tfm_status_code_name(r.code) + ": " + r.message);
  return r;
}
} // namespace

RunResult Model::runOk(const std::vector<HostTensor> &inputs,
                       const tfm_exec *exec) const {
  return checked(run(inputs, exec));
}

RunResult
Model::runOkNamed(const std::map<std::string, HostTensor> &inputs) const {
  return checked(runNamed(inputs));
}

//===----------------------------------------------------------------------===//
// Comparing
//===----------------------------------------------------------------------===//

Comparison allClose(const std::vector<double> &got,
                    const std::vector<double> &ref, double rtol, double atol,
                    const std::vector<double> *extraAtol) {
  Comparison c;
  std::ostringstream os;
  os.precision(3);
  if (got.size() != ref.size()) {
    c.ok = false;
    os << got.size() << " values, expected " << ref.size();
    c.message = os.str();
    return c;
  }
  c.count = int64_t(got.size());
  double worstExcess = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], r = ref[i];
    double tol = atol + rtol * std::fabs(r) + (extraAtol ? (*extraAtol)[i] : 0);
    double err = std::fabs(g - r);
    bool good;
    if (std::isnan(r))
      good = std::isnan(g);
    else if (std::isinf(r))
      good = g == r;
    else
      good = err <= tol; // false for NaN
    if (std::isnan(err) || std::isinf(err))
      err = INFINITY;
    if (!good)
      ++c.failures;
    if (std::isfinite(r) && err > c.maxAbsError)
      c.maxAbsError = err;
    double rel = err / std::max(std::fabs(r), 1e-300);
    if (std::isfinite(r) && rel > c.maxRelError)
      c.maxRelError = rel;
    double excess = good ? err - tol : INFINITY;
    if (c.worstIndex < 0 || excess > worstExcess) {
      worstExcess = excess;
      c.worstIndex = int64_t(i);
    }
  }
  c.ok = c.failures == 0;
  os << std::scientific << "max abs err " << c.maxAbsError << ", max rel err "
     << c.maxRelError << " (rtol " << rtol << ", atol " << atol << ") over "
     << c.count << " values";
  if (!c.ok) {
    os.precision(8);
    os << ": " << c.failures << " MISMATCH; worst at flat index "
       << c.worstIndex << ": got " << got[size_t(c.worstIndex)] << ", expected "
       << ref[size_t(c.worstIndex)];
  }
  c.message = os.str();
  return c;
}

Comparison allClose(const HostTensor &got, const std::vector<int64_t> &refShape,
                    const std::vector<double> &ref, double rtol, double atol,
                    const std::vector<double> *extraAtol) {
  if (got.shape != refShape) {
    Comparison c;
    c.ok = false;
    c.message = "shape " + formatShape(got.shape) + ", expected " +
                formatShape(refShape);
    return c;
  }
  Comparison c = allClose(got.toDoubles(), ref, rtol, atol, extraAtol);
  c.message = got.describe() + ": " + c.message;
  return c;
}

bool allFinite(const std::vector<double> &values) {
  for (double v : values)
    if (!std::isfinite(v))
      return false;
  return true;
}

} // namespace e2e
