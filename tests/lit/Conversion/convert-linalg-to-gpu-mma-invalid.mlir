// RUN: tfm-opt %s -convert-linalg-to-gpu=mma=f8 -verify-diagnostics

// expected-error @+1 {{convert-linalg-to-gpu: mma must be f16, bf16 or empty, not 'f8'}}
func.func @unknown_type(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  return
}
