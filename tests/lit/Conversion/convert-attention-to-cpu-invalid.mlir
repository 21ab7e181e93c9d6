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

// Rows are read as vectors: a head dim that is not contiguous (every other
// element) cannot be.
func.func @strided_head_dim(%q: memref<2x1x8xf32>, %k: memref<2x16x8xf32, strided<[256, 16, 2]>>, %o: memref<2x1x8xf32>) {
  // expected-error @+1 {{needs a contiguous head dim to lower to CPU}}
  tfm.attention ins(%q, %k, %k : memref<2x1x8xf32>, memref<2x16x8xf32, strided<[256, 16, 2]>>, memref<2x16x8xf32, strided<[256, 16, 2]>>) outs(%o : memref<2x1x8xf32>) scale 1.0
  return
}
