//===- TfmMathOps.td - Elementwise math, reductions --------*- tablegen -*-===//
//
// Elementwise math with NumPy broadcasting, comparisons, casts, unary
// functions, reductions, reshapes and the run-time checks that guard
// data-dependent indexing. Included by TfmOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_MATH_OPS_TD
#define TFM_MATH_OPS_TD

include "dialects/Tfm/IR/TfmBase.td"
include "dialects/Tfm/IR/TfmEnums.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

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
    %pad = tfm.compare eq %mask, %zero : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
    ```
  }];
  let arguments = (ins Tfm_AnyDtypeTensor:$lhs, Tfm_AnyDtypeTensor:$rhs,
                       Tfm_ComparePredicateAttr:$predicate);
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
    widen by sign extension and narrow by truncation. A float narrows to a
    float type (`f32` to `bf16` or `f16`) rounding to nearest, ties to even,
    to infinity past the largest finite value; `f64` narrows to `bf16` and
    `f16` through `f32`, and integers become `bf16` or `f16` through `f32`,
    as PyTorch converts. Widening between floats is exact. The shape is
    kept.

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
    %m = tfm.reduce mean %x dims [2] keepdim : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
    %s = tfm.reduce sum %x dims [0, 2] : tensor<?x?x64xf32> -> tensor<?xf32>
    ```
  }];
  let arguments = (ins Tfm_NumericTensor:$input, Tfm_ReduceKindAttr:$kind,
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

#endif // TFM_MATH_OPS_TD
