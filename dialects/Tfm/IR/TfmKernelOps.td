//===- TfmKernelOps.td - Ops the compiler forms ------------*- tablegen -*-===//
//
// Ops that fusion and packing form for the code generators: the fused
// tfm.attention, tfm.packed_linear and tfm.cache_append. Included by
// TfmOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_KERNEL_OPS_TD
#define TFM_KERNEL_OPS_TD

include "dialects/Tfm/IR/TfmBase.td"
include "dialects/Tfm/IR/TfmEnums.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

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

    K and V have Q's element type, or, with an f32 Q, bf16 or f16 (each
    its own): a low-precision key/value cache (`tfm-compile
    --kv-cache-dtype`), which the kernels read as it is and widen as they
    load it; scores, softmax and accumulation stay f32.

    `window` (with `causal` only) is a sliding window, as Gemma's and
    Mistral's local layers have: the query at position `p` sees the keys
    `j` with `p - window < j <= p`, the last `window` positions including
    its own (transformers' `sliding_window`, llama.cpp's `n_swa`). Kernels
    visit only the keys of the window.

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
                       OptionalAttr<AffineMapArrayAttr>:$indexing_maps,
                       OptionalAttr<I64Attr>:$window);
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
    `nr`, in groups of `g` consecutive `k` (one 32-bit lane of the kernel's
    dot product): `packed_weight [ceil(N/nr), ceil(K/g), nr*g]`, element
    `[p, q, j*g + t]` holding `W[p*nr + j, q*g + t]` (zero past `N` and
    `K`). The element type sets `g`: f32 (`g = 1`: `[panels, K, nr]`, an
    FMA per weight), bf16 (`g = 2`, for `vdpbf16ps`: the input is rounded to
    bf16 as it is read, products accumulate in f32) or i8 (`g = 4`, for
    `vpdpbusd`: `W = weight_scales[n] * packed` per output column, symmetric;
    each row of the input is quantized at run time to u8 with its own scale
    and zero point, products accumulate exactly in i32, and `weight_sums[n]`
    (the column's sum of packed weights) removes the zero point's share
    before the f32 epilogue). `weight_scales` (f32) and `weight_sums` (i32)
    are `[ceil(N/nr)*nr]`, present exactly for i8.

    Block-quantized i8 (GGUF's Q8_0): `weight_scales` is
    `[K/32, ceil(N/nr)*nr]`, one scale per block of 32 consecutive `k` and
    column, `W[n, k] = weight_scales[k/32, n] * packed`, and there are no
    `weight_sums`; `K` is static, a multiple of 32. Each row of the input
    is quantized at run time per block of 32 as llama.cpp's
    `quantize_row_q8_0` does (`d = max|x| / 127`, `q = round(x / d)`, to
    nearest even, `d` kept in f32); each block's i32 dot product is scaled
    by both scales and accumulated in f32. The per-column form above is the
    special case of one block spanning `K` (with an asymmetric input).
    Block-quantized 4-bit (GGUF Q4_0) is told apart by its depth: two `k`
    per byte, `packed_weight [ceil(N/nr), K/8, nr*4]`, byte `b` of lane
    `[p, r, j*4 .. j*4+3]` holding `u` of `k = 8r + b` in its low nibble and
    of `k = 8r + 4 + b` in its high one, `W = scale * (u - 8)`. 5- and
    6-bit values (GGUF Q5_0, Q5_1, Q5_K, Q6_K) are nibbles too, with a bit
    plane per high bit: per 32 `k`, 4 packed rows of nibbles as above, then
    1 (or 2) rows whose 32-bit lane of column `j` holds in bit `8b + t` bit
    4 (5) of `u` at byte `b` of nibble row `t / 2`, low nibble for even `t`,
    high for odd: `packed_weight [ceil(N/nr), K/32 * 5 (6), nr*4]`, `W =
    scale * (u - 16)` (`u - 32`) without offsets.

    The block is `K` over the rows of `weight_scales`: 32, or 16 for GGUF
    Q6_K's sub-blocks (each row of the input is then quantized per block of
    16). The asymmetric block types (GGUF Q4_1, Q5_1, Q4_K, Q5_K) add
    `weight_offsets`, f32 of the scales' shape: `W[n, k] =
    weight_scales[k/B, n] * packed + weight_offsets[k/B, n]`; a block's dot
    product gains `offset * d_x * sum(q_x)`, the input block's sum taken when
    it is quantized (as llama.cpp's Q8_1 carries it). With offsets, 4-bit
    values are unsigned: `W = scale * u + offset`.

    Block scales and offsets are f32, or as GGUF files keep them: f16
    (widened in registers, exactly), or i8 integers (a K-quant's sub-block
    scales and mins) with `weight_super_scales`, f16 `[S, K/SB, ceil(N/nr)*nr]`
    per super-block of `SB` k (a multiple of the block; 256 for GGUF's
    K-quants): `scale = weight_super_scales[0, k/SB, n] * weight_scales[k/B, n]`
    and, with offsets (S = 2), `offset = weight_super_scales[1, k/SB, n] *
    weight_offsets[k/B, n]`, each product exact in f32.

    The packing is done at compile time (`tfm-pack-linear`), so the
    micro-kernel streams one contiguous panel per group of output columns. A
    matrix that is not a constant (the right operand of a matmul between
    activations) is packed at run time instead (`tfm-pack-matmul`, f32): its
    panels and `K` may then be dynamic, and `N` is the init's last
    dimension. `bias` is `[ceil(N/nr)*nr]` (zero padded); `residual` has the
    result's shape. `activation` is `none`, `relu`, `gelu` (exact, with erf)
    or `gelu_tanh`. The input, bias, residual and init are f32.

    `input [..., K]` and `init [..., N]` share their leading dimensions,
    which are flattened into the GEMM's rows. Destination-style: on tensors
    it returns the result, on memrefs it writes `init`.

    Example:

    ```mlir
    %y = tfm.packed_linear ins(%x, %wp : tensor<?x512xf32>, tensor<128x512x16xf32>)
           bias(%b : tensor<2048xf32>) outs(%init : tensor<?x2048xf32>)
           activation gelu -> tensor<?x2048xf32>
    %q = tfm.packed_linear ins(%x, %wq : tensor<?x512xf32>, tensor<64x128x128xi8>)
           dequant(%scales, %sums : tensor<2048xf32>, tensor<2048xi32>)
           outs(%init : tensor<?x2048xf32>) activation none -> tensor<?x2048xf32>
    %b = tfm.packed_linear ins(%x, %wb : tensor<?x512xf32>, tensor<64x128x128xi8>)
           dequant(%block_scales : tensor<16x2048xf32>)
           outs(%init : tensor<?x2048xf32>) activation none -> tensor<?x2048xf32>
    %k = tfm.packed_linear ins(%x, %w4 : tensor<?x512xf32>, tensor<64x64x128xi8>)
           dequant(%scales : tensor<16x2048xf32>) offsets(%offsets : tensor<16x2048xf32>)
           outs(%init : tensor<?x2048xf32>) activation none -> tensor<?x2048xf32>
    ```
  }];
  let arguments = (ins Tfm_RankedTensorOrMemRef:$input,
                       Tfm_RankedTensorOrMemRef:$packed_weight,
                       Optional<Tfm_RankedTensorOrMemRef>:$weight_scales,
                       Optional<Tfm_RankedTensorOrMemRef>:$weight_sums,
                       Optional<Tfm_RankedTensorOrMemRef>:$weight_offsets,
                       Optional<Tfm_RankedTensorOrMemRef>:$weight_super_scales,
                       Optional<Tfm_RankedTensorOrMemRef>:$bias,
                       Optional<Tfm_RankedTensorOrMemRef>:$residual,
                       Tfm_RankedTensorOrMemRef:$init,
                       DefaultValuedAttr<Tfm_ActivationAttr,
                           "::mlir::tfm::Activation::none">:$activation);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    `ins` `(` $input `,` $packed_weight `:` type($input) `,`
    type($packed_weight) `)`
    (`dequant` `(` $weight_scales^ (`,` $weight_sums^)? `:`
     type($weight_scales) (`,` type($weight_sums)^)? `)`)?
    (`offsets` `(` $weight_offsets^ `:` type($weight_offsets) `)`)?
    (`super_scales` `(` $weight_super_scales^ `:`
     type($weight_super_scales) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
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
    /// Consecutive k packed into one 32-bit lane: 1 (f32), 2 (bf16), 4 (i8).
    int64_t getPackGroup() {
      return 32 / cast<ShapedType>(getPackedWeight().getType())
                      .getElementTypeBitWidth();
    }
    /// Columns per packed panel (the micro-kernel's width).
    int64_t getPanelWidth() {
      return cast<ShapedType>(getPackedWeight().getType()).getShape()[2] /
             getPackGroup();
    }
    /// Consecutive k sharing one weight scale: 0 for one scale per column
    /// (over the whole K), else K over the rows of the 2-D weight_scales
    /// (32, or 16 for Q6_K); 0 where K is not static.
    int64_t getWeightBlock() {
      Value scales = getWeightScales();
      if (!scales || cast<ShapedType>(scales.getType()).getRank() != 2)
        return 0;
      int64_t k = cast<ShapedType>(getInput().getType()).getShape().back();
      int64_t rows = cast<ShapedType>(scales.getType()).getShape()[0];
      if (ShapedType::isDynamic(k) || ShapedType::isDynamic(rows) ||
          rows <= 0 || k % rows != 0)
        return 0;
      return k / rows;
    }
    /// Whether the scales are per block (2-D), whatever their block.
    bool hasBlockScales() {
      Value scales = getWeightScales();
      return scales && cast<ShapedType>(scales.getType()).getRank() == 2;
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

#endif // TFM_KERNEL_OPS_TD
