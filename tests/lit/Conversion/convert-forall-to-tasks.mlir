// RUN: tfm-opt %s -convert-forall-to-tasks -canonicalize | FileCheck %s
// RUN: tfm-opt %s -convert-forall-to-tasks=multiversion=true | FileCheck %s --check-prefix=MULTI

// A 2-D forall runs as tasks [0, n * 8); a task delinearizes its index,
// innermost dimension fastest. The second, identical loop reuses the task.

// CHECK-LABEL: func.func @two_dims(
// CHECK-SAME:    %[[X:.*]]: memref<?x8xf32>, %[[Y:.*]]: memref<?x8xf32>, %[[N:.*]]: index)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK:         %[[COUNT:.*]] = arith.muli %[[N]], %[[C8]] : index
// CHECK:         call @[[TASK:__tfm_task_forall_0]](%[[X]], %[[Y]], %[[N]], %[[C0]], %[[COUNT]])
// CHECK-NOT:     scf.forall
func.func @two_dims(%x: memref<?x8xf32>, %y: memref<?x8xf32>, %n: index) {
  scf.forall (%i, %j) in (%n, 8) {
    %v = memref.load %x[%i, %j] : memref<?x8xf32>
    memref.store %v, %y[%i, %j] : memref<?x8xf32>
  }
  return
}

// CHECK-LABEL: func.func @same_loop_again(
// CHECK:         call @__tfm_task_forall_0(
func.func @same_loop_again(%x: memref<?x8xf32>, %y: memref<?x8xf32>, %n: index) {
  scf.forall (%i, %j) in (%n, 8) {
    %v = memref.load %x[%i, %j] : memref<?x8xf32>
    memref.store %v, %y[%i, %j] : memref<?x8xf32>
  }
  return
}

// Dynamic bounds and a step: (hi - lo) / 3 tasks, rounded up, the task's
// induction variable lo + 3 r; the constant stays inside the task.

// CHECK-LABEL: func.func @bounds_and_steps(
// CHECK-SAME:    %[[Y:.*]]: memref<?xf32>, %[[LO:.*]]: index, %[[HI:.*]]: index)
// CHECK:         %[[EXTENT:.*]] = arith.subi %[[HI]], %[[LO]]
// CHECK:         %[[COUNT:.*]] = arith.ceildivsi %[[EXTENT]], %c3
// CHECK:         call @__tfm_task_forall_1(%[[Y]], %[[LO]], %[[HI]], %c0, %[[COUNT]])
func.func @bounds_and_steps(%y: memref<?xf32>, %lo: index, %hi: index) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) = (%lo) to (%hi) step (3) {
    memref.store %zero, %y[%i] : memref<?xf32>
  }
  return
}

// CHECK:       func.func private @[[TASK]](%[[X:.*]]: memref<?x8xf32>, %[[Y:.*]]: memref<?x8xf32>, %{{.*}}: index, %[[BEGIN:.*]]: index, %[[END:.*]]: index)
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK:         scf.for %[[R:.*]] = %[[BEGIN]] to %[[END]] step %c1 {
// CHECK-DAG:       %[[J:.*]] = arith.remui %[[R]], %[[C8]]
// CHECK-DAG:       %[[I:.*]] = arith.divui %[[R]], %[[C8]]
// CHECK:           %[[V:.*]] = memref.load %[[X]][%[[I]], %[[J]]]
// CHECK:           memref.store %[[V]], %[[Y]][%[[I]], %[[J]]]

// CHECK:       func.func private @__tfm_task_forall_1(%[[Y:.*]]: memref<?xf32>, %[[LO:.*]]: index, %{{.*}}: index, %[[BEGIN:.*]]: index, %[[END:.*]]: index)
// CHECK-SAME:    attributes {tfm.task}
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK:         scf.for %[[R:.*]] = %[[BEGIN]] to %[[END]]
// CHECK:           %[[OFF:.*]] = arith.muli %[[R]], %[[C3]]
// CHECK:           %[[I:.*]] = arith.addi %[[LO]], %[[OFF]]
// CHECK:           memref.store %[[ZERO]], %[[Y]][%[[I]]]

// With multiversion, the call site calls one task, whatever the number of
// variants (so the model's glue is emitted once), and that task picks the
// variant for the CPU from __tfm_cpu_level().
// MULTI-LABEL: func.func @two_dims(
// MULTI-NOT:     __tfm_cpu_level
// MULTI:         call @__tfm_task_forall_0(
// MULTI-NOT:     __tfm_cpu_level
// MULTI:         return
// MULTI:       func.func private @__tfm_task_forall_0_sse({{.*}}) attributes {tfm.task}
// MULTI:       func.func private @__tfm_task_forall_0_avx2({{.*}}) attributes {target_features = #llvm.target_features<[{{.*}}+avx2{{.*}}]>, tfm.task}
// MULTI:       func.func private @__tfm_task_forall_0_avx512({{.*}}) attributes {target_features = #llvm.target_features<[{{.*}}+avx512f{{.*}}]>, tfm.task}
// MULTI:       func.func private @__tfm_task_forall_0({{.*}}) attributes {tfm.task}
// MULTI:         %[[LEVEL:.*]] = llvm.call @__tfm_cpu_level()
// MULTI:         scf.index_switch
// MULTI:         case 2 {
// MULTI-NEXT:      func.call @__tfm_task_forall_0_avx2(
// MULTI:         case 3 {
// MULTI-NEXT:      func.call @__tfm_task_forall_0_avx512(
// MULTI:         default {
// MULTI-NEXT:      func.call @__tfm_task_forall_0_sse(
