// RUN: tfm-opt %s -split-input-file -convert-tfm-to-linalg | FileCheck %s

// relu, gelu, layer_norm, the learned positional encoding and the run-time
// checks lowered to linalg on tensors.

// relu is max(x, 0) elementwise (arith.maximumf keeps NaN, like torch.relu).

// CHECK-LABEL: func.func @relu
// CHECK:       %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:       linalg.generic
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[R:.*]] = arith.maximumf %[[IN]], %[[ZERO]] : f32
// CHECK-NEXT:    linalg.yield %[[R]] : f32
func.func @relu(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = tfm.relu %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// The exact GELU, x * 0.5 * (1 + erf(x / sqrt(2))), and the tanh
// approximation 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).

// CHECK-LABEL: func.func @gelu
// CHECK-DAG:   %[[KAPPA:.*]] = arith.constant 4.471500e-02 : f32
// CHECK-DAG:   %[[BETA:.*]] = arith.constant 0.797884583 : f32
// CHECK-DAG:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:   %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG:   %[[RSQRT2:.*]] = arith.constant 0.707106769 : f32
// CHECK:       ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[S:.*]] = arith.mulf %[[X]], %[[RSQRT2]] : f32
// CHECK-NEXT:    %[[E:.*]] = math.erf %[[S]] : f32
// CHECK-NEXT:    %[[H:.*]] = arith.mulf %[[X]], %[[HALF]] : f32
// CHECK-NEXT:    %[[P:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT:    %[[G:.*]] = arith.mulf %[[H]], %[[P]] : f32
// CHECK-NEXT:    linalg.yield %[[G]] : f32
// CHECK:       ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[X2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT:    %[[X3:.*]] = arith.mulf %[[X2]], %[[X]] : f32
// CHECK-NEXT:    %[[K:.*]] = arith.mulf %[[X3]], %[[KAPPA]] : f32
// CHECK-NEXT:    %[[I:.*]] = arith.addf %[[X]], %[[K]] : f32
// CHECK-NEXT:    %[[B:.*]] = arith.mulf %[[I]], %[[BETA]] : f32
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[B]] : f32
// CHECK-NEXT:    %[[H:.*]] = arith.mulf %[[X]], %[[HALF]] : f32
// CHECK-NEXT:    %[[P:.*]] = arith.addf %[[T]], %[[ONE]] : f32
// CHECK-NEXT:    %[[G:.*]] = arith.mulf %[[H]], %[[P]] : f32
// CHECK-NEXT:    linalg.yield %[[G]] : f32
func.func @gelu(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %0 = tfm.gelu %x : tensor<?x8xf32>
  %1 = tfm.gelu %x approximate tanh : tensor<?x8xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// layer_norm: row sums, sums of squared deviations from the row means, then
// (x - mean) * (1 / sqrt(var + eps)) * weight + bias, with the biased
// variance (PyTorch's rstd: one division per row, not per element).

// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[FEAT:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME:  (%[[X:.*]]: tensor<?x16xf32>, %[[W:.*]]: tensor<16xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK-DAG:   %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK-DAG:   %[[N:.*]] = arith.constant 1.600000e+01 : f32
// CHECK-DAG:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:       %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x16xf32>)
// CHECK:         arith.addf
// CHECK:       %[[SQ:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[SUM]] : tensor<?x16xf32>, tensor<?xf32>)
// CHECK:         %[[MEAN:.*]] = arith.divf %{{.*}}, %[[N]] : f32
// CHECK-NEXT:    %[[D:.*]] = arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK-NEXT:    %[[D2:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:    arith.addf %{{.*}}, %[[D2]] : f32
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]], #[[FEAT]], #[[FEAT]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[SUM]], %[[SQ]], %[[W]], %[[B]] :
// CHECK-NEXT:  ^bb0(%[[XI:.*]]: f32, %[[S:.*]]: f32, %[[Q:.*]]: f32, %[[WI:.*]]: f32, %[[BI:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[VAR:.*]] = arith.divf %[[Q]], %[[N]] : f32
// CHECK-NEXT:    %[[VE:.*]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT:    %[[STD:.*]] = math.sqrt %[[VE]] : f32
// CHECK-NEXT:    %[[RSTD:.*]] = arith.divf %[[ONE]], %[[STD]] : f32
// CHECK-NEXT:    %[[M:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:    %[[C:.*]] = arith.subf %[[XI]], %[[M]] : f32
// CHECK-NEXT:    %[[Y:.*]] = arith.mulf %[[C]], %[[RSTD]] : f32
// CHECK-NEXT:    %[[YW:.*]] = arith.mulf %[[Y]], %[[WI]] : f32
// CHECK-NEXT:    %[[YB:.*]] = arith.addf %[[YW]], %[[BI]] : f32
// CHECK-NEXT:    linalg.yield %[[YB]] : f32
func.func @layer_norm(%x: tensor<?x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %0 = tfm.layer_norm %x weight %w bias %b eps 1.0e-5 : (tensor<?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// Without weight and bias, and over a dynamic last dim, the row length is
// read at run time.

// CHECK-LABEL: func.func @layer_norm_plain_dynamic
// CHECK:       %[[D:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x?xf64>
// CHECK:       %[[DI:.*]] = arith.index_castui %[[D]] : index to i64
// CHECK:       %[[N:.*]] = arith.uitofp %[[DI]] : i64 to f64
// CHECK:       arith.divf %{{.*}}, %[[N]] : f64
// CHECK:       linalg.generic {{.*}} ins(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}} : tensor<?x?xf64>, tensor<?xf64>, tensor<?xf64>)
// CHECK:         math.sqrt
// CHECK:         arith.subf
// CHECK-NEXT:    %[[Y:.*]] = arith.mulf
// CHECK-NEXT:    linalg.yield %[[Y]] : f64
func.func @layer_norm_plain_dynamic(%x: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %0 = tfm.layer_norm %x eps 1.0e-5 : (tensor<?x?xf64>) -> tensor<?x?xf64>
  return %0 : tensor<?x?xf64>
}

// -----

// The learned positional encoding reads table rows clamped into the table.

// CHECK-LABEL: func.func @learned_positional_encoding
// CHECK-SAME:  (%[[X:.*]]: tensor<?x?x16xf32>, %[[T:.*]]: tensor<64x16xf32>)
// CHECK-DAG:   %[[LAST:.*]] = arith.constant 63 : index
// CHECK:       %[[S:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x16xf32>
// CHECK:       %[[INIT:.*]] = tensor.empty(%[[S]]) : tensor<?x16xf32>
// CHECK:       linalg.generic {{.*}} outs(%[[INIT]] : tensor<?x16xf32>)
// CHECK:         %[[P:.*]] = linalg.index 0 : index
// CHECK-NEXT:    %[[ROW:.*]] = arith.minui %[[P]], %[[LAST]] : index
// CHECK-NEXT:    %[[COL:.*]] = linalg.index 1 : index
// CHECK-NEXT:    %[[E:.*]] = tensor.extract %[[T]][%[[ROW]], %[[COL]]] : tensor<64x16xf32>
// CHECK-NEXT:    linalg.yield %[[E]] : f32
func.func @learned_positional_encoding(%x: tensor<?x?x16xf32>, %t: tensor<64x16xf32>) -> tensor<?x16xf32> {
  %0 = tfm.positional_encoding %x, %t : tensor<?x?x16xf32>, tensor<64x16xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// check_index: a reduction over every id to `code` if one is outside
// [0, bound); check_size: a comparison of the dimension with the maximum.

// CHECK-DAG:   #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @checks
// CHECK-SAME:  (%[[IDS:.*]]: tensor<?x?xi32>, %[[X:.*]]: tensor<?x?x16xf32>)
// CHECK-DAG:   %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-DAG:   %[[MAX:.*]] = arith.constant 64 : index
// CHECK-DAG:   %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG:   %[[BOUND:.*]] = arith.constant 6 : i32
// CHECK-DAG:   %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:       %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.*}} : tensor<i32>)
// CHECK:       %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[SCALAR]]], iterator_types = ["reduction", "reduction"]} ins(%[[IDS]] : tensor<?x?xi32>) outs(%[[INIT]] : tensor<i32>)
// CHECK-NEXT:  ^bb0(%[[ID:.*]]: i32, %[[ACC:.*]]: i32):
// CHECK-NEXT:    %[[NEG:.*]] = arith.cmpi slt, %[[ID]], %[[ZERO]] : i32
// CHECK-NEXT:    %[[BIG:.*]] = arith.cmpi sge, %[[ID]], %[[BOUND]] : i32
// CHECK-NEXT:    %[[BAD:.*]] = arith.ori %[[NEG]], %[[BIG]] : i1
// CHECK-NEXT:    %[[CODE:.*]] = arith.select %[[BAD]], %[[ONE]], %[[ZERO]] : i32
// CHECK-NEXT:    %[[NEW:.*]] = arith.maxsi %[[ACC]], %[[CODE]] : i32
// CHECK-NEXT:    linalg.yield %[[NEW]] : i32
// CHECK:       %[[S1:.*]] = tensor.extract %[[R]][] : tensor<i32>
// CHECK:       %[[SEQ:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x16xf32>
// CHECK:       %[[LONG:.*]] = arith.cmpi ugt, %[[SEQ]], %[[MAX]] : index
// CHECK:       %[[S2:.*]] = arith.select %[[LONG]], %[[TWO]], %[[ZERO]] : i32
// CHECK:       return %[[S1]], %[[S2]] : i32, i32
func.func @checks(%ids: tensor<?x?xi32>, %x: tensor<?x?x16xf32>) -> (i32, i32) {
  %0 = tfm.check_index %ids, bound 6, code 1 : tensor<?x?xi32>
  %1 = tfm.check_size %x, dim -2, max 64, code 2 : tensor<?x?x16xf32>
  return %0, %1 : i32, i32
}

// -----

// A bound past the range of i32 ids leaves only the check for negative ids.

// CHECK-LABEL: func.func @check_index_huge_bound
// CHECK:       arith.cmpi slt
// CHECK-NOT:   arith.cmpi sge
// CHECK:       linalg.yield
func.func @check_index_huge_bound(%ids: tensor<?xi32>) -> i32 {
  %0 = tfm.check_index %ids, bound 4294967296, code 1 : tensor<?xi32>
  return %0 : i32
}
