// RUN: tfm-opt %s | tfm-opt | FileCheck %s
// RUN: tfm-opt %s -mlir-print-op-generic | tfm-opt | FileCheck %s

// Round trip of the elementwise, comparison, reduction and shape ops, with
// broadcast operands (a rank-0 constant, a missing leading dim, a static 1
// facing a dynamic dim) and every dtype they accept.

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[X:.*]]: tensor<?x1x4xf32>, %[[Y:.*]]: tensor<?x4xf32>, %[[C:.*]]: tensor<f32>, %[[I:.*]]: tensor<?x4xi64>)
func.func @binary(%x: tensor<?x1x4xf32>, %y: tensor<?x4xf32>, %c: tensor<f32>,
                  %i: tensor<?x4xi64>) {
  // CHECK: tfm.sub %[[C]], %[[X]] : tensor<f32>, tensor<?x1x4xf32> -> tensor<?x1x4xf32>
  %0 = tfm.sub %c, %x : tensor<f32>, tensor<?x1x4xf32> -> tensor<?x1x4xf32>
  // CHECK: tfm.mul %[[X]], %[[Y]] : tensor<?x1x4xf32>, tensor<?x4xf32> -> tensor<?x?x4xf32>
  %1 = tfm.mul %x, %y : tensor<?x1x4xf32>, tensor<?x4xf32> -> tensor<?x?x4xf32>
  // CHECK: tfm.div %[[Y]], %[[C]] : tensor<?x4xf32>, tensor<f32> -> tensor<?x4xf32>
  %2 = tfm.div %y, %c : tensor<?x4xf32>, tensor<f32> -> tensor<?x4xf32>
  // CHECK: tfm.maximum %[[I]], %[[I]] : tensor<?x4xi64>, tensor<?x4xi64> -> tensor<?x4xi64>
  %3 = tfm.maximum %i, %i : tensor<?x4xi64>, tensor<?x4xi64> -> tensor<?x4xi64>
  // CHECK: tfm.minimum %[[Y]], %[[Y]]
  %4 = tfm.minimum %y, %y : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: tfm.pow %[[Y]], %[[C]]
  %5 = tfm.pow %y, %c : tensor<?x4xf32>, tensor<f32> -> tensor<?x4xf32>
  // The inferred type is tensor<?x4xf32>; a result may know more.
  // CHECK: tfm.sub %[[Y]], %[[C]] : tensor<?x4xf32>, tensor<f32> -> tensor<5x4xf32>
  %6 = tfm.sub %y, %c : tensor<?x4xf32>, tensor<f32> -> tensor<5x4xf32>
  return
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<?x4xf32>, %i: tensor<3xi32>, %b: tensor<2x?xi1>) {
  // CHECK: tfm.exp %{{.*}} : tensor<?x4xf32>
  %0 = tfm.exp %x : tensor<?x4xf32>
  // CHECK: tfm.log
  %1 = tfm.log %x : tensor<?x4xf32>
  // CHECK: tfm.sqrt
  %2 = tfm.sqrt %x : tensor<?x4xf32>
  // CHECK: tfm.rsqrt
  %3 = tfm.rsqrt %x : tensor<?x4xf32>
  // CHECK: tfm.tanh
  %4 = tfm.tanh %x : tensor<?x4xf32>
  // CHECK: tfm.erf
  %5 = tfm.erf %x : tensor<?x4xf32>
  // CHECK: tfm.sin
  %6 = tfm.sin %x : tensor<?x4xf32>
  // CHECK: tfm.cos
  %7 = tfm.cos %x : tensor<?x4xf32>
  // CHECK: tfm.neg %{{.*}} : tensor<3xi32>
  %8 = tfm.neg %i : tensor<3xi32>
  // CHECK: tfm.abs %{{.*}} : tensor<?x4xf32>
  %9 = tfm.abs %x : tensor<?x4xf32>
  // CHECK: tfm.logical_not %{{.*}} : tensor<2x?xi1>
  %10 = tfm.logical_not %b : tensor<2x?xi1>
  return
}

// CHECK-LABEL: func.func @predicates
// CHECK-SAME: (%[[M:.*]]: tensor<?x?xi64>, %[[Z:.*]]: tensor<i64>, %[[X:.*]]: tensor<?x?xf32>, %[[B:.*]]: tensor<?xi1>)
func.func @predicates(%m: tensor<?x?xi64>, %z: tensor<i64>, %x: tensor<?x?xf32>,
                      %b: tensor<?xi1>) {
  // CHECK: %[[P:.*]] = tfm.compare eq %[[M]], %[[Z]] : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %p = tfm.compare eq %m, %z : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  // CHECK: %[[Q:.*]] = tfm.logical_and %[[P]], %[[B]] : tensor<?x?xi1>, tensor<?xi1> -> tensor<?x?xi1>
  %q = tfm.logical_and %p, %b : tensor<?x?xi1>, tensor<?xi1> -> tensor<?x?xi1>
  // CHECK: tfm.logical_or %[[Q]], %[[B]]
  %r = tfm.logical_or %q, %b : tensor<?x?xi1>, tensor<?xi1> -> tensor<?x?xi1>
  // CHECK: tfm.where %[[Q]], %[[X]], %[[X]] : tensor<?x?xi1>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %w = tfm.where %q, %x, %x : tensor<?x?xi1>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  // CHECK: tfm.cast %[[M]] : tensor<?x?xi64> -> tensor<?x?xf32>
  %c = tfm.cast %m : tensor<?x?xi64> -> tensor<?x?xf32>
  return
}

// CHECK-LABEL: func.func @shapes
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x64xf32>, %[[B:.*]]: index, %[[S:.*]]: index)
func.func @shapes(%x: tensor<?x?x64xf32>, %b: index, %s: index) {
  // CHECK: tfm.reduce mean %[[X]] dims [2] keepdim : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
  %0 = tfm.reduce mean %x dims [2] keepdim : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
  // CHECK: tfm.reduce sum %[[X]] dims [0, 2] : tensor<?x?x64xf32> -> tensor<?xf32>
  %1 = tfm.reduce sum %x dims [0, 2] : tensor<?x?x64xf32> -> tensor<?xf32>
  // CHECK: tfm.reshape %[[X]][%[[B]], %[[S]]] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %2 = tfm.reshape %x [%b, %s] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  // CHECK: tfm.permute %{{.*}} [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %3 = tfm.permute %2 [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  return
}
