// RUN: tfm-opt %s -split-input-file -tfm-fuse-attention | FileCheck %s
// RUN: tfm-opt %s -split-input-file -tfm-fuse-attention=remarks=true -verify-diagnostics -o /dev/null

// tfm-fuse-attention on linalg: what convert-tfm-to-linalg produces and what
// is written by hand (named contractions, transposes in indexing maps, the
// softmax spelled out). Every fused chain and every refusal carries its
// remark, checked by the second RUN line.

//===----------------------------------------------------------------------===//
// Chains over linalg
//===----------------------------------------------------------------------===//

// convert-tfm-to-linalg's output for softmax(q kᵀ · 0.5) v: generic
// contractions (kᵀ by linalg.transpose), a scale generic on a captured
// constant, linalg.softmax. The transpose is read through, the f32 constant
// becomes the scale.

// CHECK-LABEL: func.func @from_convert_tfm_to_linalg
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x8xf32>, %[[K:.*]]: tensor<2x?x8xf32>, %[[V:.*]]: tensor<2x?x4xf32>)
// The body is these lines and nothing else: no linalg op is left.
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[SQ:.*]] = tensor.dim %[[Q]], %[[C1]] : tensor<2x?x8xf32>
// CHECK-NEXT: %[[INIT:.*]] = tensor.empty(%[[SQ]]) : tensor<2x?x4xf32>
// CHECK-NEXT: %[[O:.*]] = tfm.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x4xf32>)
// CHECK-SAME:   outs(%[[INIT]] : tensor<2x?x4xf32>) scale 5.000000e-01 -> tensor<2x?x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @from_convert_tfm_to_linalg(%q: tensor<2x?x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
  %half = arith.constant 5.000000e-01 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1 : index
  %sk = tensor.dim %k, %c1 : tensor<2x?x8xf32>
  %sq = tensor.dim %q, %c1 : tensor<2x?x8xf32>
  %kt_init = tensor.empty(%sk) : tensor<2x8x?xf32>
  %kt = linalg.transpose ins(%k : tensor<2x?x8xf32>) outs(%kt_init : tensor<2x8x?xf32>) permutation = [0, 2, 1]
  %s_empty = tensor.empty(%sq, %sk) : tensor<2x?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %kt : tensor<2x?x8xf32>, tensor<2x8x?xf32>) outs(%s_init : tensor<2x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x?x?xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x?x?xf32>) outs(%s_empty : tensor<2x?x?xf32>) {
  ^bb0(%a: f32, %out: f32):
    %m = arith.mulf %a, %half : f32
    linalg.yield %m : f32
  } -> tensor<2x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%ss : tensor<2x?x?xf32>) outs(%s_empty : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %o_empty = tensor.empty(%sq) : tensor<2x?x4xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x?x?xf32>, tensor<2x?x4xf32>) outs(%o_init : tensor<2x?x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x?x4xf32>
  return %o : tensor<2x?x4xf32>
}

// -----

// The softmax spelled out as tfm-decompose-softmax writes it (max, exp of the
// difference, sum, divide; the max starts from NaN), the scale a division
// by a constant defined in the payload. tensor.dim of the scaled scores
// (the softmax sizing its temporaries) does not keep them alive.

// CHECK-LABEL: func.func @spelled_out_softmax
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8xf32>, %[[K:.*]]: tensor<?x8xf32>, %[[V:.*]]: tensor<?x8xf32>)
// CHECK:      tfm.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) outs({{.*}}) scale 2.500000e-01 ->
// CHECK-NOT:  math.exp
// CHECK-NOT:  linalg.generic
func.func @spelled_out_softmax(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %sq = tensor.dim %q, %c0 : tensor<?x8xf32>
  %sk = tensor.dim %k, %c0 : tensor<?x8xf32>
  %kt_init = tensor.empty(%sk) : tensor<8x?xf32>
  %kt = linalg.transpose ins(%k : tensor<?x8xf32>) outs(%kt_init : tensor<8x?xf32>) permutation = [1, 0]
  %s_empty = tensor.empty(%sq, %sk) : tensor<?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<?x8xf32>, tensor<8x?xf32>) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<?x?xf32>) outs(%s_empty : tensor<?x?xf32>) {
  ^bb0(%a: f32, %out: f32):
    %four = arith.constant 4.000000e+00 : f32
    %d = arith.divf %a, %four : f32
    linalg.yield %d : f32
  } -> tensor<?x?xf32>
  %rows = tensor.dim %ss, %c0 : tensor<?x?xf32>
  %cols = tensor.dim %ss, %c1 : tensor<?x?xf32>
  %e_empty = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %r_empty = tensor.empty(%rows) : tensor<?xf32>
  %max_init = linalg.fill ins(%nan : f32) outs(%r_empty : tensor<?xf32>) -> tensor<?xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%ss : tensor<?x?xf32>) outs(%max_init : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maxnumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<?xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ss, %max : tensor<?x?xf32>, tensor<?xf32>) outs(%e_empty : tensor<?x?xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<?x?xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%r_empty : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<?x?xf32>) outs(%sum_init : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<?xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%e, %sum : tensor<?x?xf32>, tensor<?xf32>) outs(%e_empty : tensor<?x?xf32>) {
  ^bb0(%in: f32, %total: f32, %out: f32):
    %d = arith.divf %in, %total : f32
    linalg.yield %d : f32
  } -> tensor<?x?xf32>
  %o_empty = tensor.empty(%sq) : tensor<?x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x8xf32>) outs(%o_init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// linalg.batch_matmul on a linalg.transpose of K, no scale.

// CHECK-LABEL: func.func @batch_matmul_with_transpose
// CHECK-SAME: (%[[Q:.*]]: tensor<4x?x16xf32>, %[[K:.*]]: tensor<4x?x16xf32>, %[[V:.*]]: tensor<4x?x32xf32>)
// CHECK:      tfm.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<4x?x16xf32>, tensor<4x?x16xf32>, tensor<4x?x32xf32>) outs({{.*}}) scale 1.000000e+00 ->
func.func @batch_matmul_with_transpose(%q: tensor<4x?x16xf32>, %k: tensor<4x?x16xf32>, %v: tensor<4x?x32xf32>) -> tensor<4x?x32xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1 : index
  %sq = tensor.dim %q, %c1 : tensor<4x?x16xf32>
  %sk = tensor.dim %k, %c1 : tensor<4x?x16xf32>
  %kt_init = tensor.empty(%sk) : tensor<4x16x?xf32>
  %kt = linalg.transpose ins(%k : tensor<4x?x16xf32>) outs(%kt_init : tensor<4x16x?xf32>) permutation = [0, 2, 1]
  %s_empty = tensor.empty(%sq, %sk) : tensor<4x?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x?x16xf32>, tensor<4x16x?xf32>) outs(%s_init : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x?x?xf32>) outs(%s_empty : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %o_empty = tensor.empty(%sq) : tensor<4x?x32xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x?x32xf32>) -> tensor<4x?x32xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x?x?xf32>, tensor<4x?x32xf32>) outs(%o_init : tensor<4x?x32xf32>) -> tensor<4x?x32xf32>
  return %o : tensor<4x?x32xf32>
}

// -----

// linalg.matmul reading K transposed through its indexing maps (MLIR 22's
// spelling of matmul_transpose_b), with the scale folded into Q by a
// generic before the first contraction.

// CHECK-LABEL: func.func @matmul_transpose_b_maps
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8xf32>, %[[K:.*]]: tensor<?x8xf32>, %[[V:.*]]: tensor<?x8xf32>)
// CHECK:      tfm.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) outs({{.*}}) scale 1.250000e-01 ->
func.func @matmul_transpose_b_maps(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %eighth = arith.constant 1.250000e-01 : f32
  %c0 = arith.constant 0 : index
  %sq = tensor.dim %q, %c0 : tensor<?x8xf32>
  %sk = tensor.dim %k, %c0 : tensor<?x8xf32>
  %q_empty = tensor.empty(%sq) : tensor<?x8xf32>
  %qs = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%q : tensor<?x8xf32>) outs(%q_empty : tensor<?x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %m = arith.mulf %eighth, %a : f32
    linalg.yield %m : f32
  } -> tensor<?x8xf32>
  %s_empty = tensor.empty(%sq, %sk) : tensor<?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%qs, %k : tensor<?x8xf32>, tensor<?x8xf32>) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<?x?xf32>) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%q_empty : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x8xf32>) outs(%o_init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// A generic reading K [b, Sk, d] transposed in its indexing map, and V
// stored transposed [b, dv, Sk]: V gets a linalg.transpose in front of the
// fused op.

// CHECK-LABEL: func.func @generic_maps_transpose
// CHECK-SAME: (%[[Q:.*]]: tensor<3x?x8xf32>, %[[K:.*]]: tensor<3x?x8xf32>, %[[VT:.*]]: tensor<3x4x?xf32>)
// CHECK:      %[[C2:.*]] = arith.constant 2 : index
// CHECK:      %[[SK:.*]] = tensor.dim %[[VT]], %[[C2]] : tensor<3x4x?xf32>
// CHECK:      %[[V_INIT:.*]] = tensor.empty(%[[SK]]) : tensor<3x?x4xf32>
// CHECK:      %[[V:.*]] = linalg.transpose ins(%[[VT]] : tensor<3x4x?xf32>) outs(%[[V_INIT]] : tensor<3x?x4xf32>) permutation = [0, 2, 1]
// CHECK:      tfm.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<3x?x8xf32>, tensor<3x?x8xf32>, tensor<3x?x4xf32>)
func.func @generic_maps_transpose(%q: tensor<3x?x8xf32>, %k: tensor<3x?x8xf32>, %vt: tensor<3x4x?xf32>) -> tensor<3x?x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1 : index
  %sq = tensor.dim %q, %c1 : tensor<3x?x8xf32>
  %sk = tensor.dim %k, %c1 : tensor<3x?x8xf32>
  %s_empty = tensor.empty(%sq, %sk) : tensor<3x?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<3x?x?xf32>) -> tensor<3x?x?xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<3x?x8xf32>, tensor<3x?x8xf32>) outs(%s_init : tensor<3x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %m, %acc : f32
    linalg.yield %r : f32
  } -> tensor<3x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<3x?x?xf32>) outs(%s_empty : tensor<3x?x?xf32>) -> tensor<3x?x?xf32>
  %o_empty = tensor.empty(%sq) : tensor<3x?x4xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<3x?x4xf32>) -> tensor<3x?x4xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = linalg.generic {indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %vt : tensor<3x?x?xf32>, tensor<3x4x?xf32>) outs(%o_init : tensor<3x?x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<3x?x4xf32>
  return %o : tensor<3x?x4xf32>
}

// -----

// Masks as convert-tfm-to-linalg writes them: an additive mask broadcast
// over the batch (a generic adding a [Sq, Sk] tensor), and a causal select
// over linalg.index (key j > query i gets -inf).

// CHECK-LABEL: func.func @additive_and_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x8xf32>, %[[K:.*]]: tensor<2x?x8xf32>, %[[V:.*]]: tensor<2x?x8xf32>, %[[M:.*]]: tensor<?x?xf32>)
// CHECK:      tfm.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) mask(%[[M]] : tensor<?x?xf32>) outs({{.*}}) scale 5.000000e-01 {causal} ->
// CHECK-NOT:  linalg.index
func.func @additive_and_causal(%q: tensor<2x?x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<2x?x8xf32>, %mask: tensor<?x?xf32>) -> tensor<2x?x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c1 = arith.constant 1 : index
  %sq = tensor.dim %q, %c1 : tensor<2x?x8xf32>
  %sk = tensor.dim %k, %c1 : tensor<2x?x8xf32>
  %s_empty = tensor.empty(%sq, %sk) : tensor<2x?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x?x8xf32>, tensor<2x?x8xf32>) outs(%s_init : tensor<2x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x?x?xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x?x?xf32>) outs(%s_empty : tensor<2x?x?xf32>) {
  ^bb0(%a: f32, %out: f32):
    %m = arith.mulf %a, %half : f32
    linalg.yield %m : f32
  } -> tensor<2x?x?xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ss, %mask : tensor<2x?x?xf32>, tensor<?x?xf32>) outs(%s_empty : tensor<2x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x?x?xf32>
  %sc = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sm : tensor<2x?x?xf32>) outs(%s_empty : tensor<2x?x?xf32>) {
  ^bb0(%a: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %future = arith.cmpi ugt, %j, %i : index
    %r = arith.select %future, %ninf, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%sc : tensor<2x?x?xf32>) outs(%s_empty : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %o_empty = tensor.empty(%sq) : tensor<2x?x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x?x?xf32>, tensor<2x?x8xf32>) outs(%o_init : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  return %o : tensor<2x?x8xf32>
}

// -----

// A boolean mask (true = masked out) selecting -inf, with a static-1 dim
// broadcast through a constant index; the causal mask written as i < j
// with the select the other way round (keep where j <= i) is the same mask.

// CHECK-LABEL: func.func @boolean_and_causal_flipped
// CHECK-SAME: %[[M:[^:]*]]: tensor<1x?xi1>)
// CHECK:      tfm.attention ins({{.*}}) mask(%[[M]] : tensor<1x?xi1>) outs({{.*}}) scale 1.000000e+00 {causal} ->
func.func @boolean_and_causal_flipped(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>, %mask: tensor<1x?xi1>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : index
  %sq = tensor.dim %q, %c0 : tensor<?x8xf32>
  %sk = tensor.dim %k, %c0 : tensor<?x8xf32>
  %s_empty = tensor.empty(%sq, %sk) : tensor<?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<?x8xf32>, tensor<?x8xf32>) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %mask : tensor<?x?xf32>, tensor<1x?xi1>) outs(%s_empty : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: i1, %out: f32):
    %r = arith.select %b, %ninf, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %sc = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sm : tensor<?x?xf32>) outs(%s_empty : tensor<?x?xf32>) {
  ^bb0(%a: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %past = arith.cmpi sge, %i, %j : index
    %r = arith.select %past, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %p = linalg.softmax dimension(1) ins(%sc : tensor<?x?xf32>) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %o_empty = tensor.empty(%sq) : tensor<?x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x8xf32>) outs(%o_init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Refusals over linalg
//===----------------------------------------------------------------------===//

// The scores are multiplied by a tensor: not a uniform scale.

// CHECK-LABEL: func.func @scale_by_tensor
// CHECK-NOT:  tfm.attention
// CHECK:      linalg.softmax
func.func @scale_by_tensor(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>, %w: tensor<?x?xf32>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %sq = tensor.dim %q, %c0 : tensor<?x8xf32>
  %sk = tensor.dim %k, %c0 : tensor<?x8xf32>
  %s_empty = tensor.empty(%sq, %sk) : tensor<?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<?x8xf32>, tensor<?x8xf32>) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %w : tensor<?x?xf32>, tensor<?x?xf32>) outs(%s_empty : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<?x?xf32>
  %p = linalg.softmax dimension(1) ins(%ss : tensor<?x?xf32>) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %o_empty = tensor.empty(%sq) : tensor<?x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{attention not fused: the scale is not uniform: the scores are multiplied elementwise by a tensor}}
  %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x8xf32>) outs(%o_init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// A uniform scale known only at run time: tfm.attention's scale is an
// attribute.

// CHECK-LABEL: func.func @scale_not_constant
// CHECK-NOT:  tfm.attention
func.func @scale_not_constant(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>, %c: f32) -> tensor<?x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %sq = tensor.dim %q, %c0 : tensor<?x8xf32>
  %sk = tensor.dim %k, %c0 : tensor<?x8xf32>
  %s_empty = tensor.empty(%sq, %sk) : tensor<?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<?x8xf32>, tensor<?x8xf32>) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<?x?xf32>) outs(%s_empty : tensor<?x?xf32>) {
  ^bb0(%a: f32, %out: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<?x?xf32>
  %p = linalg.softmax dimension(1) ins(%ss : tensor<?x?xf32>) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %o_empty = tensor.empty(%sq) : tensor<?x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{attention not fused: the scale is not a compile-time constant}}
  %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x8xf32>) outs(%o_init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// The values are f16 while the probabilities and the result are f32.

// CHECK-LABEL: func.func @element_types_differ
// CHECK-NOT:  tfm.attention
func.func @element_types_differ(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf16>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %sq = tensor.dim %q, %c0 : tensor<?x8xf32>
  %sk = tensor.dim %k, %c0 : tensor<?x8xf32>
  %s_empty = tensor.empty(%sq, %sk) : tensor<?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<?x8xf32>, tensor<?x8xf32>) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<?x?xf32>) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %o_empty = tensor.empty(%sq) : tensor<?x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{attention not fused: element types differ in the P·V contraction (f32, f16 -> f32)}}
  %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x8xf16>) outs(%o_init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// The softmax normalizes over the batch dim.

// CHECK-LABEL: func.func @softmax_over_batch_dim
// CHECK-NOT:  tfm.attention
func.func @softmax_over_batch_dim(%q: tensor<2x?x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1 : index
  %sq = tensor.dim %q, %c1 : tensor<2x?x8xf32>
  %sk = tensor.dim %k, %c1 : tensor<2x?x8xf32>
  %s_empty = tensor.empty(%sq, %sk) : tensor<2x?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x?x8xf32>, tensor<2x?x8xf32>) outs(%s_init : tensor<2x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x?x?xf32>
  %p = linalg.softmax dimension(0) ins(%s : tensor<2x?x?xf32>) outs(%s_empty : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %o_empty = tensor.empty(%sq) : tensor<2x?x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  // expected-remark @+1 {{attention not fused: the softmax is over dim 0, not the key dim 2}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x?x?xf32>, tensor<2x?x8xf32>) outs(%o_init : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  return %o : tensor<2x?x8xf32>
}

// -----

// The second contraction sums the probabilities over the queries (P read
// as [key, query]), which is not P·V.

// CHECK-LABEL: func.func @second_contraction_over_queries
// CHECK-NOT:  tfm.attention
func.func @second_contraction_over_queries(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %sq = tensor.dim %q, %c0 : tensor<?x8xf32>
  %sk = tensor.dim %k, %c0 : tensor<?x8xf32>
  %s_empty = tensor.empty(%sq, %sk) : tensor<?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<?x8xf32>, tensor<?x8xf32>) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<?x?xf32>) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %o_empty = tensor.empty(%sk) : tensor<?x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{attention not fused: the P·V contraction contracts the softmax result over its query dim, not its key dim}}
  %o = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%p, %v : tensor<?x?xf32>, tensor<?x8xf32>) outs(%o_init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// A boolean mask filling with 0 instead of -inf.

// CHECK-LABEL: func.func @boolean_mask_not_minus_inf
// CHECK-NOT:  tfm.attention
func.func @boolean_mask_not_minus_inf(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>, %mask: tensor<?x?xi1>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %sq = tensor.dim %q, %c0 : tensor<?x8xf32>
  %sk = tensor.dim %k, %c0 : tensor<?x8xf32>
  %s_empty = tensor.empty(%sq, %sk) : tensor<?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<?x8xf32>, tensor<?x8xf32>) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %mask : tensor<?x?xf32>, tensor<?x?xi1>) outs(%s_empty : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: i1, %out: f32):
    %r = arith.select %b, %zero, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %p = linalg.softmax dimension(1) ins(%sm : tensor<?x?xf32>) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %o_empty = tensor.empty(%sq) : tensor<?x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{attention not fused: the boolean mask fills with 0, not -inf: only -inf masks remove scores}}
  %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x8xf32>) outs(%o_init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// The scores are also a result of the function.

// CHECK-LABEL: func.func @linalg_scores_have_other_user
// CHECK-NOT:  tfm.attention
func.func @linalg_scores_have_other_user(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x?xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %sq = tensor.dim %q, %c0 : tensor<?x8xf32>
  %sk = tensor.dim %k, %c0 : tensor<?x8xf32>
  %s_empty = tensor.empty(%sq, %sk) : tensor<?x?xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<?x8xf32>, tensor<?x8xf32>) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<?x?xf32>) outs(%s_empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %o_empty = tensor.empty(%sq) : tensor<?x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{attention not fused: the scores have another user}}
  %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x8xf32>) outs(%o_init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o, %s : tensor<?x8xf32>, tensor<?x?xf32>
}
