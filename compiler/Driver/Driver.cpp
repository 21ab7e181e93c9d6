//===- Driver.cpp - Compile a model file to an artifact -------------------===//
#include "compiler/Driver/Driver.h"
#include "compiler/Checkpoint/Checkpoint.h"
#include "compiler/Checkpoint/ShardIndex.h"
#include "compiler/Driver/OptionChecks.h"
#include "compiler/Frontend/ConfigOverrides.h"
#include "compiler/Frontend/Parser.h"
#include "compiler/Frontend/WeightShapes.h"
#include "compiler/Pipelines/CpuPipeline.h"
#include "compiler/Pipelines/GpuPipeline.h"
#include "compiler/Registration/Registration.h"
#include "compiler/Target/EmbeddedWeights.h"
#include "compiler/Target/HeaderEmitter.h"
#include "compiler/Target/NativeCode.h"
#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/Signature.h"
#include "tfm/gguf.h"
#include "tfm/runtime.h"
#include "tfm/tokenizer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::tfm;

// The runtime loads what the compiler writes, and apps compare the two
// headers' versions: one number for both.
static_assert(kArtifactAbiVersion == TFM_API_VERSION,
              "the compiler's artifact ABI and the runtime's API versions "
              "differ");

std::optional<EmitKind> mlir::tfm::parseEmitKind(StringRef name) {
  return llvm::StringSwitch<std::optional<EmitKind>>(name)
      .Case("tfm", EmitKind::Tfm)
      .Case("linalg", EmitKind::Linalg)
      .Case("llvm-mlir", EmitKind::LLVMMlir)
      .Case("llvm-ir", EmitKind::LLVMIR)
      .Case("llvm", EmitKind::LLVMIR)
      .Case("asm", EmitKind::Assembly)
      .Case("obj", EmitKind::Object)
      .Case("so", EmitKind::SharedLibrary)
      .Case("header", EmitKind::Header)
      .Case("gpu", EmitKind::Gpu)
      .Case("nvvm", EmitKind::Nvvm)
      .Case("ptx", EmitKind::Ptx)
      .Default(std::nullopt);
}

std::optional<EmitKind> mlir::tfm::emitKindForPath(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  return llvm::StringSwitch<std::optional<EmitKind>>(ext)
      .Case(".o", EmitKind::Object)
      .Case(".so", EmitKind::SharedLibrary)
      .Case(".h", EmitKind::Header)
      .Case(".s", EmitKind::Assembly)
      .Case(".ll", EmitKind::LLVMIR)
      .Default(std::nullopt);
}

namespace {
/// The innermost file location of `loc`, if it has one.
std::optional<FileLineColLoc> findFileLocation(Location loc) {
  std::optional<FileLineColLoc> found;
  loc->walk([&](Location l) {
    if (auto file = dyn_cast<FileLineColLoc>(l)) {
      found = file;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

/// Diagnostics as compilers print them: `file:line:col: error: message`,
/// then the source line with a caret under the column. A diagnostic without
/// a file location names the tool instead. The IR dumps that pass failures
/// attach as notes are dropped: they show the lowered model, not a line the
/// user wrote. A location inside a function call or a loop iteration (a
/// CallSiteLoc, as the parser makes them) is followed by a note for each
/// caller, innermost first, saying what its NameLoc says.
class DiagnosticPrinter : public SourceMgrDiagnosticHandler {
public:
  DiagnosticPrinter(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                    raw_ostream &os)
      : SourceMgrDiagnosticHandler(sourceMgr, context, os) {
    setHandler([this](Diagnostic &diag) {
      print(diag.getLocation(), diag.str(), diag.getSeverity());
      printCallers(diag.getLocation());
      for (Diagnostic &note : diag.getNotes()) {
        std::string text = note.str();
        if (!StringRef(text).starts_with("see current operation"))
          print(note.getLocation(), text, note.getSeverity());
      }
      return success();
    });
  }

private:
  void printCallers(Location loc) {
    auto call = dyn_cast<CallSiteLoc>(loc);
    if (!call)
      return;
    for (Location caller = call.getCaller(); call;) {
      Location site = caller;
      call = dyn_cast<CallSiteLoc>(caller);
      if (call) {
        site = call.getCallee();
        caller = call.getCaller();
      }
      auto named = dyn_cast<NameLoc>(site);
      print(site, named ? named.getName().str() : "called from here",
            DiagnosticSeverity::Note);
    }
  }

  void print(Location loc, const std::string &message,
             DiagnosticSeverity severity) {
    if (findFileLocation(loc)) {
      emitDiagnostic(loc, message, severity);
      return;
    }
    os << "tfm-compile: " << severityName(severity) << ": " << message << "\n";
  }
  static StringRef severityName(DiagnosticSeverity severity) {
    switch (severity) {
    case DiagnosticSeverity::Error:
      return "error";
    case DiagnosticSeverity::Warning:
      return "warning";
    case DiagnosticSeverity::Note:
      return "note";
    case DiagnosticSeverity::Remark:
      return "remark";
    }
    llvm_unreachable("unknown diagnostic severity");
  }
};

/// What `tfm-compile --tokenizer` embeds.
struct TokenizerBytes {
  std::string bytes;
  /// "tokenizer.json" or "GGUF metadata", for the header's comment.
  std::string kind;
};

class Compilation {
public:
  Compilation(const CompileOptions &options, raw_ostream &diagnosticStream,
              TimingScope &timing)
      : options(options), diagnosticStream(diagnosticStream), timing(timing),
        context(makeRegistry()),
        diagnostics(sourceMgr, &context, diagnosticStream) {}

  LogicalResult run();

private:
  // The steps of run(), in order.
  LogicalResult resolveTarget();
  FailureOr<OwningOpRef<ModuleOp>> parse();
  LogicalResult prepare(ModuleOp module);
  LogicalResult lower(ModuleOp module);
  LogicalResult writeNativeCode(ModuleOp module);

  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    mlir::tfm::registerAllDialects(registry);
    return registry;
  }
  LogicalResult fail(const Twine &message) {
    diagnosticStream << "tfm-compile: error: " << message << "\n";
    return failure();
  }
  LogicalResult writeText(StringRef path, function_ref<void(raw_ostream &)> fn);
  /// Keeps `out` if everything reached it; otherwise removes it and fails
  /// with the reason (a full disk), instead of the stream's fatal error.
  LogicalResult keep(llvm::ToolOutputFile &out, StringRef path);
  LogicalResult renameModel(func::FuncOp model);
  LogicalResult printIR(ModuleOp module);
  LogicalResult runPipeline(StringRef name, ModuleOp module,
                            function_ref<void(OpPassManager &)> build);
  LogicalResult lowerForCpu(ModuleOp module, EmitKind emit, bool portable,
                            llvm::TargetMachine &machine);
  LogicalResult lowerForCuda(ModuleOp module, EmitKind emit);
  std::string sidecarPath() const {
    if (!options.weightsOutputPath.empty())
      return options.weightsOutputPath;
    llvm::SmallString<128> path(options.outputPath);
    llvm::sys::path::replace_extension(path, ".weights.safetensors");
    return path.str().str();
  }
  LogicalResult printPtx(ModuleOp module);
  /// Reads --tokenizer into `tokenizerBytes` (a tokenizer.json's text, or a
  /// GGUF file's header and metadata with no tensors) and checks that the
  /// runtime loads it.
  LogicalResult readTokenizer();
  /// Adds the constant tfm_<model>_tokenizer_data to the (LLVM dialect)
  /// module.
  void embedTokenizer(ModuleOp module, StringRef model);
  /// Fails when an output would be written over the model or the weights
  /// file (the writers truncate): compared as files, so that another
  /// spelling of a path (./w.safetensors, a link) counts.
  LogicalResult checkOutputsSpareInputs(EmitKind emit);

  // What resolveTarget() decided.
  bool cuda = false;
  bool portable = false;
  EmitKind emit = EmitKind::Object;
  std::unique_ptr<llvm::TargetMachine> machine;
  // What parse() read; kept open until the artifact is written.
  std::shared_ptr<Checkpoint> weights;
  std::unique_ptr<CheckpointWeightShapes> weightShapes;
  std::unique_ptr<ConfigOverrides> overrides;
  // What prepare() read.
  std::optional<Signature> signature;
  std::optional<TokenizerBytes> tokenizer;
  const CompileOptions &options;
  raw_ostream &diagnosticStream;
  TimingScope &timing;
  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  DiagnosticPrinter diagnostics;
};

LogicalResult Compilation::writeText(StringRef path,
                                     function_ref<void(raw_ostream &)> fn) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(path, &error);
  if (!out)
    return fail(error);
  fn(out->os());
  return keep(*out, path);
}

LogicalResult Compilation::keep(llvm::ToolOutputFile &out, StringRef path) {
  out.os().flush();
  if (std::error_code error = out.os().error()) {
    out.os().clear_error();
    return fail("writing " + path.str() + ": " + error.message());
  }
  out.keep();
  return success();
}

/// Every symbol of the artifact derives from the signature's model name, so
/// renaming the model is replacing that one entry.
LogicalResult Compilation::renameModel(func::FuncOp model) {
  StringRef name = options.modelName;
  // The name becomes part of C identifiers and macro names.
  bool valid = !llvm::isDigit(name.front()) && llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_';
  });
  if (!valid)
    return fail("--name '" + name +
                "' is not a C identifier (letters, digits and '_', not "
                "starting with a digit)");
  mlir::tfm::SignatureAttr signature = mlir::tfm::getSignatureAttr(model);
  if (!signature)
    return fail("the model has no signature to rename");
  mlir::tfm::setSignatureAttr(model, signature.withModel(name));
  return success();
}

LogicalResult Compilation::printIR(ModuleOp module) {
  OpPrintingFlags flags;
  if (!options.printWeights) {
    flags.elideLargeElementsAttrs(64);
    flags.elideLargeResourceString(64);
  }
  return writeText(options.outputPath, [&](raw_ostream &os) {
    module->print(os, flags);
    os << "\n";
  });
}

LogicalResult
Compilation::runPipeline(StringRef name, ModuleOp module,
                         function_ref<void(OpPassManager &)> build) {
  PassManager pm(&context);
  build(pm);
  if (options.configurePassManager && failed(options.configurePassManager(pm)))
    return failure();
  // Timing goes last, so that it does not count the other instrumentations.
  TimingScope pipelineTimer = timing.nest(name);
  pm.enableTiming(pipelineTimer);
  return pm.run(module);
}

LogicalResult Compilation::lowerForCpu(ModuleOp module, EmitKind emit,
                                       bool portable,
                                       llvm::TargetMachine &machine) {
  CPUPipelineOptions pipeline;
  pipeline.weights = options.weightsPath;
  pipeline.exportArtifactMetadata = emit == EmitKind::SharedLibrary;
  pipeline.externalWeights = options.externalWeights;
  // Only a compilation that writes the artifact writes its weights file.
  if (options.externalWeights &&
      (emit == EmitKind::SharedLibrary || emit == EmitKind::Object))
    pipeline.weightsFile = sidecarPath();
  // linalg can be looked at without weights: tfm.weight ops stay unbound.
  pipeline.bindWeights =
      !(options.weightsPath.empty() && emit == EmitKind::Linalg);
  pipeline.fuseAttention = options.fuseAttention;
  pipeline.tileAttention = options.tileAttention;
  pipeline.remarks = options.remarks;
  pipeline.vectorBits = getVectorBits(machine);
  pipeline.multiversion = portable;
  pipeline.weightType = !options.quantize.empty() ? "i8"
                        : options.dtype == "bf16" ? "bf16"
                                                  : "f32";
  for (const std::string &pattern : options.keepFp32)
    pipeline.keepF32.push_back(pattern);
  pipeline.targetBF16Dot =
      machine.getMCSubtargetInfo()->checkFeatures("+avx512bf16");
  pipeline.targetInt8Dot =
      machine.getMCSubtargetInfo()->checkFeatures("+avx512vnni");
  if (failed(runPipeline("tfm-to-linalg", module, [&](OpPassManager &pm) {
        buildTfmToLinalgPipeline(pm, pipeline);
      })))
    return failure();
  if (emit == EmitKind::Linalg)
    return printIR(module);
  if (failed(runPipeline("tfm-linalg-to-llvm", module, [&](OpPassManager &pm) {
        buildLinalgToLLVMPipeline(pm, pipeline);
      })))
    return failure();
  if (options.externalWeights)
    return success();
  // Embedded weights go to the object's section without passing through
  // LLVM (docs/embedding.md).
  return runPipeline("tfm-embed-weights", module, [&](OpPassManager &pm) {
    TfmExternalizeWeightsOptions embed;
    embed.embed = true;
    pm.addPass(createTfmExternalizeWeights(embed));
  });
}

/// The kernels' format in an artifact: a fatbin when the toolkit can build
/// one (the driver loads the cubin, or JIT-compiles the PTX on a newer GPU),
/// else the PTX alone.
static std::string gpuBinaryFormat(StringRef cudaPath) {
  llvm::SmallString<128> ptxas(cudaPath), fatbinary(cudaPath);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  llvm::sys::path::append(fatbinary, "bin", "fatbinary");
  return llvm::sys::fs::can_execute(ptxas) &&
                 llvm::sys::fs::can_execute(fatbinary)
             ? "fatbin"
             : "isa";
}

LogicalResult Compilation::lowerForCuda(ModuleOp module, EmitKind emit) {
  GPUPipelineOptions pipeline;
  pipeline.weights = options.weightsPath;
  pipeline.bindWeights =
      !(options.weightsPath.empty() && emit == EmitKind::Linalg);
  pipeline.chip = options.gpuArch;
  pipeline.dtype = options.dtype;
  pipeline.toolkit = options.cudaPath;
  pipeline.format = gpuBinaryFormat(options.cudaPath);
  pipeline.exportArtifactMetadata = emit == EmitKind::SharedLibrary;
  if (failed(runPipeline("tfm-gpu-to-linalg", module, [&](OpPassManager &pm) {
        buildGPUTfmToLinalgPipeline(pm, pipeline);
      })))
    return failure();
  if (emit == EmitKind::Linalg)
    return printIR(module);
  if (failed(runPipeline("tfm-gpu-kernels", module, [&](OpPassManager &pm) {
        buildGPUKernelsPipeline(pm, pipeline);
      })))
    return failure();
  if (emit == EmitKind::Gpu)
    return printIR(module);
  if (failed(runPipeline("tfm-gpu-to-nvvm", module, [&](OpPassManager &pm) {
        buildGPUToNVVMPipeline(pm, pipeline);
      })))
    return failure();
  if (emit == EmitKind::Nvvm)
    return printIR(module);
  if (emit == EmitKind::Ptx)
    return printPtx(module);
  return runPipeline("tfm-gpu-host-to-llvm", module, [&](OpPassManager &pm) {
    buildGPUHostToLLVMPipeline(pm, pipeline);
  });
}

/// Each kernel module's PTX, as LLVM's NVPTX backend writes it.
LogicalResult Compilation::printPtx(ModuleOp module) {
  if (failed(
          runPipeline("gpu-module-to-binary", module, [&](OpPassManager &pm) {
            GpuModuleToBinaryPassOptions binary;
            binary.compilationTarget = "isa";
            binary.toolkitPath = options.cudaPath;
            pm.addPass(createGpuModuleToBinaryPass(binary));
          })))
    return failure();
  return writeText(options.outputPath, [&](raw_ostream &os) {
    module.walk([&](gpu::BinaryOp binary) {
      for (Attribute attr : binary.getObjects())
        if (auto object = dyn_cast<gpu::ObjectAttr>(attr))
          os << "// gpu.binary @" << binary.getSymName() << "\n"
             << object.getObject().getValue() << "\n";
    });
  });
}

LogicalResult Compilation::checkOutputsSpareInputs(EmitKind emit) {
  SmallVector<std::pair<std::string, std::string>> inputs = {
      {"the model file", options.modelPath}};
  if (!options.weightsPath.empty()) {
    inputs.push_back({"the weights file (--weights)", options.weightsPath});
    // A sharded checkpoint's shards are inputs too; a broken index is
    // reported when the checkpoint opens.
    std::string index = options.weightsPath, error;
    if (llvm::sys::fs::is_directory(index))
      index = checkpointInDirectory(index, error);
    if (isShardIndexPath(index)) {
      inputs.push_back({"the weights' index (--weights)", index});
      if (std::optional<ShardIndex> shards = readShardIndex(index, error))
        for (const std::string &shard : shards->shards)
          inputs.push_back({"a shard of the weights (--weights)", shard});
    }
  }
  SmallVector<std::pair<std::string, std::string>> outputs = {
      {"-o", options.outputPath}, {"--header", options.headerPath}};
  if (options.externalWeights &&
      (emit == EmitKind::Object || emit == EmitKind::SharedLibrary))
    outputs.push_back({"--weights-out", sidecarPath()});
  for (const auto &[flag, output] : outputs) {
    if (output.empty() || output == "-")
      continue;
    for (const auto &[what, input] : inputs) {
      bool same = false;
      if (input != "-" && !llvm::sys::fs::equivalent(input, output, same) &&
          same)
        return fail("the output '" + output + "' (" + flag + ") is " + what +
                    ": writing it would destroy the input");
    }
  }
  return success();
}

LogicalResult Compilation::run() {
  if (failed(resolveTarget()))
    return failure();
  FailureOr<OwningOpRef<ModuleOp>> parsed = parse();
  if (failed(parsed))
    return failure();
  ModuleOp module = parsed->get();
  if (failed(prepare(module)))
    return failure();
  if (emit == EmitKind::Header)
    return success();
  if (emit == EmitKind::Tfm)
    return printIR(module);
  if (failed(lower(module)))
    return failure();
  if (emit == EmitKind::Linalg || emit == EmitKind::Gpu ||
      emit == EmitKind::Nvvm || emit == EmitKind::Ptx)
    return success();
  if (emit == EmitKind::LLVMMlir)
    return printIR(module);
  return writeNativeCode(module);
}

/// --target, --cpu and what to emit, checked before anything is read, so
/// that a wrong flag is reported whatever the stage.
LogicalResult Compilation::resolveTarget() {
  // Checked first, so that a wrong --target or --cpu is reported whatever
  // the stage. The target decides the vector width the kernels are tiled
  // for.
  // --target cuda: the host code is for this machine.
  cuda = options.target == "cuda";
  llvm::Expected<llvm::Triple> triple =
      resolveTargetTriple(cuda ? "cpu" : options.target);
  if (!triple)
    return fail(llvm::toString(triple.takeError()));
  portable = options.cpu == "portable" || options.cpu.empty();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> created =
      createTargetMachine(
          CPUTarget{*triple, portable ? "x86-64-v2" : options.cpu});
  if (!created)
    return fail(llvm::toString(created.takeError()));
  machine = std::move(*created);

  std::optional<EmitKind> kind = options.emit;
  if (!kind)
    kind = emitKindForPath(options.outputPath);
  if (!kind)
    return fail("cannot tell what to produce from '" + options.outputPath +
                "': name a .o, .so or .h file, or pass --emit");
  emit = *kind;
  if ((emit == EmitKind::Object || emit == EmitKind::SharedLibrary) &&
      options.outputPath == "-")
    return fail("binary output needs a file: pass -o");

  if (std::optional<std::string> error = findOptionError(options, emit))
    return fail(*error);

  return success();
}

/// The model file parsed against the weights' shapes and config() keys.
FailureOr<OwningOpRef<ModuleOp>> Compilation::parse() {
  // Opening a FIFO would wait for a writer forever; a directory or a device
  // is no model file either ("-" reads stdin).
  llvm::sys::fs::file_status modelStatus;
  if (options.modelPath != "-" &&
      !llvm::sys::fs::status(options.modelPath, modelStatus) &&
      !llvm::sys::fs::is_regular_file(modelStatus))
    return fail(options.modelPath + ": not a regular file");
  if (failed(checkOutputsSpareInputs(emit)))
    return failure();
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file =
      openInputFile(options.modelPath, &error);
  if (!file)
    return fail(error);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());

  TimingScope parseTimer = timing.nest("parse");

  if (!options.weightsPath.empty()) {
    weights = Checkpoint::open(options.weightsPath, error);
    if (!weights)
      return fail(error);
    weightShapes = std::make_unique<CheckpointWeightShapes>(*weights);
    weightShapes->remarks = options.remarks;
  }

  WeightShapes *source = weightShapes.get();
  if (!options.configOverrides.empty()) {
    overrides = std::make_unique<ConfigOverrides>(source);
    overrides->remarks = options.remarks;
    for (const std::string &assignment : options.configOverrides)
      if (failed(overrides->add(assignment, error)))
        return fail(error);
    source = overrides.get();
  }

  Type cacheElementType;
  if (options.kvCacheDtype == "f32")
    cacheElementType = Float32Type::get(&context);
  else if (options.kvCacheDtype == "bf16")
    cacheElementType = BFloat16Type::get(&context);
  else if (options.kvCacheDtype == "f16")
    cacheElementType = Float16Type::get(&context);
  FailureOr<OwningOpRef<ModuleOp>> parsed =
      parseModel(sourceMgr, &context, source, cacheElementType);
  if (failed(parsed))
    return failure();
  // A key no config() read changed nothing: most likely misspelled.
  if (overrides)
    if (std::vector<std::string> unread = overrides->unread(); !unread.empty())
      return fail("--set '" + unread.front() + "': " + options.modelPath +
                  " never reads it with config()");
  parseTimer.stop();
  return parsed;
}

/// The model named, its signature read, the tokenizer checked, the header
/// written (when asked for, or when it is the output).
LogicalResult Compilation::prepare(ModuleOp module) {
  func::FuncOp model;
  module.walk([&](func::FuncOp f) { model = f; });
  if (!options.modelName.empty() && failed(renameModel(model)))
    return failure();
  // The metadata and the header tell users (tfm-run, apps) that a GPU
  // artifact's buffers are device pointers.
  if (mlir::tfm::SignatureAttr signature = mlir::tfm::getSignatureAttr(model);
      cuda && signature)
    mlir::tfm::setSignatureAttr(model, signature.withDevice("cuda"));
  FailureOr<Signature> read = Signature::read(model);
  if (failed(read))
    return failure();
  signature = std::move(*read);
  if (!options.tokenizerPath.empty() && failed(readTokenizer()))
    return failure();
  auto writeHeader = [&](StringRef path) {
    return writeText(path, [&](raw_ostream &os) {
      HeaderTokenizer headerTokenizer;
      if (tokenizer) {
        headerTokenizer.size = int64_t(tokenizer->bytes.size());
        headerTokenizer.source =
            llvm::sys::path::filename(options.tokenizerPath).str();
        headerTokenizer.kind = tokenizer->kind;
      }
      emitHeader(*signature, llvm::sys::path::filename(options.modelPath), os,
                 options.externalWeights,
                 tokenizer ? &headerTokenizer : nullptr);
    });
  };
  if (emit == EmitKind::Header)
    return writeHeader(options.outputPath);
  if (!options.headerPath.empty() && failed(writeHeader(options.headerPath)))
    return failure();
  return success();
}

/// The target's pipelines, then the triple, data layout and tokenizer on
/// the LLVM dialect module.
LogicalResult Compilation::lower(ModuleOp module) {
  if (cuda) {
    if (failed(lowerForCuda(module, emit)))
      return failure();
    if (emit == EmitKind::Linalg || emit == EmitKind::Gpu ||
        emit == EmitKind::Nvvm || emit == EmitKind::Ptx)
      return success();
  } else {
    if (failed(lowerForCpu(module, emit, portable, *machine)))
      return failure();
    if (emit == EmitKind::Linalg)
      return success();
  }
  // Shown in --emit=llvm-mlir; the translation takes them from the module.
  module->setAttr(LLVM::LLVMDialect::getTargetTripleAttrName(),
                  StringAttr::get(&context, machine->getTargetTriple().str()));
  module->setAttr(
      LLVM::LLVMDialect::getDataLayoutAttrName(),
      StringAttr::get(&context,
                      machine->createDataLayout().getStringRepresentation()));
  if (tokenizer)
    embedTokenizer(module, signature->model);
  return success();
}

/// LLVM IR, assembly, an object (weights streamed into it) or a shared
/// library.
LogicalResult Compilation::writeNativeCode(ModuleOp module) {
  FailureOr<EmbeddedWeights> embeddedWeights = takeEmbeddedWeights(module);
  if (failed(embeddedWeights))
    return failure();
  llvm::LLVMContext llvmContext;
  TimingScope llvmTimer = timing.nest("translate to LLVM IR and optimize");
  std::unique_ptr<llvm::Module> llvmModule =
      translateAndOptimize(module, llvmContext, *machine);
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  llvmTimer.stop();
  if (emit == EmitKind::LLVMIR)
    return writeText(options.outputPath,
                     [&](raw_ostream &os) { llvmModule->print(os, nullptr); });

  std::string objectPath = options.outputPath;
  llvm::SmallString<128> tempObject;
  if (emit == EmitKind::SharedLibrary) {
    int fd;
    if (llvm::sys::fs::createTemporaryFile("tfm", "o", fd, tempObject))
      return fail("cannot create a temporary object file");
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    objectPath = tempObject.str().str();
  }
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out =
      openOutputFile(objectPath, &error);
  if (!out)
    return fail(error);
  TimingScope codegenTimer = timing.nest("code generation");
  bool assembly = emit == EmitKind::Assembly;
  if (assembly || embeddedWeights->tensors.empty()) {
    if (llvm::Error codegenError =
            emitNativeCode(*llvmModule, *machine, out->os(), assembly))
      return fail(llvm::toString(std::move(codegenError)));
  } else {
    // The code in memory (small without its weights), then the object with
    // the weights streamed into their section.
    llvm::SmallVector<char, 0> code;
    llvm::raw_svector_ostream codeStream(code);
    if (llvm::Error codegenError =
            emitNativeCode(*llvmModule, *machine, codeStream, assembly))
      return fail(llvm::toString(std::move(codegenError)));
    llvmModule.reset();
    TimingScope weightsTimer = codegenTimer.nest("write weights");
    if (llvm::Error writeError = writeObjectWithWeights(
            StringRef(code.data(), code.size()), *embeddedWeights, out->os()))
      return fail("writing the weights into " + objectPath + ": " +
                  llvm::toString(std::move(writeError)));
  }
  codegenTimer.stop();
  if (failed(keep(*out, objectPath)))
    return failure();
  out.reset();
  if (emit != EmitKind::SharedLibrary)
    return success();
  TimingScope linkTimer = timing.nest("link");
  llvm::Error linkError = linkSharedLibrary(objectPath, options.outputPath);
  llvm::sys::fs::remove(tempObject);
  if (linkError)
    return fail(llvm::toString(std::move(linkError)));
  return success();
}

LogicalResult Compilation::readTokenizer() {
  std::string path = options.tokenizerPath;
  auto failWith = [&](const Twine &message) {
    return fail("--tokenizer " + options.tokenizerPath + ": " + message);
  };
  if (llvm::sys::fs::is_directory(path)) {
    llvm::SmallString<128> file(path);
    llvm::sys::path::append(file, "tokenizer.json");
    path = file.str().str();
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return failWith(file.getError().message());
  TokenizerBytes result;
  tfm_tokenizer *loaded = nullptr;
  tfm_status status = nullptr;
  StringRef contents = (*file)->getBuffer();
  if (contents.starts_with("GGUF")) {
    // Only the header and the key/values: no tensor infos, no data.
    std::string error;
    std::unique_ptr<::tfm::GgufFile> gguf = ::tfm::GgufFile::openMemory(
        contents.data(), contents.size(), path, error);
    if (!gguf)
      return fail("--tokenizer: " + error);
    result.bytes = contents.take_front(gguf->keyValuesSize()).str();
    uint64_t noTensors = 0;
    std::memcpy(result.bytes.data() + 8, &noTensors, sizeof noTensors);
    // The (empty) data section starts at the next multiple of the
    // alignment, which must be inside the bytes.
    uint64_t align = gguf->alignment();
    result.bytes.resize((result.bytes.size() + align - 1) / align * align,
                        '\0');
    result.kind = "GGUF metadata";
    status = tfm_tokenizer_load_gguf_memory(result.bytes.data(),
                                            result.bytes.size(), &loaded);
  } else {
    result.bytes = contents.str();
    result.kind = "tokenizer.json";
    status = tfm_tokenizer_load_json_string(result.bytes.data(),
                                            result.bytes.size(), &loaded);
  }
  tfm_tokenizer_release(loaded);
  if (status) {
    std::string message = tfm_status_message(status);
    tfm_status_free(status);
    return failWith(message);
  }
  tokenizer = std::move(result);
  return success();
}

void Compilation::embedTokenizer(ModuleOp module, StringRef model) {
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(module.getBody());
  auto arrayType =
      LLVM::LLVMArrayType::get(b.getI8Type(), tokenizer->bytes.size());
  LLVM::GlobalOp::create(b, module.getLoc(), arrayType, /*isConstant=*/true,
                         LLVM::Linkage::External,
                         ("tfm_" + model + "_tokenizer_data").str(),
                         b.getStringAttr(tokenizer->bytes), /*alignment=*/8);
  // For loaders that find the data by name (tfm_model_tokenizer), which
  // cannot read the header's TFM_<MODEL>_TOKENIZER_SIZE.
  LLVM::GlobalOp::create(
      b, module.getLoc(), b.getI64Type(), /*isConstant=*/true,
      LLVM::Linkage::External, ("tfm_" + model + "_tokenizer_size").str(),
      b.getI64IntegerAttr(int64_t(tokenizer->bytes.size())), /*alignment=*/8);
}

} // namespace

LogicalResult mlir::tfm::compileModel(const CompileOptions &options,
                                      raw_ostream &diagnostics,
                                      TimingScope &timing) {
  Compilation compilation(options, diagnostics, timing);
  return compilation.run();
}

LogicalResult mlir::tfm::compileModel(const CompileOptions &options,
                                      raw_ostream &diagnostics) {
  TimingScope untimed;
  return compileModel(options, diagnostics, untimed);
}
