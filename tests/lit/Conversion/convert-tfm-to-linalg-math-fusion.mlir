// RUN: tfm-opt %s -convert-tfm-to-linalg -canonicalize -cse -linalg-fuse-elementwise-ops -canonicalize \
// RUN:   | FileCheck %s

// The passes as the pipeline runs them. The generics of the elementwise ops
// are plain parallel generics with identity and broadcast maps, so the
// pipeline's elementwise fusion makes a chain one loop nest: here cast, 1 - m (a rank-0 constant folded into the
// payload), the scale, exp, maximum with a number, the division and the sum
// read each input once.

// CHECK-LABEL: func.func @mask_chain
// CHECK-SAME: (%[[M:.*]]: tensor<?x?xi64>, %[[X:.*]]: tensor<?x?xf32>)
// CHECK:      linalg.generic
// CHECK-SAME:   ins(%[[M]], %[[X]] : tensor<?x?xi64>, tensor<?x?xf32>)
// CHECK:        arith.maximumf
// CHECK:        math.exp
// CHECK:        arith.divf
// CHECK:        arith.sitofp
// CHECK:        arith.subf
// CHECK:        arith.mulf
// CHECK:        arith.addf
// CHECK-NOT:  linalg.generic
func.func @mask_chain(%m: tensor<?x?xi64>, %x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %0 = tfm.cast %m : tensor<?x?xi64> -> tensor<?x?xf32>
  %1 = tfm.sub %one, %0 : tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %2 = tfm.scale %1, -1.000000e+04 : tensor<?x?xf32>
  %3 = tfm.exp %x : tensor<?x?xf32>
  %4 = tfm.maximum %x, %half : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  %5 = tfm.div %3, %4 : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %6 = tfm.add %2, %5 : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %6 : tensor<?x?xf32>
}
