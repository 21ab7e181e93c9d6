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

#endif // TFM_CONVERSION_PASSES_TD
