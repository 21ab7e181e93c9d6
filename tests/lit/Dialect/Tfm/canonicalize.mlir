// RUN: tfm-opt %s -split-input-file -canonicalize | FileCheck %s

// The ops' folders: a transpose of a dimension with itself, a scale by 1
// (multiplying or dividing) and a reshape to the input's own shape are the
// input. Each case also keeps a look-alike that must not fold.

// CHECK-LABEL: func.func @transpose_same_dim(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[T:.*]] = tfm.transpose %[[X]], 0, -1
// CHECK-NEXT:    return %[[X]], %[[T]]
func.func @transpose_same_dim(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x3x2xf32>) {
  %0 = tfm.transpose %x, 1, -2 : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %1 = tfm.transpose %x, 0, -1 : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<4x3x2xf32>
}

// -----

// CHECK-LABEL: func.func @scale_by_one(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4xf32>)
// CHECK:         %[[S:.*]] = tfm.scale %[[X]], 2.000000e+00 {divide}
// CHECK-NEXT:    return %[[X]], %[[X]], %[[S]]
func.func @scale_by_one(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = tfm.scale %x, 1.0 : tensor<?x4xf32>
  %1 = tfm.scale %x, 1.0 {divide} : tensor<?x4xf32>
  %2 = tfm.scale %x, 2.0 {divide} : tensor<?x4xf32>
  return %0, %1, %2 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// A dynamic size folds only when it is the input's own size in that
// dimension; %n might not be.
// CHECK-LABEL: func.func @reshape_same_shape(
// CHECK-SAME:    %[[X:.*]]: tensor<?x4xf32>, %[[S:.*]]: tensor<2x6xf32>, %[[N:.*]]: index)
// CHECK:         %[[R:.*]] = tfm.reshape %[[X]][%[[N]]]
// CHECK-NEXT:    return %[[X]], %[[S]], %[[R]]
func.func @reshape_same_shape(%x: tensor<?x4xf32>, %s: tensor<2x6xf32>, %n: index)
    -> (tensor<?x4xf32>, tensor<2x6xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x4xf32>
  %0 = tfm.reshape %x [%d0] : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = tfm.reshape %s : tensor<2x6xf32> -> tensor<2x6xf32>
  %2 = tfm.reshape %x [%n] : tensor<?x4xf32> -> tensor<?x4xf32>
  return %0, %1, %2 : tensor<?x4xf32>, tensor<2x6xf32>, tensor<?x4xf32>
}
