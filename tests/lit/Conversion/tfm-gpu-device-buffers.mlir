// RUN: tfm-opt %s -split-input-file -tfm-gpu-device-buffers | FileCheck %s
// RUN: tfm-opt %s -split-input-file -tfm-gpu-device-buffers | FileCheck %s --check-prefix=DEVICE-ONLY

// No host buffer is left in any function.
// DEVICE-ONLY-NOT: memref.alloc(
// DEVICE-ONLY-NOT: memref.dealloc

memref.global "private" constant @weight : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// Scratch that a kernel writes becomes device memory, freed where the host
// freed it; a constant the kernel reads is resident: the run starts by
// asking the runtime for its device copy (uploaded at the first run, kept
// in the artifact's slot 0), and neither copies nor frees it; the status
// the host reads comes back through a one-thread kernel; the model's
// arguments are device buffers already; the reshape shape that only the
// host touches stays on the host.
// CHECK:       llvm.func @tfmGpuConstant(!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
// CHECK:       llvm.func @tfmGpuReleaseConstants(!llvm.ptr, i64)
// CHECK-LABEL: func.func @model(
// CHECK-SAME:    %[[X:.*]]: memref<?x4xf32>, %[[Y:.*]]: memref<?x4xf32>) -> i32
// CHECK-NEXT:    %[[G:.*]] = memref.get_global @weight : memref<4xf32>
// CHECK-NEXT:    %[[GI:.*]] = memref.extract_aligned_pointer_as_index %[[G]]
// CHECK-NEXT:    %[[GI64:.*]] = arith.index_cast %[[GI]] : index to i64
// CHECK-NEXT:    %[[HOST_W:.*]] = llvm.inttoptr %[[GI64]] : i64 to !llvm.ptr
// CHECK-NEXT:    %[[SLOTS:.*]] = llvm.mlir.addressof @__tfm_gpu_weights : !llvm.ptr
// CHECK-NEXT:    %[[SLOT:.*]] = llvm.getelementptr %[[SLOTS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[BYTES:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK-NEXT:    %[[DEV:.*]] = llvm.call @tfmGpuConstant(%[[SLOT]], %[[HOST_W]], %[[BYTES]])
// CHECK:         %[[DESC:.*]] = llvm.insertvalue %{{.*}}, %{{.*}}[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT:    %[[W:.*]] = builtin.unrealized_conversion_cast %[[DESC]] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4xf32>
// CHECK-NOT:     memref.get_global
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
// CHECK-NEXT:    return %[[STATUS]] : i32
// The slot, null until the first run, is freed when the artifact unloads.
// CHECK:       llvm.mlir.global internal @__tfm_gpu_weights() {{.*}} : !llvm.array<1 x ptr> {
// CHECK-NEXT:    %[[NULLS:.*]] = llvm.mlir.zero : !llvm.array<1 x ptr>
// CHECK-NEXT:    llvm.return %[[NULLS]]
// CHECK:       llvm.func internal @__tfm_gpu_release_weights() {
// CHECK-NEXT:    %[[ALL:.*]] = llvm.mlir.addressof @__tfm_gpu_weights : !llvm.ptr
// CHECK-NEXT:    %[[N:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT:    llvm.call @tfmGpuReleaseConstants(%[[ALL]], %[[N]]) : (!llvm.ptr, i64) -> ()
// CHECK:       llvm.mlir.global_dtors dtors = [@__tfm_gpu_release_weights], priorities = [65535 : i32], data = [#llvm.zero]
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

// -----

// A kernel reading a select between buffers (a run-time-checked index: the
// input, or a fallback when the index is out of range) reads both: the
// fallback allocation moves, the input already is on the device.
// CHECK-LABEL: func.func @select(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4xf32>
// CHECK:         %[[F:.*]] = gpu.alloc () : memref<4xf32>
// CHECK:         %[[S:.*]] = arith.select %{{.*}}, %[[X]], %[[F]]
// CHECK:         gpu.launch
// CHECK:           memref.load %[[S]]
// CHECK:         gpu.dealloc %[[F]]
// CHECK:         return
func.func @select(%x: memref<4xf32>, %y: memref<4xf32>, %ok: i1) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %fallback = memref.alloc() : memref<4xf32>
  %s = arith.select %ok, %x, %fallback : memref<4xf32>
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
             threads(%t0, %t1, %t2) in (%k0 = %c1, %k1 = %c1, %k2 = %c1) {
    %e = memref.load %s[%c0] : memref<4xf32>
    memref.store %e, %y[%c0] : memref<4xf32>
    gpu.terminator
  }
  memref.dealloc %fallback : memref<4xf32>
  return
}

// -----

memref.global "private" constant @a : memref<2x3xf32> = dense<1.0>
memref.global "private" constant @b : memref<3xf16> = dense<2.0>
memref.global "private" constant @host_only : memref<2xi64> = dense<[1, 2]>

// Each weight has one slot, shared by every function that reads it, looked
// up before the run's first GPU op; a global that no kernel reads stays on
// the host and has none.
// CHECK-LABEL: func.func @first(
// CHECK:         llvm.mlir.addressof @__tfm_gpu_weights
// CHECK-NEXT:    llvm.getelementptr %{{.*}}[0]
// CHECK-NEXT:    %[[A_BYTES:.*]] = llvm.mlir.constant(24 : i64) : i64
// CHECK-NEXT:    llvm.call @tfmGpuConstant(%{{.*}}, %{{.*}}, %[[A_BYTES]])
// CHECK:         llvm.mlir.addressof @__tfm_gpu_weights
// CHECK-NEXT:    llvm.getelementptr %{{.*}}[1]
// CHECK-NEXT:    %[[B_BYTES:.*]] = llvm.mlir.constant(6 : i64) : i64
// CHECK-NEXT:    llvm.call @tfmGpuConstant(%{{.*}}, %{{.*}}, %[[B_BYTES]])
// CHECK:         %[[ALLOC:.*]] = gpu.alloc () : memref<4xf32>
// CHECK:         memref.get_global @host_only
// CHECK:         gpu.launch
// CHECK-NOT:     gpu.memcpy
// CHECK:         gpu.dealloc %[[ALLOC]]
// CHECK-NOT:     gpu.dealloc
// CHECK:         return
// CHECK-LABEL: func.func @second(
// CHECK-NOT:     gpu.alloc
// CHECK:         llvm.getelementptr %{{.*}}[0]
// CHECK:         llvm.call @tfmGpuConstant
// CHECK:         %[[DEV_A:.*]] = builtin.unrealized_conversion_cast
// CHECK:         gpu.alloc
// CHECK:         memref.collapse_shape %[[DEV_A]]
// CHECK-NOT:     gpu.memcpy
// CHECK:         gpu.dealloc
// CHECK-NEXT:    return
// CHECK:       llvm.mlir.global internal @__tfm_gpu_weights() {{.*}} : !llvm.array<2 x ptr>
// CHECK:       llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT:  llvm.call @tfmGpuReleaseConstants
func.func @first(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %scratch = memref.alloc() : memref<4xf32>
  %a = memref.get_global @a : memref<2x3xf32>
  %h = memref.get_global @host_only : memref<2xi64>
  %b = memref.get_global @b : memref<3xf16>
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
             threads(%t0, %t1, %t2) in (%k0 = %c1, %k1 = %c1, %k2 = %c1) {
    %e = memref.load %a[%c0, %c0] : memref<2x3xf32>
    %f = memref.load %b[%c0] : memref<3xf16>
    %g = arith.extf %f : f16 to f32
    %s = arith.addf %e, %g : f32
    memref.store %s, %scratch[%c0] : memref<4xf32>
    memref.store %s, %y[%c0] : memref<4xf32>
    gpu.terminator
  }
  %shape = memref.reshape %y(%h) : (memref<4xf32>, memref<2xi64>) -> memref<2x2xf32>
  memref.dealloc %scratch : memref<4xf32>
  return
}

func.func @second(%y: memref<6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %scratch = memref.alloc() : memref<6xf32>
  %a = memref.get_global @a : memref<2x3xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<2x3xf32> into memref<6xf32>
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
             threads(%t0, %t1, %t2) in (%k0 = %c1, %k1 = %c1, %k2 = %c1) {
    %e = memref.load %v[%c0] : memref<6xf32>
    memref.store %e, %scratch[%c0] : memref<6xf32>
    memref.store %e, %y[%c0] : memref<6xf32>
    gpu.terminator
  }
  memref.dealloc %scratch : memref<6xf32>
  return
}
