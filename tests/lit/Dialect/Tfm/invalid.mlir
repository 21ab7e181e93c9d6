// RUN: tfm-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of TfmOps.cpp (and the ODS constraints that
// matter to users), in the order of the ops in TfmOps.td.

func.func @weight_empty_name() -> tensor<2xf32> {
  // expected-error @+1 {{'tfm.weight' op needs a non-empty weight name}}
  %w = tfm.weight "" : tensor<2xf32>
  return %w : tensor<2xf32>
}

// -----

func.func @matmul_rank(%a: tensor<4xf32>, %b: tensor<4x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'tfm.matmul' op expects lhs and rhs of rank 2 or more, got lhs [4] and rhs [4, 2]}}
  %0 = tfm.matmul %a, %b : tensor<4xf32>, tensor<4x2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @matmul_contraction(%a: tensor<?x3xf32>, %b: tensor<4x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.matmul' op lhs [?, 3] and rhs [4, 2] do not agree on the contracted dimension (3 vs 4)}}
  %0 = tfm.matmul %a, %b : tensor<?x3xf32>, tensor<4x2xf32> -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @matmul_batch_broadcast(%a: tensor<2x5x3xf32>, %b: tensor<4x3x2xf32>) -> tensor<2x5x2xf32> {
  // expected-error @+1 {{'tfm.matmul' op batch dimensions of lhs [2, 5, 3] and rhs [4, 3, 2] do not broadcast}}
  %0 = tfm.matmul %a, %b : tensor<2x5x3xf32>, tensor<4x3x2xf32> -> tensor<2x5x2xf32>
  return %0 : tensor<2x5x2xf32>
}

// -----

func.func @matmul_result_shape(%a: tensor<5x3xf32>, %b: tensor<3x2xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'tfm.matmul' op result shape [5, 3] does not match the inferred shape [5, 2]}}
  %0 = tfm.matmul %a, %b : tensor<5x3xf32>, tensor<3x2xf32> -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @matmul_result_rank(%a: tensor<2x5x3xf32>, %b: tensor<3x2xf32>) -> tensor<5x2xf32> {
  // expected-error @+1 {{'tfm.matmul' op result shape [5, 2] does not match the inferred shape [2, 5, 2]}}
  %0 = tfm.matmul %a, %b : tensor<2x5x3xf32>, tensor<3x2xf32> -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}

// -----

func.func @matmul_element_type(%a: tensor<5x3xf32>, %b: tensor<3x2xf64>) -> tensor<5x2xf32> {
  // expected-error @+1 {{'tfm.matmul' op operand #1 has element type 'f64' but the result has 'f32'}}
  %0 = tfm.matmul %a, %b : tensor<5x3xf32>, tensor<3x2xf64> -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}

// -----

func.func @matmul_integer(%a: tensor<5x3xi32>, %b: tensor<3x2xi32>) -> tensor<5x2xi32> {
  // expected-error @+1 {{'tfm.matmul' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values}}
  %0 = tfm.matmul %a, %b : tensor<5x3xi32>, tensor<3x2xi32> -> tensor<5x2xi32>
  return %0 : tensor<5x2xi32>
}

// -----

func.func @transpose_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'tfm.transpose' op dimensions (0, 2) out of range for input [2, 3]}}
  %0 = tfm.transpose %x, 0, 2 : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_element_type(%x: tensor<2x3xf32>) -> tensor<3x2xf64> {
  // expected-error @+1 {{'tfm.transpose' op result element type differs from the input's}}
  %0 = tfm.transpose %x, 0, 1 : tensor<2x3xf32> -> tensor<3x2xf64>
  return %0 : tensor<3x2xf64>
}

// -----

func.func @transpose_result_shape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'tfm.transpose' op result shape [2, 3] does not match the inferred shape [3, 2]}}
  %0 = tfm.transpose %x, 0, 1 : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @scale_divide_by_zero(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'tfm.scale' op divides by zero}}
  %0 = tfm.scale %x, 0.0 {divide} : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @scale_not_finite(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'tfm.scale' op factor must be finite}}
  %0 = tfm.scale %x, 0x7FF0000000000000 : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @scale_nan(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'tfm.scale' op factor must be finite}}
  %0 = tfm.scale %x, 0x7FF8000000000000 {divide} : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @softmax_dim_range(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'tfm.softmax' op dimension 2 out of range for input [2, 3]}}
  %0 = tfm.softmax %x, 2 : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'tfm.add' op operand shapes [2, 3] [4, 3] do not broadcast}}
  %0 = tfm.add %a, %b : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @add_result_shape(%a: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'tfm.add' op result shape [3] does not match the inferred shape [?, 3]}}
  %0 = tfm.add %a, %b : tensor<?x3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @add_element_type(%a: tensor<3xf32>, %b: tensor<3xf64>) -> tensor<3xf32> {
  // expected-error @+1 {{'tfm.add' op operand #1 has element type 'f64' but the result has 'f32'}}
  %0 = tfm.add %a, %b : tensor<3xf32>, tensor<3xf64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @concat_no_inputs() -> tensor<0xf32> {
  // expected-error @+1 {{'tfm.concat' op needs at least one input}}
  %0 = tfm.concat dim 0 : () -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

func.func @concat_dim_range(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'tfm.concat' op dimension 2 out of range for rank 2}}
  %0 = tfm.concat %a, %a dim 2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @concat_result_rank(%a: tensor<2x3xf32>) -> tensor<2x6x1xf32> {
  // expected-error @+1 {{'tfm.concat' op input #0 has rank 2 but the result has rank 3}}
  %0 = tfm.concat %a, %a dim 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6x1xf32>
  return %0 : tensor<2x6x1xf32>
}

// -----

func.func @concat_input_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'tfm.concat' op input #1 has rank 1 but input #0 has 2}}
  %0 = tfm.concat %a, %b dim 1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_other_dim(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'tfm.concat' op input #1 [4, 3] disagrees with input #0 in dimension 0}}
  %0 = tfm.concat %a, %b dim 1 : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_result_shape(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'tfm.concat' op result shape [2, 6] does not match the inferred shape [2, 7]}}
  %0 = tfm.concat %a, %b dim -1 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_element_type(%a: tensor<2x3xf32>, %b: tensor<2x3xf64>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'tfm.concat' op operand #1 has element type 'f64' but the result has 'f32'}}
  %0 = tfm.concat %a, %b dim 1 : (tensor<2x3xf32>, tensor<2x3xf64>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @linear_input_rank(%x: tensor<f32>, %w: tensor<4x1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tfm.linear' op input must have rank 1 or more}}
  %0 = tfm.linear %x, %w : tensor<f32>, tensor<4x1xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @linear_weight_rank(%x: tensor<?x16xf32>, %w: tensor<16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'tfm.linear' op weight must be [out, in], got [16]}}
  %0 = tfm.linear %x, %w : tensor<?x16xf32>, tensor<16xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @linear_features(%x: tensor<?x16xf32>, %w: tensor<16x24xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'tfm.linear' op input [?, 16] has 16 features but weight [16, 24] expects 24}}
  %0 = tfm.linear %x, %w : tensor<?x16xf32>, tensor<16x24xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @linear_bias_size(%x: tensor<?x16xf32>, %w: tensor<24x16xf32>, %b: tensor<16xf32>) -> tensor<?x24xf32> {
  // expected-error @+1 {{'tfm.linear' op bias [16] must be [24] to match weight [24, 16]}}
  %0 = tfm.linear %x, %w, %b : tensor<?x16xf32>, tensor<24x16xf32>, tensor<16xf32> -> tensor<?x24xf32>
  return %0 : tensor<?x24xf32>
}

// -----

func.func @linear_bias_rank(%x: tensor<?x16xf32>, %w: tensor<24x16xf32>, %b: tensor<1x24xf32>) -> tensor<?x24xf32> {
  // expected-error @+1 {{'tfm.linear' op bias [1, 24] must be [24] to match weight [24, 16]}}
  %0 = tfm.linear %x, %w, %b : tensor<?x16xf32>, tensor<24x16xf32>, tensor<1x24xf32> -> tensor<?x24xf32>
  return %0 : tensor<?x24xf32>
}

// -----

func.func @linear_result_shape(%x: tensor<?x16xf32>, %w: tensor<24x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'tfm.linear' op result shape [?, 16] does not match the inferred shape [?, 24]}}
  %0 = tfm.linear %x, %w : tensor<?x16xf32>, tensor<24x16xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @linear_element_type(%x: tensor<?x16xf64>, %w: tensor<24x16xf32>) -> tensor<?x24xf32> {
  // expected-error @+1 {{'tfm.linear' op operand #0 has element type 'f64' but the result has 'f32'}}
  %0 = tfm.linear %x, %w : tensor<?x16xf64>, tensor<24x16xf32> -> tensor<?x24xf32>
  return %0 : tensor<?x24xf32>
}

// -----

func.func @embedding_weight_rank(%ids: tensor<?xi64>, %w: tensor<6xf32>) -> tensor<?x6xf32> {
  // expected-error @+1 {{'tfm.embedding' op weight must be [num_embeddings, dim], got [6]}}
  %0 = tfm.embedding %ids, %w : tensor<?xi64>, tensor<6xf32> -> tensor<?x6xf32>
  return %0 : tensor<?x6xf32>
}

// -----

func.func @embedding_packed_rank(%ids: tensor<?xi64>, %w: tensor<6x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'tfm.embedding' op packed weight must be static [panels, dim, width], got [6, 16]}}
  %0 = tfm.embedding %ids, %w {packed_rows = 6 : i64} : tensor<?xi64>, tensor<6x16xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @embedding_packed_panels(%ids: tensor<?xi64>, %w: tensor<3x16x4xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'tfm.embedding' op packed weight [3, 16, 4] does not hold exactly the panels of 6 rows}}
  %0 = tfm.embedding %ids, %w {packed_rows = 6 : i64} : tensor<?xi64>, tensor<3x16x4xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @embedding_packed_rows_positive(%ids: tensor<?xi64>, %w: tensor<2x16x4xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'tfm.embedding' op attribute 'packed_rows' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = tfm.embedding %ids, %w {packed_rows = 0 : i64} : tensor<?xi64>, tensor<2x16x4xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @embedding_result_shape(%ids: tensor<?xi64>, %w: tensor<6x16xf32>) -> tensor<?x6xf32> {
  // expected-error @+1 {{'tfm.embedding' op result shape [?, 6] does not match the inferred shape [?, 16]}}
  %0 = tfm.embedding %ids, %w : tensor<?xi64>, tensor<6x16xf32> -> tensor<?x6xf32>
  return %0 : tensor<?x6xf32>
}

// -----

func.func @embedding_element_type(%ids: tensor<?xi64>, %w: tensor<6x16xf64>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'tfm.embedding' op operand #1 has element type 'f64' but the result has 'f32'}}
  %0 = tfm.embedding %ids, %w : tensor<?xi64>, tensor<6x16xf64> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @embedding_float_ids(%ids: tensor<?xf32>, %w: tensor<6x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'tfm.embedding' op operand #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = tfm.embedding %ids, %w : tensor<?xf32>, tensor<6x16xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @positional_encoding_rank(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'tfm.positional_encoding' op input must be [..., seq, dim], got [16]}}
  %0 = tfm.positional_encoding %x : tensor<16xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @positional_encoding_result_shape(%x: tensor<2x?x16xf32>) -> tensor<2x?x16xf32> {
  // expected-error @+1 {{'tfm.positional_encoding' op result shape [2, ?, 16] does not match the inferred shape [?, 16]}}
  %0 = tfm.positional_encoding %x : tensor<2x?x16xf32> -> tensor<2x?x16xf32>
  return %0 : tensor<2x?x16xf32>
}

// -----

func.func @sdpa_rank(%q: tensor<?x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.sdpa' op query [?, 8], key [2, ?, 8] and value [?, 8] must have the same rank, 2 or more}}
  %0 = tfm.sdpa %q, %k, %v : tensor<?x8xf32>, tensor<2x?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @sdpa_rank_one(%q: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'tfm.sdpa' op query [8], key [8] and value [8] must have the same rank, 2 or more}}
  %0 = tfm.sdpa %q, %q, %q : tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @sdpa_batch(%q: tensor<2x?x8xf32>, %k: tensor<3x?x8xf32>, %v: tensor<3x?x8xf32>) -> tensor<2x?x8xf32> {
  // expected-error @+1 {{'tfm.sdpa' op query [2, ?, 8], key [3, ?, 8] and value [3, ?, 8] disagree in batch dimension 0}}
  %0 = tfm.sdpa %q, %k, %v : tensor<2x?x8xf32>, tensor<3x?x8xf32>, tensor<3x?x8xf32> -> tensor<2x?x8xf32>
  return %0 : tensor<2x?x8xf32>
}

// -----

func.func @sdpa_head(%q: tensor<?x8xf32>, %k: tensor<?x4xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.sdpa' op query [?, 8] and key [?, 4] disagree on the head dimension (8 vs 4)}}
  %0 = tfm.sdpa %q, %k, %v : tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @sdpa_seq(%q: tensor<5x8xf32>, %k: tensor<6x8xf32>, %v: tensor<7x8xf32>) -> tensor<5x8xf32> {
  // expected-error @+1 {{'tfm.sdpa' op key [6, 8] and value [7, 8] disagree on the key sequence length}}
  %0 = tfm.sdpa %q, %k, %v : tensor<5x8xf32>, tensor<6x8xf32>, tensor<7x8xf32> -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

func.func @sdpa_scale_not_finite(%q: tensor<5x8xf32>) -> tensor<5x8xf32> {
  // expected-error @+1 {{'tfm.sdpa' op scale must be finite}}
  %0 = tfm.sdpa %q, %q, %q {scale = 0x7FF0000000000000 : f64} : tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32> -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

func.func @sdpa_result_shape(%q: tensor<5x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x4xf32>) -> tensor<5x8xf32> {
  // expected-error @+1 {{'tfm.sdpa' op result shape [5, 8] does not match the inferred shape [5, 4]}}
  %0 = tfm.sdpa %q, %k, %v : tensor<5x8xf32>, tensor<6x8xf32>, tensor<6x4xf32> -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

func.func @sdpa_element_type(%q: tensor<5x8xf32>, %v: tensor<5x8xf64>) -> tensor<5x8xf32> {
  // expected-error @+1 {{'tfm.sdpa' op operand #2 has element type 'f64' but the result has 'f32'}}
  %0 = tfm.sdpa %q, %q, %v : tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x8xf64> -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

func.func @mha_rank(%x: tensor<1x2x?x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x2x?x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op query [1, 2, ?, 8], key [1, 2, ?, 8] and value [1, 2, ?, 8] must all be [seq, embed] or [batch, seq, embed]}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) heads 2
      : (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x2x?x8xf32>
  return %0 : tensor<1x2x?x8xf32>
}

// -----

func.func @mha_mixed_rank(%q: tensor<?x8xf32>, %kv: tensor<2x?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op query [?, 8], key [2, ?, 8] and value [2, ?, 8] must all be [seq, embed] or [batch, seq, embed]}}
  %0 = tfm.multi_head_attention (%q, %kv, %kv) weights (%w, %w, %w, %w) heads 2
      : (tensor<?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @mha_batch(%q: tensor<2x?x8xf32>, %kv: tensor<3x?x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x?x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op query, key and value disagree on the batch size}}
  %0 = tfm.multi_head_attention (%q, %kv, %kv) weights (%w, %w, %w, %w) heads 2
      : (tensor<2x?x8xf32>, tensor<3x?x8xf32>, tensor<3x?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<2x?x8xf32>
  return %0 : tensor<2x?x8xf32>
}

// -----

func.func @mha_key_value_seq(%q: tensor<5x8xf32>, %k: tensor<6x8xf32>, %v: tensor<7x8xf32>, %w: tensor<8x8xf32>) -> tensor<5x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op key [6, 8] and value [7, 8] disagree on the key sequence length}}
  %0 = tfm.multi_head_attention (%q, %k, %v) weights (%w, %w, %w, %w) heads 2
      : (tensor<5x8xf32>, tensor<6x8xf32>, tensor<7x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

func.func @mha_dynamic_embed(%x: tensor<5x?xf32>, %w: tensor<?x?xf32>) -> tensor<5x?xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op needs a static embedding dimension}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) heads 2
      : (tensor<5x?xf32>, tensor<5x?xf32>, tensor<5x?xf32>, tensor<?x?xf32>,
         tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<5x?xf32>
  return %0 : tensor<5x?xf32>
}

// -----

func.func @mha_divisibility(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op embedding dimension 8 is not divisible by 3 heads}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) heads 3
      : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @mha_zero_heads(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) heads 0
      : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @mha_q_weight(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>, %bad: tensor<8x4xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op q_weight is [8, 4] but must be [8, 8]}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%bad, %w, %w, %w) heads 2
      : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8x4xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @mha_k_weight(%q: tensor<?x8xf32>, %kv: tensor<?x6xf32>, %w: tensor<8x8xf32>, %wv: tensor<8x6xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op k_weight is [8, 8] but must be [8, 6]}}
  %0 = tfm.multi_head_attention (%q, %kv, %kv) weights (%w, %w, %wv, %w) heads 2
      : (tensor<?x8xf32>, tensor<?x6xf32>, tensor<?x6xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x6xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @mha_v_weight(%q: tensor<?x8xf32>, %v: tensor<?x6xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op v_weight is [8, 8] but must be [8, 6]}}
  %0 = tfm.multi_head_attention (%q, %q, %v) weights (%w, %w, %w, %w) heads 2
      : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x6xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @mha_out_weight(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>, %wo: tensor<4x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op out_weight is [4, 8] but must be [8, 8]}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %wo) heads 2
      : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// The custom syntax takes all four biases or none; the generic form can
// express a partial set.
func.func @mha_partial_biases(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op needs all four biases or none}}
  %0 = "tfm.multi_head_attention"(%x, %x, %x, %w, %w, %w, %w, %b, %b) <{
      num_heads = 2 : i64,
      operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}>
      : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>,
         tensor<8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @mha_bias_shape(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %bad: tensor<4xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op v_bias is [4] but must be [8]}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w)
      biases (%b, %b, %bad, %b) heads 2
      : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>,
         tensor<8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @mha_element_type(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>, %w64: tensor<8x8xf64>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op operand #6 has element type 'f64' but the result has 'f32'}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w64) heads 2
      : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf64>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @mha_result_shape(%x: tensor<5x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op result shape [4, 8] does not match the inferred shape [5, 8]}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) heads 2
      : (tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @masked_fill_mask_rank(%s: tensor<4x4xf32>, %m: tensor<2x4x4xi1>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tfm.masked_fill' op mask [2, 4, 4] has more dimensions than the input [4, 4]}}
  %0 = tfm.masked_fill %s, %m, 0.0 : tensor<4x4xf32>, tensor<2x4x4xi1> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @masked_fill_broadcast(%s: tensor<?x4xf32>, %m: tensor<3xi1>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'tfm.masked_fill' op mask [3] does not broadcast to the input [?, 4]}}
  %0 = tfm.masked_fill %s, %m, 0.0 : tensor<?x4xf32>, tensor<3xi1> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @masked_fill_result_type(%s: tensor<?x4xf32>, %m: tensor<4xi1>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'tfm.masked_fill' op result type must equal the input type}}
  %0 = tfm.masked_fill %s, %m, 0.0 : tensor<?x4xf32>, tensor<4xi1> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @masked_fill_mask_type(%s: tensor<?x4xf32>, %m: tensor<4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'tfm.masked_fill' op operand #1 must be ranked tensor of 1-bit signless integer values}}
  %0 = tfm.masked_fill %s, %m, 0.0 : tensor<?x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @causal_mask_rank(%s: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tfm.causal_mask' op input must be [..., Sq, Sk]}}
  %0 = tfm.causal_mask %s : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @attention_mixed(%q: tensor<4x8xf32>, %out: memref<4x8xf32>) {
  // expected-error @+1 {{'tfm.attention' op operands must all be ranked tensors or all memrefs}}
  tfm.attention ins(%q, %q, %q : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%out : memref<4x8xf32>) scale 1.0
  return
}

// -----

func.func @attention_tensor_no_result(%q: tensor<4x8xf32>) {
  // expected-error @+1 {{'tfm.attention' op on tensors must return one result}}
  tfm.attention ins(%q, %q, %q : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%q : tensor<4x8xf32>) scale 1.0
  return
}

// -----

func.func @attention_memref_result(%q: memref<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op on memrefs returns nothing}}
  %0 = tfm.attention ins(%q, %q, %q : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>) outs(%q : memref<4x8xf32>) scale 1.0 -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @attention_rank(%q: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'tfm.attention' op query, key, value and init must have the same rank, 2 or more}}
  %0 = tfm.attention ins(%q, %q, %q : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%q : tensor<8xf32>) scale 1.0 -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @attention_batch(%q: tensor<2x4x8xf32>, %k: tensor<3x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op query, key, value and init disagree in batch dimension 0}}
  %0 = tfm.attention ins(%q, %k, %k : tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>) outs(%q : tensor<2x4x8xf32>) scale 1.0 -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// A key or value of batch size 1 is a head shared by every query head; the
// init is the result and must not broadcast.
func.func @attention_init_broadcast(%q: tensor<2x4x8xf32>, %k: tensor<1x4x8xf32>, %o: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op query, key, value and init disagree in batch dimension 0}}
  %0 = tfm.attention ins(%q, %k, %k : tensor<2x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) outs(%o : tensor<1x4x8xf32>) scale 1.0 -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @attention_head(%q: tensor<4x8xf32>, %k: tensor<4x6xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op query [4, 8] and key [4, 6] disagree on the head dimension}}
  %0 = tfm.attention ins(%q, %k, %q : tensor<4x8xf32>, tensor<4x6xf32>, tensor<4x8xf32>) outs(%q : tensor<4x8xf32>) scale 1.0 -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @attention_key_seq(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op key [5, 8] and value [6, 8] disagree on the key sequence length}}
  %0 = tfm.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<5x8xf32>, tensor<6x8xf32>) outs(%q : tensor<4x8xf32>) scale 1.0 -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @attention_init_shape(%q: tensor<4x8xf32>, %v: tensor<4x2xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op init [4, 8] must be [..., 4, 2]}}
  %0 = tfm.attention ins(%q, %q, %v : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x2xf32>) outs(%q : tensor<4x8xf32>) scale 1.0 -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @attention_element_type(%q: tensor<4x8xf32>, %v: tensor<4x8xf64>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op key and value must have the query's element type 'f32', or bf16/f16 with an f32 query; got 'f64'}}
  %0 = tfm.attention ins(%q, %q, %v : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf64>) outs(%q : tensor<4x8xf32>) scale 1.0 -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A bf16 cache is read by f32 attention, not f32 by bf16 attention.
func.func @attention_wider_cache(%q: tensor<4x8xbf16>, %k: tensor<4x8xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'tfm.attention' op key and value must have the query's element type 'bf16', or bf16/f16 with an f32 query; got 'f32'}}
  %0 = tfm.attention ins(%q, %k, %k : tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%q : tensor<4x8xbf16>) scale 1.0 -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

func.func @attention_init_element_type(%q: tensor<4x8xf32>, %o: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'tfm.attention' op query and init must share an element type}}
  %0 = tfm.attention ins(%q, %q, %q : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%o : tensor<4x8xbf16>) scale 1.0 -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

func.func @attention_integer(%q: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{'tfm.attention' op needs a float element type}}
  %0 = tfm.attention ins(%q, %q, %q : tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>) outs(%q : tensor<4x8xi32>) scale 1.0 -> tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

func.func @attention_mask_type(%q: tensor<4x8xf32>, %m: tensor<4x4xi8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op mask must be i1 or 'f32'}}
  %0 = tfm.attention ins(%q, %q, %q : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) mask(%m : tensor<4x4xi8>) outs(%q : tensor<4x8xf32>) scale 1.0 -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @attention_mask_rank(%q: tensor<4x8xf32>, %m: tensor<2x4x4xi1>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op mask has more dimensions than the scores}}
  %0 = tfm.attention ins(%q, %q, %q : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) mask(%m : tensor<2x4x4xi1>) outs(%q : tensor<4x8xf32>) scale 1.0 -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @attention_mask_broadcast(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %m: tensor<4x4xi1>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op mask [4, 4] does not broadcast to the scores [4, 6]}}
  %0 = tfm.attention ins(%q, %k, %k : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) mask(%m : tensor<4x4xi1>) outs(%q : tensor<4x8xf32>) scale 1.0 -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @attention_scale_not_finite(%q: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op scale must be finite}}
  %0 = tfm.attention ins(%q, %q, %q : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%q : tensor<4x8xf32>) scale 0x7FF8000000000000 -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @transpose_negative_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'tfm.transpose' op dimensions (-3, -1) out of range for input [2, 3]}}
  %0 = tfm.transpose %x, -3, -1 : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @softmax_negative_dim_range(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'tfm.softmax' op dimension -3 out of range for input [2, 3]}}
  %0 = tfm.softmax %x, -3 : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @concat_negative_dim_range(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'tfm.concat' op dimension -3 out of range for rank 2}}
  %0 = tfm.concat %a, %a dim -3 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @sdpa_dynamic_head_dim_default_scale(%q: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{head dimension}}
  %0 = tfm.sdpa %q, %q, %q : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @gelu_approximate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expected ::mlir::tfm::GeluApproximation to be one of: none, tanh}}
  // expected-error @+1 {{failed to parse Tfm_GeluApproximationAttr parameter 'value'}}
  %0 = tfm.gelu %x approximate sigmoid : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @check_index_bound(%ids: tensor<4xi64>) -> i32 {
  // expected-error @+1 {{'tfm.check_index' op bound must be positive, got 0}}
  %0 = tfm.check_index %ids, bound 0, code 1 : tensor<4xi64>
  return %0 : i32
}

// -----

func.func @check_index_code(%ids: tensor<4xi64>) -> i32 {
  // expected-error @+1 {{'tfm.check_index' op code must be non-zero (0 means success)}}
  %0 = tfm.check_index %ids, bound 6, code 0 : tensor<4xi64>
  return %0 : i32
}

// -----

func.func @check_size_dim(%x: tensor<?x4xf32>) -> i32 {
  // expected-error @+1 {{'tfm.check_size' op dimension -3 out of range for input [?, 4]}}
  %0 = tfm.check_size %x, dim -3, max 8, code 2 : tensor<?x4xf32>
  return %0 : i32
}

// -----

func.func @check_size_max(%x: tensor<?x4xf32>) -> i32 {
  // expected-error @+1 {{'tfm.check_size' op max must be non-negative, got -1}}
  %0 = tfm.check_size %x, dim 0, max -1, code 2 : tensor<?x4xf32>
  return %0 : i32
}

// -----

func.func @layer_norm_weight(%x: tensor<?x8xf32>, %w: tensor<4xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.layer_norm' op weight [4] must be [8] to normalize input [?, 8]}}
  %0 = tfm.layer_norm %x weight %w eps 1.0e-5 : (tensor<?x8xf32>, tensor<4xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @layer_norm_eps(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.layer_norm' op eps must be finite and non-negative}}
  %0 = tfm.layer_norm %x eps -1.0 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @embedding_no_rows(%ids: tensor<4xi64>, %t: tensor<0x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tfm.embedding' op weight has no rows to look up}}
  %0 = tfm.embedding %ids, %t : tensor<4xi64>, tensor<0x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @positional_table_width(%x: tensor<?x8xf32>, %t: tensor<16x4xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.positional_encoding' op table [16, 4] must be [max_len, 8]}}
  %0 = tfm.positional_encoding %x, %t : tensor<?x8xf32>, tensor<16x4xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @sdpa_mask_type(%q: tensor<?x8xf32>, %m: tensor<?x?xi32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.sdpa' op operand #3 must be ranked tensor of 1-bit signless integer or 32-bit float or 64-bit float or bfloat16 type or 16-bit float values}}
  %0 = tfm.sdpa %q, %q, %q mask(%m : tensor<?x?xi32>) : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @sdpa_mask_float_type(%q: tensor<?x8xf32>, %m: tensor<?x?xf64>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.sdpa' op mask must be i1 or 'f32', got 'f64'}}
  %0 = tfm.sdpa %q, %q, %q mask(%m : tensor<?x?xf64>) : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @sdpa_mask_shape(%q: tensor<2x5x8xf32>, %k: tensor<2x7x8xf32>, %m: tensor<5x5xi1>) -> tensor<2x5x8xf32> {
  // expected-error @+1 {{'tfm.sdpa' op mask [5, 5] does not broadcast to the scores [2, 5, 7]}}
  %0 = tfm.sdpa %q, %k, %k mask(%m : tensor<5x5xi1>) : tensor<2x5x8xf32>, tensor<2x7x8xf32>, tensor<2x7x8xf32> -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}

// -----

func.func @mha_key_padding_mask(%x: tensor<2x5x8xf32>, %w: tensor<8x8xf32>, %pad: tensor<5xi1>) -> tensor<2x5x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op key_padding_mask [5] must be [2, 5]}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) key_padding_mask(%pad) heads 2
      : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<5xi1>) -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}

// -----

func.func @mha_attn_mask(%x: tensor<2x5x8xf32>, %w: tensor<8x8xf32>, %m: tensor<2x5x5xf32>) -> tensor<2x5x8xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op attn_mask [2, 5, 5] must be [5, 5] or [4, 5, 5]}}
  %0 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) attn_mask(%m) heads 2
      : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x5x5xf32>) -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}

// -----

func.func @mha_weights_shape(%x: tensor<2x5x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x5x5xf32> {
  // expected-error @+1 {{'tfm.multi_head_attention' op attention weights [2, 5, 5] must be [2, 2, 5, 5]}}
  %0, %1 = tfm.multi_head_attention (%x, %x, %x) weights (%w, %w, %w, %w) heads 2 {average_attn_weights = false}
      : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x5x5xf32>)
  return %1 : tensor<2x5x5xf32>
}

// -----

func.func @sdpa_mask_rank_0(%q: tensor<?x8xf32>, %m: tensor<i1>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tfm.sdpa' op mask must have rank 1 or more}}
  %0 = tfm.sdpa %q, %q, %q mask(%m : tensor<i1>) : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @packed_linear_mixed(%x: tensor<?x3xf32>, %w: memref<1x3x8xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op operands must all be ranked tensors or all memrefs}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, memref<1x3x8xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_features(%x: tensor<?x4xf32>, %w: tensor<1x3x8xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op input [?, 4] does not have the packed weight's 3 input features}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x4xf32>, tensor<1x3x8xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_panels(%x: tensor<?x3xf32>, %w: tensor<1x3x8xf32>, %y: tensor<?x9xf32>) -> tensor<?x9xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op init [?, 9] needs 1 to 8 static output features}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x3x8xf32>) outs(%y : tensor<?x9xf32>) activation none -> tensor<?x9xf32>
  return %0 : tensor<?x9xf32>
}

// -----

func.func @packed_linear_bias(%x: tensor<?x3xf32>, %w: tensor<1x3x8xf32>, %b: tensor<2xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op bias must be [8] (padded)}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x3x8xf32>) bias(%b : tensor<2xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_dynamic_width(%x: tensor<?x3xf32>, %w: tensor<1x3x?xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op packed weight must be [panels, K, width] with a static width}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x3x?xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// A matrix packed at run time (tfm-pack-matmul) has dynamic panels and K;
// its K must still agree with the input's where both are static.
func.func @packed_linear_dynamic_depth(%x: tensor<?x4xf32>, %w: tensor<?x3x8xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op input [?, 4] does not have the packed weight's 3 input features}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x4xf32>, tensor<?x3x8xf32>) outs(%y : tensor<?x?xf32>) activation none -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @packed_linear_dynamic_bias(%x: tensor<?x?xf32>, %w: tensor<?x?x8xf32>, %b: tensor<8xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op a bias needs a packed weight of static shape}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x?xf32>, tensor<?x?x8xf32>) bias(%b : tensor<8xf32>) outs(%y : tensor<?x?xf32>) activation none -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @packed_linear_activation(%x: tensor<?x3xf32>, %w: tensor<1x3x8xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+2 {{expected ::mlir::tfm::Activation to be one of: none, relu, gelu, gelu_tanh}}
  // expected-error @+1 {{failed to parse Tfm_ActivationAttr parameter 'value'}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x3x8xf32>) outs(%y : tensor<?x2xf32>) activation swish -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// bf16 and i8 packed weights: [panels, ceil(K / g), width * g] with g = 2
// or 4; an i8 weight takes its per-column scales (f32) and sums (i32).

func.func @packed_linear_i8_without_dequant(%x: tensor<?x3xf32>, %w: tensor<1x1x32xi8>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op an i8 packed weight, and only it, takes weight_scales and weight_sums}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x1x32xi8>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_f32_with_dequant(%x: tensor<?x3xf32>, %w: tensor<1x3x8xf32>, %s: tensor<8xf32>, %u: tensor<8xi32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op an i8 packed weight, and only it, takes weight_scales and weight_sums}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x3x8xf32>) dequant(%s, %u : tensor<8xf32>, tensor<8xi32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_bf16_with_dequant(%x: tensor<?x3xf32>, %w: tensor<1x2x16xbf16>, %s: tensor<8xf32>, %u: tensor<8xi32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op an i8 packed weight, and only it, takes weight_scales and weight_sums}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x2x16xbf16>) dequant(%s, %u : tensor<8xf32>, tensor<8xi32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_f16(%x: tensor<?x3xf32>, %w: tensor<1x2x16xf16>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op packed weight must be f32, bf16 or i8}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x2x16xf16>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_sums_type(%x: tensor<?x3xf32>, %w: tensor<1x1x32xi8>, %s: tensor<8xf32>, %u: tensor<8xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op weight_sums has the wrong element type}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x1x32xi8>) dequant(%s, %u : tensor<8xf32>, tensor<8xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_scales_type(%x: tensor<?x3xf32>, %w: tensor<1x1x32xi8>, %s: tensor<8xf16>, %u: tensor<8xi32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op weight_scales has the wrong element type}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x1x32xi8>) dequant(%s, %u : tensor<8xf16>, tensor<8xi32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_scales_shape(%x: tensor<?x3xf32>, %w: tensor<1x1x32xi8>, %s: tensor<2xf32>, %u: tensor<8xi32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op weight_scales must be [8] (padded)}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x1x32xi8>) dequant(%s, %u : tensor<2xf32>, tensor<8xi32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_bf16_width(%x: tensor<?x3xf32>, %w: tensor<1x2x15xbf16>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op packed weight must be [panels, K / 2, width * 2] with a static width}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x2x15xbf16>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_i8_width(%x: tensor<?x3xf32>, %w: tensor<1x1x30xi8>, %s: tensor<8xf32>, %u: tensor<8xi32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op packed weight must be [panels, K / 4, width * 4] with a static width}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x3xf32>, tensor<1x1x30xi8>) dequant(%s, %u : tensor<8xf32>, tensor<8xi32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// K = 5 in pairs is 3 deep, in quads 2.
func.func @packed_linear_bf16_depth(%x: tensor<?x5xf32>, %w: tensor<1x2x16xbf16>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op input [?, 5] does not have the packed weight's about 4 input features}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x5xf32>, tensor<1x2x16xbf16>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_i8_depth(%x: tensor<?x5xf32>, %w: tensor<1x1x32xi8>, %s: tensor<8xf32>, %u: tensor<8xi32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op input [?, 5] does not have the packed weight's about 4 input features}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x5xf32>, tensor<1x1x32xi8>) dequant(%s, %u : tensor<8xf32>, tensor<8xi32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// Issue 8, D18: vectors are not buffers; the CPU lowering crashed on them.
func.func @attention_vector_operands(%q: vector<2x4xf32>, %o: vector<2x4xf32>) {
  // expected-error @+1 {{'tfm.attention' op operand #0 must be ranked tensor of any type values or memref of any type values, but got 'vector<2x4xf32>'}}
  tfm.attention ins(%q, %q, %q : vector<2x4xf32>, vector<2x4xf32>, vector<2x4xf32>) outs(%o : vector<2x4xf32>) scale 1.0
  return
}

// -----

func.func @attention_kv_length_shape(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x16x8xf32>, %len: tensor<3xi64>) -> tensor<2x2x1x8xf32> {
  // expected-error @+1 {{'tfm.attention' op kv_length must be i64 [2], one value per sequence}}
  %0 = tfm.attention ins(%q, %k, %k : tensor<2x2x1x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>) kv_length(%len : tensor<3xi64>) outs(%q : tensor<2x2x1x8xf32>) scale 1.0 -> tensor<2x2x1x8xf32>
  return %0 : tensor<2x2x1x8xf32>
}

// -----

func.func @attention_kv_length_dtype(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x16x8xf32>, %len: tensor<2xi32>) -> tensor<2x2x1x8xf32> {
  // expected-error @+1 {{'tfm.attention' op kv_length must be i64 [2], one value per sequence}}
  %0 = tfm.attention ins(%q, %k, %k : tensor<2x2x1x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>) kv_length(%len : tensor<2xi32>) outs(%q : tensor<2x2x1x8xf32>) scale 1.0 -> tensor<2x2x1x8xf32>
  return %0 : tensor<2x2x1x8xf32>
}

// -----

func.func @attention_offset_rank(%q: tensor<1x8xf32>, %k: tensor<16x8xf32>, %past: tensor<1xi64>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'tfm.attention' op query_offset needs a leading batch dimension (rank 3 or more)}}
  %0 = tfm.attention ins(%q, %k, %k : tensor<1x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) query_offset(%past : tensor<1xi64>) outs(%q : tensor<1x8xf32>) scale 1.0 {causal} -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

func.func @attention_offset_not_causal(%q: tensor<2x1x8xf32>, %k: tensor<2x16x8xf32>, %past: tensor<2xi64>) -> tensor<2x1x8xf32> {
  // expected-error @+1 {{'tfm.attention' op query_offset only applies to causal attention}}
  %0 = tfm.attention ins(%q, %k, %k : tensor<2x1x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>) query_offset(%past : tensor<2xi64>) outs(%q : tensor<2x1x8xf32>) scale 1.0 -> tensor<2x1x8xf32>
  return %0 : tensor<2x1x8xf32>
}

// -----

func.func @cache_append_rows(%k: tensor<2x1x4xf32>, %past: tensor<2xi64>, %c: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  // expected-error @+1 {{'tfm.cache_append' op rows [2, 1, 4] and cache [2, 16, 8] disagree in dimension 2}}
  %0, %s = tfm.cache_append ins(%k, %past : tensor<2x1x4xf32>, tensor<2xi64>) outs(%c : tensor<2x16x8xf32>) dim 1 code 3 -> tensor<2x16x8xf32>
  return %0 : tensor<2x16x8xf32>
}

// -----

func.func @cache_append_batch_dim(%k: tensor<2x1x8xf32>, %past: tensor<2xi64>, %c: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  // expected-error @+1 {{'tfm.cache_append' op dim 0 must name a non-batch dimension of [2, 16, 8]}}
  %0, %s = tfm.cache_append ins(%k, %past : tensor<2x1x8xf32>, tensor<2xi64>) outs(%c : tensor<2x16x8xf32>) dim 0 code 3 -> tensor<2x16x8xf32>
  return %0 : tensor<2x16x8xf32>
}

// -----

func.func @cache_append_offset(%k: tensor<2x1x8xf32>, %past: tensor<2xi32>, %c: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  // expected-error @+1 {{'tfm.cache_append' op offset must be i64 [2], one value per sequence}}
  %0, %s = tfm.cache_append ins(%k, %past : tensor<2x1x8xf32>, tensor<2xi32>) outs(%c : tensor<2x16x8xf32>) dim 1 code 3 -> tensor<2x16x8xf32>
  return %0 : tensor<2x16x8xf32>
}

// -----

func.func @cache_append_memref_result(%k: memref<2x1x8xf32>, %past: memref<2xi64>, %c: memref<2x16x8xf32>) -> tensor<2x16x8xf32> {
  // expected-error @+1 {{'tfm.cache_append' op on memrefs returns the status alone}}
  %0, %s = tfm.cache_append ins(%k, %past : memref<2x1x8xf32>, memref<2xi64>) outs(%c : memref<2x16x8xf32>) dim 1 code 3 -> tensor<2x16x8xf32>
  return %0 : tensor<2x16x8xf32>
}

// -----

func.func @attention_map_moves_head_dim(%q: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op indexing map #0 must keep the head dim innermost}}
  %0 = tfm.attention ins(%q, %q, %q : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%q : tensor<2x4x8xf32>) scale 1.0
         indexing_maps [affine_map<(b, m, k1, k2, n) -> (b, k1, m)>, affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>,
                        affine_map<(b, m, k1, k2, n) -> (b, k2, n)>, affine_map<(b, m, k1, k2, n) -> (b, m, n)>] -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @attention_map_count(%q: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'tfm.attention' op needs 4 indexing maps (query, key, value, mask when present, init), got 1}}
  %0 = tfm.attention ins(%q, %q, %q : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%q : tensor<2x4x8xf32>) scale 1.0
         indexing_maps [affine_map<(b, m, k1, k2, n) -> (b, m, k1)>] -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @attention_map_shapes(%q: tensor<2x4x3x8xf32>, %k: tensor<2x3x5x8xf32>) -> tensor<2x4x3x8xf32> {
  // expected-error @+1 {{'tfm.attention' op key [2, 3, 5, 8] and value [2, 3, 4, 8] disagree on the key sequence length}}
  %0 = tfm.attention ins(%q, %k, %q : tensor<2x4x3x8xf32>, tensor<2x3x5x8xf32>, tensor<2x4x3x8xf32>) outs(%q : tensor<2x4x3x8xf32>) scale 1.0
         indexing_maps [affine_map<(b, h, m, k1, k2, n) -> (b, m, h, k1)>, affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>,
                        affine_map<(b, h, m, k1, k2, n) -> (b, k2, h, n)>, affine_map<(b, h, m, k1, k2, n) -> (b, m, h, n)>] -> tensor<2x4x3x8xf32>
  return %0 : tensor<2x4x3x8xf32>
}

// -----

// Block-quantized i8 (GGUF Q8_0 and the others): 2-D weight_scales
// [K / 32 or K / 16, padded N] (and weight_offsets alike), no weight_sums, K
// static and a multiple of 16.

func.func @packed_linear_blocks_with_sums(%x: tensor<?x32xf32>, %w: tensor<1x8x32xi8>, %s: tensor<1x8xf32>, %u: tensor<8xi32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op block scales take no weight_sums}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x32xf32>, tensor<1x8x32xi8>) dequant(%s, %u : tensor<1x8xf32>, tensor<8xi32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_blocks_k(%x: tensor<?x36xf32>, %w: tensor<1x9x32xi8>, %s: tensor<1x8xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op block scales need a static K that is a multiple of 16, not [?, 36]}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x36xf32>, tensor<1x9x32xi8>) dequant(%s : tensor<1x8xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_blocks_rows(%x: tensor<?x64xf32>, %w: tensor<1x16x32xi8>, %s: tensor<1x8xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op block weight_scales must have K / 32 or K / 16 rows (2 or 4), not [1, 8]}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x64xf32>, tensor<1x16x32xi8>) dequant(%s : tensor<1x8xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_blocks_shape(%x: tensor<?x64xf32>, %w: tensor<1x16x32xi8>, %s: tensor<2x16xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op block weight_scales and weight_offsets must be [2, 8] (K / 32, padded N)}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x64xf32>, tensor<1x16x32xi8>) dequant(%s : tensor<2x16xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_offsets_shape(%x: tensor<?x64xf32>, %w: tensor<1x8x32xi8>, %s: tensor<4x8xf32>, %o: tensor<2x8xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op block weight_scales and weight_offsets must be [4, 8] (K / 16, padded N)}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x64xf32>, tensor<1x8x32xi8>) dequant(%s : tensor<4x8xf32>) offsets(%o : tensor<2x8xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_offsets_per_column(%x: tensor<?x32xf32>, %w: tensor<1x8x32xi8>, %s: tensor<8xf32>, %u: tensor<8xi32>, %o: tensor<1x8xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op weight_offsets need block weight_scales}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x32xf32>, tensor<1x8x32xi8>) dequant(%s, %u : tensor<8xf32>, tensor<8xi32>) offsets(%o : tensor<1x8xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// Block scales are f32, f16 (as GGUF files keep them), or a K-quant's i8
// sub-block integers with f16 super-block values [1 or 2, K / SB, padded N].

func.func @packed_linear_blocks_type(%x: tensor<?x32xf32>, %w: tensor<1x8x32xi8>, %s: tensor<1x8xbf16>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op block weight_scales must be f32, f16 or i8}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x32xf32>, tensor<1x8x32xi8>) dequant(%s : tensor<1x8xbf16>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_offsets_type(%x: tensor<?x32xf32>, %w: tensor<1x8x32xi8>, %s: tensor<1x8xf16>, %o: tensor<1x8xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op block weight_offsets must have weight_scales' element type}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x32xf32>, tensor<1x8x32xi8>) dequant(%s : tensor<1x8xf16>) offsets(%o : tensor<1x8xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_integers_without_super(%x: tensor<?x256xf32>, %w: tensor<1x32x32xi8>, %s: tensor<8x8xi8>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op i8 block weight_scales, and only they, take weight_super_scales}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x256xf32>, tensor<1x32x32xi8>) dequant(%s : tensor<8x8xi8>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_super_with_f16(%x: tensor<?x256xf32>, %w: tensor<1x32x32xi8>, %s: tensor<8x8xf16>, %d: tensor<1x1x8xf16>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op i8 block weight_scales, and only they, take weight_super_scales}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x256xf32>, tensor<1x32x32xi8>) dequant(%s : tensor<8x8xf16>) super_scales(%d : tensor<1x1x8xf16>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_super_parts(%x: tensor<?x256xf32>, %w: tensor<1x32x32xi8>, %s: tensor<8x8xi8>, %o: tensor<8x8xi8>, %d: tensor<1x1x8xf16>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op weight_super_scales must be f16 [2, K / super-block, 8], the super-block a multiple of 32, not 'tensor<1x1x8xf16>'}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x256xf32>, tensor<1x32x32xi8>) dequant(%s : tensor<8x8xi8>) offsets(%o : tensor<8x8xi8>) super_scales(%d : tensor<1x1x8xf16>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_super_block(%x: tensor<?x256xf32>, %w: tensor<1x32x32xi8>, %s: tensor<8x8xi8>, %d: tensor<1x3x8xf16>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op weight_super_scales must be f16 [1, K / super-block, 8], the super-block a multiple of 32, not 'tensor<1x3x8xf16>'}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x256xf32>, tensor<1x32x32xi8>) dequant(%s : tensor<8x8xi8>) super_scales(%d : tensor<1x3x8xf16>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @packed_linear_blocks_f32(%x: tensor<?x32xf32>, %w: tensor<1x32x8xf32>, %s: tensor<1x8xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op an i8 packed weight, and only it, takes weight_scales and weight_sums}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x32xf32>, tensor<1x32x8xf32>) dequant(%s : tensor<1x8xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @q8_0_blocks_not_bytes() -> tensor<2x32xf32> {
  // expected-error @+1 {{'tfm.q8_0_blocks' must be bytes (a 1-D i8 elements attribute) on a constant}}
  %w = arith.constant {tfm.q8_0_blocks = dense<0.0> : tensor<68xf32>} dense<1.0> : tensor<2x32xf32>
  return %w : tensor<2x32xf32>
}

// -----

// Block-quantized weights are K / 4 deep (s8, Q8_0), K / 8 (two 4-bit
// values per byte, Q4_0) or K / 32 x 5 or 6 (5- and 6-bit values: nibbles
// and bit planes): nothing else (K / 32 x 7 here).
func.func @packed_linear_blocks_depth(%x: tensor<?x64xf32>, %w: tensor<1x14x32xi8>, %s: tensor<2x8xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'tfm.packed_linear' op input [?, 64] does not have the packed weight's about 56 input features}}
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x64xf32>, tensor<1x14x32xi8>) dequant(%s : tensor<2x8xf32>) outs(%y : tensor<?x2xf32>) activation none -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// A quantized embedding table (GGUF blocks kept by tfm-pack-linear): i8
// block panels with scales, packed_rows, and only then.

func.func @embedding_i8_unpacked(%ids: tensor<?xi64>, %w: tensor<6x32xi8>) -> tensor<?x32xf32> {
  // expected-error @+1 {{'tfm.embedding' op an i8 table, and scales, come packed (packed_rows)}}
  %0 = tfm.embedding %ids, %w : tensor<?xi64>, tensor<6x32xi8> -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

func.func @embedding_i8_without_scales(%ids: tensor<?xi64>, %w: tensor<6x8x4xi8>) -> tensor<?x32xf32> {
  // expected-error @+1 {{'tfm.embedding' op i8 panels, and only they, take scales}}
  %0 = tfm.embedding %ids, %w {packed_rows = 6 : i64} : tensor<?xi64>, tensor<6x8x4xi8> -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

func.func @embedding_panels_depth(%ids: tensor<?xi64>, %w: tensor<6x7x4xi8>, %s: tensor<1x6xf16>) -> tensor<?x32xf32> {
  // expected-error @+1 {{'tfm.embedding' op quantized panels of depth 7 hold no dim 32 (dim / 4, / 8, / 32 * 5 or * 6, dim a multiple of 32)}}
  %0 = tfm.embedding %ids, %w scales(%s : tensor<1x6xf16>) {packed_rows = 6 : i64} : tensor<?xi64>, tensor<6x7x4xi8> -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

func.func @embedding_panels_rows(%ids: tensor<?xi64>, %w: tensor<2x8x16xi8>, %s: tensor<1x8xf16>) -> tensor<?x32xf32> {
  // expected-error @+1 {{'tfm.embedding' op packed weight [2, 8, 16] does not hold exactly the panels of 9 rows}}
  %0 = tfm.embedding %ids, %w scales(%s : tensor<1x8xf16>) {packed_rows = 9 : i64} : tensor<?xi64>, tensor<2x8x16xi8> -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

func.func @embedding_k_quant_without_super_scales(%ids: tensor<?xi64>, %w: tensor<3x32x4xi8>, %s: tensor<8x3xi8>) -> tensor<?x256xf32> {
  // expected-error @+1 {{'tfm.embedding' op i8 block scales, and only they, take super_scales}}
  %0 = tfm.embedding %ids, %w scales(%s : tensor<8x3xi8>) {packed_rows = 3 : i64} : tensor<?xi64>, tensor<3x32x4xi8> -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

// -----

func.func @embedding_super_scales_shape(%ids: tensor<?xi64>, %w: tensor<3x32x4xi8>, %s: tensor<8x3xi8>, %m: tensor<8x3xi8>, %d: tensor<1x1x3xf16>) -> tensor<?x256xf32> {
  // expected-error @+1 {{'tfm.embedding' op super_scales must be [2, dim / super-block, 3], got [1, 1, 3]}}
  %0 = tfm.embedding %ids, %w scales(%s : tensor<8x3xi8>) offsets(%m : tensor<8x3xi8>) super_scales(%d : tensor<1x1x3xf16>) {packed_rows = 3 : i64} : tensor<?xi64>, tensor<3x32x4xi8> -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}

// -----

func.func @attention_window_not_causal(%q: tensor<2x1x8xf32>, %k: tensor<2x16x8xf32>) -> tensor<2x1x8xf32> {
  // expected-error @+1 {{'tfm.attention' op window only applies to causal attention}}
  %0 = tfm.attention ins(%q, %k, %k : tensor<2x1x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>) outs(%q : tensor<2x1x8xf32>) scale 1.0 {window = 4 : i64} -> tensor<2x1x8xf32>
  return %0 : tensor<2x1x8xf32>
}

// -----

func.func @embedding_scales_shape(%ids: tensor<?xi64>, %w: tensor<6x8x4xi8>, %s: tensor<6x3xf16>) -> tensor<?x32xf32> {
  // expected-error @+1 {{'tfm.embedding' op scales must be [dim / block, 6], got [6, 3]}}
  %0 = tfm.embedding %ids, %w scales(%s : tensor<6x3xf16>) {packed_rows = 6 : i64} : tensor<?xi64>, tensor<6x8x4xi8> -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

func.func @attention_window_zero(%q: tensor<2x1x8xf32>, %k: tensor<2x16x8xf32>) -> tensor<2x1x8xf32> {
  // expected-error @+1 {{'tfm.attention' op window must be at least 1, got 0}}
  %0 = tfm.attention ins(%q, %k, %k : tensor<2x1x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>) outs(%q : tensor<2x1x8xf32>) scale 1.0 {causal, window = 0 : i64} -> tensor<2x1x8xf32>
  return %0 : tensor<2x1x8xf32>
}
