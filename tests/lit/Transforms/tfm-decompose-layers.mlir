// RUN: tfm-opt %s -split-input-file -tfm-decompose-layers | FileCheck %s

// sdpa with the default scale 1/sqrt(Dk) = 1/sqrt(8).

// CHECK-LABEL: func.func @sdpa_default_scale
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8xf32>, %[[K:.*]]: tensor<?x8xf32>, %[[V:.*]]: tensor<?x4xf32>)
// CHECK:      %[[KT:.*]] = tfm.transpose %[[K]], -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
// CHECK-NEXT: %[[SCORES:.*]] = tfm.matmul %[[Q]], %[[KT]] : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT: %[[SCALED:.*]] = tfm.scale %[[SCORES]], 0.35355339059327373 : tensor<?x?xf32>
// CHECK-NEXT: %[[PROBS:.*]] = tfm.softmax %[[SCALED]], -1 : tensor<?x?xf32>
// CHECK-NEXT: %[[OUT:.*]] = tfm.matmul %[[PROBS]], %[[V]] : tensor<?x?xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: return %[[OUT]]
// CHECK-NOT:  tfm.sdpa
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
// CHECK-NOT:  divide
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
// CHECK:      %[[QE:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1], [2, 3]] {{.*}} : tensor<?x?x8xf32> into tensor<?x?x2x4xf32>
// CHECK:      %[[QH:.*]] = tfm.transpose %[[QE]], -3, -2 : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
// CHECK:      %[[KE:.*]] = tensor.expand_shape %[[K]] {{\[}}[0], [1], [2, 3]] {{.*}} into tensor<?x?x2x4xf32>
// CHECK:      %[[KH:.*]] = tfm.transpose %[[KE]], -3, -2 : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
// CHECK:      %[[VE:.*]] = tensor.expand_shape %[[V]] {{\[}}[0], [1], [2, 3]] {{.*}} into tensor<?x?x2x4xf32>
// CHECK:      %[[VH:.*]] = tfm.transpose %[[VE]], -3, -2 : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
// CHECK:      %[[KT:.*]] = tfm.transpose %[[KH]], -2, -1 : tensor<?x2x?x4xf32> -> tensor<?x2x4x?xf32>
// CHECK:      %[[SCORES:.*]] = tfm.matmul %[[QH]], %[[KT]] : tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32> -> tensor<?x2x?x?xf32>
// CHECK:      %[[SCALED:.*]] = tfm.scale %[[SCORES]], 5.000000e-01 : tensor<?x2x?x?xf32>
// CHECK:      %[[PROBS:.*]] = tfm.softmax %[[SCALED]], -1 : tensor<?x2x?x?xf32>
// CHECK:      %[[HEADS:.*]] = tfm.matmul %[[PROBS]], %[[VH]] : tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
// CHECK:      %[[MERGEDT:.*]] = tfm.transpose %[[HEADS]], -3, -2 : tensor<?x2x?x4xf32> -> tensor<?x?x2x4xf32>
// CHECK:      %[[MERGED:.*]] = tensor.collapse_shape %[[MERGEDT]] {{\[}}[0], [1], [2, 3]] : tensor<?x?x2x4xf32> into tensor<?x?x8xf32>
// CHECK:      %[[OUT:.*]] = tfm.linear %[[MERGED]], %[[WO]], %[[BO]] : tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
// CHECK:      return %[[OUT]]
// CHECK-NOT:  tfm.multi_head_attention
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
// CHECK:      %[[P:.*]] = tfm.linear %[[X]], %[[W]] : tensor<?x12xf32>, tensor<12x12xf32> -> tensor<?x12xf32>
// CHECK:      %[[E:.*]] = tensor.expand_shape %[[P]] {{\[}}[0], [1, 2]] {{.*}} : tensor<?x12xf32> into tensor<?x4x3xf32>
// CHECK:      %[[H:.*]] = tfm.transpose %[[E]], -3, -2 : tensor<?x4x3xf32> -> tensor<4x?x3xf32>
// CHECK:      tfm.transpose %{{.*}}, -2, -1 : tensor<4x?x3xf32> -> tensor<4x3x?xf32>
// CHECK:      %[[SCORES:.*]] = tfm.matmul %{{.*}} : tensor<4x?x3xf32>, tensor<4x3x?xf32> -> tensor<4x?x?xf32>
// CHECK:      tfm.scale %[[SCORES]], 0.57735026918962584 : tensor<4x?x?xf32>
// CHECK:      tfm.softmax %{{.*}}, -1 : tensor<4x?x?xf32>
// CHECK:      %[[HEADS:.*]] = tfm.matmul %{{.*}} : tensor<4x?x?xf32>, tensor<4x?x3xf32> -> tensor<4x?x3xf32>
// CHECK:      %[[MT:.*]] = tfm.transpose %[[HEADS]], -3, -2 : tensor<4x?x3xf32> -> tensor<?x4x3xf32>
// CHECK:      %[[M:.*]] = tensor.collapse_shape %[[MT]] {{\[}}[0], [1, 2]] : tensor<?x4x3xf32> into tensor<?x12xf32>
// CHECK:      %[[OUT:.*]] = tfm.linear %[[M]], %[[WO]] : tensor<?x12xf32>, tensor<12x12xf32> -> tensor<?x12xf32>
// CHECK:      return %[[OUT]]
// CHECK-NOT:  tfm.multi_head_attention
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
