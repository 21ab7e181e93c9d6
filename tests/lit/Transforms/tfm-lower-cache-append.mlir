// RUN: tfm-opt %s -split-input-file -tfm-lower-cache-append | FileCheck %s

// One loop over the sequences: sequence b's new rows are copied into the
// cache at past[b] when 0 <= past[b] <= capacity - seq, and the status
// becomes the op's code when they do not fit (nothing is written then).
// Only the new rows move: the copy's source and target are [1, H, seq, D].

// CHECK-LABEL: func.func @append
// CHECK-SAME:    (%[[K:.*]]: memref<?x2x?x8xf32>, %[[PAST:.*]]: memref<?xi64>, %[[C:.*]]: memref<?x2x16x8xf32, strided<[256, 128, 8, 1], offset: ?>>)
// CHECK-DAG:     %[[CODE:.*]] = arith.constant 3 : i32
// CHECK-DAG:     %[[SEQ:.*]] = memref.dim %[[K]], %c2
// CHECK:         %[[LAST:.*]] = arith.subi %c16, %[[SEQ]]
// CHECK:         %[[STATUS:.*]] = scf.for %[[B:.*]] = %c0 to %{{.*}} step %c1 iter_args(%[[S:.*]] = %c0_i32) -> (i32)
// CHECK:           %[[P:.*]] = memref.load %[[PAST]][%[[B]]]
// CHECK:           %[[AT:.*]] = arith.index_cast %[[P]] : i64 to index
// CHECK:           %[[LO:.*]] = arith.cmpi sge, %[[AT]], %c0
// CHECK:           %[[HI:.*]] = arith.cmpi sle, %[[AT]], %[[LAST]]
// CHECK:           %[[FITS:.*]] = arith.andi %[[LO]], %[[HI]]
// CHECK:           scf.if %[[FITS]]
// CHECK:             %[[SRC:.*]] = memref.subview %[[K]][%[[B]], 0, 0, 0] [1, 2, %[[SEQ]], 8] [1, 1, 1, 1]
// CHECK:             %[[DST:.*]] = memref.subview %[[C]][%[[B]], 0, %[[AT]], 0] [1, 2, %[[SEQ]], 8] [1, 1, 1, 1]
// CHECK:             memref.copy %[[SRC]], %[[DST]]
// CHECK:           arith.select %[[FITS]], %[[S]], %[[CODE]]
// CHECK:         return %[[STATUS]]
func.func @append(%k: memref<?x2x?x8xf32>, %past: memref<?xi64>, %c: memref<?x2x16x8xf32, strided<[256, 128, 8, 1], offset: ?>>) -> i32 {
  %s = tfm.cache_append ins(%k, %past : memref<?x2x?x8xf32>, memref<?xi64>) outs(%c : memref<?x2x16x8xf32, strided<[256, 128, 8, 1], offset: ?>>) dim 2 code 3
  return %s : i32
}

// -----

// On tensors the op is left for bufferization.
// CHECK-LABEL: func.func @tensors
// CHECK:         tfm.cache_append
func.func @tensors(%k: tensor<2x1x8xf32>, %past: tensor<2xi64>, %c: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  %0, %s = tfm.cache_append ins(%k, %past : tensor<2x1x8xf32>, tensor<2xi64>) outs(%c : tensor<2x16x8xf32>) dim 1 code 3 -> tensor<2x16x8xf32>
  return %0 : tensor<2x16x8xf32>
}
