// RUN: tfm-opt %s -split-input-file -convert-linalg-to-gpu -canonicalize -cse | FileCheck %s
// RUN: tfm-opt %s -split-input-file -convert-linalg-to-gpu="threads=256" -canonicalize -cse \
// RUN:   | FileCheck %s --check-prefix=THREADS

// Elementwise: every (row, lane) iteration is one thread of a linearized
// grid of 128-thread blocks; neighbouring threads store neighbouring lanes.
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME:    %[[X:.*]]: memref<?x64xf32>, %[[Y:.*]]: memref<?x64xf32>)
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[ROWS:.*]] = memref.dim %[[X]]
// CHECK:         %[[TOTAL:.*]] = arith.muli %[[ROWS]], %[[C64]]
// CHECK:         %[[GRID:.*]] = arith.ceildivui %[[TOTAL]], %[[C128]]
// CHECK:         gpu.launch blocks(%[[B:[^,]*]], {{.*}} in (%{{[^ ]*}} = %[[GRID]],
// CHECK-SAME:      threads(%[[T:[^,]*]], {{.*}} in (%[[BLOCK:[^ ]*]] = %[[C128]],
// CHECK:           %[[BASE:.*]] = arith.muli %[[B]], %[[BLOCK]]
// CHECK:           %[[I:.*]] = arith.addi %[[BASE]], %[[T]]
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[TOTAL]]
// CHECK:           scf.if %[[IN]] {
// CHECK:             %[[IV:.*]]:2 = affine.delinearize_index %[[I]] into (%[[ROWS]], 64)
// CHECK:             %[[V:.*]] = memref.load %[[X]][%[[IV]]#0, %[[IV]]#1]
// CHECK:             %[[E:.*]] = math.exp %[[V]]
// CHECK:             memref.store %[[E]], %[[Y]][%[[IV]]#0, %[[IV]]#1]
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.
// THREADS-LABEL: func.func @elementwise(
// THREADS:         %[[C256:.*]] = arith.constant 256 : index
// THREADS:         gpu.launch
// THREADS-SAME:      threads({{[^)]*}}) in (%{{[^ ]*}} = %[[C256]],
func.func @elementwise(%x: memref<?x64xf32>, %y: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A row reduction (layer norm's sums): one thread per row, the row's
// reduction in a loop.
// CHECK-LABEL: func.func @row_sum(
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C33:.*]] = arith.constant 33 : index
// CHECK:         gpu.launch
// CHECK-SAME:      threads(%[[T:[^,]*]],
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[T]], %[[C8]]
// CHECK:           scf.if %[[IN]] {
// CHECK:             scf.for %[[J:.*]] = %{{.*}} to %[[C33]]
// CHECK:               memref.load %{{.*}}[%[[T]], %[[J]]] : memref<8x33xf32>
// CHECK:               arith.addf
// CHECK:               memref.store %{{.*}}, %{{.*}}[%[[T]]] : memref<8xf32>
func.func @row_sum(%x: memref<8x33xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x33xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction over a middle dim: the threads take the leading parallel loop;
// the parallel loop under the reduction runs in the thread.
// CHECK-LABEL: func.func @middle(
// CHECK:         gpu.launch
// CHECK-SAME:      threads(%[[T:[^,]*]],
// CHECK:           scf.if
// CHECK:             scf.for %[[R:.*]] = %{{.*}} to %c5
// CHECK:               scf.for %[[J:.*]] = %{{.*}} to %c6
// CHECK:                 memref.load %{{.*}}[%[[T]], %[[R]], %[[J]]] : memref<4x5x6xf32>
// CHECK-NOT:     scf.parallel
func.func @middle(%x: memref<4x5x6xf32>, %y: memref<4x6xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<4x5x6xf32>) outs(%y : memref<4x6xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction to a scalar (a run-time check's status): one thread.
// CHECK-LABEL: func.func @to_scalar(
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK:         gpu.launch blocks({{[^)]*}}) in (%{{[^ ]*}} = %[[C1]], %{{[^ ]*}} = %[[C1]], %{{[^ ]*}} = %[[C1]])
// CHECK-SAME:      threads({{[^)]*}}) in (%{{[^ ]*}} = %[[C1]], %{{[^ ]*}} = %[[C1]], %{{[^ ]*}} = %[[C1]])
// CHECK:           scf.for
// CHECK:             arith.maxsi
// CHECK:             memref.store %{{.*}}, %{{.*}}[] : memref<i32>
func.func @to_scalar(%x: memref<?xi64>, %y: memref<i32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<?xi64>) outs(%y : memref<i32>) {
  ^bb0(%a: i64, %b: i32):
    %t = arith.trunci %a : i64 to i32
    %m = arith.maxsi %t, %b : i32
    linalg.yield %m : i32
  }
  return
}

// -----

// A copy gets the same kernel as every other op: the host never touches
// device memory.
// CHECK-LABEL: func.func @copy(
// CHECK-NOT:     memref.copy
// CHECK:         gpu.launch
// CHECK:           %[[IV:.*]]:2 = affine.delinearize_index %{{.*}} into (2, 3)
// CHECK:           %[[V:.*]] = memref.load %{{.*}}[%[[IV]]#0, %[[IV]]#1] : memref<2x3xf32>
// CHECK:           memref.store %[[V]], %{{.*}}[%[[IV]]#0, %[[IV]]#1] : memref<2x3xf32>
func.func @copy(%x: memref<2x3xf32>, %y: memref<2x3xf32>) {
  memref.copy %x, %y : memref<2x3xf32> to memref<2x3xf32>
  return
}

// -----

// Contractions become tiled GEMMs: 16 x 16 threads, a 64 x 64 tile of C per
// block (4 x 4 per thread, in registers), A and B through shared memory in
// slices of 16 along K, the op's own body accumulating.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x48xf32>, %[[W:[^:]*]]: memref<40x48xf32>, %[[Y:[^:]*]]: memref<?x40xf32>)
// CHECK:         %[[M:.*]] = memref.dim %[[X]], %c0
// CHECK:         %[[GY:.*]] = arith.ceildivui %[[M]], %c64
// CHECK:         %[[GRIDY:.*]] = arith.maxui %[[GY]], %c1
// CHECK:         gpu.launch blocks({{.*}}) in (%{{[^ ]*}} = %c1, %{{[^ ]*}} = %[[GRIDY]], %{{[^ ]*}} = %c1) threads({{.*}}) in (%{{[^ ]*}} = %c16, %{{[^ ]*}} = %c16, %{{[^ ]*}} = %c1)
// CHECK-SAME:      workgroup(%[[AS:[^ ]*]] : memref<1024xf32, #gpu.address_space<workgroup>>, %[[BS:[^ ]*]] : memref<1024xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-16:  memref.load %[[Y]]
// CHECK:           scf.for %{{.*}} = %c0 to %c48 step %c16 iter_args(
// CHECK:             memref.load %[[X]]
// CHECK:             memref.store %{{.*}}, %[[AS]]
// CHECK:             memref.load %[[W]]
// CHECK:             memref.store %{{.*}}, %[[BS]]
// CHECK:             gpu.barrier
// CHECK:             scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(
// CHECK-COUNT-4:       memref.load %[[AS]]
// CHECK-COUNT-16:      arith.mulf
// CHECK:             gpu.barrier
// CHECK-COUNT-16:  memref.store %{{.*}}, %[[Y]]
// THREADS-LABEL: func.func @linear(
// THREADS:         gpu.launch {{.*}} threads({{.*}}) in (%{{[^ ]*}} = %c16, %{{[^ ]*}} = %c16,
func.func @linear(%x: memref<?x48xf32>, %w: memref<40x48xf32>, %y: memref<?x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x48xf32>, memref<40x48xf32>) outs(%y : memref<?x40xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Batched: the batch dims are the grid's z.
// CHECK-LABEL: func.func @batch_matmul(
// CHECK:         %[[B:.*]] = memref.dim %{{.*}}, %c0 : memref<?x?x?xf32>
// CHECK:         %[[GRIDZ:.*]] = arith.maxui %[[B]], %c1
// CHECK:         gpu.launch blocks(%{{[^,]*}}, %{{[^,]*}}, %[[BZ:[^)]*]]) in ({{.*}}, %{{[^ ]*}} = %[[GRIDZ]])
// CHECK:           memref.load %{{.*}}[%[[BZ]],
func.func @batch_matmul(%a: memref<?x?x?xf32>, %b: memref<?x?x?xf32>, %c: memref<?x?x?xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<?x?x?xf32>, memref<?x?x?xf32>) outs(%c : memref<?x?x?xf32>)
  return
}

// -----

// A linear layer over [batch, seq, K]: the two M loops are the GEMM's rows,
// delinearized where x and y are addressed.
// CHECK-LABEL: func.func @linear_batched(
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x5x16xf32>
// CHECK:         %[[B:.*]] = memref.dim %[[X]], %c0
// CHECK:         %[[ROWS:.*]] = arith.muli %[[B]], %c5
// CHECK:         arith.ceildivui %[[ROWS]], %c64
// CHECK:         gpu.launch
// CHECK:           %[[RC:.*]]:2 = affine.delinearize_index %{{.*}} into (%[[B]], 5)
// CHECK:           memref.load %{{.*}}[%[[RC]]#0, %[[RC]]#1, %{{.*}}] : memref<?x5x8xf32>
func.func @linear_batched(%x: memref<?x5x16xf32>, %w: memref<8x16xf32>, %y: memref<?x5x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, s, n, k) -> (b, s, k)>, affine_map<(b, s, n, k) -> (n, k)>, affine_map<(b, s, n, k) -> (b, s, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x5x16xf32>, memref<8x16xf32>) outs(%y : memref<?x5x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

