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
    a `linalg.softmax`, `add` and `scale` elementwise generics, `embedding` a
    gather generic and `positional_encoding` a generic over indices.
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

def ConvertAttentionToCPU : Pass<"convert-attention-to-cpu", "func::FuncOp"> {
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

    Tile sizes come from the options (the driver derives them from the
    target's vector width); all sequence lengths may be dynamic, head
    dimensions must be static.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers in bits (128, 256, 512)">,
    Option<"blockQ", "block-q", "int64_t", /*default=*/"64",
           "Query rows per block (a multiple of micro-rows)">,
    Option<"microRows", "micro-rows", "int64_t", /*default=*/"4",
           "Query rows per micro-kernel">,
    Option<"keyVectors", "key-vectors", "int64_t", /*default=*/"4",
           "Vectors of keys per block (the key block is this times the "
           "vector length)">,
    Option<"valueVectors", "value-vectors", "int64_t", /*default=*/"4",
           "Vectors of the value dimension accumulated at once">
  ];
  let dependentDialects = ["scf::SCFDialect", "vector::VectorDialect",
                           "memref::MemRefDialect", "arith::ArithDialect",
                           "math::MathDialect"];
}

#endif // TFM_CONVERSION_PASSES_TD
