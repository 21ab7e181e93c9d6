// Input of tfm-bind-weights.mlir, bound to Inputs/half.safetensors:
//   "h" F16 [6], "b" BF16 [3] (see make_weights.py).

func.func @bind_half_precision() -> (tensor<6xf32>, tensor<3xf32>) {
  %h = tfm.weight "h" : tensor<6xf32>
  %b = tfm.weight "b" : tensor<3xf32>
  return %h, %b : tensor<6xf32>, tensor<3xf32>
}

// -----

func.func @half_to_f64_is_a_mismatch() -> tensor<6xf64> {
  // expected-error-re @+1 {{weight 'h' is F16 in {{.*}}half.safetensors but the model expects 'f64'}}
  %h = tfm.weight "h" : tensor<6xf64>
  return %h : tensor<6xf64>
}
