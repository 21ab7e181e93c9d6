// RUN: tfm-opt %s -split-input-file -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// The CPU kernels of tfm.packed_linear and tfm.attention address rows
// densely. An operand that bufferizes to a strided view (BERT's pooler reads
// x[:, 0]) is copied into a contiguous buffer; a contiguous one is used as
// it is.

// CHECK-LABEL: func.func @copies_strided_input(
// CHECK-SAME:    %[[X:.*]]: memref<2x7x4xf32{{.*}}>, %[[W:.*]]: memref<1x4x8xf32{{.*}}>, %[[Y:.*]]: memref<2x3xf32{{.*}}>)
// CHECK:         %[[ROW:.*]] = memref.subview %[[X]][0, 0, 0] [2, 1, 4] [1, 1, 1] : {{.*}} to memref<2x4xf32, strided<[28, 1]{{.*}}>>
// CHECK:         %[[DENSE:.*]] = memref.alloc() {{.*}}: memref<2x4xf32>
// CHECK:         memref.copy %[[ROW]], %[[DENSE]]
// CHECK:         tfm.packed_linear ins(%[[DENSE]], %[[W]] : memref<2x4xf32>, {{.*}}) outs(%[[Y]] : {{.*}})
func.func @copies_strided_input(%x: tensor<2x7x4xf32>, %w: tensor<1x4x8xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %row = tensor.extract_slice %x[0, 0, 0] [2, 1, 4] [1, 1, 1] : tensor<2x7x4xf32> to tensor<2x4xf32>
  %r = tfm.packed_linear ins(%row, %w : tensor<2x4xf32>, tensor<1x4x8xf32>) outs(%y : tensor<2x3xf32>) activation "none" -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// A result that lands in a strided view of a larger buffer is computed in a
// contiguous one and copied there.

// CHECK-LABEL: func.func @copies_strided_init(
// CHECK-SAME:    %[[X:.*]]: memref<3x4xf32{{.*}}>, %[[W:.*]]: memref<1x4x8xf32{{.*}}>, %[[OUT:.*]]: memref<3x6xf32{{.*}}>)
// CHECK:         %[[VIEW:.*]] = memref.subview %[[OUT]][0, 2] [3, 3] [1, 1]
// CHECK:         %[[DENSE:.*]] = memref.alloc() {{.*}}: memref<3x3xf32>
// CHECK-NOT:     memref.copy %[[VIEW]], %[[DENSE]]
// CHECK:         tfm.packed_linear ins(%[[X]], %[[W]] : {{.*}}) outs(%[[DENSE]] : memref<3x3xf32>)
// CHECK:         memref.copy %[[DENSE]], %[[VIEW]]
func.func @copies_strided_init(%x: tensor<3x4xf32>, %w: tensor<1x4x8xf32>, %out: tensor<3x6xf32>) -> tensor<3x6xf32> {
  %slot = tensor.extract_slice %out[0, 2] [3, 3] [1, 1] : tensor<3x6xf32> to tensor<3x3xf32>
  %r = tfm.packed_linear ins(%x, %w : tensor<3x4xf32>, tensor<1x4x8xf32>) outs(%slot : tensor<3x3xf32>) activation "none" -> tensor<3x3xf32>
  %y = tensor.insert_slice %r into %out[0, 2] [3, 3] [1, 1] : tensor<3x3xf32> into tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

// -----

// Contiguous operands need no copy.

// CHECK-LABEL: func.func @keeps_contiguous(
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.copy
// CHECK:         tfm.packed_linear
func.func @keeps_contiguous(%x: tensor<3x4xf32>, %w: tensor<1x4x8xf32>, %y: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %r = tfm.packed_linear ins(%x, %w : tensor<3x4xf32>, tensor<1x4x8xf32>) outs(%y : tensor<3x3xf32>) activation "none" -> tensor<3x3xf32>
  return %r : tensor<3x3xf32>
}
