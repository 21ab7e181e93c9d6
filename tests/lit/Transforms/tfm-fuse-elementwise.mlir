// RUN: tfm-opt %s -split-input-file -tfm-fuse-elementwise | FileCheck %s

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#lhs = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#rhs = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// A GELU before a linear layer: the layer reads each activation once per
// output column, so fusing would evaluate erf N times per element. The
// GELU stays its own op and the GEMM's body a plain multiply-add.
// CHECK-LABEL: func.func @gelu_then_linear(
// CHECK:         %[[G:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK:           math.erf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%[[G]],
// CHECK-NOT:       math.erf
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.addf
func.func @gelu_then_linear(%x: tensor<2x5x16xf32>, %w: tensor<8x16xf32>, %acc: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  %e = tensor.empty() : tensor<2x5x16xf32>
  %g = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x5x16xf32>) outs(%e : tensor<2x5x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %c = arith.constant 0.70710678 : f32
    %s = arith.mulf %in, %c : f32
    %r = math.erf %s : f32
    %y = arith.mulf %in, %r : f32
    linalg.yield %y : f32
  } -> tensor<2x5x16xf32>
  %y = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%g, %w : tensor<2x5x16xf32>, tensor<8x16xf32>) outs(%acc : tensor<2x5x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x5x8xf32>
  return %y : tensor<2x5x8xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#t3 = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#lhs = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#rhs = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// A transpose only moves data: it fuses into the contraction (a permuted
// read) however often the contraction reads each element.
// CHECK-LABEL: func.func @transpose_then_matmul(
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-NOT:     linalg.generic
func.func @transpose_then_matmul(%a: tensor<2x4x6xf32>, %k: tensor<2x5x6xf32>, %acc: tensor<2x4x5xf32>) -> tensor<2x4x5xf32> {
  %e = tensor.empty() : tensor<2x6x5xf32>
  %kt = linalg.generic {indexing_maps = [#t3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x5x6xf32>) outs(%e : tensor<2x6x5xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<2x6x5xf32>
  %y = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %kt : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%acc : tensor<2x4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x5xf32>
  return %y : tensor<2x4x5xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A row reduction reads each element once: exp(x) fuses into the sum, as
// softmax's pieces do; so does an elementwise chain.
// CHECK-LABEL: func.func @exp_then_row_sum(
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           arith.mulf
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic
func.func @exp_then_row_sum(%x: tensor<4x7xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x7xf32>
  %d = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x7xf32>) outs(%e : tensor<4x7xf32>) {
  ^bb0(%in: f32, %o: f32):
    %y = arith.mulf %in, %in : f32
    linalg.yield %y : f32
  } -> tensor<4x7xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<4x7xf32>) outs(%e : tensor<4x7xf32>) {
  ^bb0(%in: f32, %o: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<4x7xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%p : tensor<4x7xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %y = arith.addf %o, %in : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}
