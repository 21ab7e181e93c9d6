// RUN: tfm-opt %s -split-input-file -tfm-tile-attention -canonicalize | FileCheck %s
// RUN: tfm-opt %s -split-input-file -tfm-tile-attention="batch-tile=2 query-tile=32 value-tile=4" -canonicalize | FileCheck %s --check-prefix=SIZES

// One tile per (batch, head, 64 queries): the tile reads its queries, the
// whole keys and values of its head, the mask rows of its batch (the
// broadcast head and query dims stay whole), and writes its rows of the
// output. Causal rows keep their place through a query_offset of the tile's
// first query.
// CHECK-LABEL: func.func @causal_masked
// CHECK:         scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) = (0, 0, 0) to (2, 4, 100) step (1, 1, 64) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK:           %[[ROWS:.*]] = affine.min
// CHECK:           %[[Q:.*]] = tensor.extract_slice %arg0[%[[B]], %[[H]], %[[I]], 0] [1, 1, %[[ROWS]], 16]
// CHECK:           %[[K:.*]] = tensor.extract_slice %arg1[%[[B]], %[[H]], 0, 0] [1, 1, 120, 16]
// CHECK:           %[[V:.*]] = tensor.extract_slice %arg2[%[[B]], %[[H]], 0, 0] [1, 1, 120, 8]
// CHECK:           %[[M:.*]] = tensor.extract_slice %arg3[%[[B]], 0, 0, 0] [1, 1, 1, 120]
// CHECK:           %[[O:.*]] = tensor.extract_slice %[[OUT]][%[[B]], %[[H]], %[[I]], 0] [1, 1, %[[ROWS]], 8]
// CHECK:           %[[START:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:           %[[OFF:.*]] = linalg.fill ins(%[[START]] : i64) outs(%{{.*}} : tensor<1xi64>)
// CHECK:           %[[T:.*]] = tfm.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<1x1x?x16xf32>, tensor<1x1x120x16xf32>, tensor<1x1x120x8xf32>) mask(%[[M]] : tensor<1x1x1x120xi1>) query_offset(%[[OFF]] : tensor<1xi64>) outs(%[[O]] : tensor<1x1x?x8xf32>) scale 2.500000e-01 {causal}
// CHECK:           tensor.parallel_insert_slice %[[T]] into %[[OUT]][%[[B]], %[[H]], %[[I]], 0] [1, 1, %[[ROWS]], 8]
// CHECK-NOT:     tfm.attention
// CHECK:         return
// SIZES-LABEL: func.func @causal_masked
// (The batch loop has one iteration of 2 and folds away.)
// SIZES:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (4, 100, 8) step (2, 32, 4)
// SIZES:           tfm.attention ins({{.*}} : tensor<2x2x?x16xf32>, tensor<2x2x120x16xf32>, tensor<2x2x120x4xf32>) mask({{.*}} : tensor<2x1x1x120xi1>) query_offset({{.*}} : tensor<2xi64>) outs({{.*}} : tensor<2x2x?x4xf32>)
func.func @causal_masked(%q: tensor<2x4x100x16xf32>, %k: tensor<2x4x120x16xf32>, %v: tensor<2x4x120x8xf32>, %mask: tensor<2x1x1x120xi1>) -> tensor<2x4x100x8xf32> {
  %init = tensor.empty() : tensor<2x4x100x8xf32>
  %o = tfm.attention ins(%q, %k, %v : tensor<2x4x100x16xf32>, tensor<2x4x120x16xf32>, tensor<2x4x120x8xf32>) mask(%mask : tensor<2x1x1x120xi1>) outs(%init : tensor<2x4x100x8xf32>) scale 0.25 {causal} -> tensor<2x4x100x8xf32>
  return %o : tensor<2x4x100x8xf32>
}

// -----

// Over a cache: each tile takes its sequence's kv_length, and its
// query_offset moves by the tile's first query.
// CHECK-LABEL: func.func @cached
// CHECK:         scf.forall (%[[B:.*]], %{{.*}}, %[[I:.*]]) = (0, 0, 0) to (%{{.*}}, 4, %{{.*}}) step (1, 1, 64)
// CHECK-DAG:       %[[LEN:.*]] = tensor.extract_slice %arg2[%[[B]]] [1] [1] : tensor<?xi64> to tensor<1xi64>
// CHECK-DAG:       %[[PAST:.*]] = tensor.extract_slice %arg3[%[[B]]] [1] [1] : tensor<?xi64> to tensor<1xi64>
// CHECK:           %[[START:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:           %[[STARTS:.*]] = linalg.fill ins(%[[START]] : i64)
// CHECK:           %[[OFF:.*]] = linalg.add ins(%[[PAST]], %[[STARTS]] : tensor<1xi64>, tensor<1xi64>)
// CHECK:           tfm.attention {{.*}} kv_length(%[[LEN]] : tensor<1xi64>) query_offset(%[[OFF]] : tensor<1xi64>)
func.func @cached(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x32x16xf32>, %len: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x4x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x4x?x16xf32>
  %s = tensor.dim %q, %c2 : tensor<?x4x?x16xf32>
  %init = tensor.empty(%b, %s) : tensor<?x4x?x16xf32>
  %o = tfm.attention ins(%q, %k, %k : tensor<?x4x?x16xf32>, tensor<?x4x32x16xf32>, tensor<?x4x32x16xf32>) kv_length(%len : tensor<?xi64>) query_offset(%off : tensor<?xi64>) outs(%init : tensor<?x4x?x16xf32>) scale 0.25 {causal} -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

// Without causal, tiles need no query_offset; a float mask [Sq, Sk] (no
// batch dims) is sliced along its query rows only.
// CHECK-LABEL: func.func @float_mask
// CHECK:         scf.forall (%{{.*}}, %[[I:.*]]) = (0, 0) to (3, 70) step (1, 64)
// CHECK:           %[[M:.*]] = tensor.extract_slice %arg3[%[[I]], 0] [%{{.*}}, 50] [1, 1] : tensor<70x50xf32> to tensor<?x50xf32>
// CHECK-NOT:       query_offset
// CHECK:           tfm.attention {{.*}} mask(%[[M]] : tensor<?x50xf32>)
func.func @float_mask(%q: tensor<3x70x16xf32>, %k: tensor<3x50x16xf32>, %v: tensor<3x50x16xf32>, %mask: tensor<70x50xf32>) -> tensor<3x70x16xf32> {
  %init = tensor.empty() : tensor<3x70x16xf32>
  %o = tfm.attention ins(%q, %k, %v : tensor<3x70x16xf32>, tensor<3x50x16xf32>, tensor<3x50x16xf32>) mask(%mask : tensor<70x50xf32>) outs(%init : tensor<3x70x16xf32>) scale 0.25 -> tensor<3x70x16xf32>
  return %o : tensor<3x70x16xf32>
}

// -----

// Causal attention without a batch dim has nowhere to put a query_offset:
// its queries stay whole, and with no leading dims there is nothing to tile.
// CHECK-LABEL: func.func @causal_unbatched
// CHECK-NOT:     scf.forall
// CHECK:         tfm.attention ins(%arg0, %arg1, %arg1 : tensor<70x16xf32>, tensor<70x16xf32>, tensor<70x16xf32>) outs(%{{.*}} : tensor<70x16xf32>) scale 2.500000e-01 {causal}
// CHECK-NEXT:    return
func.func @causal_unbatched(%q: tensor<70x16xf32>, %k: tensor<70x16xf32>) -> tensor<70x16xf32> {
  %init = tensor.empty() : tensor<70x16xf32>
  %o = tfm.attention ins(%q, %k, %k : tensor<70x16xf32>, tensor<70x16xf32>, tensor<70x16xf32>) outs(%init : tensor<70x16xf32>) scale 0.25 {causal} -> tensor<70x16xf32>
  return %o : tensor<70x16xf32>
}

// -----

// Operands read through indexing maps (heads folded into [B, S, H, D]
// projections): each operand is sliced along the dims its map reads, and the
// tile keeps the maps.
// CHECK-LABEL: func.func @mapped
// CHECK:         scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) = (0, 0, 0) to (2, 4, 100) step (1, 1, 64) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK:           %[[Q:.*]] = tensor.extract_slice %arg0[%[[B]], %[[I]], %[[H]], 0] [1, %{{.*}}, 1, 16]
// CHECK:           %[[K:.*]] = tensor.extract_slice %arg1[%[[B]], 0, %[[H]], 0] [1, 120, 1, 16]
// CHECK:           %[[O:.*]] = tensor.extract_slice %[[OUT]][%[[B]], %[[I]], %[[H]], 0] [1, %{{.*}}, 1, 16]
// CHECK:           tfm.attention ins(%[[Q]], %[[K]], %{{.*}} : tensor<1x?x1x16xf32>, tensor<1x120x1x16xf32>, tensor<1x120x1x16xf32>) outs(%[[O]] : tensor<1x?x1x16xf32>) scale 2.500000e-01 indexing_maps [
// CHECK:           tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[B]], %[[I]], %[[H]], 0] [1, %{{.*}}, 1, 16]
func.func @mapped(%q: tensor<2x100x4x16xf32>, %k: tensor<2x120x4x16xf32>) -> tensor<2x100x4x16xf32> {
  %init = tensor.empty() : tensor<2x100x4x16xf32>
  %o = tfm.attention ins(%q, %k, %k : tensor<2x100x4x16xf32>, tensor<2x120x4x16xf32>, tensor<2x120x4x16xf32>) outs(%init : tensor<2x100x4x16xf32>) scale 0.25
         indexing_maps [affine_map<(b, h, m, k1, k2, n) -> (b, m, h, k1)>,
                        affine_map<(b, h, m, k1, k2, n) -> (b, k2, h, k1)>,
                        affine_map<(b, h, m, k1, k2, n) -> (b, k2, h, n)>,
                        affine_map<(b, h, m, k1, k2, n) -> (b, m, h, n)>] -> tensor<2x100x4x16xf32>
  return %o : tensor<2x100x4x16xf32>
}
