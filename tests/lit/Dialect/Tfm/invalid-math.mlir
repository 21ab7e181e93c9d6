// RUN: tfm-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of TfmMathOps.cpp (and the ODS constraints
// that matter to users).

func.func @sub_no_broadcast(%a: tensor<3x4xf32>, %b: tensor<5xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'tfm.sub' op operand shapes [3, 4] [5] do not broadcast}}
  %0 = tfm.sub %a, %b : tensor<3x4xf32>, tensor<5xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @mul_result_shape(%a: tensor<3x1xf32>, %b: tensor<4xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'tfm.mul' op result shape [3, 1] does not match the inferred shape [3, 4]}}
  %0 = tfm.mul %a, %b : tensor<3x1xf32>, tensor<4xf32> -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}

// -----

func.func @maximum_mixed_types(%a: tensor<3xf32>, %b: tensor<3xf64>) -> tensor<3xf32> {
  // expected-error @+1 {{'tfm.maximum' op mixes the element types 'f64' and 'f32'}}
  %0 = tfm.maximum %a, %b : tensor<3xf32>, tensor<3xf64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @div_integers(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error @+1 {{'tfm.div' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values}}
  %0 = tfm.div %a, %a : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @exp_integer(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{'tfm.exp' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values}}
  %0 = tfm.exp %a : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @logical_and_floats(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'tfm.logical_and' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = tfm.logical_and %a, %a : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @compare_predicate(%a: tensor<3xf32>) -> tensor<3xi1> {
  // expected-error @+2 {{expected ::mlir::tfm::ComparePredicate to be one of: lt, le, gt, ge, eq, ne}}
  // expected-error @+1 {{failed to parse Tfm_ComparePredicateAttr parameter 'value'}}
  %0 = tfm.compare less %a, %a : tensor<3xf32>, tensor<3xf32> -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

func.func @compare_mixed_types(%a: tensor<3xf32>, %b: tensor<3xi64>) -> tensor<3xi1> {
  // expected-error @+1 {{'tfm.compare' op mixes the element types 'i64' and 'f32'}}
  %0 = tfm.compare lt %a, %b : tensor<3xf32>, tensor<3xi64> -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

func.func @where_shapes(%c: tensor<2x3xi1>, %a: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'tfm.where' op operand shapes [2, 3] [4] [4] do not broadcast}}
  %0 = tfm.where %c, %a, %a : tensor<2x3xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @cast_shape(%a: tensor<2x3xi64>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'tfm.cast' op result shape [3, 2] does not match the inferred shape [2, 3]}}
  %0 = tfm.cast %a : tensor<2x3xi64> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @reduce_kind(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{expected ::mlir::tfm::ReduceKind to be one of: sum, mean, max, min}}
  // expected-error @+1 {{failed to parse Tfm_ReduceKindAttr parameter 'value'}}
  %0 = tfm.reduce prod %a dims [1] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_mean_integers(%a: tensor<2x3xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{'tfm.reduce' op mean needs a float input, got 'i64'}}
  %0 = tfm.reduce mean %a dims [1] : tensor<2x3xi64> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @reduce_dims_unsorted(%a: tensor<2x3x4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'tfm.reduce' op dims must be distinct, sorted and within rank 3}}
  %0 = tfm.reduce sum %a dims [2, 0] : tensor<2x3x4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_keepdim_shape(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'tfm.reduce' op result shape [2] does not match the inferred shape [2, 1]}}
  %0 = tfm.reduce max %a dims [1] keepdim : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reshape_sizes(%a: tensor<?x64xf32>) -> tensor<?x4x16xf32> {
  // expected-error @+1 {{'tfm.reshape' op needs one size for each of the 1 dynamic result dimensions, got 0}}
  %0 = tfm.reshape %a : tensor<?x64xf32> -> tensor<?x4x16xf32>
  return %0 : tensor<?x4x16xf32>
}

// -----

func.func @reshape_count(%a: tensor<6x4xf32>) -> tensor<5x5xf32> {
  // expected-error @+1 {{'tfm.reshape' op input [6, 4] and result [5, 5] have different element counts}}
  %0 = tfm.reshape %a : tensor<6x4xf32> -> tensor<5x5xf32>
  return %0 : tensor<5x5xf32>
}

// -----

func.func @permute_repeated(%a: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'tfm.permute' op is not a permutation of the input's dimensions}}
  %0 = tfm.permute %a [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @permute_shape(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'tfm.permute' op result shape [2, 3] does not match the inferred shape [3, 2]}}
  %0 = tfm.permute %a [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
