// RUN: tfm-opt %s -split-input-file -tfm-to-linalg | FileCheck %s
// RUN: tfm-opt %s -split-input-file -tfm-to-linalg="fuse-attention=false" | FileCheck %s --check-prefix=UNFUSED
// RUN: tfm-opt %s -split-input-file -tfm-to-linalg="remarks=true" -verify-diagnostics -o /dev/null

// The tfm-to-linalg pipeline keeps attention fused by default: layers are
// lowered to tfm.attention (tfm-lower-layers), hand-written chains fused into
// it once, on linalg (tfm-fuse-attention). `fuse-attention=false` keeps the
// unfused path: every tfm.attention decomposed (tfm-decompose-attention).
// With `remarks`, each layer, fused chain and refused chain is reported once.

// CHECK-LABEL: func.func @sdpa
// CHECK:      tfm.attention
// CHECK-NOT:  linalg.softmax
// UNFUSED-LABEL: func.func @sdpa
// UNFUSED-NOT:  tfm.attention
// UNFUSED:      linalg.softmax
func.func @sdpa(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-remark @+1 {{lowered to tfm.attention}}
  %0 = tfm.sdpa %q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @weights_returned
// CHECK-NOT:  tfm.attention
// CHECK:      linalg.softmax
func.func @weights_returned(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x?xf32>) {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %p = tfm.softmax %s, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{attention not fused: the softmax result has another user}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o, %p : tensor<?x8xf32>, tensor<?x?xf32>
}

// -----

// A hand-written chain is fused once, on linalg; unfused, it stays a chain.

// CHECK-LABEL: func.func @chain
// CHECK:      tfm.attention
// CHECK-NOT:  linalg.softmax
// UNFUSED-LABEL: func.func @chain
// UNFUSED-NOT:  tfm.attention
// UNFUSED:      linalg.softmax
func.func @chain(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %kt = tfm.transpose %k, -2, -1 : tensor<?x8xf32> -> tensor<8x?xf32>
  %s = tfm.matmul %q, %kt : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  %ss = tfm.scale %s, 0.5 : tensor<?x?xf32>
  %p = tfm.softmax %ss, -1 : tensor<?x?xf32>
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
  %o = tfm.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// Multi-head attention reads its heads through the op's maps: no transposes
// around it. Unfused, every head split and merge is a transpose again.

// CHECK-LABEL: func.func @mha
// CHECK-NOT:  linalg.transpose
// CHECK:      tfm.attention
// CHECK-NOT:  linalg.transpose
// CHECK:      return
// UNFUSED-LABEL: func.func @mha
// UNFUSED-NOT:  tfm.attention
// UNFUSED:      linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
// UNFUSED:      linalg.softmax
// UNFUSED:      linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
// UNFUSED-NOT:  tfm.attention
func.func @mha(%x: tensor<?x?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x?x8xf32> {
  // expected-remark @+1 {{lowered to tfm.attention}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) heads 2
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}
