// RUN: tfm-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of TfmAttrs.cpp and of the dialect's check of
// its discardable attributes (TfmDialect.cpp).

// expected-error @+1 {{dimension 'batch' of 'x' is not a declared symbol}}
func.func @undeclared_symbol() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [],
    inputs = [#tfm.tensor<name = "x", elementType = f32, shape = ["batch"]>], outputs = []>} {
  return
}

// -----

// expected-error @+1 {{signature symbol 'n' is declared twice}}
func.func @symbol_twice() attributes {tfm.signature = #tfm.signature<model = "m", symbols = ["n", "n"], inputs = [], outputs = []>} {
  return
}

// -----

// expected-error @+1 {{signature symbols are strings, not 3}}
func.func @symbol_not_string() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [3], inputs = [], outputs = []>} {
  return
}

// -----

// expected-error @+1 {{a signature needs a model name}}
func.func @empty_model() attributes {tfm.signature = #tfm.signature<model = "", symbols = [], inputs = [], outputs = []>} {
  return
}

// -----

// expected-error @+1 {{struct is missing required parameter: inputs}}
func.func @no_inputs() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], outputs = []>} {
  return
}

// -----

// expected-error @+1 {{signature outputs are #tfm.tensor attributes, not {name = "y"}}}
func.func @dictionary_entry() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = [{name = "y"}]>} {
  return
}

// -----

// expected-error @+1 {{signature tensor 'y' is named twice}}
func.func @name_twice() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [],
    inputs = [#tfm.tensor<name = "y", elementType = f32, shape = []>],
    outputs = [#tfm.tensor<name = "y", elementType = f32, shape = []>]>} {
  return
}

// -----

// expected-error @+1 {{output 'y' cannot be a cache; caches are inputs}}
func.func @output_cache() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [],
    outputs = [#tfm.tensor<name = "y", elementType = f32, shape = [2], cache = true>]>} {
  return
}

// -----

func.func @bad_element_type() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [],
    // expected-error @+2 {{signature tensor 'x' has the element type 'i16'; expected f32, f64, bf16, f16, i8, i32, i64 or i1}}
    // expected-error @+1 {{failed to parse Tfm_SignatureAttr parameter 'inputs'}}
    inputs = [#tfm.tensor<name = "x", elementType = i16, shape = [2]>], outputs = []>} {
  return
}

// -----

func.func @negative_dim() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [],
    // expected-error @+2 {{signature tensor 'x' has the negative dimension -1}}
    // expected-error @+1 {{failed to parse Tfm_SignatureAttr parameter 'inputs'}}
    inputs = [#tfm.tensor<name = "x", elementType = f32, shape = [-1]>], outputs = []>} {
  return
}

// -----

func.func @float_dim() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [],
    // expected-error @+2 {{signature tensor 'x': a dimension is a size or a symbol name, not 1.000000e+00 : f32}}
    // expected-error @+1 {{failed to parse Tfm_SignatureAttr parameter 'inputs'}}
    inputs = [#tfm.tensor<name = "x", elementType = f32, shape = [1.0 : f32]>], outputs = []>} {
  return
}

// -----

func.func @unnamed() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [],
    // expected-error @+2 {{a signature tensor needs a name}}
    // expected-error @+1 {{failed to parse Tfm_SignatureAttr parameter 'inputs'}}
    inputs = [#tfm.tensor<name = "", elementType = f32, shape = []>], outputs = []>} {
  return
}

// -----

func.func @zero_code() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = [],
    // expected-error @+2 {{status code 0 means success; a signature error needs a non-zero code}}
    // expected-error @+1 {{failed to parse Tfm_SignatureAttr parameter 'errors'}}
    errors = [#tfm.error<code = 0, message = "fine">]>} {
  return
}

// -----

// expected-error @+1 {{status code 3 is listed twice}}
func.func @code_twice() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = [],
    errors = [#tfm.error<code = 3, message = "a">, #tfm.error<code = 3, message = "b">]>} {
  return
}

// -----

// expected-error @+1 {{signature device must be "cuda", not "rocm"}}
func.func @bad_device() attributes {tfm.signature = #tfm.signature<model = "m", symbols = [], inputs = [], outputs = [],
    device = "rocm">} {
  return
}

// -----

// The dictionary a signature used to be is refused where it is attached.
// expected-error @+1 {{'tfm.signature' must be a #tfm.signature, not {model = "m"}}}
func.func @dictionary() attributes {tfm.signature = {model = "m"}} {
  return
}

// -----

// expected-error @+1 {{'tfm.task' must be a unit attribute}}
func.func private @task_not_unit(%b: index, %e: index) attributes {tfm.task = 1 : i32} {
  return
}

// -----

// expected-error @+1 {{'tfm.exec_threads' must be a unit attribute}}
func.func private @threads_not_unit() -> index attributes {tfm.exec_threads = 2 : i64}

// -----

// expected-error @+1 {{'tfm.workspace_size' must be a symbol reference}}
func.func @workspace_not_symbol() attributes {tfm.workspace_size = "ws"} {
  return
}

// -----

func.func @on_an_op() {
  // expected-error @+1 {{'tfm.task' only applies to functions}}
  %0 = arith.constant {tfm.task} 0 : i32
  return
}

// -----

// expected-error @+1 {{unknown tfm attribute 'tfm.sig'}}
func.func @misspelled() attributes {tfm.sig = 1 : i32} {
  return
}
