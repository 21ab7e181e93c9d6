//===- TfmLayerOps.td - Layer ops --------------------------*- tablegen -*-===//
//
// The layers a model author writes: linear, layer_norm, embedding,
// positional_encoding, sdpa and multi_head_attention. tfm-lower-layers
// lowers them to primitives and tfm.attention. Included by TfmOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LAYER_OPS_TD
#define TFM_LAYER_OPS_TD

include "dialects/Tfm/IR/TfmBase.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

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

def Tfm_EmbeddingOp : Tfm_Op<"embedding", [Pure, AttrSizedOperandSegments]> {
  let summary = "Looks up rows of a table by token id";
  let description = [{
    `result[..., :] = weight[indices[...], :]` with `weight [num, dim]`, like
    `torch.nn.Embedding`. An id outside `[0, num)` reads the nearest row
    (ids are clamped into range), never outside the table; the frontend
    pairs the op with a `tfm.check_index` that reports such ids as a
    run-time error status.

    With `packed_rows = num`, `weight` is the same table in the panel layout
    `tfm-pack-linear` gives a linear layer's weight, `[ceil(num / w), dim,
    w]`, and row `r` is `weight[r / w, :, r % w]`: a table that is also the
    weight of a linear layer (an LM head tied to the token embedding) is
    stored once, packed.

    With `scales`, `weight` is a table of GGUF blocks kept quantized in the
    i8 panels of a block-quantized `tfm.packed_linear` weight (its encoding,
    told apart the same way: `[ceil(num / w), D, w*4]` with `D` = dim / 4
    for int8 values, dim / 8 for nibbles, dim / 32 * 5 or 6 for nibbles and
    bit planes; `scales` (f16, or i8 with f16 `super_scales`) and `offsets`
    `[dim / B, ceil(num / w) * w]`): the LM head's own panels when the head
    is tied to the embedding, else panels of one row (`w = 1`). Row `r` is
    column `r` of that weight, and only the rows looked up are dequantized,
    `scale * q (+ offset)` with `scale` (`offset`) the K-quants' exact
    product of the super-block's f16 and the block's integer, rounded once
    per operation as the file's reference dequantization computes them.

    Example:

    ```mlir
    %e = tfm.embedding %ids, %table : tensor<?xi64>, tensor<6x16xf32> -> tensor<?x16xf32>
    %p = tfm.embedding %ids, %panels {packed_rows = 6 : i64}
        : tensor<?xi64>, tensor<2x16x4xf32> -> tensor<?x16xf32>
    %q = tfm.embedding %ids, %values scales(%scales : tensor<1x6xf16>)
        {packed_rows = 6 : i64} : tensor<?xi64>, tensor<6x8x4xi8> -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins Tfm_IndexTensor:$indices,
                       AnyTypeOf<[Tfm_FloatTensor, TensorOf<[I8]>]>:$weight,
                       Optional<AnyTypeOf<[Tfm_FloatTensor, TensorOf<[I8]>]>>:$scales,
                       Optional<AnyTypeOf<[Tfm_FloatTensor, TensorOf<[I8]>]>>:$offsets,
                       Optional<TensorOf<[F16]>>:$super_scales,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$packed_rows);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $indices `,` $weight (`scales` `(` $scales^ `:` type($scales) `)`)?
    (`offsets` `(` $offsets^ `:` type($offsets) `)`)?
    (`super_scales` `(` $super_scales^ `:` type($super_scales) `)`)?
    attr-dict `:` type($indices) `,` type($weight) `->` type($result)
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

#endif // TFM_LAYER_OPS_TD
