// RUN: tfm-opt %s -tfm-gpu-status -verify-diagnostics

// Results must have become out-parameters first.
// expected-error @+1 {{must return nothing or an i32 status before tfm-gpu-status}}
func.func @results(%x: memref<4xf32>) -> memref<4xf32> attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = []>} {
  return %x : memref<4xf32>
}
