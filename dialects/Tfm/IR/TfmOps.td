//===- TfmOps.td - Operations of the tfm dialect -----------*- tablegen -*-===//
//
// Layer ops (embedding, linear, sdpa, multi_head_attention, ...) and the
// primitives attention is spelled with by hand (matmul, transpose, scale,
// softmax, add). All ops are pure functions of tensors.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_OPS_TD
#define TFM_OPS_TD

include "dialects/Tfm/IR/TfmBase.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Tfm_WeightOp : Tfm_Op<"weight", [Pure]> {
  let summary = "A named model parameter";
  let description = [{
    Refers to a tensor of the weights file by its PyTorch `state_dict` name.
    `tfm-bind-weights` replaces it with a constant holding the data, after
    checking that the file's dtype and shape match the result type.

    Example:

    ```mlir
    %w = tfm.weight "W_q.weight" : tensor<2x2xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

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
    Like `torch.cat(inputs, dim)`. All other dimensions must agree.

    Example:

    ```mlir
    %c = tfm.concat %a, %b dim -1 : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins Variadic<Tfm_FloatTensor>:$inputs, I64Attr:$dim);
  let results = (outs Tfm_FloatTensor:$result);
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
    %t = tfm.gelu %x {approximate = "tanh"} : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise math with NumPy broadcasting
//===----------------------------------------------------------------------===//

/// `result = lhs <op> rhs` elementwise. Operands align at their trailing
/// dimensions; a missing or static-1 dimension stretches (the shape rule of
/// `tfm.add`). Both operands and the result share one element type; a
/// number in an expression is a rank-0 constant.
class Tfm_BroadcastBinaryOp<string mnemonic, TypeConstraint operand>
    : Tfm_Op<mnemonic, [Pure,
        DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let arguments = (ins operand:$lhs, operand:$rhs);
  let results = (outs operand:$result);
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

def Tfm_SubOp : Tfm_BroadcastBinaryOp<"sub", Tfm_NumericTensor> {
  let summary = "Elementwise difference with NumPy broadcasting";
  let description = [{
    `lhs - rhs`, like `torch.sub`. `1 - mask` is written with a rank-0
    constant on the left.

    Example:

    ```mlir
    %y = tfm.sub %one, %m : tensor<f32>, tensor<?x1x1x?xf32> -> tensor<?x1x1x?xf32>
    ```
  }];
}

def Tfm_MulOp : Tfm_BroadcastBinaryOp<"mul", Tfm_NumericTensor> {
  let summary = "Elementwise product with NumPy broadcasting";
  let description = [{
    `lhs * rhs`, like `torch.mul` (a tensor times a number stays
    `tfm.scale`).

    Example:

    ```mlir
    %y = tfm.mul %x, %gate : tensor<?x?x64xf32>, tensor<?x?x1xf32> -> tensor<?x?x64xf32>
    ```
  }];
}

def Tfm_DivOp : Tfm_BroadcastBinaryOp<"div", Tfm_FloatTensor> {
  let summary = "Elementwise quotient with NumPy broadcasting";
  let description = [{
    `lhs / rhs` on floats, like `torch.div` (IEEE: a zero divisor gives an
    infinity or NaN).

    Example:

    ```mlir
    %y = tfm.div %x, %norm : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
    ```
  }];
}

def Tfm_MaximumOp : Tfm_BroadcastBinaryOp<"maximum", Tfm_NumericTensor> {
  let summary = "Elementwise maximum with NumPy broadcasting";
  let description = [{
    `torch.maximum`: the larger element; NaN if either float is NaN.

    Example:

    ```mlir
    %y = tfm.maximum %x, %floor : tensor<?x8xf32>, tensor<f32> -> tensor<?x8xf32>
    ```
  }];
}

def Tfm_MinimumOp : Tfm_BroadcastBinaryOp<"minimum", Tfm_NumericTensor> {
  let summary = "Elementwise minimum with NumPy broadcasting";
  let description = [{
    `torch.minimum`: the smaller element; NaN if either float is NaN.

    Example:

    ```mlir
    %y = tfm.minimum %x, %y2 : tensor<?x8xi64>, tensor<8xi64> -> tensor<?x8xi64>
    ```
  }];
}

def Tfm_PowOp : Tfm_BroadcastBinaryOp<"pow", Tfm_FloatTensor> {
  let summary = "Elementwise power with NumPy broadcasting";
  let description = [{
    `lhs ** rhs` on floats, like `torch.pow` (`math.powf`: a negative base
    with a non-integer exponent gives NaN).

    Example:

    ```mlir
    %y = tfm.pow %x, %three : tensor<?x64xf32>, tensor<f32> -> tensor<?x64xf32>
    ```
  }];
}

def Tfm_LogicalAndOp : Tfm_BroadcastBinaryOp<"logical_and", Tfm_BoolTensor> {
  let summary = "Elementwise and of booleans with NumPy broadcasting";
  let description = [{
    `lhs & rhs` on `i1`, like `torch.logical_and`.

    Example:

    ```mlir
    %m = tfm.logical_and %a, %b : tensor<?x?xi1>, tensor<?xi1> -> tensor<?x?xi1>
    ```
  }];
}

def Tfm_LogicalOrOp : Tfm_BroadcastBinaryOp<"logical_or", Tfm_BoolTensor> {
  let summary = "Elementwise or of booleans with NumPy broadcasting";
  let description = [{
    `lhs | rhs` on `i1`, like `torch.logical_or`.

    Example:

    ```mlir
    %m = tfm.logical_or %a, %b : tensor<?x?xi1>, tensor<?xi1> -> tensor<?x?xi1>
    ```
  }];
}

def Tfm_CompareOp : Tfm_Op<"compare", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Elementwise comparison with NumPy broadcasting";
  let description = [{
    `lhs <predicate> rhs` elementwise, an `i1` tensor: `predicate` is one of
    `lt`, `le`, `gt`, `ge`, `eq`, `ne`. Operands share their element type
    and broadcast like `tfm.sub`. Floats compare as IEEE ordered
    comparisons (any comparison with NaN is false) except `ne`, which is
    true for NaN, as in PyTorch.

    Example:

    ```mlir
    %pad = tfm.compare "eq" %mask, %zero : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
    ```
  }];
  let arguments = (ins Tfm_AnyDtypeTensor:$lhs, Tfm_AnyDtypeTensor:$rhs,
                       StrAttr:$predicate);
  let results = (outs Tfm_BoolTensor:$result);
  let assemblyFormat = [{
    $predicate $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->`
    type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// A result type as static as or more static than the inferred one.
    static bool isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                        ::mlir::TypeRange actual);
  }];
}

def Tfm_WhereOp : Tfm_Op<"where", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Elementwise choice between two tensors by a boolean condition";
  let description = [{
    `condition ? lhs : rhs`, like `torch.where`. The three operands
    broadcast together as in NumPy; `lhs` and `rhs` share the result's
    element type.

    Example:

    ```mlir
    %bias = tfm.where %pad, %ninf, %zero : tensor<?x1x1x?xi1>, tensor<f32>, tensor<f32> -> tensor<?x1x1x?xf32>
    ```
  }];
  let arguments = (ins Tfm_BoolTensor:$condition, Tfm_AnyDtypeTensor:$lhs,
                       Tfm_AnyDtypeTensor:$rhs);
  let results = (outs Tfm_AnyDtypeTensor:$result);
  let assemblyFormat = [{
    $condition `,` $lhs `,` $rhs attr-dict `:` type($condition) `,`
    type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// A result type as static as or more static than the inferred one.
    static bool isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                        ::mlir::TypeRange actual);
  }];
}

def Tfm_CastOp : Tfm_Op<"cast", [Pure]> {
  let summary = "Converts every element to another element type";
  let description = [{
    Like `Tensor.to(dtype)`: floats to integers truncate toward zero, to
    `i1` any nonzero value (and NaN) is true; `i1` reads as 0 or 1; integers
    widen by sign extension and narrow by truncation. The shape is kept.

    Example:

    ```mlir
    %m = tfm.cast %mask : tensor<?x?xi64> -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Tfm_AnyDtypeTensor:$input);
  let results = (outs Tfm_AnyDtypeTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

/// `result = f(input)` elementwise, with the input's type.
class Tfm_UnaryOp<string mnemonic, TypeConstraint operand, string what,
                  string torch>
    : Tfm_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what # " elementwise";
  let description = "`" # torch # "`, elementwise; the result has the "
      # "input's type.\n\nExample:\n\n```mlir\n%y = tfm." # mnemonic
      # " %x : tensor<?x64xf32>\n```";
  let arguments = (ins operand:$input);
  let results = (outs operand:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tfm_ExpOp : Tfm_UnaryOp<"exp", Tfm_FloatTensor, "e^x", "torch.exp">;
def Tfm_LogOp : Tfm_UnaryOp<"log", Tfm_FloatTensor, "Natural logarithm",
                            "torch.log">;
def Tfm_SqrtOp : Tfm_UnaryOp<"sqrt", Tfm_FloatTensor, "Square root",
                             "torch.sqrt">;
def Tfm_RsqrtOp : Tfm_UnaryOp<"rsqrt", Tfm_FloatTensor,
                              "Reciprocal square root", "torch.rsqrt">;
def Tfm_TanhOp : Tfm_UnaryOp<"tanh", Tfm_FloatTensor, "Hyperbolic tangent",
                             "torch.tanh">;
def Tfm_ErfOp : Tfm_UnaryOp<"erf", Tfm_FloatTensor, "Error function",
                            "torch.erf">;
def Tfm_SinOp : Tfm_UnaryOp<"sin", Tfm_FloatTensor, "Sine", "torch.sin">;
def Tfm_CosOp : Tfm_UnaryOp<"cos", Tfm_FloatTensor, "Cosine", "torch.cos">;
def Tfm_NegOp : Tfm_UnaryOp<"neg", Tfm_NumericTensor, "Negation",
                            "torch.neg">;
def Tfm_AbsOp : Tfm_UnaryOp<"abs", Tfm_NumericTensor, "Absolute value",
                            "torch.abs">;
def Tfm_LogicalNotOp : Tfm_UnaryOp<"logical_not", Tfm_BoolTensor,
                                   "Boolean negation", "torch.logical_not"> {
  let description = [{
    `torch.logical_not` on `i1`, elementwise.

    Example:

    ```mlir
    %keep = tfm.logical_not %pad : tensor<?x?xi1>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Reductions and shapes
//===----------------------------------------------------------------------===//

def Tfm_ReduceOp : Tfm_Op<"reduce", [Pure]> {
  let summary = "Sum, mean, maximum or minimum over some dimensions";
  let description = [{
    `torch.sum/mean/amax/amin(input, dims, keepdim)`: `kind` is `sum`,
    `mean` (floats only), `max` or `min`. `dims` are distinct, sorted and
    non-negative (the frontend resolves negative ones). Reduced dimensions
    are dropped, or kept as 1 with `keepdim`. Reducing nothing gives 0 for
    `sum`, NaN for `mean` and the lowest or highest value of the type for
    `max` and `min`.

    Example:

    ```mlir
    %m = tfm.reduce "mean" %x dims [2] keepdim : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
    %s = tfm.reduce "sum" %x dims [0, 2] : tensor<?x?x64xf32> -> tensor<?xf32>
    ```
  }];
  let arguments = (ins Tfm_NumericTensor:$input, StrAttr:$kind,
                       DenseI64ArrayAttr:$dims, UnitAttr:$keepdim);
  let results = (outs Tfm_NumericTensor:$result);
  let assemblyFormat = [{
    $kind $input `dims` $dims (`keepdim` $keepdim^)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_ReshapeOp : Tfm_Op<"reshape", [Pure]> {
  let summary = "The same elements in row-major order with another shape";
  let description = [{
    Like `torch.reshape`. `sizes` gives the run-time size of each dynamic
    result dimension, in order; the element counts of input and result must
    agree. The frontend writes `unsqueeze` and `squeeze` with it too.

    Example:

    ```mlir
    %h = tfm.reshape %x [%b, %s] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
    %f = tfm.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Tfm_AnyDtypeTensor:$input, Variadic<Index>:$sizes);
  let results = (outs Tfm_AnyDtypeTensor:$result);
  let assemblyFormat = [{
    $input (`[` $sizes^ `]`)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tfm_PermuteOp : Tfm_Op<"permute", [Pure]> {
  let summary = "Reorders the dimensions";
  let description = [{
    Like `torch.permute`: result dimension `i` is input dimension
    `permutation[i]`.

    Example:

    ```mlir
    %t = tfm.permute %x [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
    ```
  }];
  let arguments = (ins Tfm_AnyDtypeTensor:$input,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs Tfm_AnyDtypeTensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Run-time checks
//===----------------------------------------------------------------------===//

def Tfm_CheckIndexOp : Tfm_Op<"check_index", [Pure]> {
  let summary = "Status code when an index lies outside [0, bound)";
  let description = [{
    Returns `code` if any element of `indices` is negative or not less than
    `bound`, else 0. The frontend pairs every `tfm.embedding` with one
    (code 1) and the model function returns the first non-zero status of its
    checks, which the artifact's entry points return to the caller
    (docs/artifact.md). The lookup itself clamps, so a bad id is reported,
    never read out of bounds.

    Example:

    ```mlir
    %status = tfm.check_index %ids, bound 6, code 1 : tensor<?x?xi64>
    ```
  }];
  let arguments = (ins Tfm_IndexTensor:$indices, I64Attr:$bound,
                       I32Attr:$code);
  let results = (outs I32:$status);
  let assemblyFormat = [{
    $indices `,` `bound` $bound `,` `code` $code attr-dict `:` type($indices)
  }];
  let hasVerifier = 1;
}

def Tfm_CheckSizeOp : Tfm_Op<"check_size", [Pure]> {
  let summary = "Status code when a dimension exceeds a maximum";
  let description = [{
    Returns `code` if dimension `dim` of `input` (negative values count from
    the end) is larger than `max`, else 0. The frontend pairs every learned
    positional encoding with one (code 2): a sequence longer than the
    position table is reported, while the lookup clamps to the table.

    Example:

    ```mlir
    %status = tfm.check_size %x, dim -2, max 64, code 2 : tensor<?x?x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$dim, I64Attr:$max,
                       I32Attr:$code);
  let results = (outs I32:$status);
  let assemblyFormat = [{
    $input `,` `dim` $dim `,` `max` $max `,` `code` $code attr-dict `:`
    type($input)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `dim` with a negative value resolved.
    int64_t getNormalizedDim();
  }];
}

//===----------------------------------------------------------------------===//
// Layers
//===----------------------------------------------------------------------===//

def Tfm_LinearOp : Tfm_Op<"linear", [Pure]> {
  let summary = "Affine layer with PyTorch's weight layout";
  let description = [{
    `y = x W^T + b` with `W [out, in]` and optional `b [out]`, like
    `torch.nn.Linear`. `x` is `[..., in]`, `y` is `[..., out]`.

    Example:

    ```mlir
    %q = tfm.linear %x, %w : tensor<?x16xf32>, tensor<24x16xf32> -> tensor<?x24xf32>
    %h = tfm.linear %x, %w, %b : tensor<?x16xf32>, tensor<24x16xf32>, tensor<24xf32> -> tensor<?x24xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$weight,
                       Optional<Tfm_FloatTensor>:$bias);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_LayerNormOp : Tfm_Op<"layer_norm", [Pure, AttrSizedOperandSegments]> {
  let summary = "Layer normalization over the last dimension";
  let description = [{
    `torch.nn.LayerNorm(D, eps)` at inference, over the last dimension `D`:
    `(x - mean) / sqrt(var + eps) * weight + bias` with the biased variance.
    `weight [D]` and `bias [D]` are optional (without both, PyTorch's
    `elementwise_affine=False`).

    Example:

    ```mlir
    %y = tfm.layer_norm %x weight %w bias %b eps 1.0e-05
           : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
    %n = tfm.layer_norm %x eps 1.0e-05 : (tensor<?x16xf32>) -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       Optional<Tfm_FloatTensor>:$weight,
                       Optional<Tfm_FloatTensor>:$bias, F64Attr:$epsilon);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? `eps` $epsilon attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfm_EmbeddingOp : Tfm_Op<"embedding", [Pure]> {
  let summary = "Looks up rows of a table by token id";
  let description = [{
    `result[..., :] = weight[indices[...], :]` with `weight [num, dim]`, like
    `torch.nn.Embedding`. An id outside `[0, num)` reads the nearest row
    (ids are clamped into range), never outside the table; the frontend
    pairs the op with a `tfm.check_index` that reports such ids as a
    run-time error status.

    Example:

    ```mlir
    %e = tfm.embedding %ids, %table : tensor<?xi64>, tensor<6x16xf32> -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins Tfm_IndexTensor:$indices, Tfm_FloatTensor:$weight);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $indices `,` $weight attr-dict `:` type($indices) `,` type($weight) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_PositionalEncodingOp : Tfm_Op<"positional_encoding", [Pure]> {
  let summary = "Sinusoidal or learned position encodings shaped like a sequence";
  let description = [{
    Produces `pe [S, D]` for `input [..., S, D]`; only the shape of `input`
    is read. Add the result to the embeddings.

    Without `table`, the sinusoidal formula of "Attention is all you need":
    `pe[p, 2i] = sin(p / 10000^(2i/D))`, `pe[p, 2i+1] = cos(p / 10000^(2i/D))`.

    With `table [max_len, D]` (learned positional embeddings, an
    `nn.Embedding` over positions), `pe[p] = table[p]` for `p` in `[0, S)`.
    Positions past the table read its last row, never outside it; the
    frontend pairs the op with a `tfm.check_size` that reports `S > max_len`
    as a run-time error status.

    Example:

    ```mlir
    %pe = tfm.positional_encoding %x : tensor<?x?x16xf32> -> tensor<?x16xf32>
    %lp = tfm.positional_encoding %x, %table : tensor<?x?x16xf32>, tensor<64x16xf32> -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       Optional<Tfm_FloatTensor>:$table);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $table^)? attr-dict `:` type($input) (`,` type($table)^)?
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_SdpaOp : Tfm_Op<"sdpa", [Pure]> {
  let summary = "Scaled dot-product attention";
  let description = [{
    `torch.nn.functional.scaled_dot_product_attention` at inference:
    `softmax(Q K^T * scale + mask) V` with `Q [..., Sq, Dk]`,
    `K [..., Sk, Dk]`, `V [..., Sk, Dv]` and result `[..., Sq, Dv]`. The
    scale defaults to `1/sqrt(Dk)`. Leading dimensions must agree.

    The optional `mask` broadcasts to the scores `[..., Sq, Sk]` (aligned at
    the trailing dims; a missing or static-1 dim stretches) and follows
    PyTorch's SDPA: an `i1` mask is true where a key TAKES PART (the
    opposite of `tfm.masked_fill` and `tfm.attention`), a float mask is
    added to the scaled scores. `causal` masks key `j > i` for query `i`
    (aligned at the top left, `torch.ones(Sq, Sk).tril()`, also when
    `Sq != Sk`). A query row whose keys are all masked yields zeros.

    Example:

    ```mlir
    %o = tfm.sdpa %q, %k, %v : tensor<?x24xf32>, tensor<?x24xf32>, tensor<?x28xf32> -> tensor<?x28xf32>
    %m = tfm.sdpa %q, %k, %v mask(%keep : tensor<?x?xi1>) {causal, scale = 0.5 : f64}
           : tensor<?x24xf32>, tensor<?x24xf32>, tensor<?x28xf32> -> tensor<?x28xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$query, Tfm_FloatTensor:$key,
                       Tfm_FloatTensor:$value, Optional<Tfm_MaskTensor>:$mask,
                       OptionalAttr<F64Attr>:$scale, UnitAttr:$causal);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `:` type($mask) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->`
    type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale to apply to the scores: the attribute or 1/sqrt(Dk).
    double getScaleOrDefault();
  }];
}

def Tfm_MultiHeadAttentionOp : Tfm_Op<"multi_head_attention",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "Multi-head attention with input and output projections";
  let description = [{
    `torch.nn.MultiheadAttention` at inference: `query [..., Sq, E]`,
    `key [..., Sk, Ek]`, `value [..., Sk, Ev]` (batch-first when a leading
    batch dimension `B` is present; the frontend transposes sequence-first
    inputs). Each input is projected (`q_weight [E, E]`, `k_weight [E, Ek]`,
    `v_weight [E, Ev]`, optional biases `[E]`), split into `num_heads` heads
    of `E / num_heads`, attended with scale `1/sqrt(E / num_heads)`, merged,
    and projected by `out_weight [E, E]` and optional `out_bias [E]`.

    Masks follow `nn.MultiheadAttention.forward`: `key_padding_mask [B, Sk]`
    (unbatched `[Sk]`) and `attn_mask [Sq, Sk]` or `[B * H, Sq, Sk]`
    (unbatched `[H, Sq, Sk]`); an `i1` mask is true where attention is NOT
    allowed, a float mask is added to the scaled scores. A query row whose
    keys are all masked yields zeros.

    With a second result the op also returns the attention weights (the
    softmax), averaged over the heads `[B, Sq, Sk]` (`[Sq, Sk]` unbatched)
    when `average_attn_weights` is true (the default), else per head
    `[B, H, Sq, Sk]` (`[H, Sq, Sk]`), like `need_weights=True`.

    Example:

    ```mlir
    %y = tfm.multi_head_attention (%x, %x, %x)
           weights (%wq, %wk, %wv, %wo) biases (%bq, %bk, %bv, %bo) heads 8
           : (tensor<?x?x512xf32>, tensor<?x?x512xf32>, tensor<?x?x512xf32>,
              tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
              tensor<512x512xf32>, tensor<512xf32>, tensor<512xf32>,
              tensor<512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
    %o, %w = tfm.multi_head_attention (%x, %m, %m)
           weights (%wq, %wk, %wv, %wo) key_padding_mask(%pad) heads 2
           : (tensor<2x5x8xf32>, tensor<2x7x8xf32>, tensor<2x7x8xf32>,
              tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
              tensor<8x8xf32>, tensor<2x7xi1>)
             -> (tensor<2x5x8xf32>, tensor<2x5x7xf32>)
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$query, Tfm_FloatTensor:$key,
                       Tfm_FloatTensor:$value, Tfm_FloatTensor:$q_weight,
                       Tfm_FloatTensor:$k_weight, Tfm_FloatTensor:$v_weight,
                       Tfm_FloatTensor:$out_weight,
                       Optional<Tfm_FloatTensor>:$q_bias,
                       Optional<Tfm_FloatTensor>:$k_bias,
                       Optional<Tfm_FloatTensor>:$v_bias,
                       Optional<Tfm_FloatTensor>:$out_bias,
                       Optional<Tfm_MaskTensor>:$key_padding_mask,
                       Optional<Tfm_MaskTensor>:$attn_mask,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                       DefaultValuedAttr<BoolAttr, "true">:$average_attn_weights);
  let results = (outs Tfm_FloatTensor:$result,
                      Optional<Tfm_FloatTensor>:$attn_weights);
  let assemblyFormat = [{
    `(` $query `,` $key `,` $value `)`
    `weights` `(` $q_weight `,` $k_weight `,` $v_weight `,` $out_weight `)`
    (`biases` `(` $q_bias^ `,` $k_bias `,` $v_bias `,` $out_bias `)`)?
    (`key_padding_mask` `(` $key_padding_mask^ `)`)?
    (`attn_mask` `(` $attn_mask^ `)`)?
    `heads` $num_heads attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fused attention
//===----------------------------------------------------------------------===//

def Tfm_AttentionOp : Tfm_Op<"attention", [
    DestinationStyleOpInterface, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Fused scaled dot-product attention (flash attention)";
  let description = [{
    `init = softmax(scale * Q K^T + mask) V` computed without materializing
    the `[Sq, Sk]` scores: the one op every attention chain is fused into
    (`tfm-fuse-attention`) and the attention layers are lowered to
    (`tfm-lower-layers`), and the only one with per-target lowerings.

    `Q [..., Sq, Dk]`, `K [..., Sk, Dk]`, `V [..., Sk, Dv]` and
    `init [..., Sq, Dv]` share their leading (batch, head) dimensions.
    The optional `mask` is aligned with the scores at its trailing dims and
    broadcasts where it has a static 1 or lacks a dim: a float mask is added
    to the scaled scores, an `i1` mask removes the scores where it is true
    (the polarity of `masked_fill` and `nn.MultiheadAttention`'s mask). `causal` masks key `j > i` for query `i`
    (aligned top-left). A query row with every key masked yields zeros.

    Attention over a key/value cache adds two optional `[B]` `i64` operands,
    one value per sequence of the leading (batch) dimension of Q:
    `kv_length` says how many keys of sequence `b` are valid (keys
    `j >= kv_length[b]` are masked), and `query_offset` (with `causal`
    only) places query `i` of sequence `b` at position `query_offset[b] + i`,
    so that it sees keys `j <= query_offset[b] + i`. Lowerings visit only
    the keys that can be seen, so a decode step over a cache costs what the
    valid keys cost, whatever the cache's capacity `Sk`. With `causal` and a
    `query_offset` the valid keys are at most `query_offset[b] + Sq`.

    Destination-style like linalg: on tensors it returns the result, on
    memrefs (after bufferization) it writes `init` and returns nothing.

    Operands are read through `indexing_maps`, as `iree_linalg_ext.attention`
    does: one map per operand (query, key, value, mask when present, init)
    from the iteration space `(b_0, ..., b_{n-1}, m, k1, k2, n)` (batch dims,
    query, head dim, key, value dim) to the operand's dims. Query reads
    `(b..., m, k1)`, key `(b..., k2, k1)`, value `(b..., k2, n)` and init
    writes `(b..., m, n)`, each in any order of the batch and sequence dims
    with the head dim (`k1`, or `n` for value and init) innermost; the mask
    reads any subset of `(b..., m, k2)`, in any order, and broadcasts over
    the dims it lacks. A multi-head layer thus reads its heads straight from
    the `[B, S, H, D]` projections and writes `[B, S, H, D]`, with no
    transposes: the head split and merge are in the maps. Without
    `indexing_maps` every operand is in the order above and the mask is
    aligned with the scores `(b..., m, k2)` at its trailing dims.

    Example:

    ```mlir
    %o = tfm.attention ins(%q, %k, %v : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>)
           outs(%init : tensor<?x8x?x64xf32>) scale 0.125 {causal} -> tensor<?x8x?x64xf32>
    // One new token per sequence against a cache of 128 positions:
    %d = tfm.attention ins(%q1, %kc, %vc : tensor<?x8x1x64xf32>, tensor<?x8x128x64xf32>, tensor<?x8x128x64xf32>)
           query_offset(%past : tensor<?xi64>)
           outs(%init1 : tensor<?x8x1x64xf32>) scale 0.125 {causal} -> tensor<?x8x1x64xf32>
    // Heads read from and written to [B, S, H, D]:
    %h = tfm.attention ins(%qh, %kh, %vh : tensor<?x?x8x64xf32>, tensor<?x?x8x64xf32>, tensor<?x?x8x64xf32>)
           outs(%inith : tensor<?x?x8x64xf32>) scale 0.125
           indexing_maps [affine_map<(b, h, m, k1, k2, n) -> (b, m, h, k1)>,
                          affine_map<(b, h, m, k1, k2, n) -> (b, k2, h, k1)>,
                          affine_map<(b, h, m, k1, k2, n) -> (b, k2, h, n)>,
                          affine_map<(b, h, m, k1, k2, n) -> (b, m, h, n)>]
           -> tensor<?x?x8x64xf32>
    ```
  }];
  let arguments = (ins Tfm_RankedTensorOrMemRef:$query,
                       Tfm_RankedTensorOrMemRef:$key,
                       Tfm_RankedTensorOrMemRef:$value,
                       Optional<Tfm_RankedTensorOrMemRef>:$mask,
                       Optional<Tfm_RankedTensorOrMemRef>:$kv_length,
                       Optional<Tfm_RankedTensorOrMemRef>:$query_offset,
                       Tfm_RankedTensorOrMemRef:$init,
                       F64Attr:$scale, UnitAttr:$causal,
                       OptionalAttr<AffineMapArrayAttr>:$indexing_maps);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:` type($query) `,` type($key) `,`
    type($value) `)` (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`kv_length` `(` $kv_length^ `:` type($kv_length) `)`)?
    (`query_offset` `(` $query_offset^ `:` type($query_offset) `)`)?
    `outs` `(` $init `:` type($init) `)` `scale` $scale
    (`indexing_maps` $indexing_maps^)? attr-dict
    (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() {
      return MutableOperandRange(getInitMutable());
    }
    /// True once bufferized: operands are memrefs and there is no result.
    bool hasPureBufferSemantics() {
      return isa<MemRefType>(getInit().getType());
    }
    /// Batch dims of the iteration space (b_0 ... b_{n-1}).
    unsigned getNumBatchDims();
    /// Iteration dims after the batch dims.
    unsigned getQueryDim() { return getNumBatchDims(); }
    unsigned getHeadDim() { return getNumBatchDims() + 1; }
    unsigned getKeyDim() { return getNumBatchDims() + 2; }
    unsigned getValueDim() { return getNumBatchDims() + 3; }
    /// The maps of query, key, value, mask (when present) and init: the
    /// `indexing_maps` attribute, or the defaults when it is absent.
    SmallVector<AffineMap> getIndexingMapsArray();
    AffineMap getQueryMap() { return getIndexingMapsArray()[0]; }
    AffineMap getKeyMap() { return getIndexingMapsArray()[1]; }
    AffineMap getValueMap() { return getIndexingMapsArray()[2]; }
    AffineMap getMaskMap() {
      return getMask() ? getIndexingMapsArray()[3] : AffineMap();
    }
    AffineMap getInitMap() { return getIndexingMapsArray().back(); }
    /// True when every operand is read in the default order (no head
    /// split or merge in the maps): lowerings may then index the operands
    /// as [batch..., seq, dim] directly.
    bool hasIdentityLayout();
    /// The default maps for `batchDims` batch dims and a mask of rank
    /// `maskRank` (none when negative).
    static SmallVector<AffineMap> getDefaultIndexingMaps(
        MLIRContext *context, unsigned batchDims, int64_t maskRank);
    /// For the operand of map `mapIndex` (in the order of
    /// getIndexingMapsArray), the position in the operand of each of its
    /// canonical dims: query (b..., m, k1), key (b..., k2, k1), value
    /// (b..., k2, n), mask (b..., m, k2), init (b..., m, n); -1 where the
    /// mask broadcasts.
    SmallVector<int64_t> getCanonicalDimPositions(unsigned mapIndex);
  }];
}

def Tfm_PackedLinearOp : Tfm_Op<"packed_linear", [
    DestinationStyleOpInterface, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Linear layer over a weight packed for register-tiled GEMM, with a fused epilogue";
  let description = [{
    `init = residual + activation(input W^T + bias)`, where the weight
    `W [N, K]` is stored packed in column panels of the micro-kernel's width
    `nr`: `packed_weight [ceil(N/nr), K, nr]`, element `[p, k, j]` holding
    `W[p*nr + j, k]` (zero past `N`). The packing is done at compile time
    (`tfm-pack-linear`), so the micro-kernel streams one contiguous panel
    per group of output columns. A matrix that is not a constant (the right
    operand of a matmul between activations) is packed at run time instead
    (`tfm-pack-matmul`): its panels and `K` may then be dynamic, and `N` is
    the init's last dimension. `bias` is `[ceil(N/nr)*nr]` (zero padded);
    `residual` has the result's shape. `activation` is `none`, `relu`,
    `gelu` (exact, with erf) or `gelu_tanh`.

    `input [..., K]` and `init [..., N]` share their leading dimensions,
    which are flattened into the GEMM's rows. Destination-style: on tensors
    it returns the result, on memrefs it writes `init`.

    Example:

    ```mlir
    %y = tfm.packed_linear ins(%x, %wp : tensor<?x512xf32>, tensor<128x512x16xf32>)
           bias(%b : tensor<2048xf32>) outs(%init : tensor<?x2048xf32>)
           activation "gelu" -> tensor<?x2048xf32>
    ```
  }];
  let arguments = (ins Tfm_RankedTensorOrMemRef:$input,
                       Tfm_RankedTensorOrMemRef:$packed_weight,
                       Optional<Tfm_RankedTensorOrMemRef>:$bias,
                       Optional<Tfm_RankedTensorOrMemRef>:$residual,
                       Tfm_RankedTensorOrMemRef:$init,
                       DefaultValuedStrAttr<StrAttr, "none">:$activation);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    `ins` `(` $input `,` $packed_weight `:` type($input) `,`
    type($packed_weight) `)` (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    `outs` `(` $init `:` type($init) `)` `activation` $activation attr-dict
    (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() {
      return MutableOperandRange(getInitMutable());
    }
    /// True once bufferized: operands are memrefs and there is no result.
    bool hasPureBufferSemantics() {
      return isa<MemRefType>(getInit().getType());
    }
    /// Columns per packed panel (the micro-kernel's width).
    int64_t getPanelWidth() {
      return cast<ShapedType>(getPackedWeight().getType()).getShape()[2];
    }
  }];
}

def Tfm_CacheAppendOp : Tfm_Op<"cache_append", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Writes new rows into a caller-owned cache at per-sequence offsets";
  let description = [{
    `cache [B, ..., C, ...]` holds up to `C` positions along dimension `dim`
    for each of `B` sequences (dimension 0). For every sequence `b` with
    `0 <= offset[b]` and `offset[b] + S <= C`, the `S` rows of
    `rows [B, ..., S, ...]` are written at positions
    `offset[b] .. offset[b] + S - 1`; every other element of the cache keeps
    its value. A sequence whose rows do not fit is left untouched (nothing is
    written out of bounds) and the op's `status` is `code`; else it is 0.

    On tensors the op returns the updated cache and the status, and
    bufferizes in place: the result is the cache's own buffer (a
    caller-owned `cache` argument of the model, written through, never
    copied). On memrefs it writes `cache` and returns the status alone;
    `tfm-lower-cache-append` then copies only the new rows.

    Example:

    ```mlir
    %kc, %status = tfm.cache_append ins(%k, %past : tensor<?x8x?x64xf32>, tensor<?xi64>)
                     outs(%cache : tensor<?x8x128x64xf32>) dim 2 code 3 -> tensor<?x8x128x64xf32>
    ```
  }];
  let arguments = (ins Tfm_RankedTensorOrMemRef:$rows,
                       Tfm_RankedTensorOrMemRef:$offset,
                       Tfm_RankedTensorOrMemRef:$cache,
                       I64Attr:$dim, I32Attr:$code);
  let results = (outs Optional<AnyRankedTensor>:$result, I32:$status);
  let assemblyFormat = [{
    `ins` `(` $rows `,` $offset `:` type($rows) `,` type($offset) `)`
    `outs` `(` $cache `:` type($cache) `)` `dim` $dim `code` $code attr-dict
    (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True once bufferized: operands are memrefs and only the status is
    /// returned.
    bool hasPureBufferSemantics() {
      return isa<MemRefType>(getCache().getType());
    }
  }];
}

#endif // TFM_OPS_TD
