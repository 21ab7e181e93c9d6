// RUN: tfm-opt %s -convert-linalg-to-gpu -canonicalize -cse | FileCheck %s
// RUN: tfm-opt %s -convert-linalg-to-gpu | FileCheck %s --check-prefix=COUNT

// Two launches: the reduction and the copy out (not the fill, nor the copy
// into the accumulator).
// COUNT-COUNT-2: gpu.launch
// COUNT-NOT:     gpu.launch

// A row sum whose accumulator is a copy of a zero-filled buffer: the
// reduction's threads start their rows from the fill's constant, and
// neither the copy nor the fill (nothing else reads its buffer) gets a
// kernel.
// CHECK-LABEL: func.func @sum_from_shared_fill(
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x8xf32>, %[[O:[^:]*]]: memref<?xf32>)
// CHECK:         %[[ACC:.*]] = memref.alloc
// CHECK-NOT:     memref.alloc
// CHECK:         gpu.launch
// CHECK:           memref.store %cst, %[[ACC]][%[[ROW:.*]]]
// CHECK:           scf.for
// CHECK:             memref.load %[[X]][%[[ROW]],
// CHECK:         gpu.launch
// CHECK:           memref.store %{{.*}}, %[[O]]
// CHECK-NOT:     gpu.launch
func.func @sum_from_shared_fill(%x: memref<?x8xf32>, %o: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x8xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<?xf32>)
  %b = memref.alloc(%n) : memref<?xf32>
  memref.copy %a, %b : memref<?xf32> to memref<?xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x8xf32>) outs(%b : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  memref.copy %b, %o : memref<?xf32> to memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  memref.dealloc %b : memref<?xf32>
  return
}
