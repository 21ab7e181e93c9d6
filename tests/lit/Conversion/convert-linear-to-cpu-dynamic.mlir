// RUN: tfm-opt %s -convert-linear-to-cpu="vector-bits=128 micro-rows=2" | FileCheck %s --check-prefix=DYN

// One head of a matmul between activations (tfm-pack-matmul): its right
// operand packed at run time, so K, the panels and N are dynamic, and each
// operand is a strided slice of a batch whose rows are contiguous. K and N
// are read from the buffers in the task; every tile is masked (N is not
// known to fill the last panel).

// DYN-LABEL: func.func private @__tfm_task_linear_0(
// DYN-SAME:    %{{[^:]*}}: memref<?x?xf32, strided<[?, 1], offset: ?>>, %{{[^:]*}}: memref<?x?x8xf32, strided<[?, 8, 1], offset: ?>>, %{{[^:]*}}: memref<?x?xf32, strided<[?, 1], offset: ?>>,
// DYN:         %[[K:.*]] = memref.dim %{{.*}}, %c1 : memref<?x?x8xf32, strided<[?, 8, 1], offset: ?>>
// DYN:         %[[N:.*]] = memref.dim %{{.*}}, %c1 : memref<?x?xf32, strided<[?, 1], offset: ?>>
// DYN:         %[[END:.*]] = arith.maxsi %[[K]], %c1
// DYN:         scf.for %{{.*}} = %c0 to %[[END]] step
// DYN:         vector.maskedstore
// DYN-LABEL: func.func @run_time_packed
// DYN:         call @__tfm_task_linear_0
func.func @run_time_packed(%x: memref<?x?xf32, strided<[?, 1], offset: ?>>, %w: memref<?x?x8xf32, strided<[?, 8, 1], offset: ?>>, %y: memref<?x?xf32, strided<[?, 1], offset: ?>>) {
  tfm.packed_linear ins(%x, %w : memref<?x?xf32, strided<[?, 1], offset: ?>>, memref<?x?x8xf32, strided<[?, 8, 1], offset: ?>>) outs(%y : memref<?x?xf32, strided<[?, 1], offset: ?>>) activation none
  return
}
