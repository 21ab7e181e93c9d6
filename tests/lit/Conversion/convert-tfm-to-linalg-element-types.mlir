// RUN: tfm-opt %s -split-input-file -convert-tfm-to-linalg | FileCheck %s

// Casts between the float types: extf widens, truncf rounds (to nearest
// even); bf16 and f16 convert to each other and to f64 through f32, and
// integers reach them through f32, as PyTorch converts.

// CHECK-LABEL: func.func @narrow
// CHECK:      linalg.generic
// CHECK:        %[[B:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT:   linalg.yield %[[B]] : bf16
// CHECK:      linalg.generic
// CHECK:        %[[N:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT:   %[[H:.*]] = arith.truncf %[[N]] : f32 to f16
// CHECK-NEXT:   linalg.yield %[[H]] : f16
// CHECK:      return
func.func @narrow(%x: tensor<?x4xf32>, %d: tensor<3xf64>) -> (tensor<?x4xbf16>, tensor<3xf16>) {
  %0 = tfm.cast %x : tensor<?x4xf32> -> tensor<?x4xbf16>
  %1 = tfm.cast %d : tensor<3xf64> -> tensor<3xf16>
  return %0, %1 : tensor<?x4xbf16>, tensor<3xf16>
}

// -----

// CHECK-LABEL: func.func @between_halves
// CHECK:      linalg.generic
// CHECK:        %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK-NEXT:   %[[H:.*]] = arith.truncf %[[W]] : f32 to f16
// CHECK-NEXT:   linalg.yield %[[H]] : f16
// CHECK:      linalg.generic
// CHECK:        %[[W2:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT:   %[[D:.*]] = arith.extf %[[W2]] : f32 to f64
// CHECK-NEXT:   linalg.yield %[[D]] : f64
// CHECK:      return
func.func @between_halves(%b: tensor<5xbf16>) -> (tensor<5xf16>, tensor<5xf64>) {
  %0 = tfm.cast %b : tensor<5xbf16> -> tensor<5xf16>
  %1 = tfm.cast %0 : tensor<5xf16> -> tensor<5xf64>
  return %0, %1 : tensor<5xf16>, tensor<5xf64>
}

// -----

// Integers: i64 to bf16 through f32; bf16 to i8 through f32 and i32 (which
// wraps); bf16 to bool compares in f32.
// CHECK-LABEL: func.func @integers
// CHECK:      linalg.generic
// CHECK:        %[[F:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK-NEXT:   %[[B:.*]] = arith.truncf %[[F]] : f32 to bf16
// CHECK-NEXT:   linalg.yield %[[B]] : bf16
// CHECK:      linalg.generic
// CHECK:        %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK-NEXT:   %[[I:.*]] = arith.fptosi %[[W]] : f32 to i32
// CHECK-NEXT:   %[[Q:.*]] = arith.trunci %[[I]] : i32 to i8
// CHECK-NEXT:   linalg.yield %[[Q]] : i8
// CHECK:      linalg.generic
// CHECK:        %[[W2:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:        %[[NZ:.*]] = arith.cmpf une, %[[W2]], %{{.*}} : f32
// CHECK-NEXT:   linalg.yield %[[NZ]] : i1
// CHECK:      return
func.func @integers(%i: tensor<4xi64>) -> (tensor<4xbf16>, tensor<4xi8>, tensor<4xi1>) {
  %0 = tfm.cast %i : tensor<4xi64> -> tensor<4xbf16>
  %1 = tfm.cast %0 : tensor<4xbf16> -> tensor<4xi8>
  %2 = tfm.cast %0 : tensor<4xbf16> -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xbf16>, tensor<4xi8>, tensor<4xi1>
}

// -----

// An op on bf16 computes in f32 here too: the softmax reads the widened
// input and its result is rounded.
// CHECK-LABEL: func.func @softmax
// CHECK:      %[[W:.*]] = linalg.generic
// CHECK:        arith.extf %{{.*}} : bf16 to f32
// CHECK:      %[[S:.*]] = linalg.softmax dimension(1) ins(%[[W]] : tensor<2x?xf32>)
// CHECK:      %[[R:.*]] = linalg.generic
// CHECK-SAME:   ins(%[[S]] : tensor<2x?xf32>)
// CHECK:        arith.truncf %{{.*}} : f32 to bf16
// CHECK:      return %[[R]] : tensor<2x?xbf16>
func.func @softmax(%x: tensor<2x?xbf16>) -> tensor<2x?xbf16> {
  %0 = tfm.softmax %x, -1 : tensor<2x?xbf16>
  return %0 : tensor<2x?xbf16>
}

// -----

// i8 arithmetic is integer arithmetic on bytes (it wraps).
// CHECK-LABEL: func.func @bytes
// CHECK:      linalg.generic
// CHECK:        arith.addi %{{.*}}, %{{.*}} : i8
// CHECK:      return
func.func @bytes(%q: tensor<7xi8>) -> tensor<7xi8> {
  %0 = tfm.add %q, %q : tensor<7xi8>, tensor<7xi8> -> tensor<7xi8>
  return %0 : tensor<7xi8>
}
