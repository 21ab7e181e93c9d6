// RUN: tfm-opt %s -split-input-file -tfm-pack-linear=vector-bits=64 | FileCheck %s

// vector-bits=64: two lanes per vector, panels of nr = 4 columns. A [5, 2]
// weight fills two panels [2, 2, 4], element [p, k, j] = W[4p + j, k], zero
// past the fifth row; the bias is padded to 8.

// CHECK-LABEL: func.func @packs_two_panels(
// CHECK-SAME:    %[[X:.*]]: tensor<?x7x2xf32>)
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<{{\[\[\[}}0.000000e+00, 2.000000e+00, 4.000000e+00, 6.000000e+00], [1.000000e+00, 3.000000e+00, 5.000000e+00, 7.000000e+00]], {{\[\[}}8.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [9.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<2x2x4xf32>
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<8xf32>
// CHECK:         %[[DIM:.*]] = tensor.dim %[[X]], %c0
// CHECK:         %[[INIT:.*]] = tensor.empty(%[[DIM]]) : tensor<?x7x5xf32>
// CHECK:         %[[Y:.*]] = tfm.packed_linear ins(%[[X]], %[[W]] : tensor<?x7x2xf32>, tensor<2x2x4xf32>) bias(%[[B]] : tensor<8xf32>) outs(%[[INIT]] : tensor<?x7x5xf32>) activation "none" -> tensor<?x7x5xf32>
// CHECK:         return %[[Y]]
func.func @packs_two_panels(%x: tensor<?x7x2xf32>) -> tensor<?x7x5xf32> {
  %w = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0]]> : tensor<5x2xf32>
  %b = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %y = tfm.linear %x, %w, %b : tensor<?x7x2xf32>, tensor<5x2xf32>, tensor<5xf32> -> tensor<?x7x5xf32>
  return %y : tensor<?x7x5xf32>
}

// -----

// A slice of a constant (the q rows of a packed in_proj_weight) packs the
// slice's rows.

// CHECK-LABEL: func.func @packs_a_slice(
// CHECK:         arith.constant dense<{{\[\[\[}}4.000000e+00, 6.000000e+00, 0.000000e+00, 0.000000e+00], [5.000000e+00, 7.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<1x2x4xf32>
// CHECK:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<1x2x4xf32>) outs(%{{.*}} : tensor<3x2xf32>) activation "none"
// CHECK-NOT:     tfm.linear
func.func @packs_a_slice(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]> : tensor<4x2xf32>
  %s = tensor.extract_slice %w[2, 0] [2, 2] [1, 1] : tensor<4x2xf32> to tensor<2x2xf32>
  %y = tfm.linear %x, %s : tensor<3x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// The activation and the residual add become the epilogue.

// CHECK-LABEL: func.func @fuses_gelu_and_residual(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<3x2xf32>, %[[R:[^:]*]]: tensor<3x4xf32>)
// CHECK:         %[[Y:.*]] = tfm.packed_linear ins(%[[X]], %{{.*}} : tensor<3x2xf32>, tensor<1x2x4xf32>) bias(%{{.*}} : tensor<4xf32>) residual(%[[R]] : tensor<3x4xf32>) outs(%{{.*}} : tensor<3x4xf32>) activation "gelu_tanh"
// CHECK-NEXT:    return %[[Y]]
func.func @fuses_gelu_and_residual(%x: tensor<3x2xf32>, %r: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %w = arith.constant dense<1.0> : tensor<4x2xf32>
  %b = arith.constant dense<0.5> : tensor<4xf32>
  %h = tfm.linear %x, %w, %b : tensor<3x2xf32>, tensor<4x2xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %g = tfm.gelu %h {approximate = "tanh"} : tensor<3x4xf32>
  %y = tfm.add %r, %g : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @fuses_relu(
// CHECK:         tfm.packed_linear {{.*}} activation "relu"
// CHECK-NOT:     tfm.relu
func.func @fuses_relu(%x: tensor<3x2xf32>) -> tensor<3x4xf32> {
  %w = arith.constant dense<1.0> : tensor<4x2xf32>
  %h = tfm.linear %x, %w : tensor<3x2xf32>, tensor<4x2xf32> -> tensor<3x4xf32>
  %y = tfm.relu %h : tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// Not absorbed: an activation whose input has another user (it is needed
// as it is), and an add that broadcasts (the epilogue adds a tile of the
// result's shape).

// CHECK-LABEL: func.func @keeps_shared_and_broadcast(
// CHECK:         %[[H:.*]] = tfm.packed_linear {{.*}} activation "none"
// CHECK:         %[[G:.*]] = tfm.gelu %[[H]]
// CHECK:         %[[P:.*]] = tfm.packed_linear {{.*}} activation "none"
// CHECK:         tfm.add %[[P]], %{{.*}} : tensor<3x4xf32>, tensor<4xf32>
func.func @keeps_shared_and_broadcast(%x: tensor<3x2xf32>, %v: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %w = arith.constant dense<1.0> : tensor<4x2xf32>
  %h = tfm.linear %x, %w : tensor<3x2xf32>, tensor<4x2xf32> -> tensor<3x4xf32>
  %g = tfm.gelu %h : tensor<3x4xf32>
  %p = tfm.linear %x, %w : tensor<3x2xf32>, tensor<4x2xf32> -> tensor<3x4xf32>
  %s = tfm.add %p, %v : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
  return %h, %g, %s : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// A weight that is not a constant (no weights file bound) stays a tfm.linear
// for the linalg lowering.

// CHECK-LABEL: func.func @keeps_dynamic_weight(
// CHECK:         tfm.linear
// CHECK-NOT:     tfm.packed_linear
func.func @keeps_dynamic_weight(%x: tensor<3x2xf32>, %w: tensor<4x2xf32>) -> tensor<3x4xf32> {
  %y = tfm.linear %x, %w : tensor<3x2xf32>, tensor<4x2xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// `x @ W` with a constant W [K, N] (a Conv1D weight, stored [in, out]) packs
// like a linear layer: element [p, k, j] = W[k, 4p + j], zero past column 5.
// The constant [N] added to it becomes the bias.

// CHECK-LABEL: func.func @packs_matmul_weight(
// CHECK-SAME:    %[[X:.*]]: tensor<?x7x2xf32>)
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]], {{\[\[}}4.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [9.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<2x2x4xf32>
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<8xf32>
// CHECK:         %[[DIM:.*]] = tensor.dim %[[X]], %c0
// CHECK:         %[[INIT:.*]] = tensor.empty(%[[DIM]]) : tensor<?x7x5xf32>
// CHECK:         %[[Y:.*]] = tfm.packed_linear ins(%[[X]], %[[W]] : tensor<?x7x2xf32>, tensor<2x2x4xf32>) bias(%[[B]] : tensor<8xf32>) outs(%[[INIT]] : tensor<?x7x5xf32>) activation "none" -> tensor<?x7x5xf32>
// CHECK-NOT:     tfm.matmul
// CHECK-NOT:     tfm.add
// CHECK:         return %[[Y]]
func.func @packs_matmul_weight(%x: tensor<?x7x2xf32>) -> tensor<?x7x5xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0]]> : tensor<2x5xf32>
  %b = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %m = tfm.matmul %x, %w : tensor<?x7x2xf32>, tensor<2x5xf32> -> tensor<?x7x5xf32>
  %y = tfm.add %b, %m : tensor<5xf32>, tensor<?x7x5xf32> -> tensor<?x7x5xf32>
  return %y : tensor<?x7x5xf32>
}

// -----

// GPT-2's MLP: x + gelu_tanh(x @ W1 + b1) @ W2 + b2, each GEMM with its bias,
// activation and residual in the epilogue.

// CHECK-LABEL: func.func @packs_matmul_mlp(
// CHECK-SAME:    %[[X:.*]]: tensor<3x2xf32>)
// CHECK:         %[[H:.*]] = tfm.packed_linear ins(%[[X]], %{{.*}} : tensor<3x2xf32>, tensor<1x2x4xf32>) bias(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<3x4xf32>) activation "gelu_tanh"
// CHECK:         %[[Y:.*]] = tfm.packed_linear ins(%[[H]], %{{.*}} : tensor<3x4xf32>, tensor<1x4x4xf32>) bias(%{{.*}} : tensor<4xf32>) residual(%[[X]] : tensor<3x2xf32>) outs(%{{.*}} : tensor<3x2xf32>) activation "none"
// CHECK-NEXT:    return %[[Y]]
func.func @packs_matmul_mlp(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w1 = arith.constant dense<0.5> : tensor<2x4xf32>
  %b1 = arith.constant dense<0.25> : tensor<4xf32>
  %w2 = arith.constant dense<2.0> : tensor<4x2xf32>
  %b2 = arith.constant dense<1.0> : tensor<1x2xf32>
  %m1 = tfm.matmul %x, %w1 : tensor<3x2xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
  %a1 = tfm.add %m1, %b1 : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %g = tfm.gelu %a1 {approximate = "tanh"} : tensor<3x4xf32>
  %m2 = tfm.matmul %g, %w2 : tensor<3x4xf32>, tensor<4x2xf32> -> tensor<3x2xf32>
  %a2 = tfm.add %m2, %b2 : tensor<3x2xf32>, tensor<1x2xf32> -> tensor<3x2xf32>
  %y = tfm.add %x, %a2 : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// Left as matmuls: a right operand that is not a constant, one whose batch
// dims broadcast the left (the rows are not the left's alone), and a
// constant added that is not a bias of [N] (it broadcasts along the rows).

// CHECK-LABEL: func.func @keeps_other_matmuls(
// CHECK:         tfm.matmul %{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<2x4xf32>
// CHECK:         tfm.matmul %{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<5x2x4xf32>
// CHECK:         %[[P:.*]] = tfm.packed_linear
// CHECK-NOT:     bias
// CHECK-SAME:    activation "none"
// CHECK:         tfm.add %[[P]], %{{.*}} : tensor<3x4xf32>, tensor<3x1xf32>
func.func @keeps_other_matmuls(%x: tensor<3x2xf32>, %w: tensor<2x4xf32>) -> (tensor<3x4xf32>, tensor<5x3x4xf32>, tensor<3x4xf32>) {
  %a = tfm.matmul %x, %w : tensor<3x2xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
  %w3 = arith.constant dense<1.0> : tensor<5x2x4xf32>
  %b = tfm.matmul %x, %w3 : tensor<3x2xf32>, tensor<5x2x4xf32> -> tensor<5x3x4xf32>
  %c = arith.constant dense<1.0> : tensor<2x4xf32>
  %r = arith.constant dense<1.0> : tensor<3x1xf32>
  %m = tfm.matmul %x, %c : tensor<3x2xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
  %d = tfm.add %m, %r : tensor<3x4xf32>, tensor<3x1xf32> -> tensor<3x4xf32>
  return %a, %b, %d : tensor<3x4xf32>, tensor<5x3x4xf32>, tensor<3x4xf32>
}
