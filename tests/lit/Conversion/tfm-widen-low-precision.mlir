// RUN: tfm-opt %s -split-input-file -tfm-widen-low-precision | FileCheck %s

// An op that computes on bf16 or f16 becomes the same op on f32 between
// casts: each narrow operand widened, each narrow result rounded back.

// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xbf16>, %[[C:.*]]: tensor<bf16>)
// CHECK-DAG:  %[[WX:.*]] = tfm.cast %[[X]] : tensor<?x4xbf16> -> tensor<?x4xf32>
// CHECK-DAG:  %[[WC:.*]] = tfm.cast %[[C]] : tensor<bf16> -> tensor<f32>
// CHECK:      %[[S:.*]] = tfm.add %[[WX]], %[[WC]] : tensor<?x4xf32>, tensor<f32> -> tensor<?x4xf32>
// CHECK:      %[[R:.*]] = tfm.cast %[[S]] : tensor<?x4xf32> -> tensor<?x4xbf16>
// CHECK:      return %[[R]]
func.func @add(%x: tensor<?x4xbf16>, %c: tensor<bf16>) -> tensor<?x4xbf16> {
  %0 = tfm.add %x, %c : tensor<?x4xbf16>, tensor<bf16> -> tensor<?x4xbf16>
  return %0 : tensor<?x4xbf16>
}

// -----

// A chain rounds after each op; an operand used twice is widened once.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<8xf16>)
// CHECK:      %[[W:.*]] = tfm.cast %[[X]] : tensor<8xf16> -> tensor<8xf32>
// CHECK-NEXT: %[[M:.*]] = tfm.mul %[[W]], %[[W]] : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[MR:.*]] = tfm.cast %[[M]] : tensor<8xf32> -> tensor<8xf16>
// CHECK-NEXT: %[[MW:.*]] = tfm.cast %[[MR]] : tensor<8xf16> -> tensor<8xf32>
// CHECK-NEXT: %[[E:.*]] = tfm.exp %[[MW]] : tensor<8xf32>
// CHECK-NEXT: %[[ER:.*]] = tfm.cast %[[E]] : tensor<8xf32> -> tensor<8xf16>
// CHECK-NEXT: return %[[ER]]
func.func @chain(%x: tensor<8xf16>) -> tensor<8xf16> {
  %0 = tfm.mul %x, %x : tensor<8xf16>, tensor<8xf16> -> tensor<8xf16>
  %1 = tfm.exp %0 : tensor<8xf16>
  return %1 : tensor<8xf16>
}

// -----

// A comparison widens its operands; its i1 result stays.
// CHECK-LABEL: func.func @compare
// CHECK:      %[[A:.*]] = tfm.cast %{{.*}} : tensor<3xbf16> -> tensor<3xf32>
// CHECK:      %[[B:.*]] = tfm.cast %{{.*}} : tensor<3xbf16> -> tensor<3xf32>
// CHECK:      %[[P:.*]] = tfm.compare gt %[[A]], %[[B]] : tensor<3xf32>, tensor<3xf32> -> tensor<3xi1>
// CHECK-NEXT: return %[[P]]
func.func @compare(%a: tensor<3xbf16>, %b: tensor<3xbf16>) -> tensor<3xi1> {
  %0 = tfm.compare gt %a, %b : tensor<3xbf16>, tensor<3xbf16> -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Reductions, softmax and layers accumulate in f32 and round once.
// CHECK-LABEL: func.func @reductions_and_layers
// CHECK:      tfm.reduce sum %{{.*}} dims [1] : tensor<2x?xf32> -> tensor<2xf32>
// CHECK-NEXT: tfm.cast %{{.*}} : tensor<2xf32> -> tensor<2xbf16>
// CHECK:      tfm.softmax %{{.*}}, -1 : tensor<2x?xf32>
// CHECK-NEXT: tfm.cast %{{.*}} : tensor<2x?xf32> -> tensor<2x?xbf16>
// CHECK-DAG:  %[[WX:.*]] = tfm.cast %{{.*}} : tensor<2x?xbf16> -> tensor<2x?xf32>
// CHECK-DAG:  %[[WW:.*]] = tfm.cast %{{.*}} : tensor<3x?xbf16> -> tensor<3x?xf32>
// CHECK:      %[[L:.*]] = tfm.linear %[[WX]], %[[WW]] : tensor<2x?xf32>, tensor<3x?xf32> -> tensor<2x3xf32>
// CHECK-NEXT: tfm.cast %[[L]] : tensor<2x3xf32> -> tensor<2x3xbf16>
// CHECK:      tfm.layer_norm %{{.*}} eps 1.000000e-05 : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK-NEXT: tfm.cast %{{.*}} : tensor<2x?xf32> -> tensor<2x?xbf16>
// CHECK:      tfm.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 5.000000e-01 : f64} : tensor<2x?xf32>, tensor<2x?xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK-NEXT: tfm.cast %{{.*}} : tensor<2x?xf32> -> tensor<2x?xbf16>
// CHECK:      return
func.func @reductions_and_layers(%x: tensor<2x?xbf16>, %w: tensor<3x?xbf16>)
    -> (tensor<2xbf16>, tensor<2x?xbf16>, tensor<2x3xbf16>, tensor<2x?xbf16>, tensor<2x?xbf16>) {
  %0 = tfm.reduce sum %x dims [1] : tensor<2x?xbf16> -> tensor<2xbf16>
  %1 = tfm.softmax %x, -1 : tensor<2x?xbf16>
  %2 = tfm.linear %x, %w : tensor<2x?xbf16>, tensor<3x?xbf16> -> tensor<2x3xbf16>
  %3 = tfm.layer_norm %x eps 1.0e-05 : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
  %4 = tfm.sdpa %x, %x, %x {causal, scale = 0.5 : f64} : tensor<2x?xbf16>, tensor<2x?xbf16>, tensor<2x?xbf16> -> tensor<2x?xbf16>
  return %0, %1, %2, %3, %4 : tensor<2xbf16>, tensor<2x?xbf16>, tensor<2x3xbf16>, tensor<2x?xbf16>, tensor<2x?xbf16>
}

// -----

// tfm.attention writes its init: an f32 init of the same shape replaces it
// instead of a cast of whatever it holds.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8xbf16>, %[[INIT:.*]]: tensor<?x8xbf16>)
// CHECK-DAG:  %[[WQ:.*]] = tfm.cast %[[Q]] : tensor<?x8xbf16> -> tensor<?x8xf32>
// CHECK-DAG:  %[[N:.*]] = tensor.dim %[[INIT]], %c0
// CHECK-DAG:  %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x8xf32>
// CHECK-NOT:  tfm.cast %[[INIT]]
// CHECK:      %[[O:.*]] = tfm.attention ins(%[[WQ]], %[[WQ]], %[[WQ]] : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) outs(%[[E]] : tensor<?x8xf32>) scale 1.250000e-01 {causal} -> tensor<?x8xf32>
// CHECK-NEXT: %[[R:.*]] = tfm.cast %[[O]] : tensor<?x8xf32> -> tensor<?x8xbf16>
// CHECK-NEXT: return %[[R]]
func.func @attention(%q: tensor<?x8xbf16>, %init: tensor<?x8xbf16>) -> tensor<?x8xbf16> {
  %0 = tfm.attention ins(%q, %q, %q : tensor<?x8xbf16>, tensor<?x8xbf16>, tensor<?x8xbf16>)
         outs(%init : tensor<?x8xbf16>) scale 0.125 {causal} -> tensor<?x8xbf16>
  return %0 : tensor<?x8xbf16>
}

// -----

// f32 attention over a bf16/f16 cache stays as it is: the kernels read the
// narrow K and V in place, and widening them would copy the whole cache.
// CHECK-LABEL: func.func @attention_low_precision_cache
// CHECK-NOT:  tfm.cast
// CHECK:      tfm.attention ins(%{{.*}} : tensor<?x2x1x8xf32>, tensor<?x2x16x8xbf16>, tensor<?x2x16x8xf16>)
// CHECK-NOT:  tfm.cast
// CHECK:      return
func.func @attention_low_precision_cache(%q: tensor<?x2x1x8xf32>, %k: tensor<?x2x16x8xbf16>, %v: tensor<?x2x16x8xf16>,
                                         %past: tensor<?xi64>, %init: tensor<?x2x1x8xf32>) -> tensor<?x2x1x8xf32> {
  %0 = tfm.attention ins(%q, %k, %v : tensor<?x2x1x8xf32>, tensor<?x2x16x8xbf16>, tensor<?x2x16x8xf16>)
         query_offset(%past : tensor<?xi64>) outs(%init : tensor<?x2x1x8xf32>) scale 0.125 {causal} -> tensor<?x2x1x8xf32>
  return %0 : tensor<?x2x1x8xf32>
}

// -----

// Ops that only move or select elements keep their types, and f32 ops are
// left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT: %[[T:.*]] = tfm.transpose %{{.*}}, 0, 1 : tensor<2x3xbf16> -> tensor<3x2xbf16>
// CHECK-NEXT: %[[R:.*]] = tfm.reshape %[[T]] : tensor<3x2xbf16> -> tensor<6xbf16>
// CHECK-NEXT: %[[W:.*]] = tfm.where %{{.*}}, %[[R]], %[[R]] : tensor<6xi1>, tensor<6xbf16>, tensor<6xbf16> -> tensor<6xbf16>
// CHECK-NEXT: %[[F:.*]] = tfm.masked_fill %[[W]], %{{.*}}, 0.000000e+00 : tensor<6xbf16>, tensor<6xi1> -> tensor<6xbf16>
// CHECK-NEXT: %[[C:.*]] = tfm.cast %[[F]] : tensor<6xbf16> -> tensor<6xf32>
// CHECK-NEXT: %[[E:.*]] = tfm.exp %[[C]] : tensor<6xf32>
// CHECK-NEXT: return %[[E]]
func.func @untouched(%x: tensor<2x3xbf16>, %m: tensor<6xi1>) -> tensor<6xf32> {
  %0 = tfm.transpose %x, 0, 1 : tensor<2x3xbf16> -> tensor<3x2xbf16>
  %1 = tfm.reshape %0 : tensor<3x2xbf16> -> tensor<6xbf16>
  %2 = tfm.where %m, %1, %1 : tensor<6xi1>, tensor<6xbf16>, tensor<6xbf16> -> tensor<6xbf16>
  %3 = tfm.masked_fill %2, %m, 0.0 : tensor<6xbf16>, tensor<6xi1> -> tensor<6xbf16>
  %4 = tfm.cast %3 : tensor<6xbf16> -> tensor<6xf32>
  %5 = tfm.exp %4 : tensor<6xf32>
  return %5 : tensor<6xf32>
}
