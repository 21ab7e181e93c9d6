// RUN: tfm-opt %s | tfm-opt | FileCheck %s
// RUN: tfm-opt %s -mlir-print-op-generic | tfm-opt | FileCheck %s

// Round trip of the dialect's attributes: a model's signature with a
// symbolic and a static dimension, a cache input, a bool input, bf16, f16
// and i8 outputs, run-time errors and a device; the signature's optional
// fields left out; the task marker on an outlined function.

// CHECK-LABEL: func.func @full(
// CHECK-SAME:    tfm.signature = #tfm.signature<model = "full", symbols = ["batch", "seq"],
// CHECK-SAME:    inputs = [#tfm.tensor<name = "ids", elementType = i64, shape = ["batch", "seq"]>,
// CHECK-SAME:              #tfm.tensor<name = "keep", elementType = i1, shape = ["seq", "seq"]>,
// CHECK-SAME:              #tfm.tensor<name = "k", elementType = f32, shape = [4, "seq", 8], cache = true>],
// CHECK-SAME:    outputs = [#tfm.tensor<name = "y", elementType = f64, shape = ["batch", 8]>,
// CHECK-SAME:               #tfm.tensor<name = "h", elementType = bf16, shape = [2]>,
// CHECK-SAME:               #tfm.tensor<name = "g", elementType = f16, shape = [2]>,
// CHECK-SAME:               #tfm.tensor<name = "q", elementType = i8, shape = [2]>],
// CHECK-SAME:    errors = [#tfm.error<code = 1, message = "id out of range">, #tfm.error<code = -2, message = "too long">],
// CHECK-SAME:    device = "cuda">
func.func @full() attributes {tfm.signature = #tfm.signature<
    model = "full", symbols = ["batch", "seq"],
    inputs = [#tfm.tensor<name = "ids", elementType = i64, shape = ["batch", "seq"]>,
              #tfm.tensor<name = "keep", elementType = i1, shape = ["seq", "seq"]>,
              #tfm.tensor<name = "k", elementType = f32, shape = [4, "seq", 8], cache = true>],
    outputs = [#tfm.tensor<name = "y", elementType = f64, shape = ["batch", 8]>,
               #tfm.tensor<name = "h", elementType = bf16, shape = [2]>,
               #tfm.tensor<name = "g", elementType = f16, shape = [2]>,
               #tfm.tensor<name = "q", elementType = i8, shape = [2]>],
    errors = [#tfm.error<code = 1, message = "id out of range">,
              #tfm.error<code = -2, message = "too long">],
    device = "cuda">} {
  return
}

// The optional fields stay out when absent, and `cache = false` is the
// default, not printed.
// CHECK-LABEL: func.func @minimal(
// CHECK-SAME:    tfm.signature = #tfm.signature<model = "minimal", symbols = [], inputs = [],
// CHECK-SAME:    outputs = [#tfm.tensor<name = "y", elementType = i32, shape = []>]>}
func.func @minimal() attributes {tfm.signature = #tfm.signature<
    model = "minimal", symbols = [], inputs = [],
    outputs = [#tfm.tensor<name = "y", elementType = i32, shape = [], cache = false>]>} {
  return
}

// CHECK-LABEL: func.func private @task(
// CHECK-SAME:    attributes {tfm.task}
func.func private @task(%b: index, %e: index) attributes {tfm.task} {
  return
}

// CHECK-LABEL: llvm.func @lowered()
// CHECK-SAME:    tfm.signature = #tfm.signature<model = "lowered"
llvm.func @lowered() attributes {tfm.signature = #tfm.signature<
    model = "lowered", symbols = [], inputs = [], outputs = []>} {
  llvm.return
}
