// RUN: tfm-opt %s -split-input-file -tfm-gpu-decompose-attention | FileCheck %s

// A dynamic head dimension: the flash kernel needs it static, so the op
// becomes the attention chain, which the linalg kernels run.
// CHECK-LABEL: func.func @dynamic_head(
// CHECK-NOT:     tfm.attention
// CHECK:         tfm.matmul
// CHECK:         tfm.softmax
// CHECK:         tfm.matmul
func.func @dynamic_head(%q: tensor<2x?x?xf32>, %k: tensor<2x?x?xf32>, %v: tensor<2x?x?xf32>, %init: tensor<2x?x?xf32>) -> tensor<2x?x?xf32> {
  %0 = tfm.attention ins(%q, %k, %v : tensor<2x?x?xf32>, tensor<2x?x?xf32>, tensor<2x?x?xf32>) outs(%init : tensor<2x?x?xf32>) scale 0.125 -> tensor<2x?x?xf32>
  return %0 : tensor<2x?x?xf32>
}

// -----

// Heads so wide that no tile fits 48 KB of shared memory: decomposed too.
// CHECK-LABEL: func.func @wide_head(
// CHECK-NOT:     tfm.attention
// CHECK:         tfm.softmax
func.func @wide_head(%q: tensor<2x8x16384xf32>, %k: tensor<2x8x16384xf32>, %v: tensor<2x8x16384xf32>, %init: tensor<2x8x16384xf32>) -> tensor<2x8x16384xf32> {
  %0 = tfm.attention ins(%q, %k, %v : tensor<2x8x16384xf32>, tensor<2x8x16384xf32>, tensor<2x8x16384xf32>) outs(%init : tensor<2x8x16384xf32>) scale 0.125 -> tensor<2x8x16384xf32>
  return %0 : tensor<2x8x16384xf32>
}

// -----

// What the kernel takes stays fused, and so does attention over a cache
// (no chain spells it), whatever its head.
// CHECK-LABEL: func.func @kept(
// CHECK:         tfm.attention
// CHECK-NOT:     tfm.softmax
// CHECK:         tfm.attention
// CHECK-NOT:     tfm.softmax
func.func @kept(%q: tensor<2x?x64xf32>, %k: tensor<2x?x64xf32>, %v: tensor<2x?x64xf32>, %init: tensor<2x?x64xf32>,
                %cq: tensor<2x1x?xf32>, %ck: tensor<2x16x?xf32>, %len: tensor<2xi64>, %cinit: tensor<2x1x?xf32>) -> (tensor<2x?x64xf32>, tensor<2x1x?xf32>) {
  %0 = tfm.attention ins(%q, %k, %v : tensor<2x?x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32>) outs(%init : tensor<2x?x64xf32>) scale 0.125 {causal} -> tensor<2x?x64xf32>
  %1 = tfm.attention ins(%cq, %ck, %ck : tensor<2x1x?xf32>, tensor<2x16x?xf32>, tensor<2x16x?xf32>) kv_length(%len : tensor<2xi64>) outs(%cinit : tensor<2x1x?xf32>) scale 0.125 -> tensor<2x1x?xf32>
  return %0, %1 : tensor<2x?x64xf32>, tensor<2x1x?xf32>
}
