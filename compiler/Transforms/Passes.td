//===- Passes.td - tfm transformation passes ---------------*- tablegen -*-===//
#ifndef TFM_TRANSFORMS_PASSES_TD
#define TFM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmLowerLayers : Pass<"tfm-lower-layers", "func::FuncOp"> {
  let summary = "Lower the attention layers (sdpa, multi_head_attention) to tfm.attention";
  let description = [{
    Rewrites `tfm.sdpa` into one `tfm.attention` and
    `tfm.multi_head_attention` into the input projections (`tfm.linear`),
    one `tfm.attention` and the output projection. The heads are split by a
    `tensor.expand_shape` (`[..., S, E]` to `[..., S, H, E/H]`) that the op
    reads through its `indexing_maps`, and merged by a
    `tensor.collapse_shape` of the layout it writes: no transposes. The
    scale is `1/sqrt(E/H)` for multi-head attention, the op's own (default
    `1/sqrt(Dk)`) for SDPA.

    Masks become the op's one mask: booleans true = masked out, floats added
    to the scaled scores. Where PyTorch's conventions differ from that, one
    elementwise `linalg.generic` prepares the mask first: it inverts SDPA's
    boolean mask (true = takes part), merges `nn.MultiheadAttention`'s
    `attn_mask` and `key_padding_mask` (OR for two booleans, else a float
    sum with -inf for each masking boolean), and expands a mask whose batch
    dims broadcast only partly (a padding mask `[B, Sk]` becomes
    `[B, H, 1, Sk]`), since `tfm.attention`'s lowerings read batch dims all
    present or all absent. A `[B * H, Sq, Sk]` `attn_mask` is reshaped to
    `[B, H, Sq, Sk]`.

    A layer that returns its attention weights, or whose operands the fused
    kernel does not take (batch dims that may broadcast, mixed element
    types), goes through the decomposition of `tfm.attention`
    (`tfm-decompose-attention`): the softmax result is the weights (averaged
    over the heads by a `linalg.generic` sum and a `tfm.scale`). With
    `remarks`, each layer lowered to `tfm.attention` gets a remark.

    Before:
    ```mlir
    %o = tfm.sdpa %q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
    ```
    After:
    ```mlir
    %c0 = arith.constant 0 : index
    %n = tensor.dim %q, %c0 : tensor<?x8xf32>
    %init = tensor.empty(%n) : tensor<?x8xf32>
    %o = tfm.attention ins(%q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
           outs(%init : tensor<?x8xf32>) scale 0.35355339059327373 -> tensor<?x8xf32>
    ```
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for each layer lowered to tfm.attention">
  ];
  let dependentDialects = ["tensor::TensorDialect", "linalg::LinalgDialect",
                           "arith::ArithDialect"];
}

def TfmDecomposeAttention : Pass<"tfm-decompose-attention", "func::FuncOp"> {
  let summary = "Decompose tfm.attention into the attention chain over tfm primitives";
  let description = [{
    The unfused path (`tfm-to-linalg="fuse-attention=false"`,
    `tfm-compile --no-fuse-attention`): every `tfm.attention` on tensors
    becomes `matmul(softmax(mask(scale(matmul(q, transpose(k))))), v)`, the
    chain users write by hand. Operands read through `indexing_maps` in
    another order than the canonical one (a head split) get a `tfm.permute`
    first, the result one back to the init's layout; a mask becomes
    `tfm.masked_fill` with -inf (i1) or `tfm.add` (float) after the scale,
    with a `tfm.reshape` adding the 1s of the dims its map leaves out, and
    `causal` a `tfm.causal_mask`. Attention over a cache (`kv_length`,
    `query_offset`) has no such spelling and stays fused.

    Before:
    ```mlir
    %o = tfm.attention ins(%q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>)
           outs(%init : tensor<?x4xf32>) scale 0.5 {causal} -> tensor<?x4xf32>
    ```
    After:
    ```mlir
    %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
    %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
    %ss = tfm.scale %s, 5.000000e-01 : tensor<?x?xf32>
    %c = tfm.causal_mask %ss : tensor<?x?xf32>
    %p = tfm.softmax %c, -1 : tensor<?x?xf32>
    %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
    ```
  }];
  let dependentDialects = ["tfm::TfmDialect", "tensor::TensorDialect"];
}

def TfmFuseAttention : Pass<"tfm-fuse-attention", "func::FuncOp"> {
  let summary = "Fuse matmul -> scale -> [mask] -> softmax -> matmul into tfm.attention";
  let description = [{
    Finds the attention chain of linalg ops, however it is spelled, and
    rewrites it into one destination-style `tfm.attention` on tensors, whose
    `init` is a `tensor.empty` sized from the query and the value. The CPU
    and GPU pipelines run it once, after `convert-tfm-to-linalg`: the layer
    ops are already `tfm.attention` (`tfm-lower-layers`), so what it finds
    is what users wrote by hand. It reads contractions as `linalg.generic`,
    `linalg.matmul` or `linalg.batch_matmul` (a transposed key through
    `linalg.transpose` or the indexing maps), elementwise scale and mask
    generics, and the softmax as `linalg.softmax` or spelled out as
    `tfm-decompose-softmax` writes it.

    Recognized between the two contractions: scales (multiply or divide by a
    constant, also folded into Q or K), an additive float mask, a boolean
    mask filled with -inf, a causal mask, and the softmax over the key dim.
    A chain is left alone when fusing would change what is computed or save
    nothing: the scores or the softmax result have other users, the scale is
    not a uniform constant, the dims do not line up (softmax or contraction
    over the wrong dim, broadcast batch dims), a mask fills with a value
    other than -inf, or element types differ. Transposes that produce the
    query, key, value or mask of a `tfm.attention`, or consume its result,
    fold into its `indexing_maps` when they keep the head dim innermost (a
    head split and merge written by hand become strided reads and writes,
    not copies). With `remarks`, each fused chain and each refusal (with its
    reason) is reported as a remark at the P·V contraction.

    Before:
    ```mlir
    %kt = linalg.transpose ins(%k : tensor<?x8xf32>) outs(%e0 : tensor<8x?xf32>) permutation = [1, 0]
    %s = linalg.matmul ins(%q, %kt : tensor<?x8xf32>, tensor<8x?xf32>) outs(%z0 : tensor<?x?xf32>) -> tensor<?x?xf32>
    %p = linalg.softmax dimension(1) ins(%s : tensor<?x?xf32>) outs(%e1 : tensor<?x?xf32>) -> tensor<?x?xf32>
    %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x4xf32>) outs(%z1 : tensor<?x4xf32>) -> tensor<?x4xf32>
    ```
    After:
    ```mlir
    %c0 = arith.constant 0 : index
    %n = tensor.dim %q, %c0 : tensor<?x8xf32>
    %init = tensor.empty(%n) : tensor<?x4xf32>
    %o = tfm.attention ins(%q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>)
           outs(%init : tensor<?x4xf32>) scale 1.000000e+00 -> tensor<?x4xf32>
    ```
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for each fused chain and each refused one">
  ];
  let dependentDialects = ["tfm::TfmDialect", "tensor::TensorDialect",
                           "linalg::LinalgDialect", "arith::ArithDialect"];
}

def TfmBindWeights : Pass<"tfm-bind-weights", "ModuleOp"> {
  let summary = "Replace tfm.weight ops with constants read from a checkpoint";
  let description = [{
    Every `tfm.weight "name" : tensor<...>` becomes an `arith.constant` holding
    the named tensor of the file: a `.safetensors` file, or a GGUF file
    (recognized by its magic). The file's dtype and shape must match the
    op's type exactly, except that F16 and BF16 data (half-precision
    checkpoints) and GGUF's quantized blocks (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
    Q4_K, Q5_K, Q6_K) bind to an f32 weight: widened exactly, or
    dequantized as llama.cpp's reference dequantization computes them. A
    matrix of GGUF blocks also keeps them, as they are in the file, on the
    constant (`tfm.q8_0_blocks`, `tfm.q4_0_blocks`, `tfm.q4_1_blocks`,
    `tfm.q5_0_blocks`, `tfm.q5_1_blocks`, `tfm.q4_k_blocks`,
    `tfm.q5_k_blocks`, `tfm.q6_k_blocks`: bytes over the mapped file) for
    `tfm-pack-linear`. A missing name or a mismatch is an error at the op.
  }];
  let options = [
    Option<"weightsPath", "weights", "std::string", /*default=*/"\"\"",
           "Path of the .safetensors or GGUF file">
  ];
  let dependentDialects = ["arith::ArithDialect"];
}

def TfmPackLinear : Pass<"tfm-pack-linear", "func::FuncOp"> {
  let summary = "Pack constant linear weights for the GEMM micro-kernel and fuse its epilogue";
  let description = [{
    Runs after `tfm-bind-weights`. Each f32 `tfm.linear` whose weight (and
    bias) are constants, also through static slices of a constant, becomes a
    `tfm.packed_linear` whose weight is packed at compile time into panels
    of the micro-kernel's width `nr` (two vectors of the target):
    `[ceil(N/nr), K, nr]`, zero padded, with the bias padded to match. A
    `tfm.relu` or `tfm.gelu` that is the layer's only user becomes the
    op's activation, and a `tfm.add` of a same-shaped tensor that is the
    only user after that becomes its residual, so bias, activation and
    residual are applied while the output tile is in registers. A
    `tfm.matmul` whose right operand is a constant `[K, N]` matrix (`x @ W`,
    GPT-2's Conv1D weights stored `[in, out]`) is the same GEMM and becomes
    the same op, taking a constant `[N]` added to it (its only user) as the
    bias.

    With `weight-type=bf16` the panels hold the weight rounded to bf16 (to
    nearest even; NaN stays NaN, denormals become zeros, as `vdpbf16ps`
    reads them), pairs of consecutive `k` in one 32-bit lane:
    `[ceil(N/nr), ceil(K/2), 2*nr]`. With `weight-type=i8` each output
    column `n` is quantized symmetrically, `scale[n] = max|W[n, :]| / 127`,
    `q = clamp(round(W / scale), -127, 127)`, quads of `k` per lane:
    `[ceil(N/nr), ceil(K/4), 4*nr]`, with the scales and each column's sum
    of `q` as the op's `dequant` operands. Weights whose names match a
    `keep-f32` pattern stay f32.

    A `tfm.embedding` whose table is a whole weight packed in f32 or from
    its GGUF blocks (an LM head tied to the token embedding) reads the
    packed panels instead (`packed_rows`), so that the table is stored
    once.

    Whatever `weight-type`, a `tfm.linear` weight that carries its GGUF
    Q8_0 blocks (`tfm.q8_0_blocks`, from `tfm-bind-weights`; stored
    `[N, K]`, K a multiple of 32) is packed from them bit for bit: the int8
    values into the i8 panels `[ceil(N/nr), K/4, 4*nr]`, each block's f16
    scale as it is into `dequant` block scales `[K/32, ceil(N/nr)*nr]` (f16,
    padding 0), no sums; `keep-f32` keeps it f32 (from its dequantized
    values). Q4_0 blocks (`tfm.q4_0_blocks`) likewise, two 4-bit values
    per byte, `[ceil(N/nr), K/8, 4*nr]`: byte `b` of a lane holds `k = 8r +
    b` in its low nibble and `8r + 4 + b` in its high one. The other block
    types likewise (compiler/Transforms/GgufBlocks.h): Q5_0, Q5_1, Q5_K and
    Q6_K as int8 values, Q4_1 and Q4_K as nibbles (unsigned); Q6_K with
    block scales per 16 (`[K/16, ...]`); the asymmetric ones (Q4_1, Q5_1,
    Q4_K, Q5_K: `W = scale * q + offset`) with `offsets` of the scales'
    shape and type (f16 `m` for Q4_1 and Q5_1). The K-quants keep their
    sub-block scales (and mins) as i8 and their super-block f16 `d` (and
    `-dmin`) in `super_scales` `[1 or 2, K/256, ceil(N/nr)*nr]`. A block whose f16 scale or minimum is not finite is an error
    naming the weight, row and block. A `tfm.embedding` over a whole table
    of blocks reads them instead of the f32 values, in the same panels and
    block scales (`packed_rows`): the LM head's own when the head is tied
    to it (the same blocks), else panels of one row, which its gather
    dequantizes row by row. The blocks attributes are
    removed from every constant.

    Before:
    ```mlir
    %h = tfm.linear %x, %w, %b : tensor<?x512xf32>, tensor<2048x512xf32>, tensor<2048xf32> -> tensor<?x2048xf32>
    %g = tfm.gelu %h : tensor<?x2048xf32>
    ```
    After (vector-bits=256, nr = 16):
    ```mlir
    %wp = arith.constant dense<...> : tensor<128x512x16xf32>
    %g = tfm.packed_linear ins(%x, %wp : ...) bias(%bp : tensor<2048xf32>)
           outs(%e : tensor<?x2048xf32>) activation gelu -> tensor<?x2048xf32>
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers in bits (128, 256, 512); "
           "panels are two vectors wide">,
    Option<"multiversion", "multiversion", "bool", /*default=*/"false",
           "Pack for the widest kernel variant (32 columns), which the "
           "narrower variants read as sub-panels">,
    Option<"weightType", "weight-type", "std::string", /*default=*/"\"f32\"",
           "Element type of the packed weights: f32, bf16 (rounded to "
           "nearest even) or i8 (symmetric per output column)">,
    ListOption<"keepF32", "keep-f32", "std::string",
               "Weights (glob patterns of their names) packed in f32 "
               "whatever weight-type says">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Report each packed layer's weight type as a remark">
  ];
  let dependentDialects = ["arith::ArithDialect", "tensor::TensorDialect"];
}

def TfmPackMatmul : Pass<"tfm-pack-matmul", "func::FuncOp"> {
  let summary = "Matmuls between activations onto the register-tiled GEMM, packed at run time";
  let description = [{
    A contraction `linalg.generic` as `convert-tfm-to-linalg` writes
    `tfm.matmul` (loops `(batch..., m, n, k)`, A read at `(batch..., m, k)`,
    B at `(batch..., k, n)`, batch dims broadcast through index 0 or absent),
    f32, accumulating into a zero fill, whose right operand is not a
    constant: B is packed at run time into the micro-kernel's panels
    (`tensor.insert_slice` into zeros where `N` is not a multiple of the
    panel width, `tensor.expand_shape`, `linalg.transpose`), and the product
    becomes `tfm.packed_linear`, lowered by `convert-linear-to-cpu` like a
    linear layer. A right operand without batch dims serves every row of A at
    once; otherwise an `scf.for` nest runs one product per output batch.
    Matmuls with fewer than `min-rows` static rows keep the generic path
    (packing would cost as much as the product). Runs after attention fusion
    has had its look, before elementwise fusion and bufferization.

    Before:
    ```mlir
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x?x?xf32>) -> tensor<8x?x?xf32>
    %s = linalg.generic {indexing_maps = [(b,m,n,k) -> (b,m,k), (b,m,n,k) -> (b,k,n), (b,m,n,k) -> (b,m,n)], ...}
           ins(%q, %kt : tensor<8x?x64xf32>, tensor<8x64x?xf32>) outs(%z : ...)
    ```
    After (schematically):
    ```mlir
    %bp = linalg.transpose ins(%expanded : tensor<8x64x?x32xf32>) outs(...) permutation = [0, 2, 1, 3]
    %s = scf.for %b = %c0 to %c8 step %c1 iter_args(%acc = %e) -> (tensor<8x?x?xf32>) {
      %g = tfm.packed_linear ins(%qb, %bpb : tensor<?x64xf32>, tensor<?x64x32xf32>)
             outs(%cb : tensor<?x?xf32>) activation none -> tensor<?x?xf32>
      ...
    }
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers in bits; panels are two "
           "vectors wide, as tfm-pack-linear's">,
    Option<"multiversion", "multiversion", "bool", /*default=*/"false",
           "Pack for the widest kernel variant (32 columns)">,
    Option<"minRows", "min-rows", "int64_t", /*default=*/"4",
           "Matmuls with fewer static rows than this keep the generic path">
  ];
  let dependentDialects = ["arith::ArithDialect", "tensor::TensorDialect",
                           "linalg::LinalgDialect", "scf::SCFDialect",
                           "affine::AffineDialect", "tfm::TfmDialect"];
}

def TfmTileAttention : Pass<"tfm-tile-attention", "func::FuncOp"> {
  let summary = "Tile tfm.attention on tensors into an scf.forall of smaller tfm.attention ops";
  let description = [{
    Tiles each `tfm.attention` on tensors through its `TilingInterface`
    (`scf::tileUsingSCF`, an `scf.forall` of tiles): every leading (batch,
    head) dim by `batch-tile`, the queries by `query-tile`, the value
    columns by `value-tile` (0: not tiled). A tile is a `tfm.attention`
    over slices: its queries, the whole keys and values of its sequence,
    the mask's matching rows (broadcast dims stay whole), its sequences'
    `kv_length`, and a `query_offset` moved by the tile's first query, so
    causal visibility is that of the whole op. This is the tiled form a GPU
    maps to blocks (one per batch-head and query tile) and the CPU lowering
    also takes; the CPU pipeline runs it only with `tile-attention=N`
    (its own kernel tiles internally).

    Before:
    ```mlir
    %o = tfm.attention ins(%q, %k, %v : tensor<2x4x100x16xf32>, ...) outs(%init : tensor<2x4x100x16xf32>) scale 0.25 {causal}
    ```
    After (`query-tile=64`):
    ```mlir
    %o = scf.forall (%b, %h, %i) = (0, 0, 0) to (2, 4, 100) step (1, 1, 64) shared_outs(%out = %init) {
      %qi = tensor.extract_slice %q[%b, %h, %i, 0] [1, 1, %n, 16] [1, 1, 1, 1]
      ...
      %ti = tfm.attention ins(%qi, %kb, %vb : ...) query_offset(%start : tensor<1xi64>) outs(%oi : ...) scale 0.25 {causal}
      scf.forall.in_parallel { tensor.parallel_insert_slice %ti into %out[%b, %h, %i, 0] ... }
    }
    ```
  }];
  let options = [
    Option<"batchTile", "batch-tile", "int64_t", /*default=*/"1",
           "Tile size of every leading (batch, head) dim">,
    Option<"queryTile", "query-tile", "int64_t", /*default=*/"64",
           "Tile size of the query rows">,
    Option<"valueTile", "value-tile", "int64_t", /*default=*/"0",
           "Tile size of the value columns (0: not tiled)">,
  ];
  let dependentDialects = ["scf::SCFDialect", "tensor::TensorDialect",
                           "linalg::LinalgDialect", "arith::ArithDialect",
                           "affine::AffineDialect"];
}

def TfmDecomposeSoftmax : Pass<"tfm-decompose-softmax", "func::FuncOp"> {
  let summary = "Lower linalg.softmax to max, exp-sum and divide generics";
  let description = [{
    A max reduction, `exp(x - max)`, a sum reduction and a division, each a
    `linalg.generic`, as `linalg.softmax`'s own decomposition but total: a
    row that is all `-inf` (every key masked) gives zeros, not NaN, the same
    answer as the fused attention kernel. Runs after fusion had its chance to
    see the softmax.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "math::MathDialect",
                           "arith::ArithDialect", "tensor::TensorDialect"];
}

def TfmFuseElementwise : Pass<"tfm-fuse-elementwise"> {
  let summary = "Fuse elementwise linalg chains, never recomputing an element";
  let description = [{
    Upstream's `linalg-fuse-elementwise-ops` (elementwise producers into
    their single consumer, reshapes folded by expansion, constants folded),
    except that a producer that computes something is not fused into a
    consumer that reads each of its elements more than once (a loop the
    operand's map does not use: a contraction's operand, a broadcast). A
    GELU followed by a linear layer stays its own pass over memory instead
    of becoming `erf` inside the GEMM's inner loop, N times per element;
    copies, transposes and broadcasts still fuse anywhere, and row
    reductions (softmax, layer norm) still take their producers.

    Before:
    ```mlir
    %g = linalg.generic ... ins(%h) { math.erf ... }              // GELU
    %y = linalg.generic {iterator_types = [p, p, r]} ins(%g, %w) ... // x W^T
    ```
    After: unchanged (upstream fuses `%g` into `%y`).
  }];
  let dependentDialects = ["linalg::LinalgDialect", "affine::AffineDialect",
                           "tensor::TensorDialect"];
}

def TfmResultsToOutParams : Pass<"tfm-results-to-out-params", "ModuleOp"> {
  let summary = "Return a model's memref results through out-parameters";
  let description = [{
    Runs after bufferization on functions with a `tfm.signature`. Each memref
    result becomes a trailing argument of the same type that the caller
    allocates, and the function copies its result there. Unlike upstream
    `buffer-results-to-out-params` it handles dynamic shapes: the caller knows
    the output shapes from the symbols (docs/artifact.md). A trailing `i32`
    result, the model's run-time status (0 = success), stays a result. The
    results after the outputs that are the model's caches (inputs flagged
    `cache` in the signature) must be their own arguments, written in place
    by bufferization: they are dropped, and anything else is an error.

    Before:
    ```mlir
    func.func @m(%x: memref<?x2xf32>) -> memref<?x2xf32> attributes {tfm.signature = ...}
    ```
    After:
    ```mlir
    func.func @m(%x: memref<?x2xf32>, %y: memref<?x2xf32>) attributes {tfm.signature = ...}
    ```
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def TfmLowerCacheAppend : Pass<"tfm-lower-cache-append", "func::FuncOp"> {
  let summary = "Lower bufferized tfm.cache_append to copies of the new rows";
  let description = [{
    Each `tfm.cache_append` on memrefs becomes a loop over the sequences
    that copies sequence `b`'s new rows into the cache at `offset[b]` when
    they fit, and yields the op's status code when one does not (that
    sequence's cache is left as it was). Only the new rows are copied: the
    cache is never read or moved.

    Before:
    ```mlir
    %s = tfm.cache_append ins(%k, %past : memref<?x2x?x8xf32>, memref<?xi64>)
           outs(%cache : memref<?x2x16x8xf32>) dim 2 code 3
    ```
    After (schematically):
    ```mlir
    %s = scf.for %b = %c0 to %batch step %c1 iter_args(%st = %c0_i32) -> (i32) {
      %fits = ...   // 0 <= past[b] <= 16 - seq
      scf.if %fits { memref.copy %k[b] -> %cache[b, :, past[b]:past[b]+seq, :] }
      scf.yield (%fits ? %st : 3)
    }
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect",
                           "scf::SCFDialect"];
}

def TfmLowerStridedCopies : Pass<"tfm-lower-strided-copies", "func::FuncOp"> {
  let summary = "Turn memref.copy between non-contiguous views into loops";
  let description = [{
    `finalize-memref-to-llvm` lowers a copy between non-contiguous memrefs
    (subviews, as concatenation leaves them) to a call into MLIR's C runner
    library, which a compiled model must not depend on. This pass rewrites
    such copies as `linalg.copy`, which becomes plain loops; copies between
    contiguous memrefs stay and become `memcpy`.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def TfmExpandHalfCasts : Pass<"tfm-expand-half-casts", "ModuleOp"> {
  let summary = "Expand conversions between f32/f64 and bf16/f16 into integer ops";
  let description = [{
    `arith.extf` from `bf16` or `f16` to `f32` and `arith.truncf` from `f32`
    to them, scalar or vector, become integer and `f32` operations: exact
    widening, and narrowing to nearest with ties to even (NaN stays NaN,
    values past the largest finite one become infinities), as PyTorch
    converts. LLVM would otherwise lower them on CPUs without F16C or
    AVX512-BF16 to calls into compiler-rt or libgcc (`__truncsfbf2`,
    `__extendhfsf2`, ...), which an artifact must not depend on. The bits
    are those of the runtime's `tfm_f32_to_bf16` and `tfm_f32_to_f16`, NaNs
    included. `f64` converts through `f32` both ways (narrowing rounds
    twice, as PyTorch does). The other arith ops on `bf16` or `f16` lanes
    (the canonicalizer folds `truncf(sitofp(i8))` into a `sitofp` to `bf16`)
    become the same op on `f32` between these conversions; bitcasts, selects
    and constants move bits and stay, and arith ops on other types are left
    alone.

    Where the target has the instruction, f32 -> bf16 stays for LLVM: with
    `native-bf16` (the driver sets it for a `--cpu` with AVX512-BF16), and
    in functions whose `target_features` include `+avx512bf16` (a portable
    artifact's AVX512-BF16 kernel variants). `vcvtneps2bf16` rounds to
    nearest even too, but reads f32 subnormals as zeros and keeps a NaN's
    payload, as PyTorch's vectorized conversion does on such CPUs. f16 ->
    f32 stays for LLVM's `vcvtph2ps` (exact, as the expansion) in functions
    whose `target_features` include `+f16c` or `+avx512f` (a portable
    artifact's AVX2 and AVX-512 kernel variants, which read f16 KV caches);
    f32 -> f16 is always expanded.

    Before:
    ```mlir
    %h = arith.truncf %x : f32 to f16
    ```
    After (abridged):
    ```mlir
    %w = arith.bitcast %x : f32 to i32
    ...
    %b = arith.mulf %abs, %two112 : f32   // 2^112: large values to inf
    ...
    %h = arith.bitcast %bits : i16 to f16
    ```
  }];
  let options = [
    Option<"nativeBF16", "native-bf16", "bool", /*default=*/"false",
           "The target has AVX512-BF16: f32 -> bf16 stays for LLVM's "
           "vcvtneps2bf16 (also in functions whose target_features have "
           "+avx512bf16)">
  ];
  let dependentDialects = ["arith::ArithDialect"];
}

def TfmPlanWorkspace : Pass<"tfm-plan-workspace", "ModuleOp"> {
  let summary = "Place scratch buffers in one allocation, sharing by lifetime";
  let description = [{
    Runs after buffer deallocation. Each `memref.alloc` of the function's
    entry block that is freed there and does not escape (no return, call or
    store of it) becomes a `memref.view` into one workspace allocation,
    freed at the end. A buffer lives from its allocation
    to the last top-level op that uses it or a view of it; it is placed
    above every earlier buffer still alive, at 64-byte alignment, so buffers
    whose lifetimes do not overlap share bytes. Sizes and offsets are
    computed in the prologue from the arguments' dims (through reshapes and
    casts); a buffer whose size cannot be, keeps its own allocation.

    One allocation per run instead of one per intermediate tensor, of the
    peak rather than the sum of the scratch: the allocator recycles it from
    run to run instead of mapping fresh pages.

    Sizes are computed with overflow checks. In a model function (one with
    `tfm.signature`), the body after the prologue runs under an `scf.if`:
    when a size wraps, the total exceeds 2^56 bytes or the allocation
    fails, the function returns status -2 instead (a model without run-time
    checks gets an `i32` status result for it), so that the entry points
    report an out-of-memory error instead of writing through a null or
    short buffer.

    A model function also takes the caller's workspace as a trailing
    `memref<?xi8>` argument (a NULL pointer and 0 bytes for none): when one
    is given, the plan lives in it and nothing is allocated or freed; when it
    is smaller than the plan, the model returns -4 without running. A
    sibling function `<model>_workspace_size`, named by the model's
    `tfm.workspace_size` attribute, takes the model's original arguments and
    returns the plan's bytes (-2 when it exceeds 2^56 bytes or wraps): a
    clone of the prologue, so it reads the arguments' sizes and nothing else
    (tfm-emit-entry-points calls it with NULL data pointers). A model without
    planned scratch keeps its signature and gets neither.

    Before:
    ```mlir
    %a = memref.alloc(%n) : memref<?x512xf32>
    ... uses of %a ...
    %b = memref.alloc(%n) : memref<?x512xf32>
    ... uses of %b ...
    memref.dealloc %a
    memref.dealloc %b
    ```
    After:
    ```mlir
    %w = memref.alloc(%bytes) {alignment = 64} : memref<?xi8>
    %a = memref.view %w[%c0][%n] : memref<?xi8> to memref<?x512xf32>
    %b = memref.view %w[%c0][%n] : memref<?xi8> to memref<?x512xf32>
    memref.dealloc %w
    ```
  }];
  let dependentDialects = ["memref::MemRefDialect", "arith::ArithDialect",
                           "scf::SCFDialect"];
}

def TfmTileLinalg : Pass<"tfm-tile-linalg", "func::FuncOp"> {
  let summary = "Tile linalg ops on buffers into parallel rows and vectors";
  let description = [{
    Every linalg op that the hand-written kernels do not cover (elementwise
    chains, layer norm's row sums, transposes, masks, copies) is tiled the
    same way: the loops whose iterations write disjoint output elements (all
    outer parallel loops) become one `scf.forall` with an iteration per row,
    which `convert-forall-to-tasks` hands to the caller's threads. When the
    op is elementwise or reduces along its innermost loop, that loop is cut
    into `vector-length` tiles that the linalg vectorizer turns into vector
    code (unit dims dropped, reductions as `vector.reduction`, exp/erf/tanh as
    polynomials), and a remainder tile left scalar. Contractions and
    reductions over other loops keep their last parallel loop and their
    reductions inside the tile, scalar.

    Before:
    ```mlir
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<?x512xf32>) outs(%y : memref<?x512xf32>) { ... }
    ```
    After:
    ```mlir
    scf.forall (%row) in (%rows) {
      scf.for %j = %c0 to %c512 step %c64 {
        %v = vector.transfer_read %x[%row, %j] ... : vector<64xf32>
        ...
      }
    }
    ```
  }];
  let options = [
    Option<"vectorLength", "vector-length", "int64_t", /*default=*/"64",
           "Elements per vector tile of the innermost loop">
  ];
  let dependentDialects = ["scf::SCFDialect", "vector::VectorDialect",
                           "memref::MemRefDialect", "arith::ArithDialect",
                           "affine::AffineDialect", "math::MathDialect"];
}

def TfmMergeIdenticalTasks : Pass<"tfm-merge-identical-tasks", "ModuleOp"> {
  let summary = "Merge outlined task functions that are identical";
  let description = [{
    The CPU lowerings outline one `__tfm_task_*` function per op; ops of the
    same shapes and options (the attention of every layer of an encoder)
    give identical functions. Private task functions that print the same,
    name aside, are merged into the first one and every call is redirected
    to it, so that LLVM optimizes and emits each kernel once.

    Before:
    ```mlir
    call @__tfm_task_attention_0(...)
    call @__tfm_task_attention_1(...)   // same body as _0
    ```
    After:
    ```mlir
    call @__tfm_task_attention_0(...)
    call @__tfm_task_attention_0(...)
    ```
  }];
}

def TfmExternalizeWeights : Pass<"tfm-externalize-weights", "ModuleOp"> {
  let summary = "Move constant data to a sidecar file read through one pointer";
  let description = [{
    `tfm-compile --weights-mode external`. Runs on the LLVM dialect after
    tfm-emit-entry-points. Every constant `llvm.mlir.global` holding dense
    elements (the bound, widened and packed weights) is written to the
    sidecar `weights-file` (a .safetensors file whose data section starts
    64-byte aligned; a tensor is named after its weight, from the
    `NameLoc` of its location, else its symbol) and erased; each
    `llvm.mlir.addressof` of it becomes the internal pointer
    `__tfm_weights_base` plus the tensor's offset. The pass adds
    `int32_t tfm_<m>_bind_weights(const void *data, int64_t bytes)`, which
    sets that pointer (to the mapped data section: 64-byte aligned, exactly
    the recorded size, else -3), `const char *tfm_<m>_weights_manifest()`,
    JSON with each tensor's name, dtype, shape, offset, size and content
    hash, and makes every `tfm_<m>_run*` entry point return -6 while no
    weights are bound.

    Before:
    ```mlir
    llvm.mlir.global internal constant @w(dense<...> : tensor<2x3xf32>) : !llvm.array<2 x array<3 x f32>>
    %p = llvm.mlir.addressof @w : !llvm.ptr
    ```
    After:
    ```mlir
    llvm.mlir.global internal @__tfm_weights_base() : !llvm.ptr
    %s = llvm.mlir.addressof @__tfm_weights_base : !llvm.ptr
    %p = llvm.load %s : !llvm.ptr -> !llvm.ptr
    ```

    With `embed` (what `tfm-compile` runs in the default embedded mode)
    the bytes stay in the artifact without passing through LLVM: each
    tensor starts at a 64-byte aligned offset from `@__tfm_weights`, an
    external hidden constant declaration that module-level assembly
    (`llvm.module_asm`) defines as a local label at the start of the
    otherwise empty section `.rodata.tfm_weights`. The declaration's
    `tfm_embedded_weights` attribute says which data goes at which offset;
    the object writer fills the section from it (so `--emit=llvm` and
    `--emit=asm` show an empty section). No bind function, manifest or
    guard is added, and a module without constant data is left alone.
    ```mlir
    // tfm_embedded_weights = {size = 24 : i64, tensors = [
    //   {data = dense<...> : tensor<2x3xf32>, name = "w", offset = 0 : i64} ]}
    llvm.mlir.global external hidden constant @__tfm_weights()
        {alignment = 64 : i64, dso_local, tfm_embedded_weights = ...}
        : !llvm.array<24 x i8>
    %p = llvm.mlir.addressof @__tfm_weights : !llvm.ptr
    ```
  }];
  let options = [
    Option<"weightsFile", "weights-file", "std::string", /*default=*/"",
           "Where to write the sidecar; empty writes none (the manifest "
           "still says what it would hold)">,
    Option<"embed", "embed", "bool", /*default=*/"false",
           "Keep the data in the artifact, in a section the object writer "
           "fills, instead of a sidecar">,
  ];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def TfmWeightsAsBytes : Pass<"tfm-weights-as-bytes", "ModuleOp"> {
  let summary = "Store large constant buffers as flat byte arrays";
  let description = [{
    Every constant `memref.global` of at least 4 KB (the bound and packed
    weights) becomes a global of bytes, 64-byte aligned, with the same raw
    data (a `dense_resource` blob over the constant's storage, which lives as
    long as the context, so not a copy); each `memref.get_global` of it
    becomes a `memref.view` of the byte global with the original type. LLVM then holds each weight as one byte
    string that the object writer copies at once, instead of nested arrays
    of small float arrays (millions of uniqued constants for a BERT-base
    model, written element by element).

    Before:
    ```mlir
    memref.global "private" constant @w : memref<24x768x32xf32> = dense<...>
    %w = memref.get_global @w : memref<24x768x32xf32>
    ```
    After:
    ```mlir
    memref.global "private" constant @w : memref<2359296xi8> = dense_resource<tfm_weight> {alignment = 64}
    %b = memref.get_global @w : memref<2359296xi8>
    %w = memref.view %b[%c0][] : memref<2359296xi8> to memref<24x768x32xf32>
    ```
  }];
  let dependentDialects = ["memref::MemRefDialect", "arith::ArithDialect"];
}

def TfmDispatchTasks : Pass<"tfm-dispatch-tasks", "ModuleOp"> {
  let summary = "Run outlined task ranges on the caller's threads";
  let description = [{
    Runs on the LLVM dialect. Lowerings outline parallel work into functions
    named `__tfm_task_*` that take their operands then a `[begin, end)` task
    range, and call them once over all tasks. This pass gives the model
    function a trailing `exec` pointer (the `tfm_exec` of docs/artifact.md)
    and turns each such call into: when `exec` and its `parallel_for` are
    set, `parallel_for(context, count, trampoline, args)` with the operands
    packed in a stack struct, so that the app's thread pool runs sub-ranges;
    otherwise the plain call, so a NULL `exec` runs everything on the
    calling thread with no thread library at all. Calls of the function
    marked `tfm.exec_threads` (lowerings ask it how many threads will run
    their tasks) become `exec->num_threads` in a model function (1 for a
    NULL `exec` or a count of 0), and 1 anywhere else, where nested ranges
    run inline.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def TfmEmitEntryPoints : Pass<"tfm-emit-entry-points", "ModuleOp"> {
  let summary = "Add the artifact's C entry points to a lowered model";
  let description = [{
    Runs on the LLVM dialect after the model function (marked with a
    `tfm.signature` attribute and taking inputs then outputs as memrefs) has
    been converted. Adds the ABI of docs/artifact.md:
    `tfm_<model>_run_packed(buffers, symbols, exec)`, the typed
    `tfm_<model>_run(...)` and `tfm_<model>_metadata()` returning the JSON
    description, and makes every other function and global of the module
    internal, so that objects of several models link into one program. The
    entry points
    return the model function's `i32` status when it has one (a model with
    run-time checks), else 0.

    With them come `tfm_<model>_run_with_workspace(..., workspace, bytes)`,
    `tfm_<model>_run_packed_with_workspace(buffers, symbols, exec,
    workspace, bytes)`, which check the workspace (-3 for a negative size,
    NULL with a size, or a pointer off 64 bytes) and pass it on to a model
    that takes one (`tfm.workspace_size`, from tfm-plan-workspace), and
    `tfm_<model>_workspace_size(symbols...)` and its `_packed` form, which
    return the bytes the model's size function computes for those dims (0
    for a model without it, -1 for bad dims). The plain entry points pass no
    workspace (NULL, 0).
  }];
  let options = [
    Option<"exportArtifactMetadata", "export-artifact-metadata", "bool",
           /*default=*/"false",
           "Also define tfm_artifact_metadata() (for shared libraries)">
  ];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

#endif // TFM_TRANSFORMS_PASSES_TD
