//===- Passes.td - tfm conversion passes -------------------*- tablegen -*-===//
#ifndef TFM_CONVERSION_PASSES_TD
#define TFM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTfmToLinalg : Pass<"convert-tfm-to-linalg", "func::FuncOp"> {
  let summary = "Lower tfm primitives to linalg and tensor ops";
  let description = [{
    Each primitive becomes destination-style linalg on tensors: `matmul` and
    `linear` become contraction `linalg.generic`s (batch dimensions broadcast
    through their indexing maps), `transpose` a `linalg.transpose`, `softmax`
    a `linalg.softmax`, `add` and `scale` elementwise generics, `masked_fill`
    and `causal_mask` select generics (the causal one over `linalg.index`),
    `embedding` a gather generic and `positional_encoding` a generic over
    indices (a clamped gather from the table when learned), `relu` and
    `gelu` elementwise generics (`math.erf` or `math.tanh`), `layer_norm`
    three generics (row sums, sums of squared deviations, the normalized
    elements). The run-time checks become an `i32`: `check_index` a
    reduction generic over the ids, `check_size` a comparison of a
    `tensor.dim`.
    Layer ops must have been decomposed first (`tfm-decompose-layers`);
    `tfm.weight` stays for `tfm-bind-weights`.

    Before:
    ```mlir
    %y = tfm.scale %x, 2.0 : tensor<?x4xf32>
    ```
    After:
    ```mlir
    %e = tensor.empty(%n) : tensor<?x4xf32>
    %y = linalg.generic {...} ins(%x) outs(%e) { arith.mulf }
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "arith::ArithDialect", "math::MathDialect"];
}

def ConvertAttentionToCPU : Pass<"convert-attention-to-cpu", "ModuleOp"> {
  let summary = "Lower bufferized tfm.attention to a flash-attention loop nest";
  let description = [{
    Rewrites each `tfm.attention` on memrefs into loops over (batch x heads)
    and query blocks; inside, a loop over key blocks packs `K^T` for the
    block, computes the scores with a register-tiled `vector.fma`
    micro-kernel, applies scale, masks and sequence tails, updates the
    running max and sum (online softmax, exponentials through a polynomial
    approximation) and accumulates `P V` into a per-block accumulator with a
    second micro-kernel. Extra memory is a few tiles on the stack, never
    `Sq x Sk`. With `causal`, key blocks entirely above the diagonal are
    skipped.

    Tile sizes follow the vector width (the driver derives it from the
    target CPU): micro-kernels keep their accumulators in registers (4 rows
    x 4 vectors with AVX-512's 32 registers, 4 x 2 with AVX2's 16), and
    every size can be overridden for experiments. All sequence lengths may
    be dynamic; head dimensions must be static.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers in bits (128, 256, 512)">,
    Option<"blockQ", "block-q", "int64_t", /*default=*/"0",
           "Query rows per block, a multiple of micro-rows (0: from the "
           "vector width)">,
    Option<"microRows", "micro-rows", "int64_t", /*default=*/"0",
           "Query rows per micro-kernel (0: from the vector width)">,
    Option<"keyVectors", "key-vectors", "int64_t", /*default=*/"0",
           "Vectors of keys per block; the key block is this times the "
           "vector length (0: from the vector width)">,
    Option<"valueVectors", "value-vectors", "int64_t", /*default=*/"0",
           "Vectors of the value dimension accumulated at once (0: from "
           "the vector width)">,
    Option<"multiversion", "multiversion", "bool", /*default=*/"false",
           "Emit SSE, AVX2+FMA and AVX-512 variants of each task, chosen at "
           "run time by the CPU's features (vector-bits is then ignored)">
  ];
  let dependentDialects = ["scf::SCFDialect", "vector::VectorDialect",
                           "memref::MemRefDialect", "arith::ArithDialect",
                           "math::MathDialect"];
}

def ConvertLinearToCPU : Pass<"convert-linear-to-cpu", "ModuleOp"> {
  let summary = "Lower bufferized tfm.packed_linear to a register-tiled GEMM";
  let description = [{
    Rewrites each `tfm.packed_linear` on memrefs into a call to an outlined
    task function over (row block, column block) tasks, which
    `tfm-dispatch-tasks` hands to the caller's threads. Inside a task, K is
    cut into chunks whose packed weight panel stays in L1; for each panel
    of `nr` columns, a micro-kernel of `mr` rows keeps its `mr x nr`
    accumulators in vector registers, broadcasting one element of the input
    per row and fusing it with two contiguous weight vectors per K step.
    The last chunk applies bias, activation (`relu`, `gelu` through a
    polynomial erf, `gelu_tanh`) and the residual add before storing. Row
    tails get their own micro-kernel per row count; column tails use masked
    loads and stores. Task functions are shared by ops of the same shapes.

    Tiles follow the vector width: 6 rows x 2 vectors with AVX2 and SSE,
    12 x 2 with AVX-512; the options override them for experiments. With
    `multiversion`, each task is emitted for SSE, AVX2+FMA and AVX-512
    (function-level target features) and the call site picks the variant
    the CPU supports (`__tfm_cpu_level()`, CPUID, cached).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers in bits (128, 256, 512)">,
    Option<"microRows", "micro-rows", "int64_t", /*default=*/"0",
           "Rows per micro-kernel (0: from the vector width)">,
    Option<"blockK", "block-k", "int64_t", /*default=*/"0",
           "Depth of a K chunk (0: 16 KB of packed weight panel)">,
    Option<"multiversion", "multiversion", "bool", /*default=*/"false",
           "Emit SSE, AVX2+FMA and AVX-512 variants of each task, chosen at "
           "run time by the CPU's features (vector-bits is then ignored)">
  ];
  let dependentDialects = ["scf::SCFDialect", "vector::VectorDialect",
                           "memref::MemRefDialect", "arith::ArithDialect",
                           "math::MathDialect", "func::FuncDialect",
                           "LLVM::LLVMDialect"];
}

def ConvertForallToTasks : Pass<"convert-forall-to-tasks", "ModuleOp"> {
  let summary = "Outline scf.forall loops on buffers into tasks";
  let description = [{
    Each outermost `scf.forall` (without results) becomes a call of an
    outlined task function `__tfm_task_forall_N` over `[0, iterations)`,
    which runs its sub-range, one iteration after the other (the linearized
    index delinearized into the forall's induction variables).
    `tfm-dispatch-tasks` later hands the range to the caller's threads.
    Identical loops share one task function. With `multiversion`, each task
    is also compiled for AVX2+FMA and AVX-512 and the call site picks the
    variant the CPU supports, as the GEMM's and attention's do.

    Before:
    ```mlir
    scf.forall (%i, %j) in (%m, 8) { ... }
    ```
    After:
    ```mlir
    %n = arith.muli %m, %c8 : index
    call @__tfm_task_forall_0(..., %m, %c0, %n) : (...) -> ()
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers in bits (128, 256, 512)">,
    Option<"multiversion", "multiversion", "bool", /*default=*/"false",
           "Emit SSE, AVX2+FMA and AVX-512 variants of each task, chosen at "
           "run time by the CPU's features">
  ];
  let dependentDialects = ["scf::SCFDialect", "arith::ArithDialect",
                           "func::FuncDialect", "LLVM::LLVMDialect"];
}

#endif // TFM_CONVERSION_PASSES_TD
