// RUN: tfm-opt %s -split-input-file -convert-tfm-to-linalg -mlir-print-local-scope \
// RUN:   | FileCheck %s

// Broadcast binary ops: one parallel generic; a rank-0 constant reads
// through a map with no results, a static 1 facing a dynamic dim through a
// constant 0, and the dynamic sizes come from the operand that has them.

// CHECK-LABEL: func.func @sub_broadcast
// CHECK-SAME: (%[[C:.*]]: tensor<f32>, %[[X:.*]]: tensor<?x1x4xf32>, %[[Y:.*]]: tensor<?x4xf32>)
// CHECK-NOT:  tfm.
// CHECK:      %[[S:.*]] = linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME:   iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME:   ins(%[[C]], %[[X]] : tensor<f32>, tensor<?x1x4xf32>)
// CHECK-NOT:  tfm.
// CHECK:        arith.subf
// CHECK-DAG:  %[[D0:.*]] = tensor.dim %[[S]], %c0
// CHECK-DAG:  %[[D1:.*]] = tensor.dim %[[Y]], %c0
// CHECK-NOT:  tfm.
// CHECK:      %[[E:.*]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?x4xf32>
// CHECK-NOT:  tfm.
// CHECK:      %[[M:.*]] = linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME:   outs(%[[E]] : tensor<?x?x4xf32>)
// CHECK-NOT:  tfm.
// CHECK:        arith.mulf
// CHECK-NOT:  tfm.
// CHECK:      return %[[M]]
func.func @sub_broadcast(%c: tensor<f32>, %x: tensor<?x1x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x?x4xf32> {
  %0 = tfm.sub %c, %x : tensor<f32>, tensor<?x1x4xf32> -> tensor<?x1x4xf32>
  %1 = tfm.mul %0, %y : tensor<?x1x4xf32>, tensor<?x4xf32> -> tensor<?x?x4xf32>
  return %1 : tensor<?x?x4xf32>
}

// -----

// Integers use the signed integer ops; max/min of floats propagate NaN.

// CHECK-LABEL: func.func @integer_and_nan_ops
// CHECK:      arith.subi
// CHECK:      arith.maxsi
// CHECK:      arith.minimumf
// CHECK:      math.powf
func.func @integer_and_nan_ops(%i: tensor<4xi64>, %x: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf32>) {
  %0 = tfm.sub %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %1 = tfm.maximum %0, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %2 = tfm.minimum %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %3 = tfm.pow %2, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %1, %3 : tensor<4xi64>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK-DAG:  %[[TRUE:.*]] = arith.constant true
// CHECK-DAG:  %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:      math.rsqrt
// CHECK:      math.erf
// CHECK:      arith.negf
// CHECK:      arith.subi %[[ZERO]]
// CHECK:      math.absi
// CHECK:      arith.xori %{{.*}}, %[[TRUE]]
func.func @unary(%x: tensor<?x4xf32>, %i: tensor<3xi32>, %b: tensor<2xi1>)
    -> (tensor<?x4xf32>, tensor<3xi32>, tensor<2xi1>) {
  %0 = tfm.rsqrt %x : tensor<?x4xf32>
  %1 = tfm.erf %0 : tensor<?x4xf32>
  %2 = tfm.neg %1 : tensor<?x4xf32>
  %3 = tfm.neg %i : tensor<3xi32>
  %4 = tfm.abs %3 : tensor<3xi32>
  %5 = tfm.logical_not %b : tensor<2xi1>
  return %2, %4, %5 : tensor<?x4xf32>, tensor<3xi32>, tensor<2xi1>
}

// -----

// The HF attention-mask idiom: `where(mask == 0, -inf, 0)` on an i64 mask.

// CHECK-LABEL: func.func @mask_bias
// CHECK:      %[[P:.*]] = linalg.generic
// CHECK:        arith.cmpi eq
// CHECK:      linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME:   ins(%[[P]], %{{.*}}, %{{.*}} : tensor<?x?xi1>, tensor<f32>, tensor<f32>)
// CHECK:        arith.select
func.func @mask_bias(%m: tensor<?x?xi64>, %z: tensor<i64>, %a: tensor<f32>, %b: tensor<f32>) -> tensor<?x?xf32> {
  %p = tfm.compare eq %m, %z : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %w = tfm.where %p, %a, %b : tensor<?x?xi1>, tensor<f32>, tensor<f32> -> tensor<?x?xf32>
  return %w : tensor<?x?xf32>
}

// -----

// Float comparisons are ordered except ne; casts follow Tensor.to.

// CHECK-LABEL: func.func @compare_and_cast
// CHECK:      arith.cmpf olt
// CHECK:      arith.cmpf une
// CHECK:      arith.sitofp %{{.*}} : i64 to f32
// CHECK:      arith.uitofp %{{.*}} : i1 to f32
// CHECK:      arith.cmpf une
// CHECK:      arith.fptosi %{{.*}} : f32 to i32
func.func @compare_and_cast(%x: tensor<4xf32>, %i: tensor<4xi64>, %b: tensor<4xi1>)
    -> (tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi32>) {
  %0 = tfm.compare lt %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %1 = tfm.compare ne %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %2 = tfm.cast %i : tensor<4xi64> -> tensor<4xf32>
  %3 = tfm.cast %b : tensor<4xi1> -> tensor<4xf32>
  %4 = tfm.cast %x : tensor<4xf32> -> tensor<4xi1>
  %5 = tfm.cast %x : tensor<4xf32> -> tensor<4xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi32>
}

// -----

// mean over the last dim with keepdim: a reduction generic into zeros, the
// division by the run-time count, then the 1 re-inserted by expand_shape.

// CHECK-LABEL: func.func @mean_keepdim
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x64xf32>)
// CHECK:      %[[FILL:.*]] = linalg.fill
// CHECK:      %[[SUM:.*]] = linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
// CHECK-SAME:   iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME:   ins(%[[X]] : tensor<?x?x64xf32>) outs(%[[FILL]] : tensor<?x?xf32>)
// CHECK:        arith.addf
// CHECK:      %[[MEAN:.*]] = linalg.generic
// CHECK:        arith.divf
// CHECK:      tensor.expand_shape %[[MEAN]] {{\[\[}}0], [1, 2]] output_shape [%{{.*}}, %{{.*}}, 1] : tensor<?x?xf32> into tensor<?x?x1xf32>
func.func @mean_keepdim(%x: tensor<?x?x64xf32>) -> tensor<?x?x1xf32> {
  %0 = tfm.reduce mean %x dims [2] keepdim : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
  return %0 : tensor<?x?x1xf32>
}

// -----

// max starts from -inf, integer min from the largest i64.

// CHECK-LABEL: func.func @max_min
// CHECK-DAG:  %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:  %[[IMAX:.*]] = arith.constant 9223372036854775807 : i64
// CHECK:      linalg.fill ins(%[[NINF]] : f32)
// CHECK:      iterator_types = ["reduction", "parallel", "reduction"]
// CHECK:        arith.maximumf
// CHECK:      linalg.fill ins(%[[IMAX]] : i64)
// CHECK:        arith.minsi
func.func @max_min(%x: tensor<2x?x4xf32>, %i: tensor<5xi64>) -> (tensor<?xf32>, tensor<i64>) {
  %0 = tfm.reduce max %x dims [0, 2] : tensor<2x?x4xf32> -> tensor<?xf32>
  %1 = tfm.reduce min %i dims [0] : tensor<5xi64> -> tensor<i64>
  return %0, %1 : tensor<?xf32>, tensor<i64>
}

// -----

// A static reshape that splits a dim is one expand_shape, and so is one
// whose named dims pass through (sizes read with tensor.dim of the input).
// Sizes the lowering cannot trace to the input's dims go through a shape
// tensor.

// CHECK-LABEL: func.func @reshapes
// CHECK-SAME: (%[[S:.*]]: tensor<6x64xf32>, %[[X:.*]]: tensor<?x?x64xf32>, %[[B:.*]]: index, %[[L:.*]]: index)
// CHECK:      tensor.expand_shape %[[S]] {{\[\[}}0], [1, 2]] output_shape [6, 4, 16] : tensor<6x64xf32> into tensor<6x4x16xf32>
// CHECK:      tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3]] output_shape [%{{.*}}, %{{.*}}, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
// CHECK:      %[[SHAPE:.*]] = tensor.from_elements %[[B]], %[[L]], %{{.*}}, %{{.*}} : tensor<4xindex>
// CHECK:      tensor.reshape %[[X]](%[[SHAPE]]) : (tensor<?x?x64xf32>, tensor<4xindex>) -> tensor<?x?x4x16xf32>
func.func @reshapes(%s: tensor<6x64xf32>, %x: tensor<?x?x64xf32>, %b: index, %l: index)
    -> (tensor<6x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %0 = tfm.reshape %s : tensor<6x64xf32> -> tensor<6x4x16xf32>
  %1 = tfm.reshape %x [%d0, %d1] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %2 = tfm.reshape %x [%b, %l] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  return %0, %1, %2 : tensor<6x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>
}

// -----

// CHECK-LABEL: func.func @permute
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x4x16xf32>)
// CHECK-DAG:  %[[D0:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG:  %[[D1:.*]] = tensor.dim %[[X]], %c1
// CHECK:      %[[E:.*]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x4x?x16xf32>
// CHECK:      linalg.transpose ins(%[[X]] : tensor<?x?x4x16xf32>) outs(%[[E]] : tensor<?x4x?x16xf32>) permutation = [0, 2, 1, 3]
func.func @permute(%x: tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32> {
  %0 = tfm.permute %x [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  return %0 : tensor<?x4x?x16xf32>
}
