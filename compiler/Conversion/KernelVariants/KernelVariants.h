//===- KernelVariants.h - Per-CPU variants of outlined kernels --*- C++ -*-===//
//
// The hot kernels (GEMM, flash attention) can be emitted once per vector
// width, each variant compiled for its own target features, and the one the
// running CPU supports is chosen at run time. An artifact built for the
// portable baseline thus still runs AVX2+FMA or AVX-512 kernels where the
// CPU has them.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMPILER_CONVERSION_KERNELVARIANTS_KERNELVARIANTS_H
#define TFM_COMPILER_CONVERSION_KERNELVARIANTS_KERNELVARIANTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::tfm {

struct KernelVariant {
  /// Vector register width the kernel is tiled for.
  int64_t vectorBits;
  /// What __tfm_cpu_level() returns on CPUs that run it: 1 = the baseline
  /// (SSE4.2), 2 = AVX2 + FMA, 3 = AVX-512 (F, DQ, BW, VL), 4 = AVX-512
  /// and VNNI, 5 = AVX-512, VNNI and BF16, 6 = level 5 and AMX (TILE,
  /// BF16, INT8) with the tile data state granted by the OS.
  int64_t level;
  /// LLVM target features of the variant's functions ("" for the module's).
  std::string features;
  /// Suffix of the variant's task function names.
  std::string suffix;
  /// Whether the variant's kernels may use vdpbf16ps (AVX512-BF16) and
  /// vpdpbusd (AVX512-VNNI).
  bool bf16Dot = false;
  bool int8Dot = false;
  /// Whether the variant's kernels may use AMX tiles (tdpbf16ps, tdpbusd).
  bool amx = false;
};

/// The dot product a kernel is built on, beyond which the CPU variants
/// differ: f32 FMAs, bf16 pairs or u8 x s8 quads.
enum class DotProduct { FMA, BF16, Int8 };

/// What the module's own target has (for artifacts built for one CPU).
struct TargetDotProducts {
  bool bf16 = false;
  bool int8 = false;
};

/// One variant for `vectorBits` (the module's own target, with the dot
/// products it has), or, with `multiversion`, SSE, AVX2 and AVX-512
/// variants, then for `dot` BF16 or Int8 the AVX-512 variant with
/// AVX512-BF16 (level 5) or AVX512-VNNI (level 4), and with `amx` last the
/// AMX variant (level 6).
SmallVector<KernelVariant> getKernelVariants(
    int64_t vectorBits, bool multiversion, DotProduct dot = DotProduct::FMA,
    TargetDotProducts target = TargetDotProducts(), bool amx = false);

/// Compiles `task` for the variant's target features.
void setKernelTarget(func::FuncOp task, const KernelVariant &variant);

/// The i32 that `__tfm_cpu_level()` returns (defined once per module), at
/// `b`'s insertion point: for choices that depend on the variant that will
/// run, made before the task is called.
Value emitCpuLevel(OpBuilder &b, Location loc, ModuleOp module);

/// Emits a call of `__tfm_cpu_level()` (defined once per module: CPUID and
/// XGETBV, cached; the environment variable TFM_CPU_LEVEL=1..5 caps it, for
/// testing each variant on one machine) and an `scf.index_switch` with one
/// region per variant, filled by `emitCall` at the builder's insertion
/// point. The last variant whose level the CPU's reaches runs (variants in
/// increasing level); the first is the fallback.
void emitVariantSwitch(OpBuilder &b, Location loc, ModuleOp module,
                       ArrayRef<KernelVariant> variants,
                       function_ref<void(const KernelVariant &)> emitCall);

/// Creates a task function taking `argTypes` whose body runs the variant
/// for the CPU it finds: one function per variant (a task of its own, named
/// `<prefix><N><suffix>` and compiled for the variant's features), filled
/// by `fillVariant` at the start of its entry block (which must emit the
/// terminator), and, with more than one variant, the task `<prefix><N>`
/// that calls the one `__tfm_cpu_level()` allows (emitVariantSwitch). A
/// model thus calls, and hands to its threads, one function per kernel
/// call whatever the number of variants: its glue (operands packed for the
/// thread pool) is emitted once, not once per variant. The functions are
/// created at `at`'s insertion point. Returns the task to call.
FailureOr<func::FuncOp> createMultiversionTask(
    OpBuilder &at, Location loc, StringRef prefix, TypeRange argTypes,
    ArrayRef<KernelVariant> variants,
    function_ref<LogicalResult(const KernelVariant &, func::FuncOp)>
        fillVariant);

/// Lowers a kernel's 2-D `vector.transpose` ops to shuffles right away
/// (16 x 16 of 32 bits through AVX-512's two-source permutes, others as one
/// shuffle) rather than leaving them to the default per-element lowering.
LogicalResult lowerTransposesToShuffles(MLIRContext *ctx,
                                        ArrayRef<Operation *> transposes);

} // namespace mlir::tfm

#endif // TFM_COMPILER_CONVERSION_KERNELVARIANTS_KERNELVARIANTS_H
