//===- OptionChecks.cpp - tfm-compile options that cannot work together ---===//
#include "compiler/Driver/OptionChecks.h"
#include "compiler/Checkpoint/Checkpoint.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::tfm;

bool mlir::tfm::isGgufFile(const std::string &path) {
  if (path.empty())
    return false;
  std::string error;
  std::shared_ptr<Checkpoint> file = Checkpoint::open(path, error);
  return file && file->isGguf();
}

static std::optional<std::string> reason(const llvm::Twine &message) {
  return message.str();
}

std::optional<std::string>
mlir::tfm::findOptionError(const CompileOptions &options, EmitKind emit) {
  bool cuda = options.target == "cuda";
  bool gpuStage =
      emit == EmitKind::Gpu || emit == EmitKind::Nvvm || emit == EmitKind::Ptx;
  if (gpuStage && !cuda)
    return reason("--emit=gpu, nvvm and ptx need --target cuda");
  if (options.externalWeights && cuda)
    return reason("--weights-mode external is for CPU artifacts; --target "
                  "cuda embeds its weights");
  if (options.externalWeights && options.outputPath == "-" &&
      options.weightsOutputPath.empty() &&
      (emit == EmitKind::Object || emit == EmitKind::SharedLibrary))
    return reason("--weights-mode external needs -o or --weights-out");
  static constexpr llvm::StringLiteral kGpuArchs[] = {"sm_80", "sm_86", "sm_89",
                                                      "sm_90"};
  if (cuda && !llvm::is_contained(kGpuArchs, options.gpuArch))
    return reason("unknown --gpu-arch '" + options.gpuArch +
                  "' (supported: sm_80, sm_86, sm_89, sm_90)");
  if (options.dtype != "f32" && options.dtype != "f16" &&
      options.dtype != "bf16")
    return reason("unknown --dtype '" + options.dtype +
                  "' (supported: f32, f16, bf16)");
  if (options.dtype == "f16" && !cuda)
    return reason("--dtype f16 needs --target cuda (the CPU target computes in "
                  "f32 or bf16)");
  if (!options.kvCacheDtype.empty() && options.kvCacheDtype != "f32" &&
      options.kvCacheDtype != "bf16" && options.kvCacheDtype != "f16")
    return reason("unknown --kv-cache-dtype '" + options.kvCacheDtype +
                  "' (supported: f32, bf16, f16)");
  if (cuda && (options.kvCacheDtype == "bf16" || options.kvCacheDtype == "f16"))
    return reason("--kv-cache-dtype " + options.kvCacheDtype +
                  " is for CPU artifacts (the GPU attention kernels read f32 "
                  "caches)");
  if (!options.quantize.empty() && options.quantize != "int8")
    return reason("unknown --quantize '" + options.quantize +
                  "' (supported: int8)");
  if (!options.quantize.empty() && cuda)
    return reason("--quantize int8 is for CPU artifacts");
  // GGUF Q8_0 weights of linear layers stay quantized unless kept in f32,
  // so --keep-fp32 has a use with a GGUF file alone.
  if (!options.keepFp32.empty() && options.dtype == "f32" &&
      options.quantize.empty() && !isGgufFile(options.weightsPath))
    return reason("--keep-fp32 needs --dtype bf16, --quantize int8 or GGUF "
                  "weights");
  for (const std::string &pattern : options.keepFp32)
    if (llvm::Expected<llvm::GlobPattern> glob =
            llvm::GlobPattern::create(pattern);
        !glob)
      return reason("--keep-fp32 '" + pattern +
                    "': " + llvm::toString(glob.takeError()));
  // The kernels' math (exp, erf, tanh, max) links libdevice; without it the
  // PTX would name functions that no driver can resolve.
  llvm::SmallString<128> libdevice(options.cudaPath);
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  bool beforePtx = emit == EmitKind::Tfm || emit == EmitKind::Header ||
                   emit == EmitKind::Linalg || emit == EmitKind::Gpu ||
                   emit == EmitKind::Nvvm;
  if (cuda && !beforePtx && !llvm::sys::fs::exists(libdevice))
    return reason("--target cuda needs the CUDA toolkit's libdevice, and " +
                  libdevice + " does not exist: pass --cuda-path");

  return std::nullopt;
}
