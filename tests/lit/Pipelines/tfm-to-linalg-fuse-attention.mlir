// RUN: tfm-opt %s -split-input-file -tfm-to-linalg | FileCheck %s
// RUN: tfm-opt %s -split-input-file -tfm-to-linalg="fuse-attention=false" | FileCheck %s --check-prefix=UNFUSED
// RUN: tfm-opt %s -split-input-file -tfm-to-linalg="remarks=true" -verify-diagnostics -o /dev/null

// The tfm-to-linalg pipeline fuses attention by default (tfm-fuse-attention
// after tfm-decompose-layers, and again on linalg); `fuse-attention=false`
// keeps the unfused path. With `remarks`, a refused chain is reported once,
// by the linalg-level run.

// CHECK-LABEL: func.func @sdpa
// CHECK:      tfm.attention
// CHECK-NOT:  linalg.softmax
// UNFUSED-LABEL: func.func @sdpa
// UNFUSED-NOT:  tfm.attention
// UNFUSED:      linalg.softmax
func.func @sdpa(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-remark @+1 {{fused attention chain into tfm.attention}}
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
