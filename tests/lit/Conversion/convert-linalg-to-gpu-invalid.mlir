// RUN: tfm-opt %s -split-input-file -convert-linalg-to-gpu -verify-diagnostics

// linalg on tensors has not been bufferized.
func.func @tensors(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{must be bufferized before convert-linalg-to-gpu}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// tfm ops without a GPU lowering are reported, not left to fail later.
func.func @attention(%q: memref<1x4x8xf32>, %k: memref<1x4x8xf32>,
                     %v: memref<1x4x8xf32>, %o: memref<1x4x8xf32>) {
  // expected-error @+1 {{has no GPU lowering yet}}
  tfm.attention ins(%q, %k, %v : memref<1x4x8xf32>, memref<1x4x8xf32>, memref<1x4x8xf32>)
      outs(%o : memref<1x4x8xf32>) scale 0.5
  return
}
