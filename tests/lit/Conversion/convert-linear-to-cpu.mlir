// RUN: tfm-opt %s -split-input-file -convert-linear-to-cpu="vector-bits=128 micro-rows=2" | FileCheck %s
// RUN: tfm-opt %s -split-input-file -convert-linear-to-cpu="vector-bits=128 micro-rows=2" \
// RUN:   | FileCheck %s --check-prefix=TASK
// RUN: tfm-opt %s -split-input-file -convert-linear-to-cpu="multiversion=true" \
// RUN:   | FileCheck %s --check-prefix=MULTI

// Each bufferized tfm.packed_linear becomes a call to an outlined task
// function over [0, row blocks x column blocks), sized by the caller's
// thread count; two ops of the same shapes and epilogue share one task
// function.

// CHECK-LABEL: func.func @shares_task(
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x3xf32>, %[[W:[^:]*]]: memref<2x3x8xf32>, %[[B:[^:]*]]: memref<16xf32>, %[[R:[^:]*]]: memref<?x13xf32>, %[[Y:[^:]*]]: memref<?x13xf32>)
// CHECK-NOT:     tfm.packed_linear
// CHECK:         %[[THREADS:.*]] = call @__tfm_exec_threads() : () -> index
// CHECK:         arith.ceildivsi %[[THREADS]]
// CHECK:         call @__tfm_task_linear_0(%[[X]], %[[W]], %[[B]], %[[R]], %[[Y]], %[[PANELS:[^,]*]], %[[ROWS:[^,]*]], %{{[^,]*}}, %{{[^,]*}})
// CHECK:         call @__tfm_exec_threads()
// CHECK:         call @__tfm_task_linear_0(%[[X]], %[[W]], %[[B]], %[[R]], %[[Y]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}})
// CHECK-NOT:     __tfm_task_linear_1

// The task: tasks, K chunks, row groups whose K chunk of A is copied to a
// stack tile, panels, micro-kernels of up to 2 rows chosen by a switch on
// the rows left.
// TASK:       func.func private @__tfm_exec_threads() -> index attributes {tfm.exec_threads}
// TASK-LABEL: func.func private @__tfm_task_linear_0(
// TASK-SAME:     %[[X:[^:]*]]: memref<?x3xf32>
// TASK:         %[[TILE:.*]] = memref.alloca() {alignment = 64 : i64} : memref<24x512xf32>
// TASK:         scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %c1 {
// TASK:           scf.for %[[K0:.*]] = %c0 to %c3 step %c512
// TASK:             %[[KC:.*]] = arith.minsi %{{.*}}, %c512
// TASK:             scf.for %[[G:.*]] = %{{.*}} to %{{.*}} step %c24 {
// K = 3 is no whole vector: the copy is masked.
// TASK:               scf.for %[[ROW:.*]] =
// TASK:                 scf.for %[[KK:.*]] = %c0 to %[[KC]] step %c4
// TASK:                   %[[A:.*]] = vector.maskedload %[[X]][%[[ROW]], {{.*}}], {{.*}} : memref<?x3xf32>
// TASK:                   vector.maskedstore %[[TILE]][%{{.*}}, %[[KK]]], %{{.*}}, %[[A]]
// TASK:               scf.for %[[P:.*]] =
// The next panel (after the last: the first one at the next chunk) is
// prefetched into L2 while this one runs.
// TASK:                 %[[NEXT:.*]] = arith.addi %[[P]], %c1
// TASK:                 %[[LASTP:.*]] = arith.cmpi sge, %[[NEXT]]
// TASK:                 %[[NEXTP:.*]] = arith.select %[[LASTP]], %{{.*}}, %[[NEXT]]
// TASK:                 %[[NEXTK0:.*]] = arith.select %[[LASTP]], %{{.*}}, %[[K0]]
// TASK:                 scf.for %[[I:.*]] =
// TASK:                   scf.index_switch
// TASK:                   case 1 {
// The one-row kernel: a prefetch, two weight vectors of the panel, one
// broadcast from the tile, two FMAs.
// TASK:                     scf.for %[[K:.*]] = %c0 to %[[KC]] step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<4xf32>, vector<4xf32>)
// TASK:                       %[[PK:.*]] = arith.addi %[[NEXTK0]], %[[K]]
// TASK:                       %[[PKC:.*]] = arith.minsi %[[PK]], %c2
// TASK:                       memref.prefetch %{{.*}}[%[[NEXTP]], %[[PKC]], %c0], read, locality<2>, data : memref<2x3x8xf32>
// TASK:                       %[[WK:.*]] = arith.addi %[[K0]], %[[K]]
// TASK:                       vector.load %{{.*}}[%[[P]], %[[WK]], %{{.*}}] : memref<2x3x8xf32>, vector<4xf32>
// TASK:                       vector.load %{{.*}}[%[[P]], %{{.*}}, %{{.*}}] : memref<2x3x8xf32>, vector<4xf32>
// TASK:                       memref.load %[[TILE]][%{{.*}}, %[[K]]] : memref<24x512xf32>
// TASK:                       vector.broadcast
// TASK-COUNT-2:               vector.fma
// TASK-NEXT:                  scf.yield
// TASK:                     vector.maskedstore
// TASK:                   default {
// TASK-COUNT-4:               vector.fma
// After the last chunk, the epilogue over the tile just stored: bias, exact
// GELU with erf as a polynomial (no math.erf left), the residual, stored
// with a mask (13 columns).
// TASK:                 scf.if
// TASK:                   scf.for
// TASK:                     vector.maskedload {{.*}} : memref<?x13xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
// TASK:                     vector.load %{{.*}} : memref<16xf32>, vector<4xf32>
// TASK-NOT:                 math.erf
// TASK:                     vector.maskedload {{.*}} : memref<?x13xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
// TASK:                     vector.maskedstore

// With multiversion, the task exists for SSE, AVX2 and AVX-512 (its own
// target features) behind one task that picks the variant by the CPU level;
// the call site calls that task.
// MULTI-DAG:   llvm.func internal @__tfm_cpu_level() -> i32
// MULTI-DAG:   func.func private @__tfm_task_linear_0_sse({{.*}}) attributes {tfm.task}
// MULTI-DAG:   func.func private @__tfm_task_linear_0_avx2({{.*}}) attributes {target_features = #llvm.target_features<["+avx", "+avx2", "+fma", "-slow-unaligned-mem-32"]>
// MULTI-DAG:   func.func private @__tfm_task_linear_0_avx512({{.*}}) attributes {target_features = #llvm.target_features<[{{.*}}"+avx512f"
// MULTI:       func.func private @__tfm_task_linear_0({{.*}}) attributes {tfm.task} {
// MULTI-NEXT:    %[[LEVEL:.*]] = llvm.call @__tfm_cpu_level() : () -> i32
// MULTI:         %[[INDEX:.*]] = arith.index_cast %{{.*}} : i32 to index
// MULTI:         scf.index_switch %[[INDEX]]
// MULTI:         case 2 {
// MULTI:           call @__tfm_task_linear_0_avx2(
// MULTI:         case 3 {
// MULTI:           call @__tfm_task_linear_0_avx512(
// MULTI:         default {
// MULTI:           call @__tfm_task_linear_0_sse(
// MULTI-LABEL: func.func @shares_task(
// MULTI-NOT:     __tfm_cpu_level
// MULTI:         call @__tfm_task_linear_0(
// MULTI-NOT:     __tfm_cpu_level
// MULTI:         call @__tfm_task_linear_0(
// MULTI-NOT:     __tfm_cpu_level
// MULTI:         return
func.func @shares_task(%x: memref<?x3xf32>, %w: memref<2x3x8xf32>, %b: memref<16xf32>, %r: memref<?x13xf32>, %y: memref<?x13xf32>) {
  tfm.packed_linear ins(%x, %w : memref<?x3xf32>, memref<2x3x8xf32>) bias(%b : memref<16xf32>) residual(%r : memref<?x13xf32>) outs(%y : memref<?x13xf32>) activation "gelu"
  tfm.packed_linear ins(%x, %w : memref<?x3xf32>, memref<2x3x8xf32>) bias(%b : memref<16xf32>) residual(%r : memref<?x13xf32>) outs(%y : memref<?x13xf32>) activation "gelu"
  return
}

// -----

// Whole panels need no masks; leading dims are flattened into rows; relu is
// a max with zero. A different epilogue gets its own task. K = 8 copies A
// in whole vectors.

// CHECK-LABEL: func.func @relu_whole_panels(
// CHECK:         call @__tfm_task_linear_0(
// TASK-LABEL: func.func private @__tfm_task_linear_0(
// TASK-SAME:     %[[X:[^:]*]]: memref<2x?x8xf32>
// TASK:         memref.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : memref<2x?x8xf32> into memref<?x8xf32>
// TASK-NOT:     vector.masked
// TASK:         arith.maximumf
// TASK-NOT:     vector.masked
func.func @relu_whole_panels(%x: memref<2x?x8xf32>, %w: memref<1x8x8xf32>, %y: memref<2x?x8xf32>) {
  tfm.packed_linear ins(%x, %w : memref<2x?x8xf32>, memref<1x8x8xf32>) outs(%y : memref<2x?x8xf32>) activation "relu"
  return
}
