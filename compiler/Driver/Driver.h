//===- Driver.h - Compile a model file to an artifact -----------*- C++ -*-===//
//
// What tfm-compile and the end-to-end tests call: parse, lower, and write one
// stage of the result (IR for inspection, an object, a shared library or the
// model's C header).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_DRIVER_DRIVER_H
#define TFM_COMPILER_DRIVER_DRIVER_H

#include "mlir/Support/LLVM.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class PassManager;
} // namespace mlir

namespace mlir::tfm {

enum class EmitKind {
  Tfm,           ///< the tfm dialect as parsed
  Linalg,        ///< linalg on tensors, weights bound
  LLVMMlir,      ///< the LLVM dialect with the entry points
  LLVMIR,        ///< optimized LLVM IR
  Assembly,      ///< x86-64 assembly
  Object,        ///< an ELF object (.o)
  SharedLibrary, ///< a shared library (.so) for tfm-run and dlopen
  Header,        ///< the model's C header (.h)
  Gpu,           ///< --target cuda: host code and outlined gpu.func kernels
  Nvvm,          ///< --target cuda: the kernels in the NVVM/LLVM dialects
  Ptx,           ///< --target cuda: the kernels' PTX
};

/// Parses `--emit` values: tfm, linalg, llvm-mlir, llvm-ir, asm, obj, so,
/// header, and for --target cuda gpu, nvvm, ptx.
std::optional<EmitKind> parseEmitKind(StringRef name);
/// The artifact an output path asks for by its extension (.o, .so, .h).
std::optional<EmitKind> emitKindForPath(StringRef path);

struct CompileOptions {
  std::string modelPath;
  /// A .safetensors file; required when the model names weights.
  std::string weightsPath;
  /// Where the result goes; "-" is stdout (text stages only).
  std::string outputPath = "-";
  /// Also write the C header here (next to an object or library).
  std::string headerPath;
  /// Overrides the name after `model` in the file: the artifact's symbols
  /// become tfm_<name>_..., so that one program can link the same model
  /// twice, or two models that share a name. Empty keeps the file's name.
  std::string modelName;
  /// What to produce; when unset, derived from outputPath's extension.
  std::optional<EmitKind> emit;
  /// "cpu" (the default): code for this machine's target triple, as LLVM
  /// names it; or an x86-64 LLVM target triple, such as
  /// x86_64-unknown-linux-gnu.
  /// "cuda": host code for this machine that runs the model's kernels on an
  /// NVIDIA GPU of `gpuArch` (docs/gpu.md).
  std::string target = "cpu";
  /// --target cuda: the GPU architecture, sm_80 or sm_90 (also sm_86,
  /// sm_89).
  std::string gpuArch = "sm_80";
  /// The contractions' operand type: "f32", or "bf16" (CPU: linear layers'
  /// weights rounded at compile time, inputs as they are read, vdpbf16ps
  /// kernels, f32 accumulation; docs/compiler.md), or with --target cuda
  /// "f16"/"bf16" on tensor cores with f32 accumulation (docs/gpu.md).
  std::string dtype = "f32";
  /// The element type of every cache the model declares (docs/generation.md):
  /// "" keeps the declarations; "f32", "bf16" or "f16" retypes them all.
  /// A bf16/f16 cache stores the K/V rows rounded to nearest even and the
  /// CPU attention kernel reads it as it is (half the bytes per decoded
  /// token); CPU only.
  std::string kvCacheDtype;
  /// CPU: "int8" quantizes linear layers' weights per output column at
  /// compile time and their inputs per row at run time (vpdpbusd kernels,
  /// i32 accumulation); "" (the default) does not.
  std::string quantize;
  /// Glob patterns of weight names that stay f32 under `dtype` bf16 and
  /// `quantize` int8 (`--keep-fp32 'pooler.*'`), and GGUF Q8_0 weights of
  /// linear layers that are dequantized to f32 instead of running in Q8_0.
  std::vector<std::string> keepFp32;
  /// `KEY=VALUE` pairs (`--set`) that config() reads in front of the
  /// weights file's metadata (ConfigOverrides).
  std::vector<std::string> configOverrides;
  /// --target cuda: the CUDA toolkit. When its bin/ptxas and bin/fatbinary
  /// exist, artifacts embed a fatbin (cubin and PTX), else PTX alone, which
  /// the driver compiles when the artifact loads.
  std::string cudaPath = "/usr/local/cuda";
  /// LLVM CPU name, or "host"; "portable" (the default): x86-64-v2 code
  /// whose GEMM and attention kernels also come as AVX2+FMA and AVX-512
  /// variants, chosen at run time by the CPU's features.
  std::string cpu = "portable";
  /// Leave the weights out of the artifact (`--weights-mode external`):
  /// their final bytes go to `weightsOutputPath`, which the runtime maps and
  /// checks at load (docs/embedding.md).
  bool externalWeights = false;
  /// The sidecar of external weights; empty: the output's path with its
  /// extension replaced by `.weights.safetensors`.
  std::string weightsOutputPath;
  /// A tokenizer to embed in the artifact (docs/tokenizers.md): a
  /// tokenizer.json, the directory holding one, or a .gguf file whose
  /// tokenizer.ggml.* metadata is kept (not its tensors). The header then
  /// declares tfm_<model>_tokenize and _detokenize. Empty: none.
  std::string tokenizerPath;
  /// Print large constants (weights) in IR stages in full.
  bool printWeights = false;
  /// Fuse attention chains into tfm.attention (docs/compiler.md); off keeps
  /// the unfused path that materializes the scores.
  bool fuseAttention = true;
  /// Tile tfm.attention into query tiles of this many rows before the CPU
  /// lowering (0: off): the tiled form of tfm-tile-attention, for tests.
  int64_t tileAttention = 0;
  /// Print a remark for each attention chain fused or left unfused.
  bool remarks = false;
  /// Called on each pass manager before it runs. A tool adds MLIR's
  /// instrumentation here: tfm-compile applies the --mlir-print-ir-*,
  /// --mlir-pass-statistics and crash reproducer options, which the library
  /// does not read itself, so that in-process callers get no surprises from
  /// global command-line state.
  std::function<LogicalResult(PassManager &)> configurePassManager;
};

/// Compiles as `options` say. Errors, warnings and remarks are printed to
/// `diagnostics` with the location they refer to (`model.tfm:3:5: error:
/// ...`, then the source line), or as `tfm-compile: error: ...` when they
/// concern no line of the model; the linker's own output is part of its
/// error.
LogicalResult compileModel(const CompileOptions &options,
                           raw_ostream &diagnostics = llvm::errs());

/// As above, timing each stage under `timing` (parsing, every pass of both
/// pipelines, LLVM's optimizer, code generation, linking): what
/// `tfm-compile --mlir-timing` reports.
LogicalResult compileModel(const CompileOptions &options,
                           raw_ostream &diagnostics, TimingScope &timing);

} // namespace mlir::tfm

#endif // TFM_COMPILER_DRIVER_DRIVER_H
