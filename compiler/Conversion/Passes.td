//===- Passes.td - tfm conversion passes -------------------*- tablegen -*-===//
#ifndef TFM_CONVERSION_PASSES_TD
#define TFM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmWidenLowPrecision : Pass<"tfm-widen-low-precision", "func::FuncOp"> {
  let summary = "Compute the ops on bf16 and f16 tensors in f32";
  let description = [{
    bf16 and f16 are storage types: every tfm op that computes (arithmetic,
    comparisons, reductions, softmax, layer_norm, activations, matmul,
    linear, the attention layers and `tfm.attention`) and has a bf16 or f16
    operand or result is rewritten to the same op on f32 (f64 when one of
    its operands is f64): each such operand is widened by a `tfm.cast`
    (exact), the op computes and accumulates in f32, and each such result
    is rounded back by a `tfm.cast` (to nearest, ties to even), once per op,
    as PyTorch computes `torch.bfloat16` tensors on the CPU. A
    destination-style op gets a fresh f32 `tensor.empty` for its init.
    Ops that only move, select or reshape elements (`cast`, `reshape`,
    `permute`, `transpose`, `concat`, `where`, `masked_fill`,
    `causal_mask`, `embedding`, `cache_append`) keep their types.

    It runs first in the pipeline, so that the layers lower, the packed GEMM
    and the attention kernels work on f32 as they are; after
    elementwise fusion the casts sit inside the loops of their neighbours
    (`arith.extf` on the loads, `arith.truncf` before the stores).
    `convert-tfm-to-linalg` applies the same rewrite to what it is given.

    Before:
    ```mlir
    %y = tfm.softmax %x, -1 : tensor<?x8xbf16>
    ```
    After:
    ```mlir
    %w = tfm.cast %x : tensor<?x8xbf16> -> tensor<?x8xf32>
    %s = tfm.softmax %w, -1 : tensor<?x8xf32>
    %y = tfm.cast %s : tensor<?x8xf32> -> tensor<?x8xbf16>
    ```
  }];
  let dependentDialects = ["tensor::TensorDialect"];
}

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
    `cast` converts each element with `arith`: `extf` to a wider float,
    `truncf` to a narrower one (to nearest, ties to even; f64 to bf16 or f16
    through f32, and bf16 to f16 and back through f32, as PyTorch converts).
    Ops on bf16 and f16 tensors that compute are first rewritten to compute
    in f32 between casts (`tfm-widen-low-precision`).
    Layer ops must have been lowered first (`tfm-lower-layers`);
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
           "run time by the CPU's features (vector-bits is then ignored)">,
    Option<"bf16", "bf16", "bool", /*default=*/"false",
           "Compute QK^T and PV on operands rounded to bf16 with vdpbf16ps "
           "(an AVX512-BF16 variant with multiversion, and an AMX one with "
           "tdpbf16ps; the target's own with target-bf16-dot), f32 "
           "elsewhere; the softmax stays f32">,
    Option<"targetBF16Dot", "target-bf16-dot", "bool", /*default=*/"false",
           "Without multiversion: the target has AVX512-BF16">
  ];
  let dependentDialects = ["scf::SCFDialect", "vector::VectorDialect",
                           "memref::MemRefDialect", "arith::ArithDialect",
                           "math::MathDialect", "LLVM::LLVMDialect"];
}

def ConvertLinearToCPU : Pass<"convert-linear-to-cpu", "ModuleOp"> {
  let summary = "Lower bufferized tfm.packed_linear to a register-tiled GEMM";
  let description = [{
    Rewrites each `tfm.packed_linear` on memrefs into a call to an outlined
    task function over (row block, column block) tasks, which
    `tfm-dispatch-tasks` hands to the caller's threads. There are about as
    many tasks as threads (a `tfm.exec_threads` query, resolved by
    `tfm-dispatch-tasks`), as wide as possible: each task reads its blocks
    of both operands from memory. Inside a task, K is cut into chunks whose
    packed weight panel stays in L1; each chunk of A is copied, a group of
    rows at a time, to a stack tile the micro-kernels read; for each panel
    of `nr` columns, a micro-kernel of `mr` rows keeps its `mr x nr`
    accumulators in vector registers, broadcasting one element of the input
    per row and fusing it with two contiguous weight vectors per K step.
    The last chunk applies bias, activation (`relu`, `gelu` through a
    polynomial erf, `gelu_tanh`) and the residual add before storing. Row
    tails get their own micro-kernel per row count; column tails use masked
    loads and stores. Task functions are shared by ops of the same shapes.

    The packed weight's element type picks the micro-kernel's dot product:
    f32 FMAs; bf16 (the input rounded to bf16 as its K chunk is copied)
    `vdpbf16ps`, or two FMAs per pair without AVX512-BF16; i8 (each input
    row quantized to u8 with its own scale and zero point as it is copied)
    `vpdpbusd` into i32, or four multiplies per quad without VNNI, and a
    dequantizing epilogue.

    Tiles follow the vector width: 6 rows x 2 vectors with AVX2 and SSE,
    12 x 2 with AVX-512; the options override them for experiments. With
    `multiversion`, each task is emitted for SSE, AVX2+FMA and AVX-512
    (function-level target features) behind one task function that picks
    the variant the CPU supports (`__tfm_cpu_level()`, CPUID, cached): the
    call site, and its glue, is the same for every variant.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers in bits (128, 256, 512)">,
    Option<"microRows", "micro-rows", "int64_t", /*default=*/"0",
           "Rows per micro-kernel (0: from the vector width)">,
    Option<"blockK", "block-k", "int64_t", /*default=*/"0",
           "Depth of a K chunk (0: 16 KB of packed weight panel)">,
    Option<"multiversion", "multiversion", "bool", /*default=*/"false",
           "Emit SSE, AVX2+FMA and AVX-512 variants of each task (and for "
           "bf16 / i8 weights an AVX512-BF16 / AVX512-VNNI one), chosen at "
           "run time by the CPU's features (vector-bits is then ignored)">,
    Option<"targetBF16Dot", "target-bf16-dot", "bool", /*default=*/"false",
           "Without multiversion: the target has AVX512-BF16 (vdpbf16ps)">,
    Option<"targetInt8Dot", "target-int8-dot", "bool", /*default=*/"false",
           "Without multiversion: the target has AVX512-VNNI (vpdpbusd)">
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
    is also compiled for AVX2+FMA and AVX-512 behind one task that picks
    the variant the CPU supports, as the GEMM's and attention's do.

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

def ConvertLinalgToGPU : Pass<"convert-linalg-to-gpu", "func::FuncOp"> {
  let summary = "Lower every linalg op on buffers to one gpu.launch";
  let description = [{
    The GPU's form of `tfm-tile-linalg`: the op's leading parallel loops
    (the rows and the innermost parallel loop the CPU splits into vector
    lanes) are linearized and spread over blocks of `threads` threads, one
    iteration per thread, so that consecutive threads write consecutive
    elements (coalesced stores); the op's reductions and any parallel loop
    nested inside one run sequentially in the thread. An op with no leading
    parallel loop (a reduction to a scalar) runs in one thread. Copies
    (`memref.copy`) become `linalg.copy` first, so that they get the same
    kernel.

    Before:
    ```mlir
    linalg.generic {iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xf32>) {...}
    ```
    After:
    ```mlir
    gpu.launch blocks(%b, ...) in (%grid = ceildiv(%rows * 64, 128), ...)
               threads(%t, ...) in (%block = 128, ...) {
      %i = %b * 128 + %t
      scf.if %i < %rows * 64 {
        %row, %col = affine.delinearize_index %i into (%rows, 64)
        ... the op's body at (%row, %col) ...
      }
    }
    ```
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"128",
           "Threads per block">,
    Option<"gemmThreadsM", "gemm-threads-m", "int64_t", /*default=*/"16",
           "Tiled GEMM: thread rows per block, 4 rows of C each (0: "
           "contractions get the one-thread-per-output kernel)">,
    Option<"gemmThreadsN", "gemm-threads-n", "int64_t", /*default=*/"16",
           "Tiled GEMM: thread columns per block, 4 columns of C each">,
    Option<"mma", "mma", "std::string", /*default=*/"\"\"",
           "f16 or bf16: f32 contractions with a multiply-add body become "
           "tensor-core GEMMs (mma.sync m16n8k16) with operands rounded to "
           "this type and f32 accumulators; empty: f32 GEMMs">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "scf::SCFDialect",
                           "affine::AffineDialect", "arith::ArithDialect",
                           "linalg::LinalgDialect", "memref::MemRefDialect",
                           "nvgpu::NVGPUDialect", "NVVM::NVVMDialect",
                           "LLVM::LLVMDialect", "vector::VectorDialect"];
}

def TfmGpuDecomposeAttention
    : Pass<"tfm-gpu-decompose-attention", "func::FuncOp"> {
  let summary = "Decompose the tfm.attention ops the GPU kernel cannot take";
  let description = [{
    On tensors, before the GPU's bufferization: every `tfm.attention` that
    `convert-attention-to-gpu` would refuse (dynamic head dimensions, heads
    too wide for the kernel's shared memory, a mask read through another
    map than its default, an element type other than f32) becomes the
    attention chain over tfm primitives (`tfm-decompose-attention`'s
    patterns), which the linalg kernels then run: such a model compiles,
    unfused, instead of failing. Attention over a cache has no such
    spelling and keeps its op (and its error).

    Before:
    ```mlir
    %o = tfm.attention ins(%q, %k, %v : tensor<2x?x?xf32>, ...) outs(%init : tensor<2x?x?xf32>) scale 0.125
    ```
    After:
    ```mlir
    %s = tfm.matmul %q, %kt ...   %p = tfm.softmax ...   %o = tfm.matmul %p, %v ...
    ```
  }];
  let dependentDialects = ["tfm::TfmDialect", "tensor::TensorDialect"];
}

def ConvertAttentionToGPU : Pass<"convert-attention-to-gpu", "func::FuncOp"> {
  let summary = "Lower bufferized tfm.attention to a flash-attention gpu.launch";
  let description = [{
    The GPU's form of `convert-attention-to-cpu`'s tasks: one block per
    (batch*head, block of `blockQ` queries), the query block and each block
    of `blockK` keys, then values, staged in shared memory (a workgroup
    attribution of the launch), scores and the online softmax's running
    max, sum and correction in shared memory, the output accumulator in
    registers spread over the block's `threads` threads. Key blocks past
    the block's last query are skipped under causal masking, and over a
    cache (`kv_length`, `query_offset`) the keys past the sequence's valid
    ones are never read. Masks broadcast as the op defines them. The tile
    sizes follow from the head dimensions so that the shared memory fits
    `shared-bytes` (docs/gpu.md).

    With `mma=f16` or `mma=bf16`, the tensor-core kernel instead (head
    dimensions up to 128 after rounding up to 16; others keep the f32
    kernel): a warp per 16 queries, Q, K and V tiles rounded to that type
    in shared memory, S = Q K^T and O += P V on `mma.sync.m16n8k16` with
    `ldmatrix` (V transposed), the scores, the online softmax (its row max
    and sum reduced across the 4 lanes of a row by shuffles) and the f32
    output all in registers; P feeds the second product without leaving
    them.

    Before:
    ```mlir
    tfm.attention ins(%q, %k, %v : memref<?x2x?x8xf32>, memref<?x2x?x8xf32>,
                      memref<?x2x?x8xf32>)
        outs(%o : memref<?x2x?x8xf32>) scale 0.35355339059327373 {causal}
    ```
    After:
    ```mlir
    gpu.launch blocks(%b, ...) in (%grid = max(%batch * 2 * ceildiv(%sq, 64), 1), ...)
               threads(%t, ...) in (%block = 128, ...)
               workgroup(%qs : memref<576xf32, #gpu.address_space<workgroup>>, ...) {
      ... Q block to %qs; for each key block: K to shared, scores, softmax,
          V to shared, accumulate; O = acc / sum ...
    }
    ```
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"128",
           "Threads per block">,
    Option<"sharedBytes", "shared-bytes", "int64_t", /*default=*/"49152",
           "Static shared memory a block may use">,
    Option<"accumulators", "accumulators", "int64_t", /*default=*/"32",
           "Output elements each thread accumulates in registers">,
    Option<"blockQ", "block-q", "int64_t", /*default=*/"0",
           "Queries per block (0: chosen from the head dimensions)">,
    Option<"blockK", "block-k", "int64_t", /*default=*/"0",
           "Keys per shared-memory tile (0: chosen from the head dimensions)">,
    Option<"mma", "mma", "std::string", /*default=*/"",
           "f16 or bf16: the tensor-core kernel, operands rounded to that "
           "type, f32 accumulation (empty: the f32 kernel)">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "scf::SCFDialect",
                           "affine::AffineDialect", "arith::ArithDialect",
                           "math::MathDialect", "memref::MemRefDialect",
                           "nvgpu::NVGPUDialect", "NVVM::NVVMDialect",
                           "LLVM::LLVMDialect", "vector::VectorDialect"];
}

def TfmGpuDeviceBuffers : Pass<"tfm-gpu-device-buffers", "ModuleOp"> {
  let summary = "Put the buffers that kernels touch in device memory";
  let description = [{
    After `convert-linalg-to-gpu`, on each host function: a buffer that
    some `gpu.launch` reads or writes (through any view) lives on the
    device. `memref.alloc` and `memref.alloca` become `gpu.alloc` (freed
    with `gpu.dealloc` where the host freed them, or before returning), and
    a host `memref.load` from a device buffer (a run-time check's status)
    reads the element in a one-thread kernel and copies it back. The
    model's inputs and outputs are device buffers already (docs/gpu.md).
    Buffers no kernel touches (the shape operand of a `memref.reshape`)
    stay on the host. A host `memref.store` into a device buffer is
    reported as an error.

    A constant (`memref.get_global`, the bound weights) is resident: it
    gets a slot in the module's `__tfm_gpu_weights` array (one per global,
    shared by every function), and the run starts by calling the runtime's
    `tfmGpuConstant(slot, host, bytes)`, which uploads the weight at the
    first run and returns the cached device pointer afterwards (null, with
    the error pending for tfm-gpu-status, when the upload fails). A
    `llvm.mlir.global_dtors` entry calls `tfmGpuReleaseConstants` to free
    the slots when the artifact is unloaded. The device pointer becomes a
    memref through an LLVM descriptor and `unrealized_conversion_cast`,
    which the LLVM lowering of the memref ops reconciles.

    Before:
    ```mlir
    %w = memref.get_global @weight : memref<4x4xf32>
    %t = memref.alloc(%n) : memref<?x4xf32>
    gpu.launch ... { ... memref.load %w[...] ... memref.store ..., %t[...] }
    memref.dealloc %t : memref<?x4xf32>
    ```
    After:
    ```mlir
    %g = memref.get_global @weight : memref<4x4xf32>
    %p = memref.extract_aligned_pointer_as_index %g : ... -> index
    %host = llvm.inttoptr ... : i64 to !llvm.ptr
    %slots = llvm.mlir.addressof @__tfm_gpu_weights : !llvm.ptr
    %slot = llvm.getelementptr %slots[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
    %d = llvm.call @tfmGpuConstant(%slot, %host, %c64) : ... -> !llvm.ptr
    %desc = ... (a memref descriptor of %d)
    %w = builtin.unrealized_conversion_cast %desc : ... to memref<4x4xf32>
    %t = gpu.alloc (%n) : memref<?x4xf32>
    gpu.launch ... { ... }
    gpu.dealloc %t : memref<?x4xf32>
    ...
    llvm.mlir.global internal @__tfm_gpu_weights() : !llvm.array<1 x ptr>
    llvm.func internal @__tfm_gpu_release_weights() {
      ... llvm.call @tfmGpuReleaseConstants(%slots, %c1) ...
    }
    llvm.mlir.global_dtors dtors = [@__tfm_gpu_release_weights], ...
    ```
  }];
  let dependentDialects = ["gpu::GPUDialect", "memref::MemRefDialect",
                           "LLVM::LLVMDialect", "arith::ArithDialect"];
}

def TfmGpuRoundWeights : Pass<"tfm-gpu-round-weights", "ModuleOp"> {
  let summary = "Store constant weights that kernels round to f16/bf16 rounded";
  let description = [{
    Runs after `convert-linalg-to-gpu`: a constant f32 global (a bound
    weight) whose element loads, in a kernel or on the host, are each used
    only by an `arith.truncf` to f16 or bf16 (the tensor-core GEMM's tile
    loads, `mma=f16|bf16`) gets a copy rounded to that type at compile time
    (round to nearest even, as `truncf`), and those loads read the copy:
    the weight is uploaded and read in half the bytes. Loads of the f32
    value for other uses keep the f32 global; a global left unused is
    erased.

    Before:
    ```mlir
    memref.global "private" constant @w : memref<64x64xf32> = dense<...>
    %w = memref.get_global @w : memref<64x64xf32>
    gpu.launch ... {
      %x = memref.load %w[%i, %j] : memref<64x64xf32>
      %h = arith.truncf %x : f32 to f16
    }
    ```
    After:
    ```mlir
    memref.global "private" constant @w_f16 : memref<64x64xf16> = dense<...>
    %w = memref.get_global @w_f16 : memref<64x64xf16>
    gpu.launch ... {
      %h = memref.load %w[%i, %j] : memref<64x64xf16>
    }
    ```
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def TfmGpuAlignWorkgroupMemory
    : Pass<"tfm-gpu-align-workgroup-memory", "gpu::GPUModuleOp"> {
  let summary = "Align the kernels' shared-memory buffers to 16 bytes";
  let description = [{
    Each workgroup attribution of a `gpu.func` without an alignment gets
    `llvm.align = 16`. `convert-gpu-to-nvvm` otherwise aligns a shared
    buffer to its element type (2 bytes for f16), and `ldmatrix` needs
    16-byte aligned rows (the tensor-core GEMM's tiles).

    Before:
    ```mlir
    gpu.func @k() workgroup(%a : memref<64x40xf16, #gpu.address_space<workgroup>>) kernel
    ```
    After:
    ```mlir
    gpu.func @k() workgroup(%a : memref<64x40xf16, #gpu.address_space<workgroup>>
                            {llvm.align = 16 : i64}) kernel
    ```
  }];
}

def TfmGpuOccupancyHint
    : Pass<"tfm-gpu-occupancy-hint", "gpu::GPUModuleOp"> {
  let summary = "Let ptxas give shared-memory tiled kernels their registers";
  let description = [{
    Each kernel with shared-memory tiles (workgroup attributions) whose
    register need exceeds ptxas's own occupancy target gets
    `nvvm.minctasm = 1` (PTX `.minnctapersm 1`): the kernels whose
    `mma.sync` takes an A fragment computed in registers (flash
    attention's P·V; 80 registers and 4 to 16 bytes of spills on sm_80
    without it), and the f32 tiled kernels of 256 threads or more (the
    GEMM with a fused bias wants 76 registers where ptxas aims at 64 and
    spills 4 bytes; a middle target of 3 blocks made ptxas unroll the small
    static GEMMs further and spill 16). The tensor-core GEMM (128
    registers) and the f32 flash attention (128 threads, 80-100 registers)
    fit ptxas's targets and keep the occupancy they give.

    Before:
    ```mlir
    gpu.func @k() workgroup(%s : memref<1024xf32, 3>) kernel { ... }
    ```
    After (a 16 x 16-thread f32 GEMM):
    ```mlir
    gpu.func @k() workgroup(%s : memref<1024xf32, 3>) kernel
        attributes {nvvm.minctasm = 1 : i32} { ... }
    ```
  }];
  let dependentDialects = ["NVVM::NVVMDialect"];
}

def TfmGpuStatus : Pass<"tfm-gpu-status", "ModuleOp"> {
  let summary = "Return the GPU runtime's status from the model function";
  let description = [{
    Runs after `gpu-async-region`, whose `gpu.wait` before each return
    waits for the model's kernels: the model function (the one with
    `tfm.signature`) then asks the runtime for a pending GPU error
    (`tfm_gpu_status`, docs/runtime.md) and returns it as its `i32` status,
    after the status of its own run-time checks, which comes first when
    non-zero. A function that returned nothing now returns the `i32`.

    Before:
    ```mlir
    func.func @m(...) attributes {tfm.signature = ...} {
      gpu.wait [%token]
      return
    }
    ```
    After:
    ```mlir
    func.func @m(...) -> i32 attributes {tfm.signature = ...} {
      gpu.wait [%token]
      %s = call @tfm_gpu_status() : () -> i32
      return %s : i32
    }
    ```
  }];
  let dependentDialects = ["func::FuncDialect", "arith::ArithDialect"];
}

#endif // TFM_CONVERSION_PASSES_TD
