// RUN: tfm-opt %s -split-input-file -tfm-decompose-layers -tfm-fuse-attention | FileCheck %s

// The layer ops reach the same tfm.attention as hand-written chains:
// tfm-decompose-layers spells them as the chain, tfm-fuse-attention fuses it.

// CHECK-LABEL: func.func @sdpa
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?x24xf32>, %[[K:.*]]: tensor<?x?x24xf32>, %[[V:.*]]: tensor<?x?x28xf32>)
// CHECK-DAG:  %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:  %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:  %[[B:.*]] = tensor.dim %[[Q]], %[[C0]]
// CHECK-DAG:  %[[SQ:.*]] = tensor.dim %[[Q]], %[[C1]]
// CHECK:      %[[INIT:.*]] = tensor.empty(%[[B]], %[[SQ]]) : tensor<?x?x28xf32>
// CHECK:      %[[O:.*]] = tfm.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<?x?x24xf32>, tensor<?x?x24xf32>, tensor<?x?x28xf32>)
// CHECK-SAME:   outs(%[[INIT]] : tensor<?x?x28xf32>) scale 0.2041241452319315{{[0-9]*}} -> tensor<?x?x28xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT:  tfm.softmax
func.func @sdpa(%q: tensor<?x?x24xf32>, %k: tensor<?x?x24xf32>, %v: tensor<?x?x28xf32>) -> tensor<?x?x28xf32> {
  %0 = tfm.sdpa %q, %k, %v : tensor<?x?x24xf32>, tensor<?x?x24xf32>, tensor<?x?x28xf32> -> tensor<?x?x28xf32>
  return %0 : tensor<?x?x28xf32>
}

// -----

// Multi-head attention: the per-head chain on [batch, heads, seq, E/H]
// becomes one tfm.attention with scale 1/sqrt(E/H) = 1/2 that reads the heads
// straight from the [batch, seq, heads, E/H] projections and writes that
// layout: the head split and merge transposes fold into its indexing maps.

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
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) key_padding_mask(%pad) heads 2
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<?x?xi1>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// Asking for the attention weights keeps the chain: the softmax has another
// user.

// CHECK-LABEL: func.func @mha_weights_unfused
// CHECK-NOT:  tfm.attention
// CHECK:      tfm.softmax
func.func @mha_weights_unfused(%x: tensor<?x?x8xf32>, %w: tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x?xf32>) {
  %0, %1 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) heads 2
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x?xf32>)
  return %0, %1 : tensor<?x?x8xf32>, tensor<?x?x?xf32>
}
