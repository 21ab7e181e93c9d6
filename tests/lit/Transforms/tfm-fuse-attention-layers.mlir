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

// Multi-head attention: projections and the head split stay, the per-head
// chain on [batch, heads, seq, E/H] becomes one tfm.attention with scale
// 1/sqrt(E/H) = 1/2, and the head merge and output projection follow.

// CHECK-LABEL: func.func @multi_head_attention
// CHECK-DAG:  %[[Q:.*]] = tfm.linear %{{.*}}, %[[WQ:[^ ]*]], %{{.*}} :
// CHECK-DAG:  %[[K:.*]] = tfm.linear %{{.*}}, %[[WK:[^ ]*]], %{{.*}} :
// CHECK-DAG:  %[[V:.*]] = tfm.linear %{{.*}}, %[[WV:[^ ]*]], %{{.*}} :
// CHECK-DAG:  %[[QE:.*]] = tensor.expand_shape %[[Q]]
// CHECK-DAG:  %[[QH:.*]] = tfm.transpose %[[QE]], -3, -2 : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
// CHECK-DAG:  %[[KE:.*]] = tensor.expand_shape %[[K]]
// CHECK-DAG:  %[[KH:.*]] = tfm.transpose %[[KE]], -3, -2 : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
// CHECK-DAG:  %[[VE:.*]] = tensor.expand_shape %[[V]]
// CHECK-DAG:  %[[VH:.*]] = tfm.transpose %[[VE]], -3, -2 : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
// CHECK:      %[[O:.*]] = tfm.attention ins(%[[QH]], %[[KH]], %[[VH]] : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>)
// CHECK-SAME:   scale 5.000000e-01 -> tensor<?x2x?x4xf32>
// CHECK:      %[[M:.*]] = tfm.transpose %[[O]], -3, -2
// CHECK:      tensor.collapse_shape %[[M]]
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
