// RUN: tfm-opt %s -tfm-merge-identical-tasks | FileCheck %s

// The second task has the first one's body: calls go to the first, and it
// is erased. The third differs (a constant) and stays; so do a public
// function and one without the tfm.task marker (whatever its name), which
// are not tasks.

// CHECK-LABEL: func.func @model(
// CHECK:         call @__tfm_task_a_0(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK:         call @__tfm_task_a_0(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK:         call @__tfm_task_a_2(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK:       func.func private @__tfm_task_a_0(
// CHECK-NOT:   func.func private @__tfm_task_a_1(
// CHECK:       func.func private @__tfm_task_a_2(
// CHECK:       func.func @__tfm_task_public(
// CHECK:       func.func private @__tfm_task_unmarked(
func.func @model(%x: memref<8xf32>, %b: index, %e: index) {
  call @__tfm_task_a_0(%x, %b, %e) : (memref<8xf32>, index, index) -> ()
  call @__tfm_task_a_1(%x, %b, %e) : (memref<8xf32>, index, index) -> ()
  call @__tfm_task_a_2(%x, %b, %e) : (memref<8xf32>, index, index) -> ()
  return
}

func.func private @__tfm_task_a_0(%x: memref<8xf32>, %b: index, %e: index) attributes {tfm.task} {
  %c1 = arith.constant 1.0 : f32
  memref.store %c1, %x[%b] : memref<8xf32>
  return
}

func.func private @__tfm_task_a_1(%x: memref<8xf32>, %b: index, %e: index) attributes {tfm.task} {
  %c1 = arith.constant 1.0 : f32
  memref.store %c1, %x[%b] : memref<8xf32>
  return
}

func.func private @__tfm_task_a_2(%x: memref<8xf32>, %b: index, %e: index) attributes {tfm.task} {
  %c2 = arith.constant 2.0 : f32
  memref.store %c2, %x[%b] : memref<8xf32>
  return
}

func.func @__tfm_task_public(%x: memref<8xf32>, %b: index, %e: index) attributes {tfm.task} {
  %c1 = arith.constant 1.0 : f32
  memref.store %c1, %x[%b] : memref<8xf32>
  return
}

func.func private @__tfm_task_unmarked(%x: memref<8xf32>, %b: index, %e: index) {
  %c1 = arith.constant 1.0 : f32
  memref.store %c1, %x[%b] : memref<8xf32>
  return
}
