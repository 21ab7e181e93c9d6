// RUN: tfm-opt %s -split-input-file -tfm-pack-linear=vector-bits=64 | FileCheck %s
// RUN: tfm-opt %s -split-input-file -tfm-pack-linear="vector-bits=64 weight-type=bf16" \
// RUN:   | FileCheck %s --check-prefix=BF16
// RUN: tfm-opt %s -split-input-file -tfm-pack-linear="vector-bits=64 weight-type=i8" \
// RUN:   | FileCheck %s --check-prefix=I8
// RUN: tfm-opt %s -split-input-file \
// RUN:   -tfm-pack-linear="vector-bits=64 weight-type=i8 keep-f32=pooler.*,other remarks=true" \
// RUN:   2>%t.remarks | FileCheck %s --check-prefix=KEEP
// RUN: FileCheck %s --check-prefix=REMARKS < %t.remarks
// RUN: not tfm-opt %s -split-input-file -tfm-pack-linear="weight-type=f16" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: tfm-pack-linear: unknown weight-type 'f16' (f32, bf16 or i8)

// vector-bits=64: two lanes per vector, panels of nr = 4 columns. A [5, 2]
// weight fills two panels [2, 2, 4], element [p, k, j] = W[4p + j, k], zero
// past the fifth row; the bias is padded to 8.

// CHECK-LABEL: func.func @packs_two_panels(
// CHECK-SAME:    %[[X:.*]]: tensor<?x7x2xf32>)
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<{{\[\[\[}}0.000000e+00, 2.000000e+00, 4.000000e+00, 6.000000e+00], [1.000000e+00, 3.000000e+00, 5.000000e+00, 7.000000e+00]], {{\[\[}}8.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [9.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<2x2x4xf32>
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<8xf32>
// CHECK:         %[[DIM:.*]] = tensor.dim %[[X]], %c0
// CHECK:         %[[INIT:.*]] = tensor.empty(%[[DIM]]) : tensor<?x7x5xf32>
// CHECK:         %[[Y:.*]] = tfm.packed_linear ins(%[[X]], %[[W]] : tensor<?x7x2xf32>, tensor<2x2x4xf32>) bias(%[[B]] : tensor<8xf32>) outs(%[[INIT]] : tensor<?x7x5xf32>) activation none -> tensor<?x7x5xf32>
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
// CHECK:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<1x2x4xf32>) outs(%{{.*}} : tensor<3x2xf32>) activation none
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
// CHECK:         %[[Y:.*]] = tfm.packed_linear ins(%[[X]], %{{.*}} : tensor<3x2xf32>, tensor<1x2x4xf32>) bias(%{{.*}} : tensor<4xf32>) residual(%[[R]] : tensor<3x4xf32>) outs(%{{.*}} : tensor<3x4xf32>) activation gelu_tanh
// CHECK-NEXT:    return %[[Y]]
func.func @fuses_gelu_and_residual(%x: tensor<3x2xf32>, %r: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %w = arith.constant dense<1.0> : tensor<4x2xf32>
  %b = arith.constant dense<0.5> : tensor<4xf32>
  %h = tfm.linear %x, %w, %b : tensor<3x2xf32>, tensor<4x2xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %g = tfm.gelu %h approximate tanh : tensor<3x4xf32>
  %y = tfm.add %r, %g : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @fuses_relu(
// CHECK:         tfm.packed_linear {{.*}} activation relu
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
// CHECK:         %[[H:.*]] = tfm.packed_linear {{.*}} activation none
// CHECK:         %[[G:.*]] = tfm.gelu %[[H]]
// CHECK:         %[[P:.*]] = tfm.packed_linear {{.*}} activation none
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
// CHECK:         %[[Y:.*]] = tfm.packed_linear ins(%[[X]], %[[W]] : tensor<?x7x2xf32>, tensor<2x2x4xf32>) bias(%[[B]] : tensor<8xf32>) outs(%[[INIT]] : tensor<?x7x5xf32>) activation none -> tensor<?x7x5xf32>
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
// CHECK:         %[[H:.*]] = tfm.packed_linear ins(%[[X]], %{{.*}} : tensor<3x2xf32>, tensor<1x2x4xf32>) bias(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<3x4xf32>) activation gelu_tanh
// CHECK:         %[[Y:.*]] = tfm.packed_linear ins(%[[H]], %{{.*}} : tensor<3x4xf32>, tensor<1x4x4xf32>) bias(%{{.*}} : tensor<4xf32>) residual(%[[X]] : tensor<3x2xf32>) outs(%{{.*}} : tensor<3x2xf32>) activation none
// CHECK-NEXT:    return %[[Y]]
func.func @packs_matmul_mlp(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w1 = arith.constant dense<0.5> : tensor<2x4xf32>
  %b1 = arith.constant dense<0.25> : tensor<4xf32>
  %w2 = arith.constant dense<2.0> : tensor<4x2xf32>
  %b2 = arith.constant dense<1.0> : tensor<1x2xf32>
  %m1 = tfm.matmul %x, %w1 : tensor<3x2xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
  %a1 = tfm.add %m1, %b1 : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %g = tfm.gelu %a1 approximate tanh : tensor<3x4xf32>
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
// CHECK-SAME:    activation none
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

// -----

// weight-type=bf16: pairs of k share a 32-bit lane, [panels, ceil(K/2),
// 2 nr], element [p, q, 2j + t] = W[4p + j, 2q + t], rounded to nearest
// even: 0.1 (0x3DCCCCCD) becomes 0x3DCD (0.10009765625), the ties 1 + 2^-8
// and 1 + 3 * 2^-8 go to the even 1.0 and 1 + 2^-6, 0x3F7FFFFF carries into
// the exponent (1.0), a NaN whose payload is in the low half stays a NaN
// (0x7FC0, not an infinity), denormals become zeros of their sign. K = 3
// pads the second pair with a zero. No dequant operands.

// BF16-LABEL: func.func @packs_bf16(
// BF16:         %[[W:.*]] = arith.constant dense<{{\[\[\[}}1.000980e-01, 1.000000e+00, 1.015630e+00, 1.000000e+00, -0.000000e+00, 0x7FC0, 4.000000e+00, 5.000000e+00], [-2.500000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 3.000000e+00, 0.000000e+00, 6.000000e+00, 0.000000e+00]], {{\[\[}}7.000000e+00, 8.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [9.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<2x2x8xbf16>
// BF16:         tfm.packed_linear ins(%{{.*}}, %[[W]] : tensor<?x3xf32>, tensor<2x2x8xbf16>) outs(%{{.*}} : tensor<?x5xf32>) activation none
// BF16-NOT:     dequant
// BF16-SAME:    -> tensor<?x5xf32>
func.func @packs_bf16(%x: tensor<?x3xf32>) -> tensor<?x5xf32> {
  %w = arith.constant dense<[[0.1, 1.00390625, -2.5], [1.01171875, 0x3F7FFFFF, 1.0e-39], [-1.0e-39, 0x7F800001, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]> : tensor<5x3xf32>
  %y = tfm.linear %x, %w : tensor<?x3xf32>, tensor<5x3xf32> -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// -----

// weight-type=i8: quads of k per lane, [panels, ceil(K/4), 4 nr], each
// column n symmetric: scale[n] = max |W[n, :]| / 127 and q = round(W /
// scale) to nearest even: column 0 (max 1.27) has scale 0.01 and q = 50,
// -127, 25; column 1 (max 127) scale 1, where 2.5 and -3.5 round to 2 and
// -4; the all-zero column 2 scale 1 and q = 0; column 4's 0.01 rounds to 0.
// The scales and the sums of q (-52, 125, 0, 254, 0) are padded to the
// panels' 8 columns (scale 1, sum 0) and become the dequant operands; the
// bias and the relu stay the epilogue's.

// I8-LABEL: func.func @packs_i8(
// I8-DAG:       %[[W:.*]] = arith.constant dense<{{\[\[\[}}50, -127, 25, 0, 127, 2, -4, 0, 0, 0, 0, 0, 42, 85, 127, 0]], {{\[\[}}-127, 0, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]]> : tensor<2x1x16xi8>
// I8-DAG:       %[[SCALES:.*]] = arith.constant dense<[0.00999999977, 1.000000e+00, 1.000000e+00, 0.0236220472, 0.0314960629, 1.000000e+00, 1.000000e+00, 1.000000e+00]> : tensor<8xf32>
// I8-DAG:       %[[SUMS:.*]] = arith.constant dense<[-52, 125, 0, 254, 0, 0, 0, 0]> : tensor<8xi32>
// I8-DAG:       %[[B:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<8xf32>
// I8:           tfm.packed_linear ins(%{{.*}}, %[[W]] : tensor<?x3xf32>, tensor<2x1x16xi8>) dequant(%[[SCALES]], %[[SUMS]] : tensor<8xf32>, tensor<8xi32>) bias(%[[B]] : tensor<8xf32>) outs(%{{.*}} : tensor<?x5xf32>) activation relu
func.func @packs_i8(%x: tensor<?x3xf32>) -> tensor<?x5xf32> {
  %w = arith.constant dense<[[0.5, -1.27, 0.25], [127.0, 2.5, -3.5], [0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [-4.0, 0.01, 4.0]]> : tensor<5x3xf32>
  %b = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %h = tfm.linear %x, %w, %b : tensor<?x3xf32>, tensor<5x3xf32>, tensor<5xf32> -> tensor<?x5xf32>
  %y = tfm.relu %h : tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// -----

// keep-f32 matches weights by name (the NameLoc tfm-bind-weights gives
// them): pooler.* stays f32 ([panels, K, nr]), encoder.* takes the
// weight type, `x @ W` included. The remarks say which is which.

// KEEP-LABEL: func.func @keeps_f32_by_name(
// KEEP:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x3xf32>, tensor<1x3x4xf32>) outs(%{{.*}} : tensor<?x2xf32>)
// KEEP:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x3xf32>, tensor<1x1x16xi8>) dequant(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xi32>) outs(%{{.*}} : tensor<?x2xf32>)
// KEEP:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x3xf32>, tensor<1x3x4xf32>) outs(%{{.*}} : tensor<?x4xf32>)
// KEEP-NOT:     tfm.linear
// KEEP-NOT:     tfm.matmul
// KEEP:         return
// REMARKS-DAG:  remark: linear layer 'pooler.dense.weight' [2, 3] runs in f32 (--keep-fp32)
// REMARKS-DAG:  remark: linear layer 'encoder.weight' [2, 3] runs in int8
// REMARKS-DAG:  remark: linear layer 'pooler.proj' [3, 4] runs in f32 (--keep-fp32)
func.func @keeps_f32_by_name(%x: tensor<?x3xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x4xf32>) {
  %p = arith.constant dense<[[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]> : tensor<2x3xf32> loc("pooler.dense.weight")
  %e = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32> loc("encoder.weight")
  %m = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32> loc("pooler.proj")
  %a = tfm.linear %x, %p : tensor<?x3xf32>, tensor<2x3xf32> -> tensor<?x2xf32>
  %b = tfm.linear %x, %e : tensor<?x3xf32>, tensor<2x3xf32> -> tensor<?x2xf32>
  %c = tfm.matmul %x, %m : tensor<?x3xf32>, tensor<3x4xf32> -> tensor<?x4xf32>
  return %a, %b, %c : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x4xf32>
}

// -----

// A table that is both an embedding and a linear layer's weight (an LM head
// tied to the token embedding) is stored once: the embedding reads row r of
// the packed panels at [r / 4, :, r % 4], and the unpacked constant is gone.
// Packed in bf16 or i8, the table would no longer hold the embedding's
// values: it stays as it is, beside its packed copy.

// CHECK-LABEL: func.func @tied_embedding(
// CHECK-SAME:    %[[IDS:.*]]: tensor<?xi64>
// CHECK-NOT:     tensor<5x2xf32>
// CHECK:         %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<2x2x4xf32>
// CHECK-NOT:     tensor<5x2xf32>
// CHECK:         %[[E:.*]] = tfm.embedding %[[IDS]], %[[W]] {packed_rows = 5 : i64} : tensor<?xi64>, tensor<2x2x4xf32> -> tensor<?x2xf32>
// CHECK:         tfm.packed_linear ins(%[[E]], %[[W]] :
// CHECK-NOT:     tensor<5x2xf32>
// CHECK:         return
// BF16-LABEL:  func.func @tied_embedding(
// BF16:          %[[T:.*]] = arith.constant dense<{{.*}}> : tensor<5x2xf32>
// BF16:          tfm.embedding %{{.*}}, %[[T]] : tensor<?xi64>, tensor<5x2xf32> -> tensor<?x2xf32>
// BF16:          tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x2xf32>, tensor<2x1x8xbf16>)
func.func @tied_embedding(%ids: tensor<?xi64>) -> tensor<?x5xf32> {
  %w = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0]]> : tensor<5x2xf32>
  %e = tfm.embedding %ids, %w : tensor<?xi64>, tensor<5x2xf32> -> tensor<?x2xf32>
  %y = tfm.linear %e, %w : tensor<?x2xf32>, tensor<5x2xf32> -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// -----

// A weight bound from GGUF Q8_0 blocks (tfm-bind-weights leaves them on
// the constant as tfm.q8_0_blocks) is packed from the blocks, whatever the
// weight type: their int8 values as they are, quads of k per lane (k 0-3
// of column 0 = 1, 2, 3, 4, then of column 1 = -1, -2, -3, -4, then the
// two padding columns), and
// each block's f16 scale (0x3800 = 0.5 for column 0, 0x4000 = 2 for column
// 1) as it is, into block_scales [K / 32, padded N] (padding 0); no sums.
// The blocks are dropped once packed.

// CHECK-LABEL: func.func @packs_q8_0_blocks(
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<"0x01020304FFFEFDFC000000000000000005060708FBFAF9F80000000000000000090A0B0C{{.*}}1D1E1F20E3E2E1E00000000000000000"> : tensor<1x8x16xi8>
// CHECK-DAG:     %[[S:.*]] = arith.constant dense<{{\[\[}}5.000000e-01, 2.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<1x4xf16>
// CHECK-NOT:     tfm.q8_0_blocks
// CHECK:         tfm.packed_linear ins(%{{.*}}, %[[W]] : tensor<?x32xf32>, tensor<1x8x16xi8>) dequant(%[[S]] : tensor<1x4xf16>) outs(%{{.*}} : tensor<?x2xf32>) activation none
// CHECK-NOT:     tfm.q8_0_blocks
// CHECK:         return
func.func @packs_q8_0_blocks(%x: tensor<?x32xf32>) -> tensor<?x2xf32> {
  %w = arith.constant {tfm.q8_0_blocks = dense<[0, 56, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 0, 64, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16, -17, -18, -19, -20, -21, -22, -23, -24, -25, -26, -27, -28, -29, -30, -31, -32]> : tensor<68xi8>} dense<[[0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5, 14.0, 14.5, 15.0, 15.5, 16.0], [-2.0, -4.0, -6.0, -8.0, -10.0, -12.0, -14.0, -16.0, -18.0, -20.0, -22.0, -24.0, -26.0, -28.0, -30.0, -32.0, -34.0, -36.0, -38.0, -40.0, -42.0, -44.0, -46.0, -48.0, -50.0, -52.0, -54.0, -56.0, -58.0, -60.0, -62.0, -64.0]]> : tensor<2x32xf32> loc("blk.0.attn_q.weight")
  %y = tfm.linear %x, %w : tensor<?x32xf32>, tensor<2x32xf32> -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Blocks run along a stored row: for `x @ W` (W stored [K, N]) they run
// along N, not K, and the weight is packed from its f32 values; so is one
// whose blocks do not cover it (a wrong byte count).

// CHECK-LABEL: func.func @q8_0_blocks_unusable(
// CHECK:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x2xf32>, tensor<8x2x4xf32>) outs(%{{.*}} : tensor<?x32xf32>)
// CHECK:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<1x32x4xf32>) outs(%{{.*}} : tensor<?x2xf32>)
// CHECK-NOT:     tfm.q8_0_blocks
// CHECK:         return
func.func @q8_0_blocks_unusable(%x: tensor<?x2xf32>, %z: tensor<?x32xf32>) -> (tensor<?x32xf32>, tensor<?x2xf32>) {
  %m = arith.constant {tfm.q8_0_blocks = dense<[0, 56, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 0, 64, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16, -17, -18, -19, -20, -21, -22, -23, -24, -25, -26, -27, -28, -29, -30, -31, -32]> : tensor<68xi8>} dense<1.0> : tensor<2x32xf32>
  %a = tfm.matmul %x, %m : tensor<?x2xf32>, tensor<2x32xf32> -> tensor<?x32xf32>
  %w = arith.constant {tfm.q8_0_blocks = dense<0> : tensor<34xi8>} dense<1.0> : tensor<2x32xf32>
  %b = tfm.linear %z, %w : tensor<?x32xf32>, tensor<2x32xf32> -> tensor<?x2xf32>
  return %a, %b : tensor<?x32xf32>, tensor<?x2xf32>
}

// -----

// keep-f32 names Q8_0 weights too (tfm-compile --keep-fp32): 'other' is
// packed from its f32 values; the remarks say which layers run Q8_0.

// KEEP-LABEL: func.func @keeps_q8_0_by_name(
// KEEP:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<1x32x4xf32>) outs(%{{.*}} : tensor<?x2xf32>)
// KEEP:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<1x8x16xi8>) dequant(%{{.*}} : tensor<1x4xf16>) outs(%{{.*}} : tensor<?x2xf32>)
// KEEP:         return
// REMARKS-DAG:  remark: linear layer 'other' [2, 32] runs in f32 (--keep-fp32)
// REMARKS-DAG:  remark: linear layer 'blk.0.ffn_up.weight' [2, 32] runs in Q8_0 (the file's blocks: 1.062 bytes per weight, the file's 1.062)
func.func @keeps_q8_0_by_name(%x: tensor<?x32xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  %k = arith.constant {tfm.q8_0_blocks = dense<[0, 56, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 0, 64, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16, -17, -18, -19, -20, -21, -22, -23, -24, -25, -26, -27, -28, -29, -30, -31, -32]> : tensor<68xi8>} dense<[[0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5, 14.0, 14.5, 15.0, 15.5, 16.0], [-2.0, -4.0, -6.0, -8.0, -10.0, -12.0, -14.0, -16.0, -18.0, -20.0, -22.0, -24.0, -26.0, -28.0, -30.0, -32.0, -34.0, -36.0, -38.0, -40.0, -42.0, -44.0, -46.0, -48.0, -50.0, -52.0, -54.0, -56.0, -58.0, -60.0, -62.0, -64.0]]> : tensor<2x32xf32> loc("other")
  %q = arith.constant {tfm.q8_0_blocks = dense<[0, 56, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 0, 64, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16, -17, -18, -19, -20, -21, -22, -23, -24, -25, -26, -27, -28, -29, -30, -31, -32]> : tensor<68xi8>} dense<[[0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5, 14.0, 14.5, 15.0, 15.5, 16.0], [-2.0, -4.0, -6.0, -8.0, -10.0, -12.0, -14.0, -16.0, -18.0, -20.0, -22.0, -24.0, -26.0, -28.0, -30.0, -32.0, -34.0, -36.0, -38.0, -40.0, -42.0, -44.0, -46.0, -48.0, -50.0, -52.0, -54.0, -56.0, -58.0, -60.0, -62.0, -64.0]]> : tensor<2x32xf32> loc("blk.0.ffn_up.weight")
  %a = tfm.linear %x, %k : tensor<?x32xf32>, tensor<2x32xf32> -> tensor<?x2xf32>
  %b = tfm.linear %x, %q : tensor<?x32xf32>, tensor<2x32xf32> -> tensor<?x2xf32>
  return %a, %b : tensor<?x2xf32>, tensor<?x2xf32>
}

// -----

// Q4_0 blocks (tfm.q4_0_blocks) are packed as they are too, two k per byte:
// a lane of 4 bytes holds 8 k of a column, byte b the 4-bit u of k = 8 r + b
// (low nibble) and 8 r + 4 + b (high), so the low nibbles are one quad of
// k and the high ones the next: [panels, K / 8, 4 nr]. Column 0 has
// u = 0..15, 0..15 (bytes 0x40 = 64, 0x51 = 81, ... in its first lane),
// column 1 u = 15..0, 15..0 (0xBF = -65, ...); padding columns hold 0x88
// (-120: u = 8, zero). The scales
// are as for Q8_0.

// CHECK-LABEL: func.func @packs_q4_0_blocks(
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<{{\[\[\[}}64, 81, 98, 115, -65, -82, -99, -116, -120, -120, -120, -120, -120, -120, -120, -120], [-56, -39, -22, -5, 55, 38, 21, 4, -120, -120, -120, -120, -120, -120, -120, -120], [64, 81, 98, 115, -65, -82, -99, -116, -120, -120, -120, -120, -120, -120, -120, -120], [-56, -39, -22, -5, 55, 38, 21, 4, -120, -120, -120, -120, -120, -120, -120, -120]]]> : tensor<1x4x16xi8>
// CHECK-DAG:     %[[S:.*]] = arith.constant dense<{{\[\[}}5.000000e-01, 2.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<1x4xf16>
// CHECK-NOT:     tfm.q4_0_blocks
// CHECK:         tfm.packed_linear ins(%{{.*}}, %[[W]] : tensor<?x32xf32>, tensor<1x4x16xi8>) dequant(%[[S]] : tensor<1x4xf16>) outs(%{{.*}} : tensor<?x2xf32>) activation none
// CHECK-NOT:     tfm.q4_0_blocks
// CHECK:         return
func.func @packs_q4_0_blocks(%x: tensor<?x32xf32>) -> tensor<?x2xf32> {
  %w = arith.constant {tfm.q4_0_blocks = dense<[0, 56, 0, 17, 34, 51, 68, 85, 102, 119, -120, -103, -86, -69, -52, -35, -18, -1, 0, 64, -1, -18, -35, -52, -69, -86, -103, -120, 119, 102, 85, 68, 51, 34, 17, 0]> : tensor<36xi8>} dense<[[-4.0, -3.5, -3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, -4.0, -3.5, -3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5], [14.0, 12.0, 10.0, 8.0, 6.0, 4.0, 2.0, 0.0, -2.0, -4.0, -6.0, -8.0, -10.0, -12.0, -14.0, -16.0, 14.0, 12.0, 10.0, 8.0, 6.0, 4.0, 2.0, 0.0, -2.0, -4.0, -6.0, -8.0, -10.0, -12.0, -14.0, -16.0]]> : tensor<2x32xf32> loc("blk.0.attn_k.weight")
  %y = tfm.linear %x, %w : tensor<?x32xf32>, tensor<2x32xf32> -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Q5_0 blocks (tfm.q5_0_blocks: d, 4 bytes of fifth bits qh, 16 of
// nibbles) keep 5 bits a value: per 32 k, 4 packed rows of low nibbles as
// Q4_0's, then a bit plane row whose lane of a column holds in bit 8 b + t
// the fifth bit of the value in byte b of nibble row t / 2 (low nibble for
// even t). Here u = k (qs[j] = j | j << 4, qh = 0xFFFF0000): nibble rows 0
// and 2 hold k & 15 = 0..3 | 4..7 << 4 (64, 81, 98, 115), rows 1 and 3
// 8..11 | 12..15 << 4 (-56 = 0xC8, ...), and the plane's bytes have bits t
// = 4..7 set (values 16..31 are nibble rows 2 and 3): 0xF0 = -16. The f16
// scale stays f16; padding columns are zeros.

// CHECK-LABEL: func.func @packs_q5_0_blocks(
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<{{\[\[\[}}64, 81, 98, 115, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [-56, -39, -22, -5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [64, 81, 98, 115, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [-56, -39, -22, -5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [-16, -16, -16, -16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]]> : tensor<1x5x16xi8>
// CHECK-DAG:     %[[S:.*]] = arith.constant dense<{{\[\[}}5.000000e-01, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<1x4xf16>
// CHECK-NOT:     tfm.q5_0_blocks
// CHECK:         tfm.packed_linear ins(%{{.*}}, %[[W]] : tensor<?x32xf32>, tensor<1x5x16xi8>) dequant(%[[S]] : tensor<1x4xf16>) outs(%{{.*}} : tensor<?x1xf32>) activation none
func.func @packs_q5_0_blocks(%x: tensor<?x32xf32>) -> tensor<?x1xf32> {
  %w = arith.constant {tfm.q5_0_blocks = dense<[0, 56, 0, 0, -1, -1, 0, 17, 34, 51, 68, 85, 102, 119, -120, -103, -86, -69, -52, -35, -18, -1]> : tensor<22xi8>} dense<[[-8.0, -7.5, -7.0, -6.5, -6.0, -5.5, -5.0, -4.5, -4.0, -3.5, -3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5]]> : tensor<1x32xf32> loc("blk.0.attn_v.weight")
  %y = tfm.linear %x, %w : tensor<?x32xf32>, tensor<1x32xf32> -> tensor<?x1xf32>
  return %y : tensor<?x1xf32>
}

// -----

// Q4_K blocks keep their scales as the file does: the 6-bit sub-block
// scales (1, 2, 3, 4, then 1, 3, 5, 7 from the high nibbles and top bits)
// and mins (5, 6, 7, 8, 2, 4, 6, 8) a byte each, [K / 32, padded N], and
// the super-block's f16 d (1.0) and -dmin (-0.5) in super_scales
// [2, K / 256, padded N].

// CHECK-LABEL: func.func @packs_q4_k_blocks(
// CHECK-DAG:     %[[S:.*]] = arith.constant dense<{{\[\[}}1, 0, 0, 0], [2, 0, 0, 0], [3, 0, 0, 0], [4, 0, 0, 0], [1, 0, 0, 0], [3, 0, 0, 0], [5, 0, 0, 0], [7, 0, 0, 0]]> : tensor<8x4xi8>
// CHECK-DAG:     %[[M:.*]] = arith.constant dense<{{\[\[}}5, 0, 0, 0], [6, 0, 0, 0], [7, 0, 0, 0], [8, 0, 0, 0], [2, 0, 0, 0], [4, 0, 0, 0], [6, 0, 0, 0], [8, 0, 0, 0]]> : tensor<8x4xi8>
// CHECK-DAG:     %[[D:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]], {{\[\[}}-5.000000e-01, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<2x1x4xf16>
// CHECK:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x256xf32>, tensor<1x32x16xi8>) dequant(%[[S]] : tensor<8x4xi8>) offsets(%[[M]] : tensor<8x4xi8>) super_scales(%[[D]] : tensor<2x1x4xf16>) outs(%{{.*}} : tensor<?x1xf32>) activation none
func.func @packs_q4_k_blocks(%x: tensor<?x256xf32>) -> tensor<?x1xf32> {
  %w = arith.constant {tfm.q4_k_blocks = dense<[0, 60, 0, 56, 1, 2, 3, 4, 5, 6, 7, 8, 33, 67, 101, -121, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]> : tensor<144xi8>} dense<0.5> : tensor<1x256xf32> loc("blk.0.attn_q.weight")
  %y = tfm.linear %x, %w : tensor<?x256xf32>, tensor<1x256xf32> -> tensor<?x1xf32>
  return %y : tensor<?x1xf32>
}

// -----

// A table of GGUF blocks that is both the token embedding and the LM head
// (tied) is stored once, in the head's block panels: the embedding gathers
// its rows from the head's i8 panels and f16 block scales (row r = the
// head's column r), and no other copy of the table is left, neither f32
// values nor a second i8 one.

// CHECK-LABEL: func.func @tied_q8_0_embedding(
// CHECK-SAME:    %[[IDS:.*]]: tensor<?xi64>
// CHECK-NOT:     tensor<2x32xf32>
// CHECK:         %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<1x8x16xi8>
// CHECK-NEXT:    %[[S:.*]] = arith.constant dense<{{\[\[}}5.000000e-01, 2.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<1x4xf16>
// CHECK-NOT:     tensor<2x32xf32>
// CHECK-NOT:     arith.constant dense<{{.*}}xi8>
// CHECK:         %[[E:.*]] = tfm.embedding %[[IDS]], %[[W]] scales(%[[S]] : tensor<1x4xf16>) {packed_rows = 2 : i64} : tensor<?xi64>, tensor<1x8x16xi8> -> tensor<?x32xf32>
// CHECK-NOT:     arith.constant dense<{{.*}}xi8>
// CHECK:         tfm.packed_linear ins(%[[E]], %[[W]] : tensor<?x32xf32>, tensor<1x8x16xi8>) dequant(%[[S]] : tensor<1x4xf16>)
// CHECK-NOT:     tensor<2x32xf32>
// CHECK:         return
func.func @tied_q8_0_embedding(%ids: tensor<?xi64>) -> tensor<?x2xf32> {
  %w = arith.constant {tfm.q8_0_blocks = dense<[0, 56, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 0, 64, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16, -17, -18, -19, -20, -21, -22, -23, -24, -25, -26, -27, -28, -29, -30, -31, -32]> : tensor<68xi8>} dense<0.5> : tensor<2x32xf32> loc("token_embd.weight")
  %e = tfm.embedding %ids, %w : tensor<?xi64>, tensor<2x32xf32> -> tensor<?x32xf32>
  %y = tfm.linear %e, %w : tensor<?x32xf32>, tensor<2x32xf32> -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Untied, the embedding's blocks take the same encoding in panels of one
// row ([rows, K / 8, 4] for Q4_0: a row's 16 bytes contiguous, nibbles of
// k = 8r + b and 8r + 4 + b in byte b of lane row r), with the f16 scales
// [K / 32, rows]: 0.5625 bytes per weight, as in the file.

// CHECK-LABEL: func.func @q4_0_embedding(
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<{{\[\[\[}}64, 81, 98, 115], [-56, -39, -22, -5], [64, 81, 98, 115], [-56, -39, -22, -5]]]> : tensor<1x4x4xi8>
// CHECK-DAG:     %[[S:.*]] = arith.constant dense<5.000000e-01> : tensor<1x1xf16>
// CHECK-NOT:     tensor<1x32xf32>
// CHECK:         tfm.embedding %{{.*}}, %[[W]] scales(%[[S]] : tensor<1x1xf16>) {packed_rows = 1 : i64} : tensor<?xi64>, tensor<1x4x4xi8> -> tensor<?x32xf32>
// CHECK:         return
func.func @q4_0_embedding(%ids: tensor<?xi64>) -> tensor<?x32xf32> {
  %w = arith.constant {tfm.q4_0_blocks = dense<[0, 56, 0, 17, 34, 51, 68, 85, 102, 119, -120, -103, -86, -69, -52, -35, -18, -1]> : tensor<18xi8>} dense<0.5> : tensor<1x32xf32> loc("token_embd.weight")
  %e = tfm.embedding %ids, %w : tensor<?xi64>, tensor<1x32xf32> -> tensor<?x32xf32>
  return %e : tensor<?x32xf32>
}
