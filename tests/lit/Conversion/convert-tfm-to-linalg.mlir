// RUN: tfm-opt %s -split-input-file -verify-diagnostics -convert-tfm-to-linalg -mlir-print-local-scope \
// RUN:   | FileCheck %s

// matmul: a rank-2 rhs broadcasts against a rank-3 lhs through the indexing
// maps (no copy of the weight); the accumulator starts at zero.

// CHECK-LABEL: func.func @matmul_broadcast_rhs
// CHECK-SAME: (%[[A:.*]]: tensor<?x?x8xf32>, %[[B:.*]]: tensor<8x4xf32>)
// CHECK-DAG:  %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:  %[[D0:.*]] = tensor.dim %[[A]], %c0
// CHECK-DAG:  %[[D1:.*]] = tensor.dim %[[A]], %c1
// CHECK-NOT:  tfm.
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?x4xf32>
// CHECK-NOT:  tfm.
// CHECK:      %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<?x?x4xf32>)
// CHECK-NOT:  tfm.
// CHECK:      %[[MM:.*]] = linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
// CHECK-SAME:   iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME:   ins(%[[A]], %[[B]] : tensor<?x?x8xf32>, tensor<8x4xf32>) outs(%[[INIT]] : tensor<?x?x4xf32>)
// CHECK-NOT:  tfm.
// CHECK:        %[[P:.*]] = arith.mulf
// CHECK-NOT:  tfm.
// CHECK:        %[[S:.*]] = arith.addf %{{.*}}, %[[P]]
// CHECK-NOT:  tfm.
// CHECK:        linalg.yield %[[S]]
// CHECK-NOT:  tfm.
// CHECK:      return %[[MM]]
func.func @matmul_broadcast_rhs(%a: tensor<?x?x8xf32>, %b: tensor<8x4xf32>) -> tensor<?x?x4xf32> {
  %0 = tfm.matmul %a, %b : tensor<?x?x8xf32>, tensor<8x4xf32> -> tensor<?x?x4xf32>
  return %0 : tensor<?x?x4xf32>
}

// -----

// A static batch dimension of 1 broadcasts with a constant 0 index.

// CHECK-LABEL: func.func @matmul_broadcast_batch_one
// CHECK:      linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
// CHECK-SAME:   outs(%{{.*}} : tensor<3x?x4xf32>)
func.func @matmul_broadcast_batch_one(%a: tensor<1x?x8xf32>, %b: tensor<3x8x4xf32>) -> tensor<3x?x4xf32> {
  %0 = tfm.matmul %a, %b : tensor<1x?x8xf32>, tensor<3x8x4xf32> -> tensor<3x?x4xf32>
  return %0 : tensor<3x?x4xf32>
}

// -----

// linear without bias: x [.., in] . W[out, in]^T accumulated into zeros.

// CHECK-LABEL: func.func @linear_without_bias
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[W:.*]]: tensor<4x8xf32>)
// CHECK:      %[[INIT:.*]] = linalg.fill
// CHECK:      %[[Y:.*]] = linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
// CHECK-SAME:   iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME:   ins(%[[X]], %[[W]] : tensor<?x?x8xf32>, tensor<4x8xf32>) outs(%[[INIT]] : tensor<?x?x4xf32>)
// CHECK:        arith.mulf
// CHECK:        arith.addf
// CHECK:      return %[[Y]]
func.func @linear_without_bias(%x: tensor<?x?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x?x4xf32> {
  %0 = tfm.linear %x, %w : tensor<?x?x8xf32>, tensor<4x8xf32> -> tensor<?x?x4xf32>
  return %0 : tensor<?x?x4xf32>
}

// -----

// linear with bias: the accumulator starts at the bias broadcast over the
// leading dimensions instead of zero.

// CHECK-LABEL: func.func @linear_with_bias
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[W:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NOT:  linalg.fill
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%{{.*}}) : tensor<?x4xf32>
// CHECK:      %[[INIT:.*]] = linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME:   ins(%[[B]] : tensor<4xf32>) outs(%[[EMPTY]] : tensor<?x4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   linalg.yield %[[IN]] : f32
// CHECK:      %[[Y:.*]] = linalg.generic
// CHECK-SAME:   ins(%[[X]], %[[W]] : tensor<?x8xf32>, tensor<4x8xf32>) outs(%[[INIT]] : tensor<?x4xf32>)
// CHECK:      return %[[Y]]
func.func @linear_with_bias(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = tfm.linear %x, %w, %b : tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x?x8xf32>)
// CHECK:      %[[D:.*]] = tensor.dim %[[X]], %c1
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%[[D]]) : tensor<?x2x8xf32>
// CHECK:      %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x?x8xf32>) outs(%[[EMPTY]] : tensor<?x2x8xf32>) permutation = [1, 0, 2]
// CHECK:      %[[E2:.*]] = tensor.empty(%{{.*}}) : tensor<2x8x?xf32>
// CHECK:      %[[T2:.*]] = linalg.transpose ins(%[[X]] : tensor<2x?x8xf32>) outs(%[[E2]] : tensor<2x8x?xf32>) permutation = [0, 2, 1]
// A transpose of a dimension with itself is the identity.
// CHECK:      return %[[T]], %[[T2]], %[[X]]
func.func @transpose(%x: tensor<2x?x8xf32>) -> (tensor<?x2x8xf32>, tensor<2x8x?xf32>, tensor<2x?x8xf32>) {
  %0 = tfm.transpose %x, 0, 1 : tensor<2x?x8xf32> -> tensor<?x2x8xf32>
  %1 = tfm.transpose %x, -2, -1 : tensor<2x?x8xf32> -> tensor<2x8x?xf32>
  %2 = tfm.transpose %x, -1, 2 : tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  return %0, %1, %2 : tensor<?x2x8xf32>, tensor<2x8x?xf32>, tensor<2x?x8xf32>
}

// -----

// scale multiplies, or divides when {divide} is set (not a multiply by the
// reciprocal, so that x / sqrt(d) matches bit for bit).

// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK-DAG:  %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG:  %[[SQRT2:.*]] = arith.constant 1.41421354 : f32
// CHECK:      %[[MUL:.*]] = linalg.generic
// CHECK-SAME:   iterator_types = ["parallel", "parallel"]
// CHECK-SAME:   ins(%[[X]] : tensor<?x8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[R:.*]] = arith.mulf %[[IN]], %[[TWO]] : f32
// CHECK-NEXT:   linalg.yield %[[R]]
// CHECK:      %[[DIV:.*]] = linalg.generic
// CHECK-SAME:   ins(%[[MUL]] : tensor<?x8xf32>)
// CHECK-NEXT: ^bb0(%[[IN2:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[R2:.*]] = arith.divf %[[IN2]], %[[SQRT2]] : f32
// CHECK-NEXT:   linalg.yield %[[R2]]
// CHECK:      return %[[DIV]]
func.func @scale(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = tfm.scale %x, 2.0 : tensor<?x8xf32>
  %1 = tfm.scale %0, 1.4142135623730951 {divide} : tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

// -----

// softmax becomes linalg.softmax (decomposed later, after fusion), with the
// dimension normalized.

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x?x8xf64>)
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%{{.*}}) : tensor<2x?x8xf64>
// CHECK:      %[[S:.*]] = linalg.softmax dimension(2) ins(%[[X]] : tensor<2x?x8xf64>) outs(%[[EMPTY]] : tensor<2x?x8xf64>) -> tensor<2x?x8xf64>
// CHECK:      %[[S1:.*]] = linalg.softmax dimension(1) ins(%[[X]] : tensor<2x?x8xf64>)
// CHECK:      return %[[S]], %[[S1]]
func.func @softmax(%x: tensor<2x?x8xf64>) -> (tensor<2x?x8xf64>, tensor<2x?x8xf64>) {
  %0 = tfm.softmax %x, -1 : tensor<2x?x8xf64>
  %1 = tfm.softmax %x, 1 : tensor<2x?x8xf64>
  return %0, %1 : tensor<2x?x8xf64>, tensor<2x?x8xf64>
}

// -----

// add broadcasts the missing leading dimension of rhs through its map; the
// result's dynamic sizes come from lhs.

// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[PE:.*]]: tensor<?x8xf32>, %[[ROW:.*]]: tensor<1x8xf32>)
// CHECK-DAG:  %[[D0:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG:  %[[D1:.*]] = tensor.dim %[[X]], %c1
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?x8xf32>
// CHECK:      %[[SUM:.*]] = linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME:   iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME:   ins(%[[X]], %[[PE]] : tensor<?x?x8xf32>, tensor<?x8xf32>) outs(%[[EMPTY]] : tensor<?x?x8xf32>)
// CHECK:        arith.addf
// A static 1 stretches with a constant index.
// CHECK:      %[[SUM2:.*]] = linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME:   ins(%[[SUM]], %[[ROW]] : tensor<?x?x8xf32>, tensor<1x8xf32>)
// CHECK:      return %[[SUM2]]
func.func @add_broadcast(%x: tensor<?x?x8xf32>, %pe: tensor<?x8xf32>, %row: tensor<1x8xf32>) -> tensor<?x?x8xf32> {
  %0 = tfm.add %x, %pe : tensor<?x?x8xf32>, tensor<?x8xf32> -> tensor<?x?x8xf32>
  %1 = tfm.add %0, %row : tensor<?x?x8xf32>, tensor<1x8xf32> -> tensor<?x?x8xf32>
  return %1 : tensor<?x?x8xf32>
}

// -----

// concat becomes insert_slices into one empty tensor (which bufferize in
// place), not tensor.concat.

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<?x3xf64>, %[[B:.*]]: tensor<?x5xf64>)
// CHECK-NOT:  tensor.concat
// CHECK:      %[[DA:.*]] = tensor.dim %[[A]], %c0
// CHECK:      %[[DB:.*]] = tensor.dim %[[B]], %c0
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%[[DA]]) : tensor<?x8xf64>
// CHECK:      %[[S0:.*]] = tensor.insert_slice %[[A]] into %[[EMPTY]][0, 0] [%[[DA]], 3] [1, 1] : tensor<?x3xf64> into tensor<?x8xf64>
// CHECK:      %[[S1:.*]] = tensor.insert_slice %[[B]] into %[[S0]][0, 3] [%[[DB]], 5] [1, 1] : tensor<?x5xf64> into tensor<?x8xf64>
// CHECK:      return %[[S1]]
func.func @concat(%a: tensor<?x3xf64>, %b: tensor<?x5xf64>) -> tensor<?x8xf64> {
  %0 = tfm.concat %a, %b dim -1 : (tensor<?x3xf64>, tensor<?x5xf64>) -> tensor<?x8xf64>
  return %0 : tensor<?x8xf64>
}

// -----

// CHECK-LABEL: func.func @concat_static_leading
// CHECK:      %[[EMPTY:.*]] = tensor.empty() : tensor<6x3xf32>
// CHECK:      %[[S0:.*]] = tensor.insert_slice %{{.*}} into %[[EMPTY]][0, 0] [2, 3] [1, 1]
// CHECK:      tensor.insert_slice %{{.*}} into %[[S0]][2, 0] [4, 3] [1, 1]
func.func @concat_static_leading(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<6x3xf32> {
  %0 = tfm.concat %a, %b dim 0 : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

// embedding gathers rows with ids clamped into [0, num - 1] so that a bad id
// never reads outside the table.

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[IDS:.*]]: tensor<?xi64>, %[[TABLE:.*]]: tensor<6x16xf32>)
// CHECK-DAG:  %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:  %[[LAST:.*]] = arith.constant 5 : index
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%{{.*}}) : tensor<?x16xf32>
// CHECK:      %[[E:.*]] = linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME:   iterator_types = ["parallel", "parallel"]
// CHECK-SAME:   ins(%[[IDS]] : tensor<?xi64>) outs(%[[EMPTY]] : tensor<?x16xf32>)
// CHECK-NEXT: ^bb0(%[[ID:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:   %[[IDX:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK-NEXT:   %[[LO:.*]] = arith.maxsi %[[IDX]], %[[C0]] : index
// CHECK-NEXT:   %[[ROW:.*]] = arith.minsi %[[LO]], %[[LAST]] : index
// CHECK-NEXT:   %[[COL:.*]] = linalg.index 1 : index
// CHECK-NEXT:   %[[V:.*]] = tensor.extract %[[TABLE]][%[[ROW]], %[[COL]]] : tensor<6x16xf32>
// CHECK-NEXT:   linalg.yield %[[V]] : f32
// CHECK:      return %[[E]]
func.func @embedding(%ids: tensor<?xi64>, %table: tensor<6x16xf32>) -> tensor<?x16xf32> {
  %0 = tfm.embedding %ids, %table : tensor<?xi64>, tensor<6x16xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// A packed table ([panels, dim, width], packed_rows = 6): ids clamp to the
// real rows, and row r is read at [r / 4, :, r % 4].

// CHECK-LABEL: func.func @embedding_packed
// CHECK-SAME: (%[[IDS:.*]]: tensor<?xi64>, %[[TABLE:.*]]: tensor<2x16x4xf32>)
// CHECK-DAG:  %[[LAST:.*]] = arith.constant 5 : index
// CHECK-DAG:  %[[W:.*]] = arith.constant 4 : index
// CHECK:      linalg.generic
// CHECK:        %[[ROW:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK-NEXT:   %[[COL:.*]] = linalg.index 1 : index
// CHECK-NEXT:   %[[P:.*]] = arith.divui %[[ROW]], %[[W]] : index
// CHECK-NEXT:   %[[J:.*]] = arith.remui %[[ROW]], %[[W]] : index
// CHECK-NEXT:   %[[V:.*]] = tensor.extract %[[TABLE]][%[[P]], %[[COL]], %[[J]]] : tensor<2x16x4xf32>
// CHECK-NEXT:   linalg.yield %[[V]] : f32
func.func @embedding_packed(%ids: tensor<?xi64>, %table: tensor<2x16x4xf32>) -> tensor<?x16xf32> {
  %0 = tfm.embedding %ids, %table {packed_rows = 6 : i64} : tensor<?xi64>, tensor<2x16x4xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// A quantized table in the block panels of a Q4_K GEMM weight (3 rows in a
// panel of width 4, [1, 256 / 8, 4 * 4]): row r's value at k is the
// nibble h = (k % 32 / 4) % 2 of byte k % 4 in lane r % 4 of packed row
// k / 32 * 4 + k % 32 / 8, times the block's i8 scale times the
// super-block's f16 d, plus the i8 min times -dmin.

// CHECK-LABEL: func.func @embedding_q4_k
// CHECK-SAME: (%[[IDS:.*]]: tensor<?xi64>, %[[W:.*]]: tensor<1x32x16xi8>, %[[S:.*]]: tensor<8x4xi8>, %[[M:.*]]: tensor<8x4xi8>, %[[D:.*]]: tensor<2x1x4xf16>)
// CHECK-DAG:  %[[LAST:.*]] = arith.constant 2 : index
// CHECK-DAG:  %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:  %[[C1:.*]] = arith.constant 1 : index
// CHECK:      tensor.empty(%{{.*}}) : tensor<?x256xf32>
// CHECK:      linalg.generic
// CHECK:        %[[ROW:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK:        %[[BYTE:.*]] = tensor.extract %[[W]][%{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x32x16xi8>
// CHECK-NEXT:   %[[U8:.*]] = arith.extui %[[BYTE]] : i8 to i32
// CHECK-NEXT:   %[[SH:.*]] = arith.shrui %[[U8]], %{{.*}} : i32
// CHECK-NEXT:   %[[U:.*]] = arith.andi %[[SH]], %{{.*}} : i32
// CHECK-NOT:    arith.subi
// CHECK:        %[[Q:.*]] = arith.sitofp %[[U]] : i32 to f32
// CHECK-NEXT:   %[[SC:.*]] = tensor.extract %[[S]][%{{.*}}, %[[ROW]]] : tensor<8x4xi8>
// CHECK-NEXT:   %[[SCF:.*]] = arith.sitofp %[[SC]] : i8 to f32
// CHECK:        %[[DH:.*]] = tensor.extract %[[D]][%[[C0]], %{{.*}}, %[[ROW]]] : tensor<2x1x4xf16>
// CHECK-NEXT:   %[[DF:.*]] = arith.extf %[[DH]] : f16 to f32
// CHECK-NEXT:   %[[SCALE:.*]] = arith.mulf %[[DF]], %[[SCF]] : f32
// CHECK-NEXT:   %[[QS:.*]] = arith.mulf %[[Q]], %[[SCALE]] : f32
// CHECK-NEXT:   %[[MN:.*]] = tensor.extract %[[M]][%{{.*}}, %[[ROW]]] : tensor<8x4xi8>
// CHECK:        %[[NDMIN:.*]] = tensor.extract %[[D]][%[[C1]], %{{.*}}, %[[ROW]]] : tensor<2x1x4xf16>
// CHECK:        %[[OFF:.*]] = arith.mulf
// CHECK-NEXT:   %[[V:.*]] = arith.addf %[[QS]], %[[OFF]] : f32
// CHECK-NEXT:   linalg.yield %[[V]] : f32
func.func @embedding_q4_k(%ids: tensor<?xi64>, %w: tensor<1x32x16xi8>, %s: tensor<8x4xi8>, %m: tensor<8x4xi8>, %d: tensor<2x1x4xf16>) -> tensor<?x256xf32> {
  %0 = tfm.embedding %ids, %w scales(%s : tensor<8x4xi8>) offsets(%m : tensor<8x4xi8>) super_scales(%d : tensor<2x1x4xf16>) {packed_rows = 3 : i64} : tensor<?xi64>, tensor<1x32x16xi8> -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

// -----

// Batched i32 ids: the id map drops the feature dimension.

// CHECK-LABEL: func.func @embedding_batched
// CHECK:      linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK:        arith.index_cast %{{.*}} : i32 to index
// CHECK:        arith.minsi
// CHECK:        linalg.index 2 : index
func.func @embedding_batched(%ids: tensor<2x?xi32>, %table: tensor<6x16xf32>) -> tensor<2x?x16xf32> {
  %0 = tfm.embedding %ids, %table : tensor<2x?xi32>, tensor<6x16xf32> -> tensor<2x?x16xf32>
  return %0 : tensor<2x?x16xf32>
}

// -----

// positional_encoding: a generic over [seq, D] indices, no inputs, sin on
// even and cos on odd columns, frequency exp(2i * -ln(10000) / D).

// CHECK-LABEL: func.func @positional_encoding
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>)
// CHECK-DAG:  %[[RATE:.*]] = arith.constant -1.15129256 : f32
// CHECK:      %[[SEQ:.*]] = tensor.dim %[[X]], %c1
// CHECK:      %[[EMPTY:.*]] = tensor.empty(%[[SEQ]]) : tensor<?x8xf32>
// CHECK:      %[[PE:.*]] = linalg.generic
// CHECK-SAME:   indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME:   iterator_types = ["parallel", "parallel"]
// CHECK-SAME:   outs(%[[EMPTY]] : tensor<?x8xf32>)
// CHECK:        %[[POS:.*]] = linalg.index 0 : index
// CHECK:        %[[COL:.*]] = linalg.index 1 : index
// CHECK:        %[[PARITY:.*]] = arith.remui %[[COL]], %c2
// CHECK:        arith.mulf %{{.*}}, %[[RATE]] : f32
// CHECK:        math.exp
// CHECK:        %[[EVEN:.*]] = arith.cmpi eq, %[[PARITY]], %c0
// CHECK:        %[[SIN:.*]] = math.sin %[[ANGLE:.*]] : f32
// CHECK:        %[[COS:.*]] = math.cos %[[ANGLE]] : f32
// CHECK:        %[[V:.*]] = arith.select %[[EVEN]], %[[SIN]], %[[COS]] : f32
// CHECK:        linalg.yield %[[V]]
// CHECK:      return %[[PE]]
func.func @positional_encoding(%x: tensor<?x?x8xf32>) -> tensor<?x8xf32> {
  %0 = tfm.positional_encoding %x : tensor<?x?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// tfm.weight stays for tfm-bind-weights.

// CHECK-LABEL: func.func @weight_stays
// CHECK:      %[[W:.*]] = tfm.weight "w" : tensor<4x8xf32>
// CHECK:      linalg.generic
// CHECK-SAME:   ins(%{{.*}}, %[[W]] : tensor<?x8xf32>, tensor<4x8xf32>)
func.func @weight_stays(%x: tensor<?x8xf32>) -> tensor<?x4xf32> {
  %w = tfm.weight "w" : tensor<4x8xf32>
  %0 = tfm.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @sdpa_not_decomposed(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{could not lower 'tfm.sdpa' to linalg (run tfm-lower-layers first)}}
  %0 = tfm.sdpa %q, %q, %q : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @mha_not_decomposed(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{could not lower 'tfm.multi_head_attention' to linalg (run tfm-lower-layers first)}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) heads 2
      : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// The sinusoids need the model dimension at compile time.
func.func @positional_encoding_dynamic_dim(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{could not lower 'tfm.positional_encoding' to linalg}}
  %0 = tfm.positional_encoding %x : tensor<?x?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
