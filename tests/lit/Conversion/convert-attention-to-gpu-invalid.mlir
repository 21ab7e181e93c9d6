// RUN: tfm-opt %s -split-input-file -convert-attention-to-gpu -verify-diagnostics

func.func @dynamic_head(%q: memref<?x?x?xf32>, %k: memref<?x?x?xf32>, %v: memref<?x?x?xf32>, %o: memref<?x?x?xf32>) {
  // expected-error @+1 {{needs static head dimensions to lower to the GPU}}
  tfm.attention ins(%q, %k, %v : memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>) outs(%o : memref<?x?x?xf32>) scale 0.125
  return
}

// -----

func.func @f64(%q: memref<2x4x8xf64>, %k: memref<2x4x8xf64>, %v: memref<2x4x8xf64>, %o: memref<2x4x8xf64>) {
  // expected-error @+1 {{has no GPU kernel for 'f64' yet (f32 only)}}
  tfm.attention ins(%q, %k, %v : memref<2x4x8xf64>, memref<2x4x8xf64>, memref<2x4x8xf64>) outs(%o : memref<2x4x8xf64>) scale 0.125
  return
}

// -----

func.func @huge_head(%q: memref<2x4x16384xf32>, %k: memref<2x4x16384xf32>, %v: memref<2x4x16384xf32>, %o: memref<2x4x16384xf32>) {
  // expected-error @+1 {{head dimensions 16384 and 16384 leave no flash-attention tiles within 49152 bytes of shared memory and 32 accumulators per thread}}
  tfm.attention ins(%q, %k, %v : memref<2x4x16384xf32>, memref<2x4x16384xf32>, memref<2x4x16384xf32>) outs(%o : memref<2x4x16384xf32>) scale 0.125
  return
}

// -----

func.func @tensors(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{must be bufferized before convert-attention-to-gpu}}
  %r = tfm.attention ins(%q, %k, %v : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%o : tensor<2x4x8xf32>) scale 0.125 -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

func.func @low_precision_cache(%q: memref<2x4x8xf32>, %k: memref<2x16x8xbf16>, %v: memref<2x16x8xbf16>, %o: memref<2x4x8xf32>) {
  // expected-error @+1 {{has no GPU kernel for 'bf16' keys and 'bf16' values yet (a bf16/f16 KV cache is CPU-only: declare the caches f32 or leave out --kv-cache-dtype)}}
  tfm.attention ins(%q, %k, %v : memref<2x4x8xf32>, memref<2x16x8xbf16>, memref<2x16x8xbf16>) outs(%o : memref<2x4x8xf32>) scale 0.125
  return
}
