// RUN: tfm-opt %s -convert-tfm-to-linalg | FileCheck %s


// CHECK-LABEL: func.func @linear_dynamic_out_features
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[W:.*]]: tensor<?x8xf32>)
// CHECK-DAG:  %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:  %[[ROWS:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x8xf32>
// CHECK-DAG:  %[[OUT:.*]] = tensor.dim %[[W]], %[[C0]] : tensor<?x8xf32>
// CHECK:      tensor.empty(%[[ROWS]], %[[OUT]]) : tensor<?x?xf32>
func.func @linear_dynamic_out_features(%x: tensor<?x8xf32>, %w: tensor<?x8xf32>) -> tensor<?x?xf32> {
  %0 = tfm.linear %x, %w : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
