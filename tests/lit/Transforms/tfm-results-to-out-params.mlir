// RUN: tfm-opt %s -split-input-file -verify-diagnostics -tfm-results-to-out-params | FileCheck %s

// Each memref result of the model function becomes a trailing argument. A
// result the function allocated itself is computed in the caller's buffer
// (no temporary, no copy); anything else (here an input returned as is) is
// copied into it. Dynamic shapes are fine.

// CHECK-LABEL: func.func @model
// CHECK-SAME: (%[[X:.*]]: memref<?x2xf32>, %[[Y:.*]]: memref<?x2xf32>, %[[Z:.*]]: memref<3xf32>)
// CHECK-NOT:  ->
// CHECK-SAME: attributes {tfm.signature = #tfm.signature<model = "model"
// CHECK-NOT:  memref.alloc
// CHECK:      linalg.fill ins(%{{.*}} : f32) outs(%[[Z]] : memref<3xf32>)
// CHECK:      memref.copy %[[X]], %[[Y]] : memref<?x2xf32> to memref<?x2xf32>
// CHECK-NEXT: return{{$}}
func.func @model(%x: memref<?x2xf32>) -> (memref<?x2xf32>, memref<3xf32>) attributes {tfm.signature = #tfm.signature<
    model = "model", symbols = ["seq"],
    inputs = [#tfm.tensor<name = "x", elementType = f32, shape = ["seq", 2]>],
    outputs = [#tfm.tensor<name = "y", elementType = f32, shape = ["seq", 2]>,
               #tfm.tensor<name = "z", elementType = f32, shape = [3]>]>} {
  %a = memref.alloc() : memref<3xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%a : memref<3xf32>)
  return %x, %a : memref<?x2xf32>, memref<3xf32>
}

// -----

// A result returned twice is computed once and copied into both outputs.

// CHECK-LABEL: func.func @twice
// CHECK-SAME: (%[[Y:.*]]: memref<2xf32>, %[[Z:.*]]: memref<2xf32>)
// CHECK:      %[[A:.*]] = memref.alloc() : memref<2xf32>
// CHECK:      memref.copy %[[A]], %[[Y]]
// CHECK-NEXT: memref.copy %[[A]], %[[Z]]
func.func @twice() -> (memref<2xf32>, memref<2xf32>) attributes {tfm.signature = #tfm.signature<
    model = "twice", symbols = [], inputs = [],
    outputs = [#tfm.tensor<name = "y", elementType = f32, shape = [2]>,
               #tfm.tensor<name = "z", elementType = f32, shape = [2]>]>} {
  %a = memref.alloc() : memref<2xf32>
  return %a, %a : memref<2xf32>, memref<2xf32>
}

// -----

// The model's i32 status (the result of its run-time checks) stays a result,
// after the memref results turned out-parameters.

// CHECK-LABEL: func.func @with_status
// CHECK-SAME: (%[[X:.*]]: memref<4xi64>, %[[S:.*]]: i32, %[[Y:.*]]: memref<4xi64>) -> i32
// CHECK:      memref.copy %[[X]], %[[Y]]
// CHECK-NEXT: return %[[S]] : i32
func.func @with_status(%x: memref<4xi64>, %s: i32) -> (memref<4xi64>, i32) attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
  return %x, %s : memref<4xi64>, i32
}

// -----

// expected-error @+1 {{a model returns at most one i32 status}}
func.func @two_statuses(%s: i32) -> (i32, i32) attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
  return %s, %s : i32, i32
}

// -----

// Functions without tfm.signature, and declarations, are not touched.

// CHECK-LABEL: func.func @helper
// CHECK-SAME: (%[[X:.*]]: memref<2xf32>) -> memref<2xf32>
// CHECK-NEXT: return %[[X]] : memref<2xf32>
// CHECK:      func.func private @declared(memref<2xf32>) -> memref<2xf32>
func.func @helper(%x: memref<2xf32>) -> memref<2xf32> {
  return %x : memref<2xf32>
}
func.func private @declared(memref<2xf32>) -> memref<2xf32> attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>}

// -----

// expected-error @+1 {{model results must be memrefs after bufferization (or its i32 status), got 'tensor<2xf32>'}}
func.func @not_bufferized(%x: tensor<2xf32>) -> tensor<2xf32> attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{expected a single-block model function}}
func.func @several_blocks(%x: memref<2xf32>, %c: i1) -> memref<2xf32> attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
  cf.cond_br %c, ^a, ^b
^a:
  return %x : memref<2xf32>
^b:
  return %x : memref<2xf32>
}

// -----

// A cache (an input flagged `cache`) is returned after the outputs on
// tensors; bufferized in place, the returned buffer is its own argument,
// which was written through: the result is dropped, no out-parameter, no
// copy.

// CHECK-LABEL: func.func @cached
// CHECK-SAME: (%[[X:.*]]: memref<?x2xf32>, %[[C:.*]]: memref<4x2xf32>, %[[Y:.*]]: memref<?x2xf32>) -> i32
// CHECK-NOT:  memref.copy %[[C]]
// CHECK:      return %{{.*}} : i32
func.func @cached(%x: memref<?x2xf32>, %c: memref<4x2xf32>) -> (memref<?x2xf32>, memref<4x2xf32>, i32) attributes {tfm.signature = #tfm.signature<
    model = "cached", symbols = ["seq"],
    inputs = [#tfm.tensor<name = "x", elementType = f32, shape = ["seq", 2]>,
              #tfm.tensor<name = "c", elementType = f32, shape = [4, 2], cache = true>],
    outputs = [#tfm.tensor<name = "y", elementType = f32, shape = ["seq", 2]>]>} {
  %zero = arith.constant 0 : i32
  return %x, %c, %zero : memref<?x2xf32>, memref<4x2xf32>, i32
}

// -----

// A cache whose update bufferization had to copy (it was read after being
// appended to) would lose the update: an error.
func.func @cache_copied(%c: memref<4x2xf32>) -> memref<4x2xf32> attributes {tfm.signature = #tfm.signature<
    model = "copied", symbols = [],
    inputs = [#tfm.tensor<name = "c", elementType = f32, shape = [4, 2], cache = true>],
    outputs = []>} {
  %a = memref.alloc() : memref<4x2xf32>
  memref.copy %c, %a : memref<4x2xf32> to memref<4x2xf32>
  // expected-error @+1 {{cache 'c' is not updated in place}}
  return %a : memref<4x2xf32>
}
