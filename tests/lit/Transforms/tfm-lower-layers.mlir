// RUN: tfm-opt %s -split-input-file -tfm-lower-layers | FileCheck %s
// RUN: tfm-opt %s -split-input-file -tfm-lower-layers=remarks=true -verify-diagnostics -o /dev/null

// The layer ops become tfm.attention directly, the op hand-written chains are
// fused into; every layer lowered to it carries a remark (second RUN line).

// CHECK-LABEL: func.func @sdpa
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?x24xf32>, %[[K:.*]]: tensor<?x?x24xf32>, %[[V:.*]]: tensor<?x?x28xf32>)
// CHECK-DAG:  %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:  %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:  %[[B:.*]] = tensor.dim %[[Q]], %[[C0]]
// CHECK-DAG:  %[[SQ:.*]] = tensor.dim %[[Q]], %[[C1]]
// CHECK-NOT:  tfm.softmax
// CHECK:      %[[INIT:.*]] = tensor.empty(%[[B]], %[[SQ]]) : tensor<?x?x28xf32>
// CHECK-NOT:  tfm.softmax
// CHECK:      %[[O:.*]] = tfm.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<?x?x24xf32>, tensor<?x?x24xf32>, tensor<?x?x28xf32>)
// CHECK-SAME:   outs(%[[INIT]] : tensor<?x?x28xf32>) scale 0.2041241452319315{{[0-9]*}} -> tensor<?x?x28xf32>
// CHECK-NEXT: return %[[O]]
func.func @sdpa(%q: tensor<?x?x24xf32>, %k: tensor<?x?x24xf32>, %v: tensor<?x?x28xf32>) -> tensor<?x?x28xf32> {
  // expected-remark @+1 {{lowered to tfm.attention}}
  %0 = tfm.sdpa %q, %k, %v : tensor<?x?x24xf32>, tensor<?x?x24xf32>, tensor<?x?x28xf32> -> tensor<?x?x28xf32>
  return %0 : tensor<?x?x28xf32>
}

// -----

// Multi-head attention: the per-head chain on [batch, heads, seq, E/H]
// becomes one tfm.attention with scale 1/sqrt(E/H) = 1/2 that reads the heads
// straight from the [batch, seq, heads, E/H] projections (expand_shape
// views) and writes that layout: the head split and merge are in its
// indexing maps, with no transposes.

// CHECK-DAG:  #[[QMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d1, d3)>
// CHECK-DAG:  #[[KMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d4, d1, d3)>
// CHECK-DAG:  #[[VMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d4, d1, d5)>
// CHECK-DAG:  #[[OMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d1, d5)>
// CHECK-LABEL: func.func @multi_head_attention
// CHECK-DAG:  %[[Q:.*]] = tfm.linear %{{.*}}, %[[WQ:[^ ]*]], %{{.*}} :
// CHECK-DAG:  %[[K:.*]] = tfm.linear %{{.*}}, %[[WK:[^ ]*]], %{{.*}} :
// CHECK-DAG:  %[[V:.*]] = tfm.linear %{{.*}}, %[[WV:[^ ]*]], %{{.*}} :
// CHECK-DAG:  %[[QE:.*]] = tensor.expand_shape %[[Q]]
// CHECK-DAG:  %[[KE:.*]] = tensor.expand_shape %[[K]]
// CHECK-DAG:  %[[VE:.*]] = tensor.expand_shape %[[V]]
// CHECK:      %[[O:.*]] = tfm.attention ins(%[[QE]], %[[KE]], %[[VE]] : tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>)
// CHECK-SAME:   outs(%{{.*}} : tensor<?x?x2x4xf32>) scale 5.000000e-01 indexing_maps [#[[QMAP]], #[[KMAP]], #[[VMAP]], #[[OMAP]]] -> tensor<?x?x2x4xf32>
// CHECK-NOT:  tfm.transpose %[[O]]
// CHECK:      tensor.collapse_shape %[[O]]
// CHECK-NOT:  tfm.softmax
// CHECK-NOT:  tfm.multi_head_attention
func.func @multi_head_attention(%x: tensor<?x?x8xf32>,
    %wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>, %wv: tensor<8x8xf32>, %wo: tensor<8x8xf32>,
    %bq: tensor<8xf32>, %bk: tensor<8xf32>, %bv: tensor<8xf32>, %bo: tensor<8xf32>) -> tensor<?x?x8xf32> {
  // expected-remark @+1 {{lowered to tfm.attention}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%wq, %wk, %wv, %wo)
         biases (%bq, %bk, %bv, %bo) heads 2
         : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>,
            tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
            tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// With masks the layers still fuse: sdpa's inverted boolean mask and its
// causal flag, nn.MultiheadAttention's key_padding_mask as [B, H, 1, Sk].

// CHECK-LABEL: func.func @sdpa_masked_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x?x8xf32>, %[[KEEP:.*]]: tensor<?x?xi1>)
// CHECK:      %[[MASK:.*]] = linalg.generic {{.*}} ins(%[[KEEP]] : tensor<?x?xi1>)
// CHECK:      tfm.attention ins(%[[Q]], %[[Q]], %[[Q]] : {{.*}}) mask(%[[MASK]] : tensor<?x?xi1>)
// CHECK-SAME:   {causal}
// CHECK-NOT:  tfm.softmax
func.func @sdpa_masked_causal(%q: tensor<2x4x?x8xf32>, %keep: tensor<?x?xi1>) -> tensor<2x4x?x8xf32> {
  // expected-remark @+1 {{lowered to tfm.attention}}
  %0 = tfm.sdpa %q, %q, %q mask(%keep : tensor<?x?xi1>) {causal} : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
  return %0 : tensor<2x4x?x8xf32>
}

// -----

// CHECK-LABEL: func.func @mha_key_padding_mask
// CHECK:      %[[EMPTY:.*]] = tensor.empty({{.*}}) : tensor<?x2x1x?xi1>
// CHECK:      %[[MASK:.*]] = linalg.generic {{.*}} outs(%[[EMPTY]] : tensor<?x2x1x?xi1>)
// CHECK:      tfm.attention ins({{.*}}) mask(%[[MASK]] : tensor<?x2x1x?xi1>)
// CHECK-NOT:  tfm.softmax
func.func @mha_key_padding_mask(%x: tensor<?x?x8xf32>, %w: tensor<8x8xf32>, %pad: tensor<?x?xi1>) -> tensor<?x?x8xf32> {
  // expected-remark @+1 {{lowered to tfm.attention}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) key_padding_mask(%pad) heads 2
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<?x?xi1>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// Asking for the attention weights lowers through the decomposition of
// tfm.attention: the weights are its softmax (here per head).

// CHECK-LABEL: func.func @mha_weights_unfused
// CHECK-NOT:  tfm.attention
// CHECK:      %[[P:.*]] = tfm.softmax
// CHECK:      return %{{.*}}, %[[P]]
func.func @mha_weights_unfused(%x: tensor<?x?x8xf32>, %w: tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x2x?x?xf32>) {
  %0, %1 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) heads 2 {average_attn_weights = false}
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x2x?x?xf32>)
  return %0, %1 : tensor<?x?x8xf32>, tensor<?x2x?x?xf32>
}

// -----

// A float mask that broadcasts over no batch dim or over all of them is the
// op's mask as it is.

// CHECK-LABEL: func.func @sdpa_float_mask
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x?x8xf32>, %[[M:.*]]: tensor<1x?xf32>)
// CHECK-NOT:  linalg.generic
// CHECK:      tfm.attention ins(%[[Q]], %[[Q]], %[[Q]] : {{.*}}) mask(%[[M]] : tensor<1x?xf32>) {{.*}} scale 0.35355339059327373 ->
func.func @sdpa_float_mask(%q: tensor<2x4x?x8xf32>, %m: tensor<1x?xf32>) -> tensor<2x4x?x8xf32> {
  // expected-remark @+1 {{lowered to tfm.attention}}
  %0 = tfm.sdpa %q, %q, %q mask(%m : tensor<1x?xf32>) : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
  return %0 : tensor<2x4x?x8xf32>
}

// -----

// A mask [B, 1, Sq, Sk] broadcasts over the heads only: tfm.attention's
// lowerings read batch dims all present or all absent, so it is expanded to
// [B, H, Sq, Sk].

// CHECK-LABEL: func.func @sdpa_mask_partial_batch
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4x?x8xf32>, %[[K:.*]]: tensor<?x4x?x8xf32>, %[[M:.*]]: tensor<?x1x?x?xf32>)
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%{{.*}}, %{{.*}}, %{{.*}}) : tensor<?x4x?x?xf32>
// CHECK:      %[[FULL:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<?x1x?x?xf32>) outs(%[[EMPTY]] : tensor<?x4x?x?xf32>)
// CHECK:      tfm.attention ins(%[[Q]], %[[K]], %[[K]] : {{.*}}) mask(%[[FULL]] : tensor<?x4x?x?xf32>)
func.func @sdpa_mask_partial_batch(%q: tensor<?x4x?x8xf32>, %k: tensor<?x4x?x8xf32>, %m: tensor<?x1x?x?xf32>) -> tensor<?x4x?x8xf32> {
  // expected-remark @+1 {{lowered to tfm.attention}}
  %0 = tfm.sdpa %q, %k, %k mask(%m : tensor<?x1x?x?xf32>) : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}

// -----

// A static batch of 1 against a dynamic one may broadcast at run time, which
// the kernel does not do: the layer goes through the decomposition (no
// remark; the fusion pass says why when it sees the chain).

// CHECK-LABEL: func.func @sdpa_broadcast_batch
// CHECK-NOT:  tfm.attention
// CHECK:      tfm.matmul %{{.*}} : tensor<1x?x8xf32>, tensor<?x8x?xf32> -> tensor<1x?x?xf32>
func.func @sdpa_broadcast_batch(%q: tensor<1x?x8xf32>, %k: tensor<?x?x8xf32>) -> tensor<1x?x8xf32> {
  %0 = tfm.sdpa %q, %k, %k : tensor<1x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<1x?x8xf32>
  return %0 : tensor<1x?x8xf32>
}

// -----

// A [B*H, Sq, Sk] attn_mask is reshaped to [B, H, Sq, Sk] and used as it is,
// read by the scores' (b, h, m, k2).

// CHECK-DAG:  #[[MMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>
// CHECK-LABEL: func.func @mha_attn_mask_3d
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[M:.*]]: tensor<4x5x5xi1>)
// CHECK-NOT:  linalg.generic
// CHECK:      %[[MASK:.*]] = tensor.expand_shape %[[M]] {{\[}}[0, 1], [2], [3]] output_shape [2, 2, 5, 5] : tensor<4x5x5xi1> into tensor<2x2x5x5xi1>
// CHECK:      tfm.attention ins({{.*}}) mask(%[[MASK]] : tensor<2x2x5x5xi1>) {{.*}} indexing_maps [#{{.*}}, #{{.*}}, #{{.*}}, #[[MMAP]], #{{.*}}]
func.func @mha_attn_mask_3d(%x: tensor<2x5x8xf32>, %w: tensor<8x8xf32>, %am: tensor<4x5x5xi1>) -> tensor<2x5x8xf32> {
  // expected-remark @+1 {{lowered to tfm.attention}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) attn_mask(%am) heads 2
      : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x5x5xi1>) -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}

// -----

// A float attn_mask and a boolean key_padding_mask merge into one float mask
// [B, H, Sq, Sk]: the float added to -inf where the key is padding, else 0,
// as PyTorch merges them.

// CHECK-DAG:  #[[AM:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG:  #[[PAD:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-LABEL: func.func @mha_merged_masks
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[P:.*]]: tensor<2x5xi1>, %[[M:.*]]: tensor<5x5xf32>)
// CHECK-DAG:  %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:  %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:      %[[MASK:.*]] = linalg.generic {indexing_maps = [#[[AM]], #[[PAD]], #{{.*}}], {{.*}} ins(%[[M]], %[[P]] : tensor<5x5xf32>, tensor<2x5xi1>) outs(%{{.*}} : tensor<2x2x5x5xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: i1, %{{.*}}: f32):
// CHECK-NEXT:   %[[BF:.*]] = arith.select %[[B]], %[[NEGINF]], %[[ZERO]] : f32
// CHECK-NEXT:   %[[SUM:.*]] = arith.addf %[[A]], %[[BF]] : f32
// CHECK-NEXT:   linalg.yield %[[SUM]] : f32
// CHECK:      tfm.attention ins({{.*}}) mask(%[[MASK]] : tensor<2x2x5x5xf32>)
func.func @mha_merged_masks(%x: tensor<2x5x8xf32>, %w: tensor<8x8xf32>, %pad: tensor<2x5xi1>, %am: tensor<5x5xf32>) -> tensor<2x5x8xf32> {
  // expected-remark @+1 {{lowered to tfm.attention}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) key_padding_mask(%pad) attn_mask(%am) heads 2
      : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x5xi1>, tensor<5x5xf32>) -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}

// -----

// Unbatched: heads split [S, E] -> [S, H, E/H], iteration space
// (h, m, k1, k2, n); two boolean masks merge by OR into [Sq, Sk], read as
// (m, k2).

// CHECK-DAG:  #[[QMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>
// CHECK-DAG:  #[[MMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3)>
// CHECK-LABEL: func.func @mha_unbatched_bool_masks
// CHECK:      %[[MASK:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<5x7xi1>, tensor<7xi1>) outs(%{{.*}} : tensor<5x7xi1>)
// CHECK:        arith.ori
// CHECK:      tfm.attention ins({{.*}} : tensor<5x2x4xf32>, tensor<7x2x4xf32>, tensor<7x2x4xf32>) mask(%[[MASK]] : tensor<5x7xi1>)
// CHECK-SAME:   indexing_maps [#[[QMAP]], #{{.*}}, #{{.*}}, #[[MMAP]], #{{.*}}] -> tensor<5x2x4xf32>
func.func @mha_unbatched_bool_masks(%q: tensor<5x8xf32>, %kv: tensor<7x8xf32>, %w: tensor<8x8xf32>, %pad: tensor<7xi1>, %am: tensor<5x7xi1>) -> tensor<5x8xf32> {
  // expected-remark @+1 {{lowered to tfm.attention}}
  %0 = tfm.multi_head_attention (%q, %kv, %kv) weights (%w, %w, %w, %w) key_padding_mask(%pad) attn_mask(%am) heads 2
      : (tensor<5x8xf32>, tensor<7x8xf32>, tensor<7x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<7xi1>, tensor<5x7xi1>) -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

// The averaged weights are the softmax summed over the heads and divided by H.

// CHECK-DAG:  #[[MEAN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @mha_averaged_weights
// CHECK:      %[[PROBS:.*]] = tfm.softmax
// CHECK:      %[[OUT:.*]] = tfm.linear
// CHECK:      %[[SUM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[MEAN]]], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%[[PROBS]] : tensor<?x2x?x?xf32>)
// CHECK:      %[[AVG:.*]] = tfm.scale %[[SUM]], 2.000000e+00 {divide} : tensor<?x?x?xf32>
// CHECK:      return %[[OUT]], %[[AVG]]
func.func @mha_averaged_weights(%x: tensor<?x?x8xf32>, %w: tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x?xf32>) {
  %0, %1 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) heads 2
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x?xf32>)
  return %0, %1 : tensor<?x?x8xf32>, tensor<?x?x?xf32>
}

// -----

// Primitives are left alone.

// CHECK-LABEL: func.func @primitives_untouched
// CHECK:      tfm.linear
// CHECK-NEXT: tfm.softmax
// CHECK-NEXT: return
func.func @primitives_untouched(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = tfm.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = tfm.softmax %0, -1 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// Grouped-query attention: 3 query heads per K/V head. The key and value
// keep their unit group dim and the kernel reads the shared head in place:
// no broadcast copies them per query head.

// CHECK-LABEL: func.func @grouped_query
// CHECK-SAME: (%[[Q:.*]]: tensor<?x2x3x?x16xf32>, %[[K:.*]]: tensor<?x2x1x?x16xf32>, %[[V:.*]]: tensor<?x2x1x?x16xf32>)
// CHECK-NOT:  linalg.broadcast
// CHECK-NOT:  tfm.broadcast
// CHECK:      tfm.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<?x2x3x?x16xf32>, tensor<?x2x1x?x16xf32>, tensor<?x2x1x?x16xf32>)
// CHECK-SAME: {causal}
// CHECK-NEXT: return
func.func @grouped_query(%q: tensor<?x2x3x?x16xf32>, %k: tensor<?x2x1x?x16xf32>, %v: tensor<?x2x1x?x16xf32>) -> tensor<?x2x3x?x16xf32> {
  // expected-remark @+1 {{lowered to tfm.attention}}
  %0 = tfm.sdpa %q, %k, %v {causal} : tensor<?x2x3x?x16xf32>, tensor<?x2x1x?x16xf32>, tensor<?x2x1x?x16xf32> -> tensor<?x2x3x?x16xf32>
  return %0 : tensor<?x2x3x?x16xf32>
}
