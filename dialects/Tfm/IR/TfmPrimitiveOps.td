//===- TfmPrimitiveOps.td - Primitive tensor ops -----------*- tablegen -*-===//
//
// The primitives attention is spelled with by hand (matmul, transpose, scale,
// softmax, add), concatenation, masks and activations. Included by TfmOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_PRIMITIVE_OPS_TD
#define TFM_PRIMITIVE_OPS_TD

include "dialects/Tfm/IR/TfmBase.td"
include "dialects/Tfm/IR/TfmEnums.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Primitives
//===----------------------------------------------------------------------===//

def Tfm_MatmulOp : Tfm_Op<"matmul", [Pure]> {
  let summary = "Batched matrix product with broadcast batch dimensions";
  let description = [{
    `lhs [..., M, K] x rhs [..., K, N] -> [..., M, N]`, like `torch.matmul`
    for operands of rank 2 or more. Batch dimensions broadcast as in NumPy:
    a missing leading dimension or a static 1 stretches to the other side.

    Example:

    ```mlir
    %s = tfm.matmul %q, %kt : tensor<?x24xf32>, tensor<24x?xf32> -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$lhs, Tfm_FloatTensor:$rhs);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_TransposeOp : Tfm_Op<"transpose", [Pure]> {
  let summary = "Swaps two dimensions";
  let description = [{
    Swaps dimensions `dim0` and `dim1` (negative values count from the end),
    like `torch.transpose`.

    Example:

    ```mlir
    %kt = tfm.transpose %k, -2, -1 : tensor<?x24xf32> -> tensor<24x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$dim0, I64Attr:$dim1);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $dim0 `,` $dim1 attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The swapped dimensions with negative values resolved.
    std::pair<int64_t, int64_t> getNormalizedDims();
  }];
}

def Tfm_ScaleOp : Tfm_Op<"scale", [Pure, SameOperandsAndResultType]> {
  let summary = "Multiplies or divides every element by a constant";
  let description = [{
    `input * factor`, or `input / factor` when `divide` is set. Division is
    kept as written so results match `x / sqrt(d)` bit for bit.

    Example:

    ```mlir
    %s = tfm.scale %x, 1.4142135623730951 {divide} : tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, F64Attr:$factor,
                       UnitAttr:$divide);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$input `,` $factor attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tfm_SoftmaxOp : Tfm_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "Softmax along one dimension";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `dim` (negative values count
    from the end), computed stably.

    Example:

    ```mlir
    %p = tfm.softmax %s, -1 : tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$input `,` $dim attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `dim` with a negative value resolved.
    int64_t getNormalizedDim();
  }];
}

def Tfm_AddOp : Tfm_Op<"add", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Elementwise sum with NumPy broadcasting";
  let description = [{
    Operands are aligned at their trailing dimensions; a missing or static-1
    dimension stretches. Both have the result's element type (a float, or
    `i32`/`i64`).

    Example:

    ```mlir
    %y = tfm.add %x, %pe : tensor<?x?x16xf32>, tensor<?x16xf32> -> tensor<?x?x16xf32>
    ```
  }];
  let arguments = (ins Tfm_NumericTensor:$lhs, Tfm_NumericTensor:$rhs);
  let results = (outs Tfm_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// A result type as static as or more static than the inferred one.
    static bool isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                        ::mlir::TypeRange actual);
  }];
}

def Tfm_ConcatOp : Tfm_Op<"concat", [Pure]> {
  let summary = "Concatenates tensors along one dimension";
  let description = [{
    Like `torch.cat(inputs, dim)`, of any element type the inputs share.
    All other dimensions must agree.

    Example:

    ```mlir
    %c = tfm.concat %a, %b dim -1 : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins Variadic<Tfm_AnyDtypeTensor>:$inputs, I64Attr:$dim);
  let results = (outs Tfm_AnyDtypeTensor:$result);
  let assemblyFormat = [{
    $inputs `dim` $dim attr-dict `:` functional-type($inputs, $result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `dim` with a negative value resolved.
    int64_t getNormalizedDim();
  }];
}

def Tfm_MaskedFillOp : Tfm_Op<"masked_fill", [Pure]> {
  let summary = "Replaces elements where a boolean mask is true";
  let description = [{
    `result = mask ? value : input`, like `Tensor.masked_fill`. The `i1`
    mask aligns with `input` at its trailing dims and broadcasts where it has
    a static 1 or lacks a dim. Filling attention scores with `-inf` is how a
    boolean attention mask is written (true = masked out, as in
    `nn.MultiheadAttention`).

    Example:

    ```mlir
    %m = tfm.masked_fill %s, %mask, 0xFFF0000000000000 : tensor<?x?xf32>, tensor<?x?xi1> -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, RankedTensorOf<[I1]>:$mask,
                       F64Attr:$value);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $mask `,` $value attr-dict `:` type($input) `,` type($mask)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_CausalMaskOp : Tfm_Op<"causal_mask", [Pure, SameOperandsAndResultType]> {
  let summary = "Masks the scores of future keys with -inf";
  let description = [{
    For scores `[..., Sq, Sk]`, sets element `(i, j)` to `-inf` where
    `j > i` (causal masking aligned at the top left, as PyTorch's
    `is_causal` for equal lengths) and keeps the rest.

    Example:

    ```mlir
    %c = tfm.causal_mask %s : tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Tfm_ReluOp : Tfm_Op<"relu", [Pure, SameOperandsAndResultType]> {
  let summary = "max(x, 0) elementwise";
  let description = [{
    `torch.relu`: each element, or 0 where it is negative.

    Example:

    ```mlir
    %h = tfm.relu %x : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tfm_GeluOp : Tfm_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit, exact or tanh-approximated";
  let description = [{
    `torch.nn.functional.gelu(x, approximate)`. With `approximate = "none"`
    (the default) `x * 0.5 * (1 + erf(x / sqrt(2)))`; with
    `approximate = "tanh"`
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.

    Example:

    ```mlir
    %h = tfm.gelu %x : tensor<?x64xf32>
    %t = tfm.gelu %x approximate tanh : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       DefaultValuedAttr<Tfm_GeluApproximationAttr,
                           "::mlir::tfm::GeluApproximation::none">:$approximate);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`approximate` $approximate^)? attr-dict `:` type($input)
  }];
}

#endif // TFM_PRIMITIVE_OPS_TD
