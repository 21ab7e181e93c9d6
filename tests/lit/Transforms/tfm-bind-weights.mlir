// RUN: tfm-opt %s -split-input-file -verify-diagnostics \
// RUN:   -tfm-bind-weights=weights=%S/Inputs/weights.safetensors | FileCheck %s
// No tfm.weight survives anywhere in the functions that bind:
// RUN: tfm-opt %s -split-input-file -verify-diagnostics \
// RUN:   -tfm-bind-weights=weights=%S/Inputs/weights.safetensors \
// RUN:   | FileCheck %s --check-prefix=NONE --implicit-check-not=tfm.weight
//
// Errors about the file itself are reported at the module, before any op:
// RUN: not tfm-opt %s -tfm-bind-weights 2>&1 | FileCheck %s --check-prefix=NO-FILE
// RUN: not tfm-opt %s -tfm-bind-weights=weights=%S/Inputs/does-not-exist.safetensors 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING-FILE
// RUN: not tfm-opt %s -tfm-bind-weights=weights=%S/Inputs/truncated.safetensors 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRUNCATED
// RUN: not tfm-opt %s -tfm-bind-weights=weights=%S/Inputs/garbage.safetensors 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GARBAGE
//
// A half-precision checkpoint (Inputs/half.safetensors) binds to f32 weights,
// widened exactly, subnormals and infinities included; only to f32:
// RUN: tfm-opt %S/Inputs/bind-half.mlir -split-input-file -verify-diagnostics \
// RUN:   -tfm-bind-weights=weights=%S/Inputs/half.safetensors | FileCheck %s --check-prefix=HALF
//
// A GGUF file (recognized by its magic) binds too: quantized blocks become
// their f32 values (stored data, dequantized, in resource blobs), F32 data
// stays over the mapped file; a truncated GGUF is an error at the module:
// RUN: tfm-opt %S/Inputs/bind-gguf.mlir -split-input-file -verify-diagnostics \
// RUN:   -tfm-bind-weights=weights=%S/../../reference/gguf/types.gguf | FileCheck %s --check-prefix=GGUF
// RUN: not tfm-opt %s -tfm-bind-weights=weights=%S/Inputs/truncated.gguf 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GGUF-TRUNCATED
//
// Inputs/weights.safetensors comes from Inputs/make_weights.py:
//   "linear.weight" F32 [2, 3] = 1 .. 6, "linear.bias" F32 [2] = 0.5, -0.5,
//   "table" F64 [3, 2] = 0, 0.25 .. 1.25, "ids" I64 [2] = 2, 0.

// NONE: func.func @bind_all_dtypes

// HALF-LABEL: func.func @bind_half_precision
// HALF-DAG: arith.constant dense<[1.500000e+00, -2.000000e+00, 6.550400e+04, 5.96046448E-8, 3.05175781E-5, 0xFF800000]> : tensor<6xf32>
// HALF-DAG: arith.constant dense<[1.500000e+00, -3.000000e+00, 7.346840e-40]> : tensor<3xf32>

// A Q8_0 (or Q4_K, ...) matrix keeps its blocks beside its f32 values (3
// rows of 16 blocks of 34 bytes, the first all zeros; 3 rows of 2 blocks of
// 144), for tfm-pack-linear; f32 is f32 alone.
// GGUF-LABEL: func.func @bind_quantized
// GGUF-DAG: arith.constant {tfm.q8_0_blocks = dense<"0x0000000000000000000000000000000000000000000000000000000000000000000063235D17{{[0-9A-F]*}}"> : tensor<1632xi8>} dense_resource<t.Q8_0> : tensor<3x512xf32>
// GGUF-DAG: arith.constant {tfm.q4_k_blocks = dense<"0x{{[0-9A-F]*}}"> : tensor<864xi8>} dense_resource<t.Q4_K> : tensor<3x512xf32>
// GGUF-DAG: arith.constant dense_resource<t.F32> : tensor<3x512xf32>
// GGUF-TRUNCATED: error: {{.*}}truncated.gguf: the header claims 15 key/values, more than the file can hold

// NO-FILE: error: weight 'linear.weight' needs a weights file (--weights)
// MISSING-FILE: error: {{.*}}does-not-exist.safetensors: cannot open: No such file or directory
// TRUNCATED: error: {{.*}}truncated.safetensors: tensor 'ids': data_offsets [80, 96) end past the data section (84 bytes)
// GARBAGE: error: {{.*}}garbage.safetensors: header size {{[0-9]+}} is larger than the rest of the file (23 bytes)

// Every dtype the pass knows (F32, F64, I64) binds to an arith.constant with
// the file's data; no tfm.weight is left.

// CHECK-LABEL: func.func @bind_all_dtypes
// CHECK-DAG:  %[[W:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-DAG:  %[[B:.*]] = arith.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
// CHECK-DAG:  %[[T:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, 2.500000e-01], [5.000000e-01, 7.500000e-01], [1.000000e+00, 1.250000e+00]]> : tensor<3x2xf64>
// CHECK-DAG:  %[[I:.*]] = arith.constant dense<[2, 0]> : tensor<2xi64>
// CHECK:      return %[[W]], %[[B]], %[[T]], %[[I]]
func.func @bind_all_dtypes() -> (tensor<2x3xf32>, tensor<2xf32>, tensor<3x2xf64>, tensor<2xi64>) {
  %w = tfm.weight "linear.weight" : tensor<2x3xf32>
  %b = tfm.weight "linear.bias" : tensor<2xf32>
  %t = tfm.weight "table" : tensor<3x2xf64>
  %i = tfm.weight "ids" : tensor<2xi64>
  return %w, %b, %t, %i : tensor<2x3xf32>, tensor<2xf32>, tensor<3x2xf64>, tensor<2xi64>
}

// -----

// Uses of the weight now use the constant.

// CHECK-LABEL: func.func @bind_used_by_linear
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>)
// CHECK-DAG:  %[[W:.*]] = arith.constant {{.*}} : tensor<2x3xf32>
// CHECK-DAG:  %[[B:.*]] = arith.constant {{.*}} : tensor<2xf32>
// CHECK:      %[[Y:.*]] = tfm.linear %[[X]], %[[W]], %[[B]]
// CHECK:      return %[[Y]]
func.func @bind_used_by_linear(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %w = tfm.weight "linear.weight" : tensor<2x3xf32>
  %b = tfm.weight "linear.bias" : tensor<2xf32>
  %y = tfm.linear %x, %w, %b : tensor<?x3xf32>, tensor<2x3xf32>, tensor<2xf32> -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

func.func @missing_weight() -> tensor<2xf32> {
  // expected-error @+1 {{weight 'decoder.bias' is not in}}
  %b = tfm.weight "decoder.bias" : tensor<2xf32>
  return %b : tensor<2xf32>
}

// -----

func.func @shape_mismatch() -> tensor<3x2xf32> {
  // expected-error-re @+1 {{weight 'linear.weight' is [2, 3] in {{.*}}weights.safetensors but the model expects [3, 2]}}
  %w = tfm.weight "linear.weight" : tensor<3x2xf32>
  return %w : tensor<3x2xf32>
}

// -----

func.func @rank_mismatch() -> tensor<1x2xf32> {
  // expected-error @+1 {{weight 'linear.bias' is [2] in}}
  %b = tfm.weight "linear.bias" : tensor<1x2xf32>
  return %b : tensor<1x2xf32>
}

// -----

func.func @dtype_mismatch() -> tensor<3x2xf32> {
  // expected-error-re @+1 {{weight 'table' is F64 in {{.*}}weights.safetensors but the model expects 'f32'}}
  %t = tfm.weight "table" : tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

func.func @integer_width_mismatch() -> tensor<2xi32> {
  // expected-error @+1 {{weight 'ids' is I64 in}}
  %i = tfm.weight "ids" : tensor<2xi32>
  return %i : tensor<2xi32>
}

// -----

// Every failing weight is reported, not only the first.
func.func @several_errors() -> (tensor<2xf32>, tensor<2xf32>) {
  // expected-error @+1 {{weight 'a' is not in}}
  %a = tfm.weight "a" : tensor<2xf32>
  // expected-error @+1 {{weight 'b' is not in}}
  %b = tfm.weight "b" : tensor<2xf32>
  return %a, %b : tensor<2xf32>, tensor<2xf32>
}

// -----

// A module without tfm.weight needs no file and is left as it is.

// CHECK-LABEL: func.func @no_weights
// CHECK-NEXT: return %arg0
func.func @no_weights(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

