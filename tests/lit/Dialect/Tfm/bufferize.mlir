// RUN: tfm-opt %s -split-input-file -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// The GEMM of tfm.packed_linear reads matrices through a row stride: a
// slice whose rows are contiguous (BERT's pooler reads x[:, 0]; one batch of
// a batched matmul) is used in place, with no copy.

// CHECK-LABEL: func.func @reads_row_slice_in_place(
// CHECK-SAME:    %[[X:.*]]: memref<2x7x4xf32{{.*}}>, %[[W:.*]]: memref<1x4x8xf32{{.*}}>, %[[Y:.*]]: memref<2x3xf32{{.*}}>)
// CHECK:         %[[ROW:.*]] = memref.subview %[[X]][0, 0, 0] [2, 1, 4] [1, 1, 1] : {{.*}} to memref<2x4xf32, strided<[28, 1]{{.*}}>>
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.copy
// CHECK:         tfm.packed_linear ins(%[[ROW]], %[[W]] : memref<2x4xf32, strided<[28, 1]{{.*}}>>, {{.*}}) outs(%[[Y]] : {{.*}})
func.func @reads_row_slice_in_place(%x: tensor<2x7x4xf32>, %w: tensor<1x4x8xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %row = tensor.extract_slice %x[0, 0, 0] [2, 1, 4] [1, 1, 1] : tensor<2x7x4xf32> to tensor<2x4xf32>
  %r = tfm.packed_linear ins(%row, %w : tensor<2x4xf32>, tensor<1x4x8xf32>) outs(%y : tensor<2x3xf32>) activation none -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// A strided view of rank 3 cannot be read as rows: it is copied into a
// contiguous buffer first.

// CHECK-LABEL: func.func @copies_strided_rank3_input(
// CHECK-SAME:    %[[X:.*]]: memref<2x7x4xf32{{.*}}>, %[[W:.*]]: memref<1x4x8xf32{{.*}}>, %[[Y:.*]]: memref<2x3x3xf32{{.*}}>)
// CHECK:         %[[ROWS:.*]] = memref.subview %[[X]][0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK:         %[[DENSE:.*]] = memref.alloc() {{.*}}: memref<2x3x4xf32>
// CHECK:         memref.copy %[[ROWS]], %[[DENSE]]
// CHECK:         tfm.packed_linear ins(%[[DENSE]], %[[W]] : memref<2x3x4xf32>, {{.*}}) outs(%[[Y]] : {{.*}})
func.func @copies_strided_rank3_input(%x: tensor<2x7x4xf32>, %w: tensor<1x4x8xf32>, %y: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  %rows = tensor.extract_slice %x[0, 0, 0] [2, 3, 4] [1, 1, 1] : tensor<2x7x4xf32> to tensor<2x3x4xf32>
  %r = tfm.packed_linear ins(%rows, %w : tensor<2x3x4xf32>, tensor<1x4x8xf32>) outs(%y : tensor<2x3x3xf32>) activation none -> tensor<2x3x3xf32>
  return %r : tensor<2x3x3xf32>
}

// -----

// A result that lands in a view whose last dim is not contiguous is computed
// in a contiguous buffer and copied there.

// CHECK-LABEL: func.func @copies_strided_init(
// CHECK-SAME:    %[[X:.*]]: memref<3x4xf32{{.*}}>, %[[W:.*]]: memref<1x4x8xf32{{.*}}>, %[[OUT:.*]]: memref<3x6xf32{{.*}}>)
// CHECK:         %[[VIEW:.*]] = memref.subview %[[OUT]][0, 0] [3, 3] [1, 2]
// CHECK:         %[[DENSE:.*]] = memref.alloc() {{.*}}: memref<3x3xf32>
// CHECK-NOT:     memref.copy %[[VIEW]], %[[DENSE]]
// CHECK:         tfm.packed_linear ins(%[[X]], %[[W]] : {{.*}}) outs(%[[DENSE]] : memref<3x3xf32>)
// CHECK:         memref.copy %[[DENSE]], %[[VIEW]]
func.func @copies_strided_init(%x: tensor<3x4xf32>, %w: tensor<1x4x8xf32>, %out: tensor<3x6xf32>) -> tensor<3x6xf32> {
  %slot = tensor.extract_slice %out[0, 0] [3, 3] [1, 2] : tensor<3x6xf32> to tensor<3x3xf32>
  %r = tfm.packed_linear ins(%x, %w : tensor<3x4xf32>, tensor<1x4x8xf32>) outs(%slot : tensor<3x3xf32>) activation none -> tensor<3x3xf32>
  %y = tensor.insert_slice %r into %out[0, 0] [3, 3] [1, 2] : tensor<3x3xf32> into tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

// -----

// Attention reads its operands through their strides as long as the head
// dim is contiguous: a slice of the features (the query of a packed QKV
// projection) is read in place, a slice with a strided head dim is copied.

// CHECK-LABEL: func.func @attention_reads_strided(
// CHECK:         memref.subview
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.copy
// CHECK:         tfm.attention
func.func @attention_reads_strided(%qkv: tensor<2x3x12xf32>, %o: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %q = tensor.extract_slice %qkv[0, 0, 0] [2, 3, 4] [1, 1, 1] : tensor<2x3x12xf32> to tensor<2x3x4xf32>
  %r = tfm.attention ins(%q, %q, %q : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%o : tensor<2x3x4xf32>) scale 5.000000e-01 -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @attention_copies_strided_head(
// CHECK:         memref.subview
// CHECK:         %[[DENSE:.*]] = memref.alloc() {{.*}}: memref<2x3x4xf32>
// CHECK:         memref.copy
// CHECK:         tfm.attention
func.func @attention_copies_strided_head(%qkv: tensor<2x3x12xf32>, %o: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %q = tensor.extract_slice %qkv[0, 0, 0] [2, 3, 4] [1, 1, 2] : tensor<2x3x12xf32> to tensor<2x3x4xf32>
  %r = tfm.attention ins(%q, %q, %q : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%o : tensor<2x3x4xf32>) scale 5.000000e-01 -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}

// -----

// Contiguous operands need no copy.

// CHECK-LABEL: func.func @keeps_contiguous(
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.copy
// CHECK:         tfm.packed_linear
func.func @keeps_contiguous(%x: tensor<3x4xf32>, %w: tensor<1x4x8xf32>, %y: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %r = tfm.packed_linear ins(%x, %w : tensor<3x4xf32>, tensor<1x4x8xf32>) outs(%y : tensor<3x3xf32>) activation none -> tensor<3x3xf32>
  return %r : tensor<3x3xf32>
}
