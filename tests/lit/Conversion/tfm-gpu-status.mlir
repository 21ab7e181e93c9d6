// RUN: tfm-opt %s -split-input-file -tfm-gpu-status | FileCheck %s

// A model with run-time checks: their status comes first, the GPU's when
// they passed.
// CHECK-LABEL: func.func private @tfm_gpu_status() -> i32
// CHECK-LABEL: func.func @checked(
// CHECK-SAME:    %{{.*}}: memref<4xf32>, %[[CODE:.*]]: i32) -> i32
// CHECK:         %[[GPU:.*]] = call @tfm_gpu_status() : () -> i32
// CHECK:         %[[FAILED:.*]] = arith.cmpi ne, %[[CODE]], %{{.*}} : i32
// CHECK:         %[[S:.*]] = arith.select %[[FAILED]], %[[CODE]], %[[GPU]] : i32
// CHECK:         return %[[S]] : i32
func.func @checked(%x: memref<4xf32>, %code: i32) -> i32 attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
  return %code : i32
}

// -----

// A model without: it now returns the GPU's status.
// CHECK-LABEL: func.func @plain(
// CHECK-SAME:    -> i32
// CHECK:         %[[GPU:.*]] = call @tfm_gpu_status() : () -> i32
// CHECK:         return %[[GPU]] : i32
func.func @plain(%x: memref<4xf32>) attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
  return
}

// -----

// Other functions are left alone.
// CHECK-NOT:   tfm_gpu_status
// CHECK-LABEL: func.func @helper() {
// CHECK-NEXT:    return
func.func @helper() {
  return
}
