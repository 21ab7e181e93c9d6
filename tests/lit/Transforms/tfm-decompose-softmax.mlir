// RUN: tfm-opt %s -split-input-file -tfm-decompose-softmax | FileCheck %s

// linalg.softmax becomes max, exp(x - max), sum and divide generics.

// CHECK-DAG:  #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:  #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @softmax_last_dim
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK-NOT:  linalg.softmax
// CHECK:      %[[MAX_INIT:.*]] = linalg.fill
// CHECK:      %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:     ins(%[[X]] : tensor<?x8xf32>) outs(%[[MAX_INIT]] : tensor<?xf32>)
// CHECK:        arith.maxnumf
// CHECK:      %[[EXP:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:     ins(%[[X]], %[[MAX]] : tensor<?x8xf32>, tensor<?xf32>)
// CHECK:        %[[DIFF:.*]] = arith.subf
// CHECK:        math.exp %[[DIFF]]
// CHECK:      %[[SUM_INIT:.*]] = linalg.fill ins(%{{.*}} : f32)
// CHECK:      %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:     ins(%[[EXP]] : tensor<?x8xf32>) outs(%[[SUM_INIT]] : tensor<?xf32>)
// CHECK:        arith.addf
// CHECK:      %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:     ins(%[[EXP]], %[[SUM]] : tensor<?x8xf32>, tensor<?xf32>)
// CHECK:        arith.divf
// CHECK:      return %[[OUT]]
func.func @softmax_last_dim(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%d) : tensor<?x8xf32>
  %0 = linalg.softmax dimension(1) ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Softmax along a leading dimension reduces that dimension.

// CHECK-DAG:  #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:  #[[RED0:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @softmax_first_dim
// CHECK:      linalg.generic {indexing_maps = [#[[ID3]], #[[RED0]]], iterator_types = ["reduction", "parallel", "parallel"]}
// CHECK:        arith.maxnumf
// CHECK:      linalg.generic {indexing_maps = [#[[ID3]], #[[RED0]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK:        math.exp
// CHECK:      linalg.generic {indexing_maps = [#[[ID3]], #[[RED0]]], iterator_types = ["reduction", "parallel", "parallel"]}
// CHECK:        arith.addf
// CHECK:      linalg.generic
// CHECK:        arith.divf
// CHECK-NOT:  linalg.softmax
func.func @softmax_first_dim(%x: tensor<4x3x2xf64>) -> tensor<4x3x2xf64> {
  %e = tensor.empty() : tensor<4x3x2xf64>
  %0 = linalg.softmax dimension(0) ins(%x : tensor<4x3x2xf64>) outs(%e : tensor<4x3x2xf64>) -> tensor<4x3x2xf64>
  return %0 : tensor<4x3x2xf64>
}

// -----

// Other linalg ops are left alone.

// CHECK-LABEL: func.func @no_softmax
// CHECK:      linalg.fill
// CHECK-NEXT: return
func.func @no_softmax(%e: tensor<4xf32>) -> tensor<4xf32> {
  %cst = arith.constant 1.0 : f32
  %0 = linalg.fill ins(%cst : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
