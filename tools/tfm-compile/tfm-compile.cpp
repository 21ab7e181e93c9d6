//===- tfm-compile.cpp - Compile a .tfm model to native code --------------===//
//
// tfm's options, plus MLIR's own for looking inside the compiler:
// --mlir-timing, --mlir-print-ir-after-all and friends, as in mlir-opt.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver/Driver.h"
#include "compiler/Pipelines/Pipelines.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::OptionCategory category("tfm-compile options");
static cl::opt<std::string> modelPath(cl::Positional, cl::desc("MODEL.tfm"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string>
    weightsPath("weights",
                cl::desc("Weights (.safetensors under PyTorch names, or GGUF)"),
                cl::value_desc("FILE"), cl::cat(category));
static cl::opt<std::string>
    outputPath("o",
               cl::desc("Output: OUT.so, OUT.o, OUT.h, or a text stage "
                        "('-' for stdout)"),
               cl::value_desc("OUT"), cl::init("-"), cl::cat(category));
static cl::opt<std::string>
    headerPath("header", cl::desc("Also write the model's C header here"),
               cl::value_desc("FILE.h"), cl::cat(category));
static cl::opt<std::string>
    emit("emit",
         cl::desc("Stage to emit: tfm, linalg, llvm-mlir, llvm-ir, asm, obj, "
                  "so, header, and with --target cuda gpu, nvvm, ptx "
                  "(default: from the output's extension)"),
         cl::cat(category));
static cl::opt<std::string>
    modelName("name",
              cl::desc("Name the artifact's symbols tfm_<NAME>_... instead of "
                       "after the file's 'model' line"),
              cl::value_desc("NAME"), cl::cat(category));
static cl::opt<std::string>
    target("target",
           cl::desc("Target: 'cpu' (the default: this machine's target "
                    "triple), an x86-64 LLVM target triple, or 'cuda' "
                    "(NVIDIA GPUs, docs/gpu.md)"),
           cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    gpuArch("gpu-arch",
            cl::desc("--target cuda: the GPU architecture (sm_80, sm_86, "
                     "sm_89, sm_90)"),
            cl::init("sm_80"), cl::cat(category));
static cl::opt<std::string>
    dtype("dtype",
          cl::desc("The type the model's contractions read their operands "
                   "in, with f32 accumulation: f32 (the default); bf16 (CPU: "
                   "linear layers' weights rounded at compile time, "
                   "vdpbf16ps kernels; cuda: tensor cores); f16 (cuda)"),
          cl::init("f32"), cl::cat(category));
static cl::opt<std::string> kvCacheDtype(
    "kv-cache-dtype",
    cl::desc("The element type of every cache the model declares: f32, bf16 "
             "or f16 (CPU; like llama.cpp's --cache-type-k/-v: new K/V rows "
             "rounded to nearest even, attention reads the narrow cache and "
             "accumulates in f32). Default: as the model file declares"),
    cl::value_desc("f32|bf16|f16"), cl::cat(category));
static cl::opt<std::string>
    quantize("quantize",
             cl::desc("CPU: 'int8' quantizes linear layers (weights per "
                      "output column at compile time, inputs per row at run "
                      "time; vpdpbusd kernels, i32 accumulation)"),
             cl::value_desc("int8"), cl::cat(category));
static cl::list<std::string> configOverrides(
    "set",
    cl::desc("Set a key the model reads with config(), in front of the "
             "weights file's metadata: a number, true/false or a string "
             "(--set tfm.capacity=4096; repeatable)"),
    cl::value_desc("KEY=VALUE"), cl::cat(category));
static cl::list<std::string>
    keepFp32("keep-fp32",
             cl::desc("Keep the weights whose names match this glob in f32 "
                      "under --dtype bf16 / --quantize int8, and GGUF Q8_0 "
                      "linear weights dequantized to f32 (repeatable)"),
             cl::value_desc("GLOB"), cl::cat(category));
static cl::opt<std::string>
    cudaPath("cuda-path",
             cl::desc("--target cuda: the CUDA toolkit; with its ptxas and "
                      "fatbinary the artifact embeds cubin and PTX, without "
                      "them PTX only"),
             cl::init("/usr/local/cuda"), cl::cat(category));
static cl::opt<std::string>
    cpu("cpu",
        cl::desc("CPU to generate code for: an LLVM name (x86-64-v3, "
                 "znver4, ...), 'host', or 'portable' (the default: "
                 "x86-64-v2 code whose GEMM and attention kernels also come "
                 "in AVX2+FMA and AVX-512 variants, picked at run time)"),
        cl::init("portable"), cl::cat(category));
static cl::opt<bool> noFuseAttention(
    "no-fuse-attention",
    cl::desc("Compute every attention unfused, materializing the scores"),
    cl::cat(category));
static cl::opt<bool>
    remarks("remarks",
            cl::desc("Report each attention in the fused kernel, or why not"),
            cl::cat(category));
static cl::opt<std::string> weightsMode(
    "weights-mode",
    cl::desc("'embedded' (the default): the weights are in the artifact; "
             "'external': in a sidecar file (--weights-out) that the "
             "runtime maps and checks at load"),
    cl::value_desc("embedded|external"), cl::init("embedded"),
    cl::cat(category));
static cl::opt<std::string>
    weightsOut("weights-out",
               cl::desc("--weights-mode external: where to write the "
                        "weights (default: OUT.weights.safetensors)"),
               cl::value_desc("FILE"), cl::cat(category));
static cl::opt<std::string> tokenizerPath(
    "tokenizer",
    cl::desc("Embed this tokenizer in the artifact (tokenizer.json, its "
             "directory, or a .gguf file's vocabulary); the header declares "
             "tfm_<model>_tokenize and _detokenize"),
    cl::value_desc("PATH"), cl::cat(category));
static cl::opt<bool>
    printWeights("print-weights",
                 cl::desc("Print weights in full in IR stages"),
                 cl::cat(category));

static cl::OptionCategory mlirCategory("MLIR options (as in mlir-opt)");

/// MLIR's pass manager, context, printer and timing options. They belong to
/// no category, so they get one of their own, to be shown next to tfm's
/// while LLVM's many others stay hidden.
/// The passes are registered for the options that name them
/// (--mlir-print-ir-before=convert-attention-to-cpu).
static void registerMLIROptions() {
  mlir::registerAllPasses();
  mlir::tfm::registerAllPassesAndPipelines();
  mlir::registerPassManagerCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  for (auto &option : cl::getRegisteredOptions())
    if (option.first.starts_with("mlir-")) {
      option.second->addCategory(mlirCategory);
      option.second->setHiddenFlag(cl::NotHidden);
    }
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  registerMLIROptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "tfm-compile: compile a transformer model\n");
  mlir::tfm::CompileOptions options;
  options.modelPath = modelPath;
  options.weightsPath = weightsPath;
  options.outputPath = outputPath;
  options.headerPath = headerPath;
  options.modelName = modelName;
  options.target = target;
  options.cpu = cpu;
  options.gpuArch = gpuArch;
  options.cudaPath = cudaPath;
  options.dtype = dtype;
  options.quantize = quantize;
  options.kvCacheDtype = kvCacheDtype;
  options.keepFp32.assign(keepFp32.begin(), keepFp32.end());
  options.configOverrides.assign(configOverrides.begin(),
                                 configOverrides.end());
  options.printWeights = printWeights;
  options.tokenizerPath = tokenizerPath;
  if (weightsMode != "embedded" && weightsMode != "external") {
    errs() << "tfm-compile: error: unknown --weights-mode '" << weightsMode
           << "' (embedded, external)\n";
    return 2;
  }
  options.externalWeights = weightsMode == "external";
  options.weightsOutputPath = weightsOut;
  options.fuseAttention = !noFuseAttention;
  options.remarks = remarks;
  options.configurePassManager = [](mlir::PassManager &pm) {
    return mlir::applyPassManagerCLOptions(pm);
  };
  if (!emit.empty()) {
    options.emit = mlir::tfm::parseEmitKind(emit);
    if (!options.emit) {
      errs() << "tfm-compile: error: unknown --emit stage '" << emit
             << "' (tfm, linalg, llvm-mlir, llvm-ir, asm, obj, so, header, "
                "gpu, nvvm, ptx)\n";
      return 2;
    }
  }
  // Reports at its destruction, after the compilation, when --mlir-timing.
  mlir::DefaultTimingManager timingManager;
  mlir::applyDefaultTimingManagerCLOptions(timingManager);
  mlir::TimingScope timing = timingManager.getRootScope();
  return mlir::succeeded(mlir::tfm::compileModel(options, errs(), timing)) ? 0
                                                                           : 1;
}
