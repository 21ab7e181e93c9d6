// RUN: tfm-opt %s -split-input-file -tfm-lower-layers -tfm-decompose-attention | FileCheck %s

// The unfused path: tfm.attention as the chain of primitives users write by
// hand, written directly and as the attention layers reach it.

// The op's scale, its boolean mask (true = masked out) as masked_fill(-inf)
// after the scale, `causal` as a causal_mask after that.

// CHECK-LABEL: func.func @attention_mask_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x8xf32>, %[[K:.*]]: tensor<2x?x8xf32>, %[[V:.*]]: tensor<2x?x4xf32>, %[[M:.*]]: tensor<?x?xi1>, %[[INIT:.*]]: tensor<2x?x4xf32>)
// CHECK:      %[[KT:.*]] = tfm.transpose %[[K]], -2, -1 : tensor<2x?x8xf32> -> tensor<2x8x?xf32>
// CHECK-NEXT: %[[S:.*]] = tfm.matmul %[[Q]], %[[KT]] : tensor<2x?x8xf32>, tensor<2x8x?xf32> -> tensor<2x?x?xf32>
// CHECK-NEXT: %[[SS:.*]] = tfm.scale %[[S]], 2.500000e-01 : tensor<2x?x?xf32>
// CHECK-NEXT: %[[F:.*]] = tfm.masked_fill %[[SS]], %[[M]], 0xFFF0000000000000 : tensor<2x?x?xf32>, tensor<?x?xi1> -> tensor<2x?x?xf32>
// CHECK-NEXT: %[[C:.*]] = tfm.causal_mask %[[F]] : tensor<2x?x?xf32>
// CHECK-NEXT: %[[P:.*]] = tfm.softmax %[[C]], -1 : tensor<2x?x?xf32>
// CHECK-NEXT: %[[O:.*]] = tfm.matmul %[[P]], %[[V]] : tensor<2x?x?xf32>, tensor<2x?x4xf32> -> tensor<2x?x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @attention_mask_causal(%q: tensor<2x?x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<2x?x4xf32>, %m: tensor<?x?xi1>, %init: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
  %0 = tfm.attention ins(%q, %k, %v : tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x4xf32>) mask(%m : tensor<?x?xi1>)
         outs(%init : tensor<2x?x4xf32>) scale 0.25 {causal} -> tensor<2x?x4xf32>
  return %0 : tensor<2x?x4xf32>
}

// -----

// Heads read from [B, S, H, D] through the maps become permutes to
// [B, H, S, D]; a float padding mask [B, Sk] read as (b, k2) gets the 1s of
// the head and query dims (tfm.add broadcasts it), and the result is
// permuted back to the init's [B, S, H, D].

// CHECK-LABEL: func.func @attention_head_maps
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?x2x4xf32>, %[[M:.*]]: tensor<?x?xf32>, %[[INIT:.*]]: tensor<?x?x2x4xf32>)
// CHECK:      %[[QH:.*]] = tfm.permute %[[Q]] [0, 2, 1, 3] : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
// CHECK:      %[[B:.*]] = tensor.dim %[[M]], %{{.*}} : tensor<?x?xf32>
// CHECK:      %[[SK:.*]] = tensor.dim %[[M]], %{{.*}} : tensor<?x?xf32>
// CHECK:      %[[MR:.*]] = tfm.reshape %[[M]]{{ ?}}[%[[B]], %[[SK]]] : tensor<?x?xf32> -> tensor<?x1x1x?xf32>
// CHECK:      %[[S:.*]] = tfm.matmul %[[QH]], %{{.*}} -> tensor<?x2x?x?xf32>
// CHECK:      %[[SS:.*]] = tfm.scale %[[S]], 5.000000e-01 : tensor<?x2x?x?xf32>
// CHECK:      %[[A:.*]] = tfm.add %[[SS]], %[[MR]] : tensor<?x2x?x?xf32>, tensor<?x1x1x?xf32> -> tensor<?x2x?x?xf32>
// CHECK:      %[[P:.*]] = tfm.softmax %[[A]], -1
// CHECK:      %[[O:.*]] = tfm.matmul %[[P]], %{{.*}} -> tensor<?x2x?x4xf32>
// CHECK:      %[[OT:.*]] = tfm.permute %[[O]] [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
// CHECK:      return %[[OT]]
func.func @attention_head_maps(%q: tensor<?x?x2x4xf32>, %m: tensor<?x?xf32>, %init: tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32> {
  %0 = tfm.attention ins(%q, %q, %q : tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>) mask(%m : tensor<?x?xf32>)
         outs(%init : tensor<?x?x2x4xf32>) scale 0.5
         indexing_maps [affine_map<(b, h, m, k1, k2, n) -> (b, m, h, k1)>,
                        affine_map<(b, h, m, k1, k2, n) -> (b, k2, h, k1)>,
                        affine_map<(b, h, m, k1, k2, n) -> (b, k2, h, n)>,
                        affine_map<(b, h, m, k1, k2, n) -> (b, k2)>,
                        affine_map<(b, h, m, k1, k2, n) -> (b, m, h, n)>]
         -> tensor<?x?x2x4xf32>
  return %0 : tensor<?x?x2x4xf32>
}

// -----

// A mask read transposed ([Sk, Sq] through (k2, m)) is permuted to [Sq, Sk].

// CHECK-LABEL: func.func @attention_mask_transposed
// CHECK-SAME: %[[M:[^:]*]]: tensor<7x5xi1>
// CHECK:      %[[MT:.*]] = tfm.permute %[[M]] [1, 0] : tensor<7x5xi1> -> tensor<5x7xi1>
// CHECK:      tfm.masked_fill %{{.*}}, %[[MT]], 0xFFF0000000000000 : tensor<5x7xf32>, tensor<5x7xi1> -> tensor<5x7xf32>
func.func @attention_mask_transposed(%q: tensor<5x8xf32>, %k: tensor<7x8xf32>, %m: tensor<7x5xi1>, %init: tensor<5x8xf32>) -> tensor<5x8xf32> {
  %0 = tfm.attention ins(%q, %k, %k : tensor<5x8xf32>, tensor<7x8xf32>, tensor<7x8xf32>) mask(%m : tensor<7x5xi1>)
         outs(%init : tensor<5x8xf32>) scale 1.0
         indexing_maps [affine_map<(m, k1, k2, n) -> (m, k1)>,
                        affine_map<(m, k1, k2, n) -> (k2, k1)>,
                        affine_map<(m, k1, k2, n) -> (k2, n)>,
                        affine_map<(m, k1, k2, n) -> (k2, m)>,
                        affine_map<(m, k1, k2, n) -> (m, n)>]
         -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

// Attention over a cache has no primitive spelling: it stays fused.

// CHECK-LABEL: func.func @attention_over_cache
// CHECK:      tfm.attention
// CHECK-NOT:  tfm.softmax
func.func @attention_over_cache(%q: tensor<?x1x8xf32>, %k: tensor<?x16x8xf32>, %len: tensor<?xi64>, %init: tensor<?x1x8xf32>) -> tensor<?x1x8xf32> {
  %0 = tfm.attention ins(%q, %k, %k : tensor<?x1x8xf32>, tensor<?x16x8xf32>, tensor<?x16x8xf32>) kv_length(%len : tensor<?xi64>)
         outs(%init : tensor<?x1x8xf32>) scale 1.0 -> tensor<?x1x8xf32>
  return %0 : tensor<?x1x8xf32>
}

// -----

// sdpa with the default scale 1/sqrt(Dk) = 1/sqrt(8).

// CHECK-LABEL: func.func @sdpa_default_scale
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8xf32>, %[[K:.*]]: tensor<?x8xf32>, %[[V:.*]]: tensor<?x4xf32>)
// CHECK-NOT:  tfm.sdpa
// CHECK:      %[[KT:.*]] = tfm.transpose %[[K]], -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
// CHECK-NEXT: %[[SCORES:.*]] = tfm.matmul %[[Q]], %[[KT]] : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT: %[[SCALED:.*]] = tfm.scale %[[SCORES]], 0.35355339059327373 : tensor<?x?xf32>
// CHECK-NEXT: %[[PROBS:.*]] = tfm.softmax %[[SCALED]], -1 : tensor<?x?xf32>
// CHECK-NEXT: %[[OUT:.*]] = tfm.matmul %[[PROBS]], %[[V]] : tensor<?x?xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: return %[[OUT]]
func.func @sdpa_default_scale(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = tfm.sdpa %q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// An explicit scale wins over 1/sqrt(Dk); leading (batch, head) dimensions
// carry through, and the key sequence length may differ from the query's.

// CHECK-LABEL: func.func @sdpa_explicit_scale_batched
// CHECK-SAME: (%[[Q:.*]]: tensor<2x3x?x16xf32>, %[[K:.*]]: tensor<2x3x7x16xf32>, %[[V:.*]]: tensor<2x3x7x5xf32>)
// CHECK:      %[[KT:.*]] = tfm.transpose %[[K]], -2, -1 : tensor<2x3x7x16xf32> -> tensor<2x3x16x7xf32>
// CHECK-NEXT: %[[SCORES:.*]] = tfm.matmul %[[Q]], %[[KT]] : tensor<2x3x?x16xf32>, tensor<2x3x16x7xf32> -> tensor<2x3x?x7xf32>
// CHECK-NEXT: %[[SCALED:.*]] = tfm.scale %[[SCORES]], 1.250000e-01 : tensor<2x3x?x7xf32>
// CHECK-NEXT: %[[PROBS:.*]] = tfm.softmax %[[SCALED]], -1 : tensor<2x3x?x7xf32>
// CHECK-NEXT: %[[OUT:.*]] = tfm.matmul %[[PROBS]], %[[V]] : tensor<2x3x?x7xf32>, tensor<2x3x7x5xf32> -> tensor<2x3x?x5xf32>
// CHECK-NEXT: return %[[OUT]]
func.func @sdpa_explicit_scale_batched(%q: tensor<2x3x?x16xf32>, %k: tensor<2x3x7x16xf32>, %v: tensor<2x3x7x5xf32>) -> tensor<2x3x?x5xf32> {
  %0 = tfm.sdpa %q, %k, %v {scale = 0.125 : f64} : tensor<2x3x?x16xf32>, tensor<2x3x7x16xf32>, tensor<2x3x7x5xf32> -> tensor<2x3x?x5xf32>
  return %0 : tensor<2x3x?x5xf32>
}

// -----

// With an explicit scale the head dimension may be dynamic.

// CHECK-LABEL: func.func @sdpa_dynamic_head_explicit_scale
// CHECK:      tfm.matmul %{{.*}} : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT: tfm.scale %{{.*}}, 2.500000e-01 : tensor<?x?xf32>
func.func @sdpa_dynamic_head_explicit_scale(%q: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = tfm.sdpa %q, %q, %q {scale = 0.25 : f64} : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Batched [B, S, E] self-attention with biases: projections with bias, a
// head split [B, S, E] -> [B, H, S, E/H], the attention chain with scale
// 1/sqrt(E/H) = 1/sqrt(4), a head merge and the output projection.

// CHECK-LABEL: func.func @mha_batched_with_bias
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[WQ:.*]]: tensor<8x8xf32>, %[[WK:.*]]: tensor<8x8xf32>, %[[WV:.*]]: tensor<8x8xf32>, %[[WO:.*]]: tensor<8x8xf32>, %[[BQ:.*]]: tensor<8xf32>, %[[BK:.*]]: tensor<8xf32>, %[[BV:.*]]: tensor<8xf32>, %[[BO:.*]]: tensor<8xf32>)
// CHECK-DAG:  %[[Q:.*]] = tfm.linear %[[X]], %[[WQ]], %[[BQ]] : tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
// CHECK-DAG:  %[[K:.*]] = tfm.linear %[[X]], %[[WK]], %[[BK]] : tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
// CHECK-DAG:  %[[V:.*]] = tfm.linear %[[X]], %[[WV]], %[[BV]] : tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[QE:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1], [2, 3]] {{.*}} : tensor<?x?x8xf32> into tensor<?x?x2x4xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[KE:.*]] = tensor.expand_shape %[[K]] {{\[}}[0], [1], [2, 3]] {{.*}} into tensor<?x?x2x4xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[VE:.*]] = tensor.expand_shape %[[V]] {{\[}}[0], [1], [2, 3]] {{.*}} into tensor<?x?x2x4xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[QH:.*]] = tfm.permute %[[QE]] [0, 2, 1, 3] : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[KH:.*]] = tfm.permute %[[KE]] [0, 2, 1, 3] : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[VH:.*]] = tfm.permute %[[VE]] [0, 2, 1, 3] : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[KT:.*]] = tfm.transpose %[[KH]], -2, -1 : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[SCORES:.*]] = tfm.matmul %[[QH]], %[[KT]] : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[SCALED:.*]] = tfm.scale %[[SCORES]], 5.000000e-01 : tensor<?x2x?x?xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[PROBS:.*]] = tfm.softmax %[[SCALED]], -1 : tensor<?x2x?x?xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[HEADS:.*]] = tfm.matmul %[[PROBS]], %[[VH]] : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[MERGEDT:.*]] = tfm.permute %[[HEADS]] [0, 2, 1, 3] : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[MERGED:.*]] = tensor.collapse_shape %[[MERGEDT]] {{\[}}[0], [1], [2, 3]] : tensor<?x?x2x4xf32> into tensor<?x?x8xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[OUT:.*]] = tfm.linear %[[MERGED]], %[[WO]], %[[BO]] : tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      return %[[OUT]]
func.func @mha_batched_with_bias(%x: tensor<?x?x8xf32>,
    %wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>, %wv: tensor<8x8xf32>, %wo: tensor<8x8xf32>,
    %bq: tensor<8xf32>, %bk: tensor<8xf32>, %bv: tensor<8xf32>, %bo: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%wq, %wk, %wv, %wo)
      biases (%bq, %bk, %bv, %bo) heads 2
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>,
         tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// Unbatched [S, E] without biases: the projections have no bias operand and
// the head split is [S, E] -> [H, S, E/H]; 4 heads of 3 give scale 1/sqrt(3).

// CHECK-LABEL: func.func @mha_unbatched_without_bias
// CHECK-SAME: (%[[X:.*]]: tensor<?x12xf32>, %[[W:.*]]: tensor<12x12xf32>, %[[WO:.*]]: tensor<12x12xf32>)
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[P:.*]] = tfm.linear %[[X]], %[[W]] : tensor<?x12xf32>, tensor<12x12xf32> -> tensor<?x12xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[E:.*]] = tensor.expand_shape %[[P]] {{\[}}[0], [1, 2]] {{.*}} : tensor<?x12xf32> into tensor<?x4x3xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[H:.*]] = tfm.permute %[[E]] [1, 0, 2] : tensor<?x4x3xf32> -> tensor<4x?x3xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      tfm.transpose %{{.*}}, -2, -1 : tensor<4x?x3xf32> -> tensor<4x3x?xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[SCORES:.*]] = tfm.matmul %{{.*}} : tensor<4x?x3xf32>, tensor<4x3x?xf32> -> tensor<4x?x?xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      tfm.scale %[[SCORES]], 0.57735026918962584 : tensor<4x?x?xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      tfm.softmax %{{.*}}, -1 : tensor<4x?x?xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[HEADS:.*]] = tfm.matmul %{{.*}} : tensor<4x?x?xf32>, tensor<4x?x3xf32> -> tensor<4x?x3xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[MT:.*]] = tfm.permute %[[HEADS]] [1, 0, 2] : tensor<4x?x3xf32> -> tensor<?x4x3xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[M:.*]] = tensor.collapse_shape %[[MT]] {{\[}}[0], [1, 2]] : tensor<?x4x3xf32> into tensor<?x12xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      %[[OUT:.*]] = tfm.linear %[[M]], %[[WO]] : tensor<?x12xf32>, tensor<12x12xf32> -> tensor<?x12xf32>
// CHECK-NOT:  tfm.multi_head_attention
// CHECK:      return %[[OUT]]
func.func @mha_unbatched_without_bias(%x: tensor<?x12xf32>, %w: tensor<12x12xf32>, %wo: tensor<12x12xf32>) -> tensor<?x12xf32> {
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %wo) heads 4
      : (tensor<?x12xf32>, tensor<?x12xf32>, tensor<?x12xf32>, tensor<12x12xf32>,
         tensor<12x12xf32>, tensor<12x12xf32>, tensor<12x12xf32>) -> tensor<?x12xf32>
  return %0 : tensor<?x12xf32>
}

// -----

// Cross-attention with kdim != embed: the key/value projections map 6
// features to 8, and the scores are [B, H, Sq, Sk] with Sk = 5.

// CHECK-LABEL: func.func @mha_cross_attention
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x8xf32>, %[[KV:.*]]: tensor<2x5x6xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[WKV:.*]]: tensor<8x6xf32>)
// CHECK-DAG:  tfm.linear %[[Q]], %[[W]] : tensor<2x?x8xf32>, tensor<8x8xf32> -> tensor<2x?x8xf32>
// CHECK-DAG:  tfm.linear %[[KV]], %[[WKV]] : tensor<2x5x6xf32>, tensor<8x6xf32> -> tensor<2x5x8xf32>
// CHECK:      tfm.matmul %{{.*}} : tensor<2x4x?x2xf32>, tensor<2x4x2x5xf32> -> tensor<2x4x?x5xf32>
// CHECK:      tfm.scale %{{.*}}, 0.70710678118654746 : tensor<2x4x?x5xf32>
// CHECK:      tfm.matmul %{{.*}} : tensor<2x4x?x5xf32>, tensor<2x4x5x2xf32> -> tensor<2x4x?x2xf32>
// CHECK:      tfm.linear %{{.*}}, %[[W]] : tensor<2x?x8xf32>, tensor<8x8xf32> -> tensor<2x?x8xf32>
func.func @mha_cross_attention(%q: tensor<2x?x8xf32>, %kv: tensor<2x5x6xf32>, %w: tensor<8x8xf32>, %wkv: tensor<8x6xf32>) -> tensor<2x?x8xf32> {
  %0 = tfm.multi_head_attention (%q, %kv, %kv) weights (%w, %wkv, %wkv, %w) heads 4
      : (tensor<2x?x8xf32>, tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<8x8xf32>,
         tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x8xf32>) -> tensor<2x?x8xf32>
  return %0 : tensor<2x?x8xf32>
}

// -----

// SDPA's boolean mask keeps where true: one generic inverts it before the
// chain's masked_fill(-inf), and `causal` becomes tfm.causal_mask after it.

// CHECK-LABEL: func.func @sdpa_bool_mask_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x?x8xf32>, %[[K:.*]]: tensor<2x4x?x8xf32>, %[[KEEP:.*]]: tensor<?x?xi1>)
// CHECK-DAG:  %[[TRUE:.*]] = arith.constant true
// CHECK-DAG:  %[[SQ:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<2x4x?x8xf32>
// CHECK-DAG:  %[[SK:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<2x4x?x8xf32>
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%[[SQ]], %[[SK]]) : tensor<?x?xi1>
// CHECK:      %[[MASKED:.*]] = linalg.generic {{.*}} ins(%[[KEEP]] : tensor<?x?xi1>) outs(%[[EMPTY]] : tensor<?x?xi1>)
// CHECK:        arith.xori %{{.*}}, %[[TRUE]] : i1
// CHECK:      %[[SCORES:.*]] = tfm.matmul %[[Q]], %{{.*}} -> tensor<2x4x?x?xf32>
// CHECK:      %[[SCALED:.*]] = tfm.scale %[[SCORES]], 0.35355339059327373 : tensor<2x4x?x?xf32>
// CHECK:      %[[FILLED:.*]] = tfm.masked_fill %[[SCALED]], %[[MASKED]], 0xFFF0000000000000 : tensor<2x4x?x?xf32>, tensor<?x?xi1> -> tensor<2x4x?x?xf32>
// CHECK:      %[[CAUSAL:.*]] = tfm.causal_mask %[[FILLED]] : tensor<2x4x?x?xf32>
// CHECK:      tfm.softmax %[[CAUSAL]], -1
func.func @sdpa_bool_mask_causal(%q: tensor<2x4x?x8xf32>, %k: tensor<2x4x?x8xf32>, %keep: tensor<?x?xi1>) -> tensor<2x4x?x8xf32> {
  %0 = tfm.sdpa %q, %k, %k mask(%keep : tensor<?x?xi1>) {causal} : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
  return %0 : tensor<2x4x?x8xf32>
}

// -----

// A float mask that broadcasts over no batch dim or over all of them is added
// as it is.

// CHECK-LABEL: func.func @sdpa_float_mask
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x?x8xf32>, %[[M:.*]]: tensor<1x?xf32>)
// CHECK-NOT:  linalg.generic
// CHECK:      %[[SCALED:.*]] = tfm.scale
// CHECK-NEXT: %[[ADDED:.*]] = tfm.add %[[SCALED]], %[[M]] : tensor<2x4x?x?xf32>, tensor<1x?xf32> -> tensor<2x4x?x?xf32>
// CHECK-NEXT: tfm.softmax %[[ADDED]], -1
func.func @sdpa_float_mask(%q: tensor<2x4x?x8xf32>, %m: tensor<1x?xf32>) -> tensor<2x4x?x8xf32> {
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
// CHECK:      %[[FULL:.*]] = linalg.generic {indexing_maps = [#[[BCAST:.*]], #{{.*}}], {{.*}} ins(%[[M]] : tensor<?x1x?x?xf32>) outs(%[[EMPTY]] : tensor<?x4x?x?xf32>)
// CHECK:      tfm.add %{{.*}}, %[[FULL]] : tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32> -> tensor<?x4x?x?xf32>
func.func @sdpa_mask_partial_batch(%q: tensor<?x4x?x8xf32>, %k: tensor<?x4x?x8xf32>, %m: tensor<?x1x?x?xf32>) -> tensor<?x4x?x8xf32> {
  %0 = tfm.sdpa %q, %k, %k mask(%m : tensor<?x1x?x?xf32>) : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}

// -----

// nn.MultiheadAttention's key_padding_mask [B, Sk] (true = ignore the key)
// becomes [B, H, 1, Sk]; the averaged attention weights are the softmax
// summed over the heads and divided by H.

// CHECK-DAG:  #[[PAD:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-DAG:  #[[MEAN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @mha_key_padding_weights
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[P:.*]]: tensor<?x?xi1>)
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x2x1x?xi1>
// CHECK:      %[[MASK:.*]] = linalg.generic {indexing_maps = [#[[PAD]], #{{.*}}], {{.*}} ins(%[[P]] : tensor<?x?xi1>) outs(%[[EMPTY]] : tensor<?x2x1x?xi1>)
// CHECK:      %[[FILLED:.*]] = tfm.masked_fill %{{.*}}, %[[MASK]], 0xFFF0000000000000 : tensor<?x2x?x?xf32>, tensor<?x2x1x?xi1> -> tensor<?x2x?x?xf32>
// CHECK:      %[[PROBS:.*]] = tfm.softmax %[[FILLED]], -1
// CHECK:      %[[OUT:.*]] = tfm.linear
// CHECK:      %[[SUM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[MEAN]]], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%[[PROBS]] : tensor<?x2x?x?xf32>)
// CHECK:      %[[AVG:.*]] = tfm.scale %[[SUM]], 2.000000e+00 {divide} : tensor<?x?x?xf32>
// CHECK:      return %[[OUT]], %[[AVG]]
func.func @mha_key_padding_weights(%x: tensor<?x?x8xf32>, %w: tensor<8x8xf32>, %pad: tensor<?x?xi1>) -> (tensor<?x?x8xf32>, tensor<?x?x?xf32>) {
  %0, %1 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) key_padding_mask(%pad) heads 2
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<?x?xi1>) -> (tensor<?x?x8xf32>, tensor<?x?x?xf32>)
  return %0, %1 : tensor<?x?x8xf32>, tensor<?x?x?xf32>
}

// -----

// A [B*H, Sq, Sk] attn_mask is reshaped to [B, H, Sq, Sk] and used as it is;
// the per-head weights are the softmax itself.

// CHECK-LABEL: func.func @mha_attn_mask_3d_per_head
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[M:.*]]: tensor<4x5x5xi1>)
// CHECK-NOT:  linalg.generic
// CHECK:      %[[MASK:.*]] = tensor.expand_shape %[[M]] {{\[}}[0, 1], [2], [3]] output_shape [2, 2, 5, 5] : tensor<4x5x5xi1> into tensor<2x2x5x5xi1>
// CHECK:      tfm.masked_fill %{{.*}}, %[[MASK]], 0xFFF0000000000000 : tensor<2x2x5x5xf32>, tensor<2x2x5x5xi1> -> tensor<2x2x5x5xf32>
// CHECK:      %[[PROBS:.*]] = tfm.softmax
// CHECK:      return %{{.*}}, %[[PROBS]] : tensor<2x5x8xf32>, tensor<2x2x5x5xf32>
func.func @mha_attn_mask_3d_per_head(%x: tensor<2x5x8xf32>, %w: tensor<8x8xf32>, %am: tensor<4x5x5xi1>) -> (tensor<2x5x8xf32>, tensor<2x2x5x5xf32>) {
  %0, %1 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) attn_mask(%am) heads 2 {average_attn_weights = false}
      : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x5x5xi1>) -> (tensor<2x5x8xf32>, tensor<2x2x5x5xf32>)
  return %0, %1 : tensor<2x5x8xf32>, tensor<2x2x5x5xf32>
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
// CHECK:      tfm.add %{{.*}}, %[[MASK]] : tensor<2x2x5x5xf32>, tensor<2x2x5x5xf32> -> tensor<2x2x5x5xf32>
func.func @mha_merged_masks(%x: tensor<2x5x8xf32>, %w: tensor<8x8xf32>, %pad: tensor<2x5xi1>, %am: tensor<5x5xf32>) -> tensor<2x5x8xf32> {
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) key_padding_mask(%pad) attn_mask(%am) heads 2
      : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x5xi1>, tensor<5x5xf32>) -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}

// -----

// Two boolean masks merge by OR; unbatched, the merged mask is [Sq, Sk].

// CHECK-LABEL: func.func @mha_unbatched_bool_masks
// CHECK:      linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<5x7xi1>, tensor<7xi1>) outs(%{{.*}} : tensor<5x7xi1>)
// CHECK:        arith.ori
// CHECK:      tfm.masked_fill %{{.*}} : tensor<2x5x7xf32>, tensor<5x7xi1> -> tensor<2x5x7xf32>
func.func @mha_unbatched_bool_masks(%q: tensor<5x8xf32>, %kv: tensor<7x8xf32>, %w: tensor<8x8xf32>, %pad: tensor<7xi1>, %am: tensor<5x7xi1>) -> tensor<5x8xf32> {
  %0 = tfm.multi_head_attention (%q, %kv, %kv) weights (%w, %w, %w, %w) key_padding_mask(%pad) attn_mask(%am) heads 2
      : (tensor<5x8xf32>, tensor<7x8xf32>, tensor<7x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<7xi1>, tensor<5x7xi1>) -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
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

// bf16 keys and f16 values under an f32 query (a low-precision cache): the
// chain's matmuls take one element type, so K and V are widened first.

// CHECK-LABEL: func.func @attention_low_precision_kv
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x8xf32>, %[[K:.*]]: tensor<2x?x8xbf16>, %[[V:.*]]: tensor<2x?x4xf16>, %[[INIT:.*]]: tensor<2x?x4xf32>)
// CHECK-DAG:  %[[KW:.*]] = tfm.cast %[[K]] : tensor<2x?x8xbf16> -> tensor<2x?x8xf32>
// CHECK-DAG:  %[[VW:.*]] = tfm.cast %[[V]] : tensor<2x?x4xf16> -> tensor<2x?x4xf32>
// CHECK:      %[[KT:.*]] = tfm.transpose %[[KW]], -2, -1 : tensor<2x?x8xf32> -> tensor<2x8x?xf32>
// CHECK:      %[[P:.*]] = tfm.softmax
// CHECK-NEXT: %[[O:.*]] = tfm.matmul %[[P]], %[[VW]] : tensor<2x?x?xf32>, tensor<2x?x4xf32> -> tensor<2x?x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @attention_low_precision_kv(%q: tensor<2x?x8xf32>, %k: tensor<2x?x8xbf16>, %v: tensor<2x?x4xf16>, %init: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
  %0 = tfm.attention ins(%q, %k, %v : tensor<2x?x8xf32>, tensor<2x?x8xbf16>, tensor<2x?x4xf16>)
         outs(%init : tensor<2x?x4xf32>) scale 0.25 -> tensor<2x?x4xf32>
  return %0 : tensor<2x?x4xf32>
}
