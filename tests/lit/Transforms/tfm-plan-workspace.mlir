// RUN: tfm-opt %s -tfm-plan-workspace -canonicalize | FileCheck %s

// Three buffers of n x 512 floats: %a is dead once %b is written, so %c
// does not sit above it; one workspace holds all three at 64-byte aligned
// offsets computed from n.
// A function that is not a model keeps its signature: it gets no workspace
// argument and frees its own workspace.
// CHECK-LABEL: func.func @reuses_dead_buffers(
// CHECK-SAME:    %[[X:.*]]: memref<?x512xf32>, %[[Y:.*]]: memref<?x512xf32>) {
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

// Through a collapse of two dynamic dims, the size is their product (each
// group of the reassociation read while it is alive: this once read a
// destroyed temporary and crashed on a Llama model with rope pairs).
// CHECK-LABEL: func.func @through_collapse(
// CHECK-SAME:    %[[X:.*]]: memref<?x?x4xf32>
// CHECK-DAG:     %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK-DAG:     %[[M:.*]] = memref.dim %[[X]], %c1
// CHECK:         %[[NM:.*]] = arith.muli %[[N]], %[[M]]
// CHECK:         arith.mului_extended %[[NM]], %c16
// CHECK:         %[[WS:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64}
// CHECK-NOT:     memref.alloc

func.func @through_collapse(%x: memref<?x?x4xf32>, %y: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?x4xf32>
  %m = memref.dim %x, %c1 : memref<?x?x4xf32>
  %a = memref.alloc(%n, %m) : memref<?x?x4xf32>
  memref.copy %x, %a : memref<?x?x4xf32> to memref<?x?x4xf32>
  %c = memref.collapse_shape %a [[0, 1], [2]] : memref<?x?x4xf32> into memref<?x4xf32>
  %k = memref.dim %c, %c0 : memref<?x4xf32>
  %b = memref.alloc(%k) : memref<?x4xf32>
  memref.copy %c, %b : memref<?x4xf32> to memref<?x4xf32>
  memref.copy %b, %y : memref<?x4xf32> to memref<?x4xf32>
  memref.dealloc %a : memref<?x?x4xf32>
  memref.dealloc %b : memref<?x4xf32>
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

// A model function takes the caller's workspace as a trailing memref<?xi8>
// and runs its body only when it has one: the caller's when given (its
// aligned pointer is not NULL) and large enough, else a fresh allocation,
// which is freed only then. A size that wraps or a failed allocation returns
// -2, a workspace smaller than the plan -4; a model without a status result
// gets one.
// CHECK-LABEL: func.func @model(
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x512xf32>, %{{[^:]*}}: memref<?x512xf32>, %[[GIVEN:[^:]*]]: memref<?xi8>) -> i32
// CHECK-SAME:    tfm.workspace_size = @model_workspace_size
// CHECK:         %[[LOW:.*]], %[[HIGH:.*]] = arith.mului_extended %{{.*}}, %c2048
// CHECK:         %[[WRAPPED:.*]] = arith.cmpi ne, %[[HIGH]], %c0
// CHECK:         %[[TOOBIG:.*]] = arith.cmpi ugt, %{{.*}}, %c72057594037927936
// CHECK:         %[[REFUSED:.*]] = arith.ori %{{.*}}, %[[TOOBIG]] : i1
// CHECK:         %[[ASK:.*]] = arith.select %[[REFUSED]], %c0, %{{.*}} : index
// CHECK:         %[[GIVENBYTES:.*]] = memref.dim %[[GIVEN]], %c0 : memref<?xi8>
// CHECK:         %[[GIVENADDR:.*]] = memref.extract_aligned_pointer_as_index %[[GIVEN]]
// CHECK:         %[[HASGIVEN:.*]] = arith.cmpi ne, %[[GIVENADDR]], %c0
// CHECK:         %[[NOTHING:.*]] = arith.cmpi eq, %[[ASK]], %c0
// CHECK:         %[[CALLERS:.*]] = arith.ori %[[HASGIVEN]], %[[NOTHING]]
// CHECK:         %[[SHORT:.*]] = arith.cmpi ult, %[[GIVENBYTES]], %[[ASK]]
// CHECK:         %[[TOOSMALL:.*]] = arith.andi %[[HASGIVEN]], %[[SHORT]]
// CHECK:         %[[WS:.*]] = scf.if %[[CALLERS]] -> (memref<?xi8>) {
// CHECK-NEXT:      %[[VIEW:.*]] = memref.view %[[GIVEN]][%c0][%[[ASK]]] : memref<?xi8> to memref<?xi8>
// CHECK-NEXT:      scf.yield %[[VIEW]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[OWN:.*]] = memref.alloc(%[[ASK]]) {alignment = 64 : i64} : memref<?xi8>
// CHECK-NEXT:      scf.yield %[[OWN]]
// CHECK-NEXT:    }
// CHECK:         %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[WS]]
// CHECK:         %[[NULL:.*]] = arith.cmpi eq, %[[ADDR]], %c0
// CHECK:         %[[ALLOCATED:.*]] = arith.xori %[[CALLERS]], %true
// CHECK:         %[[ALLOCFAILED:.*]] = arith.andi %[[ALLOCATED]], %[[NULL]]
// CHECK:         %[[UNUSABLE0:.*]] = arith.ori %[[TOOSMALL]], %[[ALLOCFAILED]]
// CHECK:         %[[UNUSABLE:.*]] = arith.ori %[[REFUSED]], %[[UNUSABLE0]]
// CHECK:         %[[FAILSTATUS:.*]] = arith.select %[[TOOSMALL]], %c-4_i32, %c-2_i32 : i32
// CHECK:         %[[STATUS:.*]] = arith.select %[[UNUSABLE]], %[[FAILSTATUS]], %c0_i32 : i32
// CHECK:         scf.if %[[UNUSABLE]] {
// CHECK-NEXT:    } else {
// CHECK:           memref.view %[[WS]]
// CHECK:           memref.copy
// CHECK:         }
// CHECK:         %[[MINE:.*]] = arith.xori %[[CALLERS]], %true
// CHECK:         scf.if %[[MINE]] {
// CHECK-NEXT:      memref.dealloc %[[WS]]
// CHECK-NEXT:    }
// CHECK:         return %[[STATUS]] : i32

// The size function: the prologue alone, on the model's own arguments,
// reading their sizes and nothing else; -2 when the plan cannot be had.
// CHECK-LABEL: func.func @model_workspace_size(
// CHECK-SAME:    %[[SX:[^:]*]]: memref<?x512xf32>, %{{[^:]*}}: memref<?x512xf32>) -> index {
// CHECK-NOT:     memref.load
// CHECK-NOT:     memref.extract_aligned_pointer_as_index
// CHECK:         %[[N:.*]] = memref.dim %[[SX]], %c0
// CHECK:         arith.mului_extended %[[N]], %c2048
// CHECK:         %[[STOOBIG:.*]] = arith.cmpi ugt, %{{.*}}, %c72057594037927936
// CHECK:         %[[SREFUSED:.*]] = arith.ori %{{.*}}, %[[STOOBIG]] : i1
// CHECK:         %[[SIZE:.*]] = arith.select %[[SREFUSED]], %c-2, %{{.*}} : index
// CHECK-NEXT:    return %[[SIZE]] : index
func.func @model(%x: memref<?x512xf32>, %y: memref<?x512xf32>) attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
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
// CHECK:         %[[FAILSTATUS:.*]] = arith.select %{{.*}}, %c-4_i32, %c-2_i32 : i32
// CHECK:         %[[STATUS:.*]] = arith.select %{{.*}}, %[[FAILSTATUS]], %c1_i32 : i32
// CHECK:         return %[[STATUS]] : i32
func.func @model_with_status(%x: memref<?xf32>, %y: memref<?xf32>) -> i32 attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  memref.copy %x, %a : memref<?xf32> to memref<?xf32>
  memref.copy %a, %y : memref<?xf32> to memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  %one = arith.constant 1 : i32
  return %one : i32
}

// A static model: the size is a constant, and the size function returns it.
// CHECK-LABEL: func.func @static_model(
// CHECK-SAME:    %{{[^:]*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32>, %{{[^:]*}}: memref<?xi8>) -> i32
// CHECK:         scf.if %{{.*}} -> (memref<?xi8>)
// CHECK:           memref.view %{{.*}}[%c0][] : memref<?xi8> to memref<64xi8>
// CHECK:           memref.alloc() {alignment = 64 : i64} : memref<64xi8>
// CHECK-LABEL: func.func @static_model_workspace_size(
// CHECK-NEXT:    %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT:    return %[[C64]] : index
func.func @static_model(%x: memref<4xf32>, %y: memref<4xf32>) attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  memref.copy %a, %y : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return
}

// A model without planned scratch keeps its signature and has no size
// function (its entry points report 0 bytes).
// CHECK-LABEL: func.func @no_scratch(
// CHECK-SAME:    %{{[^:]*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32>) attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
// CHECK-NOT:     tfm.workspace_size
// CHECK-NOT:     func.func @no_scratch_workspace_size
func.func @no_scratch(%x: memref<4xf32>, %y: memref<4xf32>) attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
  memref.copy %x, %y : memref<4xf32> to memref<4xf32>
  return
}

// A static plan past 2^56 bytes is refused without asking an allocator or
// the caller (-2, never -4), and its size function says -2.
// CHECK-LABEL: func.func @huge(
// CHECK-NOT:     memref.alloc
// CHECK:         return
// CHECK-LABEL: func.func @huge_workspace_size(
// CHECK-NEXT:    %[[REFUSED:.*]] = arith.constant -2 : index
// CHECK-NEXT:    return %[[REFUSED]] : index
func.func @huge(%x: memref<4xf32>, %y: memref<4xf32>) attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
  %a = memref.alloc() : memref<1099511627776x1048576xf32>
  memref.copy %x, %y : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<1099511627776x1048576xf32>
  return
}
