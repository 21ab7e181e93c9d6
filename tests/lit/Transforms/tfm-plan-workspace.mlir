// RUN: tfm-opt %s -tfm-plan-workspace -canonicalize | FileCheck %s

// Three buffers of n x 512 floats: %a is dead once %b is written, so %c
// does not sit above it; one workspace holds all three at 64-byte aligned
// offsets computed from n.
// CHECK-LABEL: func.func @reuses_dead_buffers(
// CHECK-SAME:    %[[X:.*]]: memref<?x512xf32>, %[[Y:.*]]: memref<?x512xf32>)
// CHECK:         %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK:         %[[BYTES:.*]], %[[HIGH:.*]] = arith.mului_extended %[[N]], %c2048
// CHECK:         %[[PADDED:.*]] = arith.addi %[[BYTES]], %c63
// CHECK:         %[[SIZE:.*]] = arith.andi %[[PADDED]], %c-64
// CHECK:         %[[TOOBIG:.*]] = arith.cmpi ugt, %[[TOTAL:.*]], %c72057594037927936
// CHECK:         %[[REFUSED:.*]] = arith.ori %{{.*}}, %[[TOOBIG]]
// CHECK:         %[[ASK:.*]] = arith.select %[[REFUSED]], %c0, %[[TOTAL]]
// CHECK:         %[[WS:.*]] = memref.alloc(%[[ASK]]) {alignment = 64 : i64} : memref<?xi8>
// CHECK-NOT:     memref.alloc
// CHECK:         %[[A:.*]] = memref.view %[[WS]][%c0][%{{.*}}] : memref<?xi8> to memref<?x512xf32>
// CHECK:         memref.copy %[[X]], %[[A]]
// CHECK:         %[[B:.*]] = memref.view %[[WS]][%[[SIZE]]][%{{.*}}] : memref<?xi8> to memref<?x512xf32>
// CHECK:         memref.copy %[[A]], %[[B]]
// CHECK:         %[[C:.*]] = memref.view %[[WS]][%{{.*}}][%{{.*}}] : memref<?xi8> to memref<?x512xf32>
// CHECK:         memref.copy %[[B]], %[[C]]
// CHECK-NOT:     memref.dealloc %[[A]]
// CHECK:         memref.dealloc %[[WS]] : memref<?xi8>
// CHECK-NEXT:    return

func.func @reuses_dead_buffers(%x: memref<?x512xf32>, %y: memref<?x512xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x512xf32>
  %a = memref.alloc(%n) {alignment = 64 : i64} : memref<?x512xf32>
  memref.copy %x, %a : memref<?x512xf32> to memref<?x512xf32>
  %b = memref.alloc(%n) {alignment = 64 : i64} : memref<?x512xf32>
  memref.copy %a, %b : memref<?x512xf32> to memref<?x512xf32>
  %c = memref.alloc(%n) {alignment = 64 : i64} : memref<?x512xf32>
  memref.copy %b, %c : memref<?x512xf32> to memref<?x512xf32>
  memref.copy %c, %y : memref<?x512xf32> to memref<?x512xf32>
  memref.dealloc %a : memref<?x512xf32>
  memref.dealloc %b : memref<?x512xf32>
  memref.dealloc %c : memref<?x512xf32>
  return
}

// A size read through a reshape of another planned buffer is traced back to
// the argument's dim, so it is known in the prologue.
// CHECK-LABEL: func.func @through_reshapes(
// CHECK-SAME:    %[[X:.*]]: memref<?x6xf32>
// CHECK:         %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK:         arith.mului_extended %[[N]], %c24
// CHECK:         %[[WS:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64}
// CHECK:         memref.view %[[WS]][%c0]
// CHECK:         memref.expand_shape
// CHECK:         memref.view %[[WS]][%{{.*}}]
// CHECK-NOT:     memref.alloc

func.func @through_reshapes(%x: memref<?x6xf32>, %y: memref<?x2x3xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x6xf32>
  %a = memref.alloc(%n) : memref<?x6xf32>
  memref.copy %x, %a : memref<?x6xf32> to memref<?x6xf32>
  %e = memref.expand_shape %a [[0], [1, 2]] output_shape [%n, 2, 3] : memref<?x6xf32> into memref<?x2x3xf32>
  %m = memref.dim %e, %c0 : memref<?x2x3xf32>
  %b = memref.alloc(%m) : memref<?x2x3xf32>
  memref.copy %e, %b : memref<?x2x3xf32> to memref<?x2x3xf32>
  memref.copy %b, %y : memref<?x2x3xf32> to memref<?x2x3xf32>
  memref.dealloc %a : memref<?x6xf32>
  memref.dealloc %b : memref<?x2x3xf32>
  return
}

// A returned buffer keeps its own allocation; the others share a static
// workspace of two cache lines.
// CHECK-LABEL: func.func @escaping_buffer_kept(
// CHECK:         %[[WS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// CHECK:         memref.view %[[WS]][%c0][] : memref<128xi8> to memref<4xf32>
// CHECK:         memref.view %[[WS]][%c64][] : memref<128xi8> to memref<4xf32>
// CHECK:         %[[C:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.dealloc %[[WS]]
// CHECK:         return %[[C]]

func.func @escaping_buffer_kept(%x: memref<4xf32>) -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  memref.copy %b, %c : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return %c : memref<4xf32>
}

// A model function runs its body only when the workspace exists: a size
// that wraps or a failed allocation returns -2, and a model without a
// status result gets one.
// CHECK-LABEL: func.func @model(
// CHECK-SAME:    -> i32
// CHECK:         %[[LOW:.*]], %[[HIGH:.*]] = arith.mului_extended %{{.*}}, %c2048
// CHECK:         %[[WRAPPED:.*]] = arith.cmpi ne, %[[HIGH]], %c0
// CHECK:         %[[WS:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xi8>
// CHECK:         %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[WS]]
// CHECK:         %[[NULL:.*]] = arith.cmpi eq, %[[ADDR]], %c0
// CHECK:         %[[FAILED:.*]] = arith.ori %{{.*}}, %[[NULL]]
// CHECK:         %[[STATUS:.*]] = arith.select %[[FAILED]], %c-2_i32, %c0_i32 : i32
// CHECK:         scf.if %[[FAILED]] {
// CHECK-NEXT:    } else {
// CHECK:           memref.view %[[WS]]
// CHECK:           memref.copy
// CHECK:         }
// CHECK:         memref.dealloc %[[WS]]
// CHECK:         return %[[STATUS]] : i32
func.func @model(%x: memref<?x512xf32>, %y: memref<?x512xf32>) attributes {tfm.signature = {}} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x512xf32>
  %a = memref.alloc(%n) : memref<?x512xf32>
  memref.copy %x, %a : memref<?x512xf32> to memref<?x512xf32>
  memref.copy %a, %y : memref<?x512xf32> to memref<?x512xf32>
  memref.dealloc %a : memref<?x512xf32>
  return
}

// A model's own status (its run-time checks) passes through the guard.
// CHECK-LABEL: func.func @model_with_status(
// CHECK:         %[[STATUS:.*]] = arith.select %{{.*}}, %c-2_i32, %c1_i32 : i32
// CHECK:         return %[[STATUS]] : i32
func.func @model_with_status(%x: memref<?xf32>, %y: memref<?xf32>) -> i32 attributes {tfm.signature = {}} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  memref.copy %x, %a : memref<?xf32> to memref<?xf32>
  memref.copy %a, %y : memref<?xf32> to memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  %one = arith.constant 1 : i32
  return %one : i32
}
