// RUN: tfm-opt %s -split-input-file -convert-attention-to-cpu -verify-diagnostics

func.func @dynamic_head_dim(%q: memref<?x?x?xf32>, %o: memref<?x?x?xf32>) {
  // expected-error @+1 {{needs static head dimensions to lower to CPU}}
  tfm.attention ins(%q, %q, %q : memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>) outs(%o : memref<?x?x?xf32>) scale 1.0
  return
}

// -----

func.func @on_tensors(%q: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{must be bufferized before convert-attention-to-cpu}}
  %0 = tfm.attention ins(%q, %q, %q : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%q : tensor<4x8xf32>) scale 1.0 -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A view whose rows are not dense (every other key) cannot be read as
// [batch*heads, keys, dim].
func.func @strided_key(%q: memref<2x1x8xf32>, %k: memref<2x16x8xf32, strided<[256, 16, 1]>>, %o: memref<2x1x8xf32>) {
  // expected-error @+1 {{needs contiguous buffers to lower to CPU}}
  tfm.attention ins(%q, %k, %k : memref<2x1x8xf32>, memref<2x16x8xf32, strided<[256, 16, 1]>>, memref<2x16x8xf32, strided<[256, 16, 1]>>) outs(%o : memref<2x1x8xf32>) scale 1.0
  return
}
