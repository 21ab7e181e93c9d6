// RUN: tfm-opt %s -split-input-file -tfm-fuse-attention | FileCheck %s
// RUN: tfm-opt %s -split-input-file -tfm-fuse-attention=remarks=true -verify-diagnostics -o /dev/null

// One case per reason tfm-fuse-attention gives for leaving an attention chain
// on linalg unfused (the refusal table of docs/compiler.md names each case).
// Every case is the chain softmax(q kᵀ) v of tfm-fuse-attention-linalg.mlir
// with one thing changed; the remark is checked by the second RUN line, and
// the first checks that no tfm.attention replaced the chain.

// The second contraction takes the maximum of the products, not their sum.

// CHECK-LABEL: func.func @pv_not_multiply_accumulate
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @pv_not_multiply_accumulate(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the P·V contraction is not a multiply-accumulate}}
  %o = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.maximumf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The second contraction reads V over a fourth loop, parallel but not in its
// result.

// CHECK-LABEL: func.func @pv_result_not_indexed_by_parallel_loops
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @pv_result_not_indexed_by_parallel_loops(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the P·V contraction result is not indexed by its parallel loops}}
  %o = linalg.generic {indexing_maps = [affine_map<(i, j, k, l) -> (i, k)>, affine_map<(i, j, k, l) -> (l, j)>, affine_map<(i, j, k, l) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The second contraction reads V along the query loop: the values do not depend on
// the column loop.

// CHECK-LABEL: func.func @pv_outer_product
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @pv_outer_product(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x4xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the P·V contraction is an outer product along one operand}}
  %o = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%p, %v : tensor<4x6xf32>, tensor<6x4xf32>) outs(%o_init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The second contraction accumulates into a tensor of ones.

// CHECK-LABEL: func.func @pv_nonzero_init
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @pv_nonzero_init(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %one = arith.constant 1.000000e+00 : f32
  %o_ones_empty = tensor.empty() : tensor<4x8xf32>
  %o_ones = linalg.fill ins(%one : f32) outs(%o_ones_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the P·V contraction accumulates into a non-zero init}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_ones : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The probabilities are the right operand: W·P contracts them over their query dim.

// CHECK-LABEL: func.func @softmax_is_right_operand
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @softmax_is_right_operand(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %w: tensor<8x4xf32>) -> tensor<8x6xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<8x6xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<8x6xf32>) -> tensor<8x6xf32>
  // expected-remark @+1 {{attention not fused: the softmax result is the right operand of the P·V contraction}}
  %o = linalg.matmul ins(%w, %p : tensor<8x4xf32>, tensor<4x6xf32>) outs(%o_init : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %o : tensor<8x6xf32>
}

// -----

// 2 / scores is not a scale of the scores.

// CHECK-LABEL: func.func @scale_divides_a_value_by_the_scores
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @scale_divides_a_value_by_the_scores(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %two = arith.constant 2.000000e+00 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.divf %two, %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the scores are divided into a value, not by one}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// scores / 0: no finite scale.

// CHECK-LABEL: func.func @scale_divides_by_zero
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @scale_divides_by_zero(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.divf %a0, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the scores are divided by zero}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Nine scales of 3e38, each finite, multiply to more than a double holds:
// the scale is checked once all of them are combined.

// CHECK-LABEL: func.func @scale_not_finite
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @scale_not_finite(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %big = arith.constant 3.000000e+38 : f32
  %x0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %big : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %x1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x0 : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %big : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %x2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x1 : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %big : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %x3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x2 : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %big : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %x4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x3 : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %big : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %x5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x4 : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %big : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %x6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x5 : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %big : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %x7 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x6 : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %big : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %x8 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x7 : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %big : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x8 : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the combined scale is not finite}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The additive mask is read transposed.

// CHECK-LABEL: func.func @additive_mask_not_aligned
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @additive_mask_not_aligned(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %m: tensor<6x4xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %m : tensor<4x6xf32>, tensor<6x4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the mask is not read aligned with the scores' trailing dims}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The boolean mask is read transposed.

// CHECK-LABEL: func.func @boolean_mask_not_aligned
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @boolean_mask_not_aligned(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %m: tensor<6x4xi1>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %m : tensor<4x6xf32>, tensor<6x4xi1>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: i1, %out: f32):
    %r = arith.select %a1, %ninf, %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the mask is not read aligned with the scores' trailing dims}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// select(m, scores, -inf) keeps the scores where the mask is true.

// CHECK-LABEL: func.func @boolean_mask_keeps_where_true
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @boolean_mask_keeps_where_true(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %m: tensor<4x6xi1>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %m : tensor<4x6xf32>, tensor<4x6xi1>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: i1, %out: f32):
    %r = arith.select %a1, %a0, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the boolean mask keeps the scores where it is true; tfm.attention removes them there}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The index mask compares the query index with itself (two linalg.index ops,
// so that the comparison does not fold).

// CHECK-LABEL: func.func @index_mask_not_query_and_key
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @index_mask_not_query_and_key(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %i2 = linalg.index 0 : index
    %c = arith.cmpi sgt, %i, %i2 : index
    %r = arith.select %c, %ninf, %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the index mask does not compare the query and key indices}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The causal comparison fills with 0.

// CHECK-LABEL: func.func @index_mask_not_minus_inf
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @index_mask_not_minus_inf(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c = arith.cmpi sgt, %j, %i : index
    %r = arith.select %c, %zero, %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the index mask fills with 0, not -inf}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// j < i removes the keys before the query: anti-causal.

// CHECK-LABEL: func.func @index_mask_not_causal
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @index_mask_not_causal(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c = arith.cmpi slt, %j, %i : index
    %r = arith.select %c, %ninf, %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the index mask removes other scores than those of keys after the query (j > i)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The additive mask is added, then scaled with the scores.

// CHECK-LABEL: func.func @mask_added_before_scale
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @mask_added_before_scale(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %m: tensor<4x6xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %half = arith.constant 5.000000e-01 : f32
  %x0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %m : tensor<4x6xf32>, tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x0 : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %half : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the mask is added before the scale, which would scale the mask too}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// A -inf mask, then a negative scale: the masked scores become +inf.

// CHECK-LABEL: func.func @mask_scaled_negative
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @mask_scaled_negative(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %m: tensor<4x6xi1>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %neg = arith.constant -5.000000e-01 : f32
  %x0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %m : tensor<4x6xf32>, tensor<4x6xi1>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: i1, %out: f32):
    %r = arith.select %a1, %ninf, %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x0 : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %neg : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the mask is scaled by a negative factor afterwards}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The causal mask, then a negative scale.

// CHECK-LABEL: func.func @causal_mask_scaled_negative
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @causal_mask_scaled_negative(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %neg = arith.constant -5.000000e-01 : f32
  %x0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c = arith.cmpi sgt, %j, %i : index
    %r = arith.select %c, %ninf, %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x0 : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %neg : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the causal mask is scaled by a negative factor afterwards}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Two additive masks: tfm.attention takes one.

// CHECK-LABEL: func.func @two_masks
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @two_masks(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %m: tensor<4x6xf32>, %n: tensor<4x6xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %x0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %m : tensor<4x6xf32>, tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x0, %n : tensor<4x6xf32>, tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the scores have more than one mask}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The attention weights are also returned.

// CHECK-LABEL: func.func @softmax_result_has_other_user
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @softmax_result_has_other_user(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> (tensor<4x8xf32>, tensor<4x6xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the softmax result has another user}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o, %p : tensor<4x8xf32>, tensor<4x6xf32>
}

// -----

// The scaled scores are also returned.

// CHECK-LABEL: func.func @scaled_scores_have_other_user
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @scaled_scores_have_other_user(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> (tensor<4x8xf32>, tensor<4x6xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %half = arith.constant 5.000000e-01 : f32
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = arith.mulf %a0, %half : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the scaled scores have another user}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o, %x : tensor<4x8xf32>, tensor<4x6xf32>
}

// -----

// The masked scores are also returned.

// CHECK-LABEL: func.func @masked_scores_have_other_user
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @masked_scores_have_other_user(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %m: tensor<4x6xf32>) -> (tensor<4x8xf32>, tensor<4x6xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %m : tensor<4x6xf32>, tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the masked scores have another user}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o, %x : tensor<4x8xf32>, tensor<4x6xf32>
}

// -----

// The division divides the exponentials by themselves.

// CHECK-LABEL: func.func @spelled_softmax_divides_by_itself
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @spelled_softmax_divides_by_itself(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r_empty = tensor.empty() : tensor<4xf32>
  %r_ninf = linalg.fill ins(%ninf : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %r_zero = linalg.fill ins(%zero : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<4x6xf32>) outs(%r_ninf : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.maxnumf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %max : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %d = arith.subf %a0, %a1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<4x6xf32>) outs(%r_zero : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.addf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%e, %sum : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.divf %a0, %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the softmax is spelled out in a way the fusion does not follow (the division)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The divisor is a whole tensor, not a row sum broadcast along the keys.

// CHECK-LABEL: func.func @spelled_softmax_divisor_not_broadcast
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @spelled_softmax_divisor_not_broadcast(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %w: tensor<4x6xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r_empty = tensor.empty() : tensor<4xf32>
  %r_ninf = linalg.fill ins(%ninf : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %r_zero = linalg.fill ins(%zero : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<4x6xf32>) outs(%r_ninf : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.maxnumf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %max : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %d = arith.subf %a0, %a1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<4x6xf32>) outs(%r_zero : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.addf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%e, %w : tensor<4x6xf32>, tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.divf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the softmax is spelled out in a way the fusion does not follow (the sum is not broadcast along one dim)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The divisor is the row maximum, not the row sum.

// CHECK-LABEL: func.func @spelled_softmax_divisor_not_sum
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @spelled_softmax_divisor_not_sum(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r_empty = tensor.empty() : tensor<4xf32>
  %r_ninf = linalg.fill ins(%ninf : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %r_zero = linalg.fill ins(%zero : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<4x6xf32>) outs(%r_ninf : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.maxnumf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %max : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %d = arith.subf %a0, %a1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<4x6xf32>) outs(%r_zero : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.addf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%e, %max : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.divf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the softmax is spelled out in a way the fusion does not follow (the divisor is not the sum of the exponentials)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The row sum starts from 1.

// CHECK-LABEL: func.func @spelled_softmax_sum_from_one
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @spelled_softmax_sum_from_one(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r_empty = tensor.empty() : tensor<4xf32>
  %r_ninf = linalg.fill ins(%ninf : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %r_zero = linalg.fill ins(%zero : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<4x6xf32>) outs(%r_ninf : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.maxnumf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %max : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %d = arith.subf %a0, %a1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %one = arith.constant 1.000000e+00 : f32
  %r_one = linalg.fill ins(%one : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<4x6xf32>) outs(%r_one : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.addf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%e, %sum : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.divf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the softmax is spelled out in a way the fusion does not follow (the sum does not start from zero)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// exp(x) without the maximum subtracted: one input.

// CHECK-LABEL: func.func @spelled_softmax_exp_without_max
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @spelled_softmax_exp_without_max(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r_empty = tensor.empty() : tensor<4xf32>
  %r_ninf = linalg.fill ins(%ninf : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %r_zero = linalg.fill ins(%zero : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<4x6xf32>) outs(%r_ninf : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.maxnumf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %out: f32):
    %r = math.exp %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<4x6xf32>) outs(%r_zero : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.addf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%e, %sum : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.divf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the softmax is spelled out in a way the fusion does not follow (the exponentials)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// exp(x + max) instead of exp(x - max).

// CHECK-LABEL: func.func @spelled_softmax_exp_of_sum
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @spelled_softmax_exp_of_sum(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r_empty = tensor.empty() : tensor<4xf32>
  %r_ninf = linalg.fill ins(%ninf : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %r_zero = linalg.fill ins(%zero : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<4x6xf32>) outs(%r_ninf : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.maxnumf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %max : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %d = arith.addf %a0, %a1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<4x6xf32>) outs(%r_zero : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.addf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%e, %sum : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.divf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the softmax is spelled out in a way the fusion does not follow (the exponentials are not exp(x - max))}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// exp(x - c) with c a row vector from outside, not the row maximum.

// CHECK-LABEL: func.func @spelled_softmax_subtracts_other
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @spelled_softmax_subtracts_other(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %c: tensor<4xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r_empty = tensor.empty() : tensor<4xf32>
  %r_ninf = linalg.fill ins(%ninf : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %r_zero = linalg.fill ins(%zero : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<4x6xf32>) outs(%r_ninf : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.maxnumf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %c : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %d = arith.subf %a0, %a1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<4x6xf32>) outs(%r_zero : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.addf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%e, %sum : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.divf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the softmax is spelled out in a way the fusion does not follow (the subtracted value is not the row maximum)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The exponentials are also returned.

// CHECK-LABEL: func.func @spelled_softmax_value_has_other_user
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @spelled_softmax_value_has_other_user(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> (tensor<4x8xf32>, tensor<4x6xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r_empty = tensor.empty() : tensor<4xf32>
  %r_ninf = linalg.fill ins(%ninf : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %r_zero = linalg.fill ins(%zero : f32) outs(%r_empty : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<4x6xf32>) outs(%r_ninf : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.maxnumf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %max : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %d = arith.subf %a0, %a1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<4x6xf32>) outs(%r_zero : tensor<4xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.addf %a0, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%e, %sum : tensor<4x6xf32>, tensor<4xf32>) outs(%s_empty : tensor<4x6xf32>) {
  ^bb0(%a0: f32, %a1: f32, %out: f32):
    %r = arith.divf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: a value inside the softmax has another user}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o, %e : tensor<4x8xf32>, tensor<4x6xf32>
}

// -----

// The softmax's input is a function argument, not computed from Q·Kᵀ.

// CHECK-LABEL: func.func @softmax_of_an_argument
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @softmax_of_an_argument(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %w: tensor<4x6xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%w : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the softmax input is not computed from a Q·Kᵀ contraction by scales and masks}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The keys are f16 inside an f32 Q·Kᵀ.

// CHECK-LABEL: func.func @qk_element_types_differ
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @qk_element_types_differ(%q: tensor<4x8xf32>, %k: tensor<6x8xf16>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf16>) outs(%s_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: element types differ in the Q·Kᵀ contraction (f32, f16 -> f32)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The first contraction sums differences, not products.

// CHECK-LABEL: func.func @qk_not_multiply_accumulate
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @qk_not_multiply_accumulate(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.subf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the Q·Kᵀ contraction is not a multiply-accumulate}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The first contraction accumulates into the scores' uninitialized tensor.

// CHECK-LABEL: func.func @qk_nonzero_init
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @qk_nonzero_init(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the Q·Kᵀ contraction accumulates into a non-zero init}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The first contraction reads K along the query loop.

// CHECK-LABEL: func.func @qk_outer_product
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @qk_outer_product(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : tensor<4x8xf32>, tensor<4x8xf32>) outs(%s_init : tensor<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the Q·Kᵀ contraction is an outer product along one operand}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The first contraction reads K over a fourth loop, parallel but not in its
// result.

// CHECK-LABEL: func.func @qk_result_not_indexed_by_parallel_loops
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @qk_result_not_indexed_by_parallel_loops(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_empty = tensor.empty() : tensor<4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, d, e) -> (i, d)>, affine_map<(i, j, d, e) -> (e, d)>, affine_map<(i, j, d, e) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%s_empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %o_empty = tensor.empty() : tensor<4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{attention not fused: the Q·Kᵀ contraction result is not indexed by its parallel loops}}
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// One V for every batch: tfm.attention does not broadcast.

// CHECK-LABEL: func.func @v_batch_broadcast
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @v_batch_broadcast(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<6x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %s_empty = tensor.empty() : tensor<2x4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x8xf32>, tensor<2x6x8xf32>) outs(%s_init : tensor<2x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x4x6xf32>) outs(%s_empty : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o_empty = tensor.empty() : tensor<2x4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @+1 {{attention not fused: the P·V contraction reads V with its batch dims reordered or broadcast}}
  %o = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (k, j)>, affine_map<(b, i, j, k) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x6xf32>, tensor<6x8xf32>) outs(%o_init : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// One K for every batch.

// CHECK-LABEL: func.func @k_batch_broadcast
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @k_batch_broadcast(%q: tensor<2x4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<2x6x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %s_empty = tensor.empty() : tensor<2x4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x8xf32>, tensor<6x8xf32>) outs(%s_init : tensor<2x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x4x6xf32>) outs(%s_empty : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o_empty = tensor.empty() : tensor<2x4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @+1 {{attention not fused: the Q·Kᵀ contraction reads Q or K with its batch dims reordered or broadcast}}
  %o = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (b, k, j)>, affine_map<(b, i, j, k) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x8xf32>) outs(%o_init : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// K's batch dim is dynamic where Q's is 2: a static size against a dynamic one
// may be a broadcast at run time.

// CHECK-LABEL: func.func @batch_static_against_dynamic
// CHECK-NOT:   tfm.attention
// CHECK:       return
func.func @batch_static_against_dynamic(%q: tensor<2x4x8xf32>, %k: tensor<?x6x8xf32>, %v: tensor<2x6x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %s_empty = tensor.empty() : tensor<2x4x6xf32>
  %s_init = linalg.fill ins(%zero : f32) outs(%s_empty : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x8xf32>, tensor<?x6x8xf32>) outs(%s_init : tensor<2x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x4x6xf32>) outs(%s_empty : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %o_empty = tensor.empty() : tensor<2x4x8xf32>
  %o_init = linalg.fill ins(%zero : f32) outs(%o_empty : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @+1 {{attention not fused: query, key and value differ in batch dim 0: batch dims that broadcast are not fused}}
  %o = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (b, k, j)>, affine_map<(b, i, j, k) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x8xf32>) outs(%o_init : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}
