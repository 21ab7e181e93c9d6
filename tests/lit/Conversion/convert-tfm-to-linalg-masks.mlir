// RUN: tfm-opt %s -split-input-file -convert-tfm-to-linalg -mlir-print-local-scope | FileCheck %s
// RUN: tfm-opt %s -split-input-file -convert-tfm-to-linalg -canonicalize -tfm-fuse-attention \
// RUN:   | FileCheck %s --check-prefix=FUSED

// masked_fill: one select generic; the mask aligns at the trailing dims and
// its static 1 reads index 0.

// CHECK-LABEL: func.func @masked_fill_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<2x?x?xf32>, %[[M:.*]]: tensor<1x?xi1>)
// CHECK-DAG:  %[[FILL:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NOT:  tfm.masked_fill
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<2x?x?xf32>
// CHECK-NOT:  tfm.masked_fill
// CHECK:      %[[R:.*]] = linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME:   iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME:   ins(%[[X]], %[[M]] : tensor<2x?x?xf32>, tensor<1x?xi1>) outs(%[[EMPTY]] : tensor<2x?x?xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[MASKED:.*]]: i1, %{{.*}}: f32):
// CHECK-NEXT:   %[[SEL:.*]] = arith.select %[[MASKED]], %[[FILL]], %[[IN]] : f32
// CHECK-NEXT:   linalg.yield %[[SEL]] : f32
// CHECK-NOT:  tfm.masked_fill
// CHECK:      return %[[R]]
func.func @masked_fill_broadcast(%x: tensor<2x?x?xf32>, %m: tensor<1x?xi1>) -> tensor<2x?x?xf32> {
  %0 = tfm.masked_fill %x, %m, 0xFFF0000000000000 : tensor<2x?x?xf32>, tensor<1x?xi1> -> tensor<2x?x?xf32>
  return %0 : tensor<2x?x?xf32>
}

// -----

// Any fill value, in the element type of the input.

// CHECK-LABEL: func.func @masked_fill_value
// CHECK:      %[[FILL:.*]] = arith.constant -1.000000e+09 : f64
// CHECK:      linalg.generic
// CHECK:        arith.select %{{.*}}, %[[FILL]], %{{.*}} : f64
func.func @masked_fill_value(%x: tensor<4x4xf64>, %m: tensor<4x4xi1>) -> tensor<4x4xf64> {
  %0 = tfm.masked_fill %x, %m, -1.0e+09 : tensor<4x4xf64>, tensor<4x4xi1> -> tensor<4x4xf64>
  return %0 : tensor<4x4xf64>
}

// -----

// causal_mask: the query and key indices are the last two loops; keys after
// the query get -inf.

// CHECK-LABEL: func.func @causal_mask
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x?x?xf32>)
// CHECK-DAG:  %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NOT:  tfm.causal_mask
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%{{.*}}, %{{.*}}, %{{.*}}) : tensor<?x3x?x?xf32>
// CHECK-NOT:  tfm.causal_mask
// CHECK:      %[[R:.*]] = linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME:   ins(%[[X]] : tensor<?x3x?x?xf32>) outs(%[[EMPTY]] : tensor<?x3x?x?xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[I:.*]] = linalg.index 2 : index
// CHECK-NEXT:   %[[J:.*]] = linalg.index 3 : index
// CHECK-NEXT:   %[[FUTURE:.*]] = arith.cmpi ugt, %[[J]], %[[I]] : index
// CHECK-NEXT:   %[[SEL:.*]] = arith.select %[[FUTURE]], %[[NINF]], %[[IN]] : f32
// CHECK-NEXT:   linalg.yield %[[SEL]] : f32
// CHECK-NOT:  tfm.causal_mask
// CHECK:      return %[[R]]
func.func @causal_mask(%x: tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32> {
  %0 = tfm.causal_mask %x : tensor<?x3x?x?xf32>
  return %0 : tensor<?x3x?x?xf32>
}

// -----

// The lowered masks are what tfm-fuse-attention recognizes at the linalg
// level: a chain with both becomes one tfm.attention with the boolean mask
// and `causal`.

// CHECK-LABEL: func.func @masked_chain
// FUSED-LABEL: func.func @masked_chain
// FUSED-SAME: %[[M:[^:]*]]: tensor<?x?xi1>)
// FUSED:      tfm.attention ins({{.*}}) mask(%[[M]] : tensor<?x?xi1>) outs({{.*}}) scale 5.000000e-01 {causal} ->
// FUSED-NOT:  linalg.generic
func.func @masked_chain(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>, %m: tensor<?x?xi1>) -> tensor<?x8xf32> {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %ss = tfm.scale %s, 2.0 {divide} : tensor<?x?xf32>
  %sm = tfm.masked_fill %ss, %m, 0xFFF0000000000000 : tensor<?x?xf32>, tensor<?x?xi1> -> tensor<?x?xf32>
  %sc = tfm.causal_mask %sm : tensor<?x?xf32>
  %p = tfm.softmax %sc, -1 : tensor<?x?xf32>
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}
