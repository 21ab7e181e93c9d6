// RUN: tfm-opt %s -split-input-file -tfm-tile-linalg | FileCheck %s

// Rows of an elementwise op run in the forall; each row is cut into vectors
// of 64 lanes, and the exponential becomes a polynomial on them.
// CHECK-LABEL: func.func @elementwise_rows(
// CHECK-SAME:    %[[X:.*]]: memref<?x512xf32>, %[[Y:.*]]: memref<?x512xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[C512:.*]] = arith.constant 512 : index
// CHECK:         %[[ROWS:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK:         scf.forall (%[[R:.*]]) in (%[[ROWS]]) {
// CHECK:           scf.for %[[J:.*]] = %[[C0]] to %[[C512]] step %[[C64]] {
// CHECK:             %[[V:.*]] = vector.load %[[X]][%[[R]], %[[J]]] : memref<?x512xf32>, vector<64xf32>
// CHECK-NOT:         math.exp
// CHECK:             math.fma
// CHECK:             vector.store %{{.*}}, %[[Y]][%[[R]], %[[J]]] : memref<?x512xf32>, vector<64xf32>
// CHECK-NOT:     linalg.generic

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @elementwise_rows(%x: memref<?x512xf32>, %y: memref<?x512xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x512xf32>) outs(%y : memref<?x512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A row reduction: one full vector tile reduced into the row's sum (its
// lanes in any order, `reassoc`: LLVM adds them as a tree, not as 64
// dependent adds), then a scalar tile for the 36 elements left.
// CHECK-LABEL: func.func @row_sums_with_remainder(
// CHECK-SAME:    %[[X:.*]]: memref<?x100xf32>, %[[S:.*]]: memref<?xf32>)
// CHECK:         scf.forall (%[[R:.*]]) in (%{{.*}}) {
// CHECK:           %[[V:.*]] = vector.load %[[X]][%[[R]], %{{.*}}] : memref<?x100xf32>, vector<64xf32>
// CHECK:           %[[ACC:.*]] = vector.extract
// CHECK:           vector.reduction <add>, %[[V]], %[[ACC]] fastmath<reassoc> : vector<64xf32> into f32
// CHECK:           vector.store %{{.*}}, %[[S]][%[[R]]]
// CHECK:           %[[TAIL:.*]] = memref.subview %[[X]][%[[R]], 64] [1, 36] [1, 1]
// CHECK:           %[[OUT:.*]] = memref.subview %[[S]][%[[R]]] [1] [1]
// CHECK:           linalg.generic {{.*}} ins(%[[TAIL]] : {{.*}}) outs(%[[OUT]] : {{.*}})

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_sums_with_remainder(%x: memref<?x100xf32>, %s: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x100xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A dynamic row length: vector tiles up to the last multiple of 64, then a
// dynamic scalar remainder.
// CHECK-LABEL: func.func @dynamic_inner(
// CHECK-SAME:    %[[X:.*]]: memref<4x?xf32>, %[[Y:.*]]: memref<4x?xf32>)
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[N:.*]] = memref.dim %[[X]], %c1
// CHECK:         scf.forall (%[[R:.*]]) in (4) {
// CHECK:           %[[REM:.*]] = arith.remui %[[N]], %[[C64]]
// CHECK:           %[[FULL:.*]] = arith.subi %[[N]], %[[REM]]
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %[[FULL]] step %[[C64]] {
// CHECK:             %[[V:.*]] = vector.load %[[X]][%[[R]], %[[J]]] : memref<4x?xf32>, vector<64xf32>
// CHECK:             vector.store %[[V]], %[[Y]][%[[R]], %[[J]]]
// CHECK:           %[[FROM:.*]] = memref.subview %[[X]][%[[R]], %[[FULL]]] [1, %[[REM]]] [1, 1]
// CHECK:           %[[TO:.*]] = memref.subview %[[Y]][%[[R]], %[[FULL]]] [1, %[[REM]]] [1, 1]
// CHECK:           linalg.copy ins(%[[FROM]] : {{.*}}) outs(%[[TO]] : {{.*}})

func.func @dynamic_inner(%x: memref<4x?xf32>, %y: memref<4x?xf32>) {
  linalg.copy ins(%x : memref<4x?xf32>) outs(%y : memref<4x?xf32>)
  return
}

// -----

// A contraction is split over its leading rows only; its columns and its
// reduction stay in the tile (scalar): no per-element dot products.
// CHECK-LABEL: func.func @contraction_rows_only(
// CHECK-SAME:    %[[X:.*]]: memref<?x8xf32>, %[[W:.*]]: memref<8x16xf32>, %[[Y:.*]]: memref<?x16xf32>)
// CHECK:         scf.forall (%[[R:.*]]) in (%{{.*}}) {
// CHECK:           %[[XR:.*]] = memref.subview %[[X]][%[[R]], 0] [1, 8] [1, 1]
// CHECK:           %[[YR:.*]] = memref.subview %[[Y]][%[[R]], 0] [1, 16] [1, 1]
// CHECK:           linalg.generic {{.*}} ins(%[[XR]], %[[W]] : {{.*}}) outs(%[[YR]] : {{.*}})
// CHECK-NOT:     vector.

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @contraction_rows_only(%x: memref<?x8xf32>, %w: memref<8x16xf32>, %y: memref<?x16xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x8xf32>, memref<8x16xf32>) outs(%y : memref<?x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %m, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// linalg.index inside a tile is offset by the tile's position.
// CHECK-LABEL: func.func @indices_offset(
// CHECK:         scf.forall (%[[R:.*]]) in (%{{.*}}) {
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-DAG:         %[[I:.*]] = vector.broadcast %[[R]] : index to vector<64xindex>
// CHECK-DAG:         %[[STEP:.*]] = vector.step : vector<64xindex>
// CHECK-DAG:         %[[J0:.*]] = vector.broadcast %[[J]] : index to vector<64xindex>
// CHECK-DAG:         %[[COL:.*]] = arith.addi %[[J0]], %[[STEP]] : vector<64xindex>
// CHECK:             arith.cmpi ugt, %[[COL]], %{{.*}} : vector<64xindex>

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @indices_offset(%y: memref<?x128xf32>) {
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%y : memref<?x128xf32>) {
  ^bb0(%b: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c = arith.cmpi ugt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %s = arith.select %c, %ninf, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The head split of attention: every (batch, head, position) row is one
// contiguous vector copy.
// CHECK-LABEL: func.func @transpose_heads(
// CHECK-SAME:    %[[X:.*]]: memref<1x?x8x64xf32>, %[[Y:.*]]: memref<1x8x?x64xf32>)
// CHECK:         scf.forall (%[[B:.*]], %[[H:.*]], %[[S:.*]]) in (1, 8, %{{.*}}) {
// CHECK:           %[[V:.*]] = vector.load %[[X]][%[[B]], %[[S]], %[[H]], %{{.*}}] : memref<1x?x8x64xf32>, vector<64xf32>
// CHECK:           vector.store %[[V]], %[[Y]][%[[B]], %[[H]], %[[S]], %{{.*}}] : memref<1x8x?x64xf32>, vector<64xf32>

func.func @transpose_heads(%x: memref<1x?x8x64xf32>, %y: memref<1x8x?x64xf32>) {
  linalg.transpose ins(%x : memref<1x?x8x64xf32>) outs(%y : memref<1x8x?x64xf32>) permutation = [0, 2, 1, 3]
  return
}

// -----

// Outlined kernels are left alone.
// CHECK-LABEL: func.func private @__tfm_task_kernel(
// CHECK-NEXT:    linalg.copy

func.func private @__tfm_task_kernel(%x: memref<?x64xf32>, %y: memref<?x64xf32>) attributes {tfm.task} {
  linalg.copy ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xf32>)
  return
}

// -----

// A bool mask holds a byte per element, which a vector of i1 would not
// store: the rows are split, the tiles stay scalar.
// CHECK-LABEL: func.func @bool_mask_stays_scalar(
// CHECK:         scf.forall
// CHECK-NOT:       vector.
// CHECK:           linalg.generic
func.func @bool_mask_stays_scalar(%m: memref<?x128xi64>, %b: memref<?x128xi1>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%m : memref<?x128xi64>) outs(%b : memref<?x128xi1>) {
  ^bb0(%a: i64, %o: i1):
    %zero = arith.constant 0 : i64
    %c = arith.cmpi ne, %a, %zero : i64
    linalg.yield %c : i1
  }
  return
}
