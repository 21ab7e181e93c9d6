// Input of tfm-bind-weights.mlir, bound to tests/reference/gguf/types.gguf:
//   "t.<TYPE>" [3, 512] in every ggml type the compiler converts (see
//   tests/reference/gguf/generate.py).

func.func @bind_quantized() -> (tensor<3x512xf32>, tensor<3x512xf32>, tensor<3x512xf32>) {
  %q8 = tfm.weight "t.Q8_0" : tensor<3x512xf32>
  %q4k = tfm.weight "t.Q4_K" : tensor<3x512xf32>
  %f32 = tfm.weight "t.F32" : tensor<3x512xf32>
  return %q8, %q4k, %f32 : tensor<3x512xf32>, tensor<3x512xf32>, tensor<3x512xf32>
}

// -----

func.func @quantized_to_f64_is_a_mismatch() -> tensor<3x512xf64> {
  // expected-error-re @+1 {{weight 't.Q8_0' is Q8_0 in {{.*}}types.gguf but the model expects 'f64'}}
  %w = tfm.weight "t.Q8_0" : tensor<3x512xf64>
  return %w : tensor<3x512xf64>
}

// -----

func.func @gguf_shapes_are_outermost_first() -> tensor<512x3xf32> {
  // expected-error-re @+1 {{weight 't.Q4_0' is [3, 512] in {{.*}}types.gguf but the model expects [512, 3]}}
  %w = tfm.weight "t.Q4_0" : tensor<512x3xf32>
  return %w : tensor<512x3xf32>
}
