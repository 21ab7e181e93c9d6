// RUN: tfm-opt %s -split-input-file -tfm-gpu-device-buffers | FileCheck %s

memref.global "private" constant @weight : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// Scratch that a kernel writes becomes device memory, freed where the host
// freed it; a constant the kernel reads is copied to the device (and freed
// before returning); the status the host reads comes back through a
// one-thread kernel; the model's arguments are device buffers already; the
// reshape shape that only the host touches stays on the host.
// CHECK-LABEL: func.func @model(
// CHECK-SAME:    %[[X:.*]]: memref<?x4xf32>, %[[Y:.*]]: memref<?x4xf32>) -> i32
// CHECK:         %[[G:.*]] = memref.get_global @weight : memref<4xf32>
// CHECK:         %[[W:.*]] = gpu.alloc () : memref<4xf32>
// CHECK:         gpu.memcpy %[[W]], %[[G]] : memref<4xf32>, memref<4xf32>
// CHECK:         %[[T:.*]] = gpu.alloc (%{{.*}}) : memref<?x4xf32>
// CHECK:         %[[S:.*]] = gpu.alloc () : memref<i32>
// CHECK:         %[[SHAPE:.*]] = memref.alloca() : memref<1xindex>
// CHECK:         gpu.launch
// CHECK:           memref.load %[[X]]
// CHECK:           memref.load %[[W]]
// CHECK:           memref.store %{{.*}}, %[[T]]
// CHECK:         memref.store %{{.*}}, %[[SHAPE]]
// CHECK:         gpu.dealloc %[[T]] : memref<?x4xf32>
// CHECK:         %[[ONE:.*]] = gpu.alloc () : memref<1xi32>
// CHECK:         gpu.launch
// CHECK:           %[[V:.*]] = memref.load %[[S]][] : memref<i32>
// CHECK:           memref.store %[[V]], %[[ONE]][%{{.*}}] : memref<1xi32>
// CHECK:         %[[HOST:.*]] = memref.alloca() : memref<1xi32>
// CHECK:         gpu.memcpy %[[HOST]], %[[ONE]]
// CHECK:         %[[STATUS:.*]] = memref.load %[[HOST]][%{{.*}}] : memref<1xi32>
// CHECK:         gpu.dealloc %[[ONE]]
// CHECK:         gpu.dealloc %[[S]] : memref<i32>
// CHECK:         gpu.dealloc %[[W]] : memref<4xf32>
// CHECK:         return %[[STATUS]] : i32
// CHECK-NOT:     memref.alloc(
// CHECK-NOT:     memref.dealloc
func.func @model(%x: memref<?x4xf32>, %y: memref<?x4xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %w = memref.get_global @weight : memref<4xf32>
  %t = memref.alloc(%n) : memref<?x4xf32>
  %s = memref.alloc() : memref<i32>
  %shape = memref.alloca() : memref<1xindex>
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %n, %g1 = %c1, %g2 = %c1)
             threads(%t0, %t1, %t2) in (%k0 = %c1, %k1 = %c1, %k2 = %c1) {
    %v = memref.load %x[%b0, %c0] : memref<?x4xf32>
    %u = memref.load %w[%c0] : memref<4xf32>
    %p = arith.mulf %v, %u : f32
    memref.store %p, %t[%b0, %c0] : memref<?x4xf32>
    %z = arith.constant 0 : i32
    memref.store %z, %s[] : memref<i32>
    gpu.terminator
  }
  memref.store %n, %shape[%c0] : memref<1xindex>
  memref.dealloc %t : memref<?x4xf32>
  %status = memref.load %s[] : memref<i32>
  memref.dealloc %s : memref<i32>
  return %status : i32
}

// -----

// A kernel reading a view reads its allocation: the allocation moves.
// CHECK-LABEL: func.func @view(
// CHECK:         %[[A:.*]] = gpu.alloc () : memref<8xf32>
// CHECK:         memref.subview %[[A]]
// CHECK:         gpu.dealloc %[[A]]
func.func @view(%y: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<8xf32>
  %v = memref.subview %a[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
             threads(%t0, %t1, %t2) in (%k0 = %c1, %k1 = %c1, %k2 = %c1) {
    %e = memref.load %v[%c0] : memref<4xf32, strided<[1], offset: 4>>
    memref.store %e, %y[%c0] : memref<4xf32>
    gpu.terminator
  }
  memref.dealloc %a : memref<8xf32>
  return
}
