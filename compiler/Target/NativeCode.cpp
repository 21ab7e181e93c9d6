//===- NativeCode.cpp - LLVM dialect to IR, assembly and objects ----------===//
#include "compiler/Target/NativeCode.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Analysis/LazyCallGraph.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

llvm::Expected<llvm::Triple> tfm::resolveTargetTriple(StringRef target) {
  llvm::Triple triple(llvm::Triple::normalize(
      target.empty() || target == "cpu" ? llvm::sys::getDefaultTargetTriple()
                                        : target));
  if (triple.getArch() == llvm::Triple::UnknownArch)
    return llvm::createStringError(
        "unknown target '" + target +
        "' (this build supports: cpu, cuda, or an x86-64 LLVM target "
        "triple such as x86_64-unknown-linux-gnu)");
  // The kernels are written for SSE, AVX2 and AVX-512, and the run-time CPU
  // dispatch reads CPUID.
  if (triple.getArch() != llvm::Triple::x86_64)
    return llvm::createStringError(
        "target '" + triple.str() + "'" +
        (target == "cpu" || target.empty() ? " (this machine)" : "") +
        " is not x86-64, the only architecture tfm generates code for");
  return triple;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
tfm::createTargetMachine(const CPUTarget &target) {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  LLVMInitializeX86AsmParser();

  const llvm::Triple &triple = target.triple;
  std::string error;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return llvm::createStringError(error);
  std::string cpu = target.cpu, features;
  if (cpu == "host") {
    cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures hostFeatures;
    for (auto &feature : llvm::sys::getHostCPUFeatures())
      hostFeatures.AddFeature(feature.first(), feature.second);
    features = hostFeatures.getString();
  }
  // Ask a subtarget of the generic CPU, so that LLVM does not warn about an
  // unknown name before tfm reports it.
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      llvmTarget->createMCSubtargetInfo(triple, "", ""));
  if (!info || !info->isCPUStringValid(cpu))
    return llvm::createStringError(
        "unknown CPU '" + target.cpu +
        "' (try x86-64, x86-64-v2, x86-64-v3, x86-64-v4, skylake-avx512, "
        "znver4 or host)");
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, cpu, features, options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  return machine;
}

int64_t tfm::getVectorBits(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  if (info->checkFeatures("+avx512f"))
    return 512;
  if (info->checkFeatures("+avx2"))
    return 256;
  return 128;
}

namespace {
/// A model function takes every tensor as an unpacked memref descriptor (7+
/// arguments each) and holds a few instructions per tensor and per layer,
/// and the entry points unpack every tensor in one block. Some of O3's
/// passes, and instruction scheduling, cost more than linearly in that
/// (docs/compiler.md, "Compile time"):
/// - function attribute inference and interprocedural constant propagation
///   rebuild a function's attribute list per argument they mark: quadratic
///   time and memory (2000 outputs: 7.8 s and 2 GB in the first);
/// - constraint elimination makes every argument a variable of its system
///   and compares each condition with every fact in scope (5000 inputs: 5 s);
/// - called-value propagation tracks every pointer argument (1000 outputs:
///   4.6 s), and only annotates indirect calls, the thread pool's here;
/// - selection-DAG scheduling is superlinear in a block's size.
/// None of them speeds up the kernels: the glue runs once per call, and the
/// tasks are small functions of their own, which keep every pass.
constexpr unsigned kMaxArguments = 1024;
constexpr unsigned kMaxInstructionsForConstraintElimination = 1000;
constexpr size_t kMaxBlockForFullCodegen = 4000;
constexpr unsigned kMaxInstructionsForFullOptimization = 200000;

bool shouldRunPass(StringRef pass, llvm::Any ir) {
  // It only annotates indirect calls, and the tasks' only indirect calls are
  // the thread pool's.
  if (pass == "CalledValuePropagationPass")
    return false;
  // Kernels (tasks) keep it: it removes bounds checks from their loops.
  if (pass == "ConstraintEliminationPass")
    if (const auto *const *f = llvm::any_cast<const llvm::Function *>(&ir))
      return (*f)->getName().starts_with("__tfm_task_") ||
             ((*f)->getInstructionCount() <=
                  kMaxInstructionsForConstraintElimination &&
              (*f)->arg_size() <= kMaxArguments);
  // Instruction combining and GVN grow faster than the function on the glue
  // of deep models (64 encoder layers: 30 s and 10 s, 16 layers: 3.8 s and
  // 1 s): a model function beyond a few dozen layers' worth of glue keeps
  // the cheaper cleanups only.
  if (pass == "InstCombinePass" || pass == "GVNPass")
    if (const auto *const *f = llvm::any_cast<const llvm::Function *>(&ir))
      return (*f)->getName().starts_with("__tfm_task_") ||
             (*f)->getInstructionCount() <= kMaxInstructionsForFullOptimization;
  // Both rebuild a function's attribute list per argument they change.
  if (pass == "IPSCCPPass")
    if (const auto *const *module = llvm::any_cast<const llvm::Module *>(&ir))
      for (const llvm::Function &f : **module)
        if (f.arg_size() > kMaxArguments)
          return false;
  if (pass == "PostOrderFunctionAttrsPass")
    if (const auto *const *scc =
            llvm::any_cast<const llvm::LazyCallGraph::SCC *>(&ir))
      for (const llvm::LazyCallGraph::Node &node : **scc)
        if (node.getFunction().arg_size() > kMaxArguments)
          return false;
  return true;
}
} // namespace

std::unique_ptr<llvm::Module>
tfm::translateAndOptimize(ModuleOp module, llvm::LLVMContext &context,
                          llvm::TargetMachine &machine) {
  registerBuiltinDialectTranslation(*module->getContext());
  registerLLVMDialectTranslation(*module->getContext());
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return nullptr;
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple());
  for (llvm::Function &f : *llvmModule) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", machine.getTargetCPU());
    if (!machine.getTargetFeatureString().empty())
      f.addFnAttr("target-features", machine.getTargetFeatureString());
  }

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // Honours LLVM's -time-passes and -print-after-all (tfm-compile passes
  // LLVM's options through).
  llvm::PassInstrumentationCallbacks instrumentation;
  llvm::StandardInstrumentations standard(llvmModule->getContext(),
                                          /*DebugLogging=*/false);
  standard.registerCallbacks(instrumentation, &mam);
  instrumentation.registerShouldRunOptionalPassCallback(shouldRunPass);
  llvm::PassBuilder passBuilder(&machine, llvm::PipelineTuningOptions(),
                                std::nullopt, &instrumentation);
  passBuilder.registerModuleAnalyses(mam);
  passBuilder.registerCGSCCAnalyses(cgam);
  passBuilder.registerFunctionAnalyses(fam);
  passBuilder.registerLoopAnalyses(lam);
  passBuilder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      passBuilder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(*llvmModule, mam);
  // Selection-DAG scheduling is superlinear in a block's size, and the glue
  // of a model with thousands of tensors is one block per entry point of
  // thousands of loads and stores: such functions, run once per call, go
  // through the fast instruction selector instead (5000 outputs: 6 s of
  // scheduling).
  for (llvm::Function &f : *llvmModule) {
    if (f.isDeclaration() || f.getName().starts_with("__tfm_task_"))
      continue;
    size_t largestBlock = 0;
    for (const llvm::BasicBlock &block : f)
      largestBlock = std::max(largestBlock, block.size());
    if (largestBlock > kMaxBlockForFullCodegen) {
      f.addFnAttr(llvm::Attribute::OptimizeNone);
      f.addFnAttr(llvm::Attribute::NoInline);
    }
  }
  return llvmModule;
}

llvm::Error tfm::emitNativeCode(llvm::Module &module,
                                llvm::TargetMachine &machine,
                                llvm::raw_pwrite_stream &os, bool assembly) {
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, os, nullptr,
                                  assembly ? llvm::CodeGenFileType::AssemblyFile
                                           : llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot emit this file type");
  pm.run(module);
  return llvm::Error::success();
}

llvm::Error tfm::linkSharedLibrary(StringRef objectPath,
                                   StringRef libraryPath) {
  std::string driver;
  for (const char *candidate :
       {TFM_LLVM_TOOLS_DIR "/clang", "clang-22", "clang", "cc"}) {
    if (llvm::sys::fs::can_execute(candidate)) {
      driver = candidate;
      break;
    }
    if (auto found = llvm::sys::findProgramByName(candidate)) {
      driver = *found;
      break;
    }
  }
  if (driver.empty())
    return llvm::createStringError(
        "no C compiler driver (clang or cc) found to link a shared library");
  SmallVector<StringRef> args = {driver,      "-shared",  "-o",
                                 libraryPath, objectPath, "-lm"};
  // The linker's complaints become part of the error, so that they reach
  // wherever the caller sends diagnostics rather than this process's stderr.
  llvm::SmallString<128> logPath;
  if (llvm::sys::fs::createTemporaryFile("tfm-link", "log", logPath))
    return llvm::createStringError("cannot create a temporary file for the "
                                   "linker's output");
  llvm::FileRemover removeLog(logPath);
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(driver, args, std::nullopt, redirects, 0,
                                     0, &message);
  if (rc == 0)
    return llvm::Error::success();
  std::string log;
  if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
          llvm::MemoryBuffer::getFile(logPath))
    log = StringRef((*buffer)->getBuffer()).rtrim().str();
  return llvm::createStringError("linking " + libraryPath + " with " + driver +
                                 " failed" +
                                 (message.empty() ? "" : ": " + message) +
                                 (log.empty() ? "" : ":\n") + log);
}
