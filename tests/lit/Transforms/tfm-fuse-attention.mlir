// RUN: tfm-opt %s -split-input-file -convert-tfm-to-linalg -canonicalize -tfm-fuse-attention | FileCheck %s
// RUN: tfm-opt %s -split-input-file -convert-tfm-to-linalg -canonicalize -tfm-fuse-attention=remarks=true -verify-diagnostics -o /dev/null

// Chains written by hand over tfm primitives, fused where the pipelines fuse
// them: after convert-tfm-to-linalg. Every fused chain and every refusal
// carries its remark (checked by the second RUN line); refusals also CHECK
// that the chain is left as it was. Chains written in linalg are in
// tfm-fuse-attention-linalg.mlir; the layer ops reach tfm.attention without
// fusion (tfm-lower-layers.mlir).

//===----------------------------------------------------------------------===//
// Chains over tfm primitives
//===----------------------------------------------------------------------===//

// softmax(q kᵀ / sqrt(d)) v with d_k = 24 and d_v = 28 (seed 001): the
// division becomes the scale 1/sqrt(24), the init is sized from q.

// CHECK-LABEL: func.func @divide_by_sqrt_d
// CHECK-SAME: (%[[Q:.*]]: tensor<?x24xf32>, %[[K:.*]]: tensor<?x24xf32>, %[[V:.*]]: tensor<?x28xf32>)
// The body is these lines and nothing else: no linalg op is left.
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[SQ:.*]] = tensor.dim %[[Q]], %[[C0]] : tensor<?x24xf32>
// CHECK-NEXT: %[[INIT:.*]] = tensor.empty(%[[SQ]]) : tensor<?x28xf32>
// CHECK-NEXT: %[[O:.*]] = tfm.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<?x24xf32>, tensor<?x24xf32>, tensor<?x28xf32>)
// CHECK-SAME:   outs(%[[INIT]] : tensor<?x28xf32>) scale 0.2041241{{[0-9]*}} -> tensor<?x28xf32>
// CHECK-NEXT: return %[[O]]
func.func @divide_by_sqrt_d(%q: tensor<?x24xf32>, %k: tensor<?x24xf32>, %v: tensor<?x28xf32>) -> tensor<?x28xf32> {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x24xf32> -> tensor<24x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x24xf32>, tensor<24x?xf32> -> tensor<?x?xf32>
  %ss = tfm.scale %s, 4.8989794855663558 {divide} : tensor<?x?xf32>
  %p = tfm.softmax %ss, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x28xf32> -> tensor<?x28xf32>
  return %o : tensor<?x28xf32>
}

// -----

// [batch, heads, seq, d] with the transpose and the softmax dim written as
// positive dims, and the scale as a multiplication; static batch and head
// dims need no tensor.dim.

// CHECK-LABEL: func.func @positive_dims_batched
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x?x16xf32>, %[[K:.*]]: tensor<2x4x?x16xf32>, %[[V:.*]]: tensor<2x4x?x16xf32>)
// CHECK:      %[[C2:.*]] = arith.constant 2 : index
// CHECK:      %[[SQ:.*]] = tensor.dim %[[Q]], %[[C2]]
// CHECK:      %[[INIT:.*]] = tensor.empty(%[[SQ]]) : tensor<2x4x?x16xf32>
// CHECK:      tfm.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) outs(%[[INIT]] : tensor<2x4x?x16xf32>) scale 2.500000e-01 ->
func.func @positive_dims_batched(%q: tensor<2x4x?x16xf32>, %k: tensor<2x4x?x16xf32>, %v: tensor<2x4x?x16xf32>) -> tensor<2x4x?x16xf32> {
  %kt = tfm.transpose %k, 2, 3 : tensor<2x4x?x16xf32> -> tensor<2x4x16x?xf32>
  %s = tfm.matmul %q, %kt : tensor<2x4x?x16xf32>, tensor<2x4x16x?xf32> -> tensor<2x4x?x?xf32>
  %ss = tfm.scale %s, 0.25 : tensor<2x4x?x?xf32>
  %p = tfm.softmax %ss, 3 : tensor<2x4x?x?xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = tfm.matmul %p, %v : tensor<2x4x?x?xf32>, tensor<2x4x?x16xf32> -> tensor<2x4x?x16xf32>
  return %o : tensor<2x4x?x16xf32>
}

// -----

// The scale folded into q before the first matmul, and one on kᵀ (scales
// commute with the contraction): the product is the op's scale.

// CHECK-LABEL: func.func @scale_folded_into_operands
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8xf32>, %[[K:.*]]: tensor<?x8xf32>, %[[V:.*]]: tensor<?x8xf32>)
// CHECK:      tfm.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) scale 6.250000e-02 ->
func.func @scale_folded_into_operands(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %qs = tfm.scale %q, 0.125 : tensor<?x8xf32>
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %kts = tfm.scale %kt, 2.0 {divide} : tensor<8x?xf32>
  %s = tfm.matmul %qs, %kts : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %p = tfm.softmax %s, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// No scale at all: scale 1.

// CHECK-LABEL: func.func @no_scale
// CHECK:      tfm.attention ins({{.*}}) outs({{.*}}) scale 1.000000e+00 ->
func.func @no_scale(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %kt = tfm.transpose %k, -1, -2 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %p = tfm.softmax %s, 1 : tensor<?x?xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// K given already transposed (a [d, seq] tensor): the fused op wants K
// [seq, d], so a transpose of O(seq·d) is added in front.

// CHECK-LABEL: func.func @key_stored_transposed
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8xf32>, %[[KT:.*]]: tensor<8x?xf32>, %[[V:.*]]: tensor<?x8xf32>)
// CHECK:      %[[K:.*]] = linalg.transpose ins(%[[KT]] : tensor<8x?xf32>) outs(%{{.*}} : tensor<?x8xf32>) permutation = [1, 0]
// CHECK:      tfm.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
func.func @key_stored_transposed(%q: tensor<?x8xf32>, %kt: tensor<8x?xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %ss = tfm.scale %s, 0.5 : tensor<?x?xf32>
  %p = tfm.softmax %ss, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// An additive float mask after the scale, broadcast over the batch dim.

// CHECK-LABEL: func.func @additive_mask
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x8xf32>, %[[K:.*]]: tensor<2x?x8xf32>, %[[V:.*]]: tensor<2x?x8xf32>, %[[M:.*]]: tensor<?x?xf32>)
// CHECK:      tfm.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) mask(%[[M]] : tensor<?x?xf32>) outs({{.*}}) scale 5.000000e-01 ->
// CHECK-NOT:  linalg.generic
func.func @additive_mask(%q: tensor<2x?x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<2x?x8xf32>, %m: tensor<?x?xf32>) -> tensor<2x?x8xf32> {
  %kt = tfm.transpose %k, -2, -1 : tensor<2x?x8xf32> -> tensor<2x8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<2x?x8xf32>, tensor<2x8x?xf32> -> tensor<2x?x?xf32>
  %ss = tfm.scale %s, 0.5 : tensor<2x?x?xf32>
  %sm = tfm.add %ss, %m : tensor<2x?x?xf32>, tensor<?x?xf32> -> tensor<2x?x?xf32>
  %p = tfm.softmax %sm, -1 : tensor<2x?x?xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = tfm.matmul %p, %v : tensor<2x?x?xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  return %o : tensor<2x?x8xf32>
}

// -----

// The mask on the left of the add, the scores on the right.

// CHECK-LABEL: func.func @additive_mask_first
// CHECK-SAME: %[[M:[^:]*]]: tensor<?x?xf32>)
// CHECK:      tfm.attention ins({{.*}}) mask(%[[M]] : tensor<?x?xf32>)
func.func @additive_mask_first(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>, %m: tensor<?x?xf32>) -> tensor<?x8xf32> {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %sm = tfm.add %m, %s : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %p = tfm.softmax %sm, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// A boolean mask filled with -inf (true = masked out, as the op's i1 mask).

// CHECK-LABEL: func.func @boolean_mask
// CHECK-SAME: %[[M:[^:]*]]: tensor<1x?xi1>)
// CHECK:      tfm.attention ins({{.*}}) mask(%[[M]] : tensor<1x?xi1>) outs({{.*}}) scale 1.250000e-01 ->
// CHECK-NOT:  linalg.generic
func.func @boolean_mask(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>, %m: tensor<1x?xi1>) -> tensor<?x8xf32> {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %ss = tfm.scale %s, 0.125 : tensor<?x?xf32>
  %sm = tfm.masked_fill %ss, %m, 0xFFF0000000000000 : tensor<?x?xf32>, tensor<1x?xi1> -> tensor<?x?xf32>
  %p = tfm.softmax %sm, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// A causal mask becomes the `causal` attribute; it may be combined with an
// additive mask, and may sit below a positive scale.

// CHECK-LABEL: func.func @causal_and_additive
// CHECK-SAME: %[[M:[^:]*]]: tensor<?x?xf32>)
// CHECK:      tfm.attention ins({{.*}}) mask(%[[M]] : tensor<?x?xf32>) outs({{.*}}) scale 5.000000e-01 {causal} ->
// CHECK-NOT:  linalg.generic
func.func @causal_and_additive(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>, %m: tensor<?x?xf32>) -> tensor<?x8xf32> {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %c = tfm.causal_mask %s : tensor<?x?xf32>
  %ss = tfm.scale %c, 0.5 : tensor<?x?xf32>
  %sm = tfm.add %ss, %m : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %p = tfm.softmax %sm, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Refusals over tfm primitives
//===----------------------------------------------------------------------===//

// The attention weights are also a result: fusing would still compute them.

// CHECK-LABEL: func.func @softmax_has_other_user
// CHECK-NOT:  tfm.attention
// CHECK:      %[[P:.*]] = linalg.softmax
// CHECK:      %[[O:.*]] = linalg.generic {{.*}} ins(%[[P]]
// CHECK:      return %[[O]], %[[P]]
func.func @softmax_has_other_user(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x?xf32>) {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %p = tfm.softmax %s, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{attention not fused: the softmax result has another user}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o, %p : tensor<?x8xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @scores_have_other_user
// CHECK-NOT:  tfm.attention
func.func @scores_have_other_user(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x?xf32>) {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %ss = tfm.scale %s, 0.5 : tensor<?x?xf32>
  %p = tfm.softmax %ss, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{attention not fused: the scores have another user}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o, %s : tensor<?x8xf32>, tensor<?x?xf32>
}

// -----

// The softmax normalizes over the queries, not the keys.

// CHECK-LABEL: func.func @softmax_over_query_dim
// CHECK-NOT:  tfm.attention
func.func @softmax_over_query_dim(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %p = tfm.softmax %s, -2 : tensor<?x?xf32>
  // expected-remark @+1 {{attention not fused: the softmax is over dim 0, not the key dim 1}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// The second matmul contracts the probabilities over their query dim.

// CHECK-LABEL: func.func @second_matmul_over_query_dim
// CHECK-NOT:  tfm.attention
func.func @second_matmul_over_query_dim(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %vt: tensor<8x?xf32>) -> tensor<8x?xf32> {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %p = tfm.softmax %s, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{attention not fused: the softmax result is the right operand of the P·V contraction}}
  %o = tfm.matmul %vt, %p : tensor<8x?xf32>, tensor<?x?xf32> -> tensor<8x?xf32>
  return %o : tensor<8x?xf32>
}

// -----

// A mask filled with a large negative number is not -inf: a fully masked row
// would give a uniform average, where tfm.attention gives zeros.

// CHECK-LABEL: func.func @masked_fill_not_minus_inf
// CHECK-NOT:  tfm.attention
// CHECK:      arith.select
func.func @masked_fill_not_minus_inf(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>, %m: tensor<?x?xi1>) -> tensor<?x8xf32> {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %sm = tfm.masked_fill %s, %m, -1.0e+09 : tensor<?x?xf32>, tensor<?x?xi1> -> tensor<?x?xf32>
  %p = tfm.softmax %sm, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{attention not fused: the boolean mask fills with -1e+09, not -inf: only -inf masks remove scores}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// scale · (S + mask) scales the mask too: not softmax(scale · S + mask).

// CHECK-LABEL: func.func @mask_before_scale
// CHECK-NOT:  tfm.attention
func.func @mask_before_scale(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>, %m: tensor<?x?xf32>) -> tensor<?x8xf32> {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %sm = tfm.add %s, %m : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %ss = tfm.scale %sm, 0.5 : tensor<?x?xf32>
  %p = tfm.softmax %ss, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{attention not fused: the mask is added before the scale, which would scale the mask too}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// One key and value shared by a batch of queries: tfm.attention does not
// broadcast batch dims.

// CHECK-LABEL: func.func @broadcast_batch
// CHECK-NOT:  tfm.attention
func.func @broadcast_batch(%q: tensor<4x?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> tensor<4x?x8xf32> {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<4x?x8xf32>, tensor<8x?xf32> -> tensor<4x?x?xf32>
  %p = tfm.softmax %s, -1 : tensor<4x?x?xf32>
  // expected-remark @+1 {{attention not fused: the P·V contraction reads V with its batch dims reordered or broadcast}}
  %o = tfm.matmul %p, %v : tensor<4x?x?xf32>, tensor<?x8xf32> -> tensor<4x?x8xf32>
  return %o : tensor<4x?x8xf32>
}

// -----

// A matmul of two plain tensors is no candidate: no remark, no change.

// CHECK-LABEL: func.func @plain_matmul
// CHECK:      linalg.generic
func.func @plain_matmul(%a: tensor<?x8xf32>, %b: tensor<8x?xf32>) -> tensor<?x?xf32> {
  %o = tfm.matmul %a, %b : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  return %o : tensor<?x?xf32>
}
