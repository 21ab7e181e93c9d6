//===- NativeCode.h - LLVM dialect to IR, assembly and objects --*- C++ -*-===//
#ifndef TFM_COMPILER_TARGET_NATIVECODE_H
#define TFM_COMPILER_TARGET_NATIVECODE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
class raw_pwrite_stream;
} // namespace llvm

namespace mlir::tfm {

struct CPUTarget {
  /// What the code runs on; x86-64 only, as the kernels are x86 code.
  llvm::Triple triple;
  /// An LLVM CPU name (`x86-64-v2`, `skylake-avx512`, `znver4`) or `host`.
  std::string cpu = "x86-64-v2";
};

/// The triple `--target` names: `cpu` (or nothing) is the machine tfm runs
/// on, as LLVM sees it; anything else is read as an LLVM target triple
/// (`x86_64-unknown-linux-gnu`). Errors name the target and what is
/// supported.
llvm::Expected<llvm::Triple> resolveTargetTriple(StringRef target);

/// The target machine for `target`, position-independent, at -O3; errors
/// name the CPU or the triple.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const CPUTarget &target);

/// The widest vector registers `machine` has, in bits: 512 with AVX-512,
/// 256 with AVX2, else 128.
int64_t getVectorBits(const llvm::TargetMachine &machine);

/// Translates an LLVM-dialect module to LLVM IR and optimizes it at -O3 for
/// `machine`.
std::unique_ptr<llvm::Module>
translateAndOptimize(ModuleOp module, llvm::LLVMContext &context,
                     llvm::TargetMachine &machine);

/// Writes `module` as an object file (or assembly when `assembly` is set).
llvm::Error emitNativeCode(llvm::Module &module, llvm::TargetMachine &machine,
                           llvm::raw_pwrite_stream &os, bool assembly);

/// Links `objectPath` into the shared library `libraryPath` with the system
/// C compiler driver (clang from LLVM's tools, else cc).
llvm::Error linkSharedLibrary(StringRef objectPath, StringRef libraryPath);

} // namespace mlir::tfm

#endif // TFM_COMPILER_TARGET_NATIVECODE_H
