// RUN: tfm-opt %s -split-input-file -tfm-lower-strided-copies | FileCheck %s

// A copy into a strided view (as a bufferized concat leaves it) becomes a
// linalg.copy, i.e. loops, instead of a call into the MLIR runner library.

// CHECK-LABEL: func.func @strided_target
// CHECK-SAME: (%[[A:.*]]: memref<?x3xf32>, %[[OUT:.*]]: memref<?x8xf32>)
// CHECK:      %[[VIEW:.*]] = memref.subview %[[OUT]]
// CHECK-NOT:  memref.copy
// CHECK:      linalg.copy ins(%[[A]] : memref<?x3xf32>) outs(%[[VIEW]] : memref<?x3xf32, strided<[8, 1], offset: 3>>)
// CHECK-NOT:  memref.copy
func.func @strided_target(%a: memref<?x3xf32>, %out: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %a, %c0 : memref<?x3xf32>
  %view = memref.subview %out[0, 3] [%d, 3] [1, 1] : memref<?x8xf32> to memref<?x3xf32, strided<[8, 1], offset: 3>>
  memref.copy %a, %view : memref<?x3xf32> to memref<?x3xf32, strided<[8, 1], offset: 3>>
  return
}

// -----

// CHECK-LABEL: func.func @strided_source
// CHECK:      linalg.copy ins(%{{.*}} : memref<2x3xf32, strided<[8, 1]>>) outs(%{{.*}} : memref<2x3xf32>)
func.func @strided_source(%in: memref<2x8xf32>, %out: memref<2x3xf32>) {
  %view = memref.subview %in[0, 0] [2, 3] [1, 1] : memref<2x8xf32> to memref<2x3xf32, strided<[8, 1]>>
  memref.copy %view, %out : memref<2x3xf32, strided<[8, 1]>> to memref<2x3xf32>
  return
}

// -----

// Copies between contiguous memrefs stay memref.copy (they become memcpy).

// CHECK-LABEL: func.func @contiguous
// CHECK-SAME: (%[[A:.*]]: memref<?x4xf32>, %[[B:.*]]: memref<?x4xf32>)
// CHECK-NEXT: memref.copy %[[A]], %[[B]] : memref<?x4xf32> to memref<?x4xf32>
// CHECK-NOT:  linalg.copy
func.func @contiguous(%a: memref<?x4xf32>, %b: memref<?x4xf32>) {
  memref.copy %a, %b : memref<?x4xf32> to memref<?x4xf32>
  return
}
