// RUN: tfm-opt %s -split-input-file -verify-diagnostics

// What the ops refuse among the element types: bf16, f16 and i8 are element
// types like the others, so the rules are the same for them (one element
// type per op, floats where an op computes in floats).

// i8 is an integer type: no division, exp or softmax on it.
func.func @div_i8(%a: tensor<3xi8>) -> tensor<3xi8> {
  // expected-error @+1 {{'tfm.div' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<3xi8>'}}
  %0 = tfm.div %a, %a : tensor<3xi8>, tensor<3xi8> -> tensor<3xi8>
  return %0 : tensor<3xi8>
}

// -----

// bf16 and f16 do not mix.
func.func @add_mixed(%a: tensor<3xbf16>, %b: tensor<3xf16>) -> tensor<3xbf16> {
  // expected-error @+1 {{'tfm.add' op operand #1 has element type 'f16' but the result has 'bf16'}}
  %0 = tfm.add %a, %b : tensor<3xbf16>, tensor<3xf16> -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// -----

// A layer's weights have its input's type: the frontend widens a bf16
// input to meet f32 weights, the dialect does not mix them.
func.func @linear_mixed(%x: tensor<?x4xbf16>, %w: tensor<3x4xf32>) -> tensor<?x3xbf16> {
  // expected-error @+1 {{'tfm.linear' op operand #1 has element type 'f32' but the result has 'bf16'}}
  %0 = tfm.linear %x, %w : tensor<?x4xbf16>, tensor<3x4xf32> -> tensor<?x3xbf16>
  return %0 : tensor<?x3xbf16>
}

// -----

func.func @mean_i8(%q: tensor<3xi8>) -> tensor<i8> {
  // expected-error @+1 {{'tfm.reduce' op mean needs a float input, got 'i8'}}
  %0 = tfm.reduce mean %q dims [0] : tensor<3xi8> -> tensor<i8>
  return %0 : tensor<i8>
}

// -----

func.func @exp_i8(%q: tensor<3xi8>) -> tensor<3xi8> {
  // expected-error @+1 {{'tfm.exp' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<3xi8>'}}
  %0 = tfm.exp %q : tensor<3xi8>
  return %0 : tensor<3xi8>
}

// -----

// i16 is no element type of a model.
func.func @cast_u16(%q: tensor<3xi16>) -> tensor<3xbf16> {
  // expected-error @+1 {{'tfm.cast' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 8-bit signless integer or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<3xi16>'}}
  %0 = tfm.cast %q : tensor<3xi16> -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// -----

// concat's inputs share one type, integers too.
func.func @concat_mixed(%a: tensor<2xi8>, %b: tensor<2xi32>) -> tensor<4xi8> {
  // expected-error @+1 {{'tfm.concat' op operand #1 has element type 'i32' but the result has 'i8'}}
  %0 = tfm.concat %a, %b dim 0 : (tensor<2xi8>, tensor<2xi32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// A float mask has the scores' type.
func.func @sdpa_mask(%q: tensor<5x8xbf16>, %m: tensor<5x5xf32>) -> tensor<5x8xbf16> {
  // expected-error @+1 {{'tfm.sdpa' op mask must be i1 or 'bf16', got 'f32'}}
  %0 = tfm.sdpa %q, %q, %q mask(%m : tensor<5x5xf32>) : tensor<5x8xbf16>, tensor<5x8xbf16>, tensor<5x8xbf16> -> tensor<5x8xbf16>
  return %0 : tensor<5x8xbf16>
}

// -----

func.func @softmax_i8(%q: tensor<3xi8>) -> tensor<3xi8> {
  // expected-error @+1 {{'tfm.softmax' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<3xi8>'}}
  %0 = tfm.softmax %q, 0 : tensor<3xi8>
  return %0 : tensor<3xi8>
}
