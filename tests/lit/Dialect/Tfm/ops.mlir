// RUN: tfm-opt %s | tfm-opt | FileCheck %s
// RUN: tfm-opt %s -mlir-print-op-generic | tfm-opt | FileCheck %s

// Round trip of every tfm op in its custom assembly, with static and dynamic
// shapes, and the optional parts (linear bias, mha biases, masks and weights,
// scale {divide}, sdpa scale, mask and causal, layer_norm weight and bias,
// the learned positional table) both present and absent.

// CHECK-LABEL: func.func @weight
func.func @weight() -> tensor<2x3xf32> {
  // CHECK: %[[W:.*]] = tfm.weight "layer.0.weight" : tensor<2x3xf32>
  %w = tfm.weight "layer.0.weight" : tensor<2x3xf32>
  // CHECK: return %[[W]]
  return %w : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<?x24xf32>, %[[B:.*]]: tensor<24x?xf32>, %[[C:.*]]: tensor<2x?x4x8xf64>, %[[D:.*]]: tensor<8x5xf64>)
func.func @matmul(%a: tensor<?x24xf32>, %b: tensor<24x?xf32>,
                  %c: tensor<2x?x4x8xf64>, %d: tensor<8x5xf64>)
    -> (tensor<?x?xf32>, tensor<2x?x4x5xf64>) {
  // CHECK: tfm.matmul %[[A]], %[[B]] : tensor<?x24xf32>, tensor<24x?xf32> -> tensor<?x?xf32>
  %0 = tfm.matmul %a, %b : tensor<?x24xf32>, tensor<24x?xf32> -> tensor<?x?xf32>
  // CHECK: tfm.matmul %[[C]], %[[D]] : tensor<2x?x4x8xf64>, tensor<8x5xf64> -> tensor<2x?x4x5xf64>
  %1 = tfm.matmul %c, %d : tensor<2x?x4x8xf64>, tensor<8x5xf64> -> tensor<2x?x4x5xf64>
  return %0, %1 : tensor<?x?xf32>, tensor<2x?x4x5xf64>
}

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x24xf32>, %[[Y:.*]]: tensor<2x3xi64>)
func.func @transpose(%x: tensor<?x?x24xf32>, %y: tensor<2x3xi64>)
    -> (tensor<?x24x?xf32>, tensor<24x?x?xf32>, tensor<3x2xi64>) {
  // CHECK: tfm.transpose %[[X]], -2, -1 : tensor<?x?x24xf32> -> tensor<?x24x?xf32>
  %0 = tfm.transpose %x, -2, -1 : tensor<?x?x24xf32> -> tensor<?x24x?xf32>
  // CHECK: tfm.transpose %[[X]], 0, 2 : tensor<?x?x24xf32> -> tensor<24x?x?xf32>
  %1 = tfm.transpose %x, 0, 2 : tensor<?x?x24xf32> -> tensor<24x?x?xf32>
  // CHECK: tfm.transpose %[[Y]], 1, 0 : tensor<2x3xi64> -> tensor<3x2xi64>
  %2 = tfm.transpose %y, 1, 0 : tensor<2x3xi64> -> tensor<3x2xi64>
  return %0, %1, %2 : tensor<?x24x?xf32>, tensor<24x?x?xf32>, tensor<3x2xi64>
}

// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>)
func.func @scale(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  // CHECK: %[[MUL:.*]] = tfm.scale %[[X]], 5.000000e-01 : tensor<?x?xf32>
  %0 = tfm.scale %x, 0.5 : tensor<?x?xf32>
  // CHECK: %[[DIV:.*]] = tfm.scale %[[MUL]], 1.4142135623730951 {divide} : tensor<?x?xf32>
  %1 = tfm.scale %0, 1.4142135623730951 {divide} : tensor<?x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x?x8xf32>)
func.func @softmax(%x: tensor<2x?x8xf32>) -> (tensor<2x?x8xf32>, tensor<2x?x8xf32>) {
  // CHECK: tfm.softmax %[[X]], -1 : tensor<2x?x8xf32>
  %0 = tfm.softmax %x, -1 : tensor<2x?x8xf32>
  // CHECK: tfm.softmax %[[X]], 1 : tensor<2x?x8xf32>
  %1 = tfm.softmax %x, 1 : tensor<2x?x8xf32>
  return %0, %1 : tensor<2x?x8xf32>, tensor<2x?x8xf32>
}

// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x16xf32>, %[[PE:.*]]: tensor<?x16xf32>, %[[ONE:.*]]: tensor<1x16xf32>)
func.func @add(%x: tensor<?x?x16xf32>, %pe: tensor<?x16xf32>, %one: tensor<1x16xf32>)
    -> (tensor<?x?x16xf32>, tensor<?x16xf32>) {
  // CHECK: tfm.add %[[X]], %[[PE]] : tensor<?x?x16xf32>, tensor<?x16xf32> -> tensor<?x?x16xf32>
  %0 = tfm.add %x, %pe : tensor<?x?x16xf32>, tensor<?x16xf32> -> tensor<?x?x16xf32>
  // CHECK: tfm.add %[[ONE]], %[[PE]] : tensor<1x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
  %1 = tfm.add %one, %pe : tensor<1x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
  return %0, %1 : tensor<?x?x16xf32>, tensor<?x16xf32>
}

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<?x8xf32>, %[[B:.*]]: tensor<?x8xf32>, %[[C:.*]]: tensor<?x4xf32>, %[[D:.*]]: tensor<3x4xf32>)
func.func @concat(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>, %c: tensor<?x4xf32>, %d: tensor<3x4xf32>)
    -> (tensor<?x20xf32>, tensor<?x4xf32>, tensor<?x8xf32>) {
  // CHECK: tfm.concat %[[A]], %[[B]], %[[C]] dim -1 : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>) -> tensor<?x20xf32>
  %0 = tfm.concat %a, %b, %c dim -1 : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>) -> tensor<?x20xf32>
  // CHECK: tfm.concat %[[D]], %[[C]] dim 0 : (tensor<3x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = tfm.concat %d, %c dim 0 : (tensor<3x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: tfm.concat %[[A]] dim 1 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %2 = tfm.concat %a dim 1 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0, %1, %2 : tensor<?x20xf32>, tensor<?x4xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<?x16xf32>, %[[W:.*]]: tensor<24x16xf32>, %[[B:.*]]: tensor<24xf32>, %[[V:.*]]: tensor<16xf32>)
func.func @linear(%x: tensor<?x16xf32>, %w: tensor<24x16xf32>, %b: tensor<24xf32>, %v: tensor<16xf32>)
    -> (tensor<?x24xf32>, tensor<?x24xf32>, tensor<24xf32>) {
  // CHECK: tfm.linear %[[X]], %[[W]] : tensor<?x16xf32>, tensor<24x16xf32> -> tensor<?x24xf32>
  %0 = tfm.linear %x, %w : tensor<?x16xf32>, tensor<24x16xf32> -> tensor<?x24xf32>
  // CHECK: tfm.linear %[[X]], %[[W]], %[[B]] : tensor<?x16xf32>, tensor<24x16xf32>, tensor<24xf32> -> tensor<?x24xf32>
  %1 = tfm.linear %x, %w, %b : tensor<?x16xf32>, tensor<24x16xf32>, tensor<24xf32> -> tensor<?x24xf32>
  // CHECK: tfm.linear %[[V]], %[[W]], %[[B]] : tensor<16xf32>, tensor<24x16xf32>, tensor<24xf32> -> tensor<24xf32>
  %2 = tfm.linear %v, %w, %b : tensor<16xf32>, tensor<24x16xf32>, tensor<24xf32> -> tensor<24xf32>
  return %0, %1, %2 : tensor<?x24xf32>, tensor<?x24xf32>, tensor<24xf32>
}

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[IDS:.*]]: tensor<?xi64>, %[[IDS32:.*]]: tensor<2x?xi32>, %[[TABLE:.*]]: tensor<6x16xf32>)
func.func @embedding(%ids: tensor<?xi64>, %ids32: tensor<2x?xi32>, %table: tensor<6x16xf32>)
    -> (tensor<?x16xf32>, tensor<2x?x16xf32>) {
  // CHECK: tfm.embedding %[[IDS]], %[[TABLE]] : tensor<?xi64>, tensor<6x16xf32> -> tensor<?x16xf32>
  %0 = tfm.embedding %ids, %table : tensor<?xi64>, tensor<6x16xf32> -> tensor<?x16xf32>
  // CHECK: tfm.embedding %[[IDS32]], %[[TABLE]] : tensor<2x?xi32>, tensor<6x16xf32> -> tensor<2x?x16xf32>
  %1 = tfm.embedding %ids32, %table : tensor<2x?xi32>, tensor<6x16xf32> -> tensor<2x?x16xf32>
  return %0, %1 : tensor<?x16xf32>, tensor<2x?x16xf32>
}

// CHECK-LABEL: func.func @positional_encoding
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x16xf32>, %[[Y:.*]]: tensor<5x8xf64>)
func.func @positional_encoding(%x: tensor<?x?x16xf32>, %y: tensor<5x8xf64>)
    -> (tensor<?x16xf32>, tensor<5x8xf64>) {
  // CHECK: tfm.positional_encoding %[[X]] : tensor<?x?x16xf32> -> tensor<?x16xf32>
  %0 = tfm.positional_encoding %x : tensor<?x?x16xf32> -> tensor<?x16xf32>
  // CHECK: tfm.positional_encoding %[[Y]] : tensor<5x8xf64> -> tensor<5x8xf64>
  %1 = tfm.positional_encoding %y : tensor<5x8xf64> -> tensor<5x8xf64>
  return %0, %1 : tensor<?x16xf32>, tensor<5x8xf64>
}

// CHECK-LABEL: func.func @sdpa
// CHECK-SAME: (%[[Q:.*]]: tensor<?x24xf32>, %[[K:.*]]: tensor<?x24xf32>, %[[V:.*]]: tensor<?x28xf32>, %[[BQ:.*]]: tensor<2x4x8x16xf32>)
func.func @sdpa(%q: tensor<?x24xf32>, %k: tensor<?x24xf32>, %v: tensor<?x28xf32>,
                %bq: tensor<2x4x8x16xf32>)
    -> (tensor<?x28xf32>, tensor<?x28xf32>, tensor<2x4x8x16xf32>) {
  // CHECK: tfm.sdpa %[[Q]], %[[K]], %[[V]] : tensor<?x24xf32>, tensor<?x24xf32>, tensor<?x28xf32> -> tensor<?x28xf32>
  %0 = tfm.sdpa %q, %k, %v : tensor<?x24xf32>, tensor<?x24xf32>, tensor<?x28xf32> -> tensor<?x28xf32>
  // CHECK: tfm.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64} : tensor<?x24xf32>, tensor<?x24xf32>, tensor<?x28xf32> -> tensor<?x28xf32>
  %1 = tfm.sdpa %q, %k, %v {scale = 0.125 : f64} : tensor<?x24xf32>, tensor<?x24xf32>, tensor<?x28xf32> -> tensor<?x28xf32>
  // CHECK: tfm.sdpa %[[BQ]], %[[BQ]], %[[BQ]] : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %2 = tfm.sdpa %bq, %bq, %bq : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %0, %1, %2 : tensor<?x28xf32>, tensor<?x28xf32>, tensor<2x4x8x16xf32>
}

// CHECK-LABEL: func.func @multi_head_attention
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[KV:.*]]: tensor<?x?x6xf32>, %[[WQ:.*]]: tensor<8x8xf32>, %[[WKV:.*]]: tensor<8x6xf32>, %[[WO:.*]]: tensor<8x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[S:.*]]: tensor<5x8xf32>)
func.func @multi_head_attention(%x: tensor<?x?x8xf32>, %kv: tensor<?x?x6xf32>,
    %wq: tensor<8x8xf32>, %wkv: tensor<8x6xf32>, %wo: tensor<8x8xf32>,
    %b: tensor<8xf32>, %s: tensor<5x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<5x8xf32>) {
  // Without biases: no `biases (...)` group.
  // CHECK: tfm.multi_head_attention(%[[X]], %[[KV]], %[[KV]]) weights(%[[WQ]], %[[WKV]], %[[WKV]], %[[WO]]) heads 2
  // CHECK-SAME: : (tensor<?x?x8xf32>, tensor<?x?x6xf32>, tensor<?x?x6xf32>, tensor<8x8xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %0 = tfm.multi_head_attention (%x, %kv, %kv) weights (%wq, %wkv, %wkv, %wo) heads 2
      : (tensor<?x?x8xf32>, tensor<?x?x6xf32>, tensor<?x?x6xf32>, tensor<8x8xf32>,
         tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  // With biases.
  // CHECK: tfm.multi_head_attention(%[[X]], %[[X]], %[[X]]) weights(%[[WQ]], %[[WQ]], %[[WQ]], %[[WO]]) biases(%[[B]], %[[B]], %[[B]], %[[B]]) heads 4
  // CHECK-SAME: : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %1 = tfm.multi_head_attention (%x, %x, %x) weights (%wq, %wq, %wq, %wo)
      biases (%b, %b, %b, %b) heads 4
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>,
         tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  // Unbatched and fully static.
  // CHECK: tfm.multi_head_attention(%[[S]], %[[S]], %[[S]]) weights(%[[WQ]], %[[WQ]], %[[WQ]], %[[WO]]) heads 8
  // CHECK-SAME: -> tensor<5x8xf32>
  %2 = tfm.multi_head_attention (%s, %s, %s) weights (%wq, %wq, %wq, %wo) heads 8
      : (tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<5x8xf32>
  return %0, %1, %2 : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<5x8xf32>
}

// CHECK-LABEL: func.func @masked_fill
// CHECK-SAME: (%[[S:.*]]: tensor<2x?x?xf32>, %[[M:.*]]: tensor<?x?xi1>, %[[ROW:.*]]: tensor<1x?xi1>)
func.func @masked_fill(%s: tensor<2x?x?xf32>, %m: tensor<?x?xi1>, %row: tensor<1x?xi1>)
    -> (tensor<2x?x?xf32>, tensor<2x?x?xf32>) {
  // -inf as an f64 attribute.
  // CHECK: tfm.masked_fill %[[S]], %[[M]], 0xFFF0000000000000 : tensor<2x?x?xf32>, tensor<?x?xi1> -> tensor<2x?x?xf32>
  %0 = tfm.masked_fill %s, %m, 0xFFF0000000000000 : tensor<2x?x?xf32>, tensor<?x?xi1> -> tensor<2x?x?xf32>
  // CHECK: tfm.masked_fill %[[S]], %[[ROW]], 0.000000e+00 : tensor<2x?x?xf32>, tensor<1x?xi1> -> tensor<2x?x?xf32>
  %1 = tfm.masked_fill %s, %row, 0.0 : tensor<2x?x?xf32>, tensor<1x?xi1> -> tensor<2x?x?xf32>
  return %0, %1 : tensor<2x?x?xf32>, tensor<2x?x?xf32>
}

// CHECK-LABEL: func.func @causal_mask
// CHECK-SAME: (%[[S:.*]]: tensor<?x4x?x?xf32>)
func.func @causal_mask(%s: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> {
  // CHECK: tfm.causal_mask %[[S]] : tensor<?x4x?x?xf32>
  %0 = tfm.causal_mask %s : tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// CHECK-LABEL: func.func @attention_tensors
// CHECK-SAME: (%[[Q:.*]]: tensor<?x2x?x8xf32>, %[[K:.*]]: tensor<?x2x?x8xf32>, %[[V:.*]]: tensor<?x2x?x4xf32>, %[[I:.*]]: tensor<?x2x?x4xf32>, %[[BM:.*]]: tensor<?x?xi1>, %[[FM:.*]]: tensor<1x?xf32>)
func.func @attention_tensors(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x4xf32>,
                             %init: tensor<?x2x?x4xf32>, %bmask: tensor<?x?xi1>, %fmask: tensor<1x?xf32>)
    -> (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) {
  // CHECK: tfm.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x4xf32>) outs(%[[I]] : tensor<?x2x?x4xf32>) scale 0.35355339059327373 -> tensor<?x2x?x4xf32>
  %0 = tfm.attention ins(%q, %k, %v : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x4xf32>)
         outs(%init : tensor<?x2x?x4xf32>) scale 0.35355339059327373 -> tensor<?x2x?x4xf32>
  // CHECK: tfm.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) mask(%[[BM]] : tensor<?x?xi1>) outs(%[[I]] : tensor<?x2x?x4xf32>) scale 1.250000e-01 {causal} -> tensor<?x2x?x4xf32>
  %1 = tfm.attention ins(%q, %k, %v : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x4xf32>)
         mask(%bmask : tensor<?x?xi1>) outs(%init : tensor<?x2x?x4xf32>) scale 0.125 {causal} -> tensor<?x2x?x4xf32>
  // CHECK: tfm.attention ins({{.*}}) mask(%[[FM]] : tensor<1x?xf32>) outs(%[[I]] : tensor<?x2x?x4xf32>) scale 1.000000e+00 -> tensor<?x2x?x4xf32>
  %2 = tfm.attention ins(%q, %k, %v : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x4xf32>)
         mask(%fmask : tensor<1x?xf32>) outs(%init : tensor<?x2x?x4xf32>) scale 1.0 -> tensor<?x2x?x4xf32>
  return %0, %1, %2 : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>
}

// Attention over a cache: per-sequence valid keys and query offsets.
// CHECK-LABEL: func.func @attention_cache
// CHECK: tfm.attention ins({{.*}}) kv_length(%{{.*}} : tensor<?xi64>) query_offset(%{{.*}} : tensor<?xi64>) outs({{.*}}) scale 1.250000e-01 {causal} -> tensor<?x2x1x8xf32>
// CHECK: tfm.attention ins({{.*}}) kv_length(%{{.*}} : memref<?xi64>) outs({{.*}}) scale 1.250000e-01{{$}}
func.func @attention_cache(%q: tensor<?x2x1x8xf32>, %kc: tensor<?x2x16x8xf32>, %past: tensor<?xi64>,
                           %init: tensor<?x2x1x8xf32>, %qm: memref<?x2x1x8xf32>, %km: memref<?x2x16x8xf32>,
                           %lm: memref<?xi64>) -> tensor<?x2x1x8xf32> {
  %0 = tfm.attention ins(%q, %kc, %kc : tensor<?x2x1x8xf32>, tensor<?x2x16x8xf32>, tensor<?x2x16x8xf32>)
         kv_length(%past : tensor<?xi64>) query_offset(%past : tensor<?xi64>)
         outs(%init : tensor<?x2x1x8xf32>) scale 0.125 {causal} -> tensor<?x2x1x8xf32>
  tfm.attention ins(%qm, %km, %km : memref<?x2x1x8xf32>, memref<?x2x16x8xf32>, memref<?x2x16x8xf32>)
      kv_length(%lm : memref<?xi64>) outs(%qm : memref<?x2x1x8xf32>) scale 0.125
  return %0 : tensor<?x2x1x8xf32>
}

// f32 attention over bf16 keys and f16 values (a low-precision cache).
// CHECK-LABEL: func.func @attention_low_precision_cache
// CHECK: tfm.attention ins({{.*}} : tensor<?x2x1x8xf32>, tensor<?x1x16x8xbf16>, tensor<?x1x16x8xf16>) query_offset({{.*}}) outs({{.*}} : tensor<?x2x1x8xf32>)
func.func @attention_low_precision_cache(%q: tensor<?x2x1x8xf32>, %kc: tensor<?x1x16x8xbf16>, %vc: tensor<?x1x16x8xf16>,
                                         %past: tensor<?xi64>, %init: tensor<?x2x1x8xf32>) -> tensor<?x2x1x8xf32> {
  %0 = tfm.attention ins(%q, %kc, %vc : tensor<?x2x1x8xf32>, tensor<?x1x16x8xbf16>, tensor<?x1x16x8xf16>)
         query_offset(%past : tensor<?xi64>) outs(%init : tensor<?x2x1x8xf32>) scale 0.125 {causal} -> tensor<?x2x1x8xf32>
  return %0 : tensor<?x2x1x8xf32>
}

// cache_append returns the updated cache and a status on tensors, the
// status alone on memrefs.
// CHECK-LABEL: func.func @cache_append
// CHECK: %{{.*}}, %{{.*}} = tfm.cache_append ins(%{{.*}}, %{{.*}} : tensor<?x2x?x8xf32>, tensor<?xi64>) outs(%{{.*}} : tensor<?x2x16x8xf32>) dim 2 code 3 -> tensor<?x2x16x8xf32>
// CHECK: %{{.*}} = tfm.cache_append ins(%{{.*}}, %{{.*}} : memref<?x2x?x8xf32>, memref<?xi64>) outs(%{{.*}} : memref<?x2x16x8xf32>) dim 2 code 4{{$}}
func.func @cache_append(%k: tensor<?x2x?x8xf32>, %past: tensor<?xi64>, %cache: tensor<?x2x16x8xf32>,
                        %km: memref<?x2x?x8xf32>, %pm: memref<?xi64>, %cm: memref<?x2x16x8xf32>)
    -> (tensor<?x2x16x8xf32>, i32, i32) {
  %0, %s = tfm.cache_append ins(%k, %past : tensor<?x2x?x8xf32>, tensor<?xi64>)
             outs(%cache : tensor<?x2x16x8xf32>) dim 2 code 3 -> tensor<?x2x16x8xf32>
  %t = tfm.cache_append ins(%km, %pm : memref<?x2x?x8xf32>, memref<?xi64>)
         outs(%cm : memref<?x2x16x8xf32>) dim 2 code 4
  return %0, %s, %t : tensor<?x2x16x8xf32>, i32, i32
}

// On memrefs (after bufferization) attention writes init and has no result.
// CHECK-LABEL: func.func @attention_memrefs
// CHECK-SAME: (%[[Q:.*]]: memref<?x8xf64>, %[[O:.*]]: memref<?x8xf64>)
func.func @attention_memrefs(%q: memref<?x8xf64>, %out: memref<?x8xf64>) {
  // CHECK: tfm.attention ins(%[[Q]], %[[Q]], %[[Q]] : memref<?x8xf64>, memref<?x8xf64>, memref<?x8xf64>) outs(%[[O]] : memref<?x8xf64>) scale 5.000000e-01{{$}}
  tfm.attention ins(%q, %q, %q : memref<?x8xf64>, memref<?x8xf64>, memref<?x8xf64>)
      outs(%out : memref<?x8xf64>) scale 0.5
  return
}

// CHECK-LABEL: func.func @activations
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
func.func @activations(%x: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  // CHECK: tfm.relu %[[X]] : tensor<?x8xf32>
  %0 = tfm.relu %x : tensor<?x8xf32>
  // The default approximation is not printed.
  // CHECK: tfm.gelu %[[X]] : tensor<?x8xf32>
  %1 = tfm.gelu %x approximate none : tensor<?x8xf32>
  // CHECK: tfm.gelu %[[X]] approximate tanh : tensor<?x8xf32>
  %2 = tfm.gelu %x approximate tanh : tensor<?x8xf32>
  return %0, %1, %2 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: func.func @checks
// CHECK-SAME: (%[[IDS:.*]]: tensor<?x?xi64>, %[[X:.*]]: tensor<?x?x16xf32>)
func.func @checks(%ids: tensor<?x?xi64>, %x: tensor<?x?x16xf32>) -> (i32, i32) {
  // CHECK: tfm.check_index %[[IDS]], bound 6, code 1 : tensor<?x?xi64>
  %0 = tfm.check_index %ids, bound 6, code 1 : tensor<?x?xi64>
  // CHECK: tfm.check_size %[[X]], dim -2, max 64, code 2 : tensor<?x?x16xf32>
  %1 = tfm.check_size %x, dim -2, max 64, code 2 : tensor<?x?x16xf32>
  return %0, %1 : i32, i32
}

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x16xf32>, %[[W:.*]]: tensor<16xf32>, %[[B:.*]]: tensor<16xf32>)
func.func @layer_norm(%x: tensor<?x?x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>)
    -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>) {
  // CHECK: tfm.layer_norm %[[X]] weight %[[W]] bias %[[B]] eps 1.000000e-05 : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  %0 = tfm.layer_norm %x weight %w bias %b eps 1.0e-5 : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  // CHECK: tfm.layer_norm %[[X]] weight %[[W]] eps 9.9999999999999995E-7 : (tensor<?x?x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  %1 = tfm.layer_norm %x weight %w eps 1.0e-6 : (tensor<?x?x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  // CHECK: tfm.layer_norm %[[X]] eps 1.000000e-05 : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %2 = tfm.layer_norm %x eps 1.0e-5 : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %0, %1, %2 : tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>
}

// CHECK-LABEL: func.func @learned_positional_encoding
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x16xf32>, %[[T:.*]]: tensor<64x16xf32>)
func.func @learned_positional_encoding(%x: tensor<?x?x16xf32>, %t: tensor<64x16xf32>) -> tensor<?x16xf32> {
  // CHECK: tfm.positional_encoding %[[X]], %[[T]] : tensor<?x?x16xf32>, tensor<64x16xf32> -> tensor<?x16xf32>
  %0 = tfm.positional_encoding %x, %t : tensor<?x?x16xf32>, tensor<64x16xf32> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @sdpa_masks
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x?x8xf32>, %[[K:.*]]: tensor<2x4x?x8xf32>, %[[KEEP:.*]]: tensor<?x?xi1>, %[[ADD:.*]]: tensor<2x1x1x?xf32>)
func.func @sdpa_masks(%q: tensor<2x4x?x8xf32>, %k: tensor<2x4x?x8xf32>,
                      %keep: tensor<?x?xi1>, %add: tensor<2x1x1x?xf32>)
    -> (tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>) {
  // CHECK: tfm.sdpa %[[Q]], %[[K]], %[[K]] mask(%[[KEEP]] : tensor<?x?xi1>) : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
  %0 = tfm.sdpa %q, %k, %k mask(%keep : tensor<?x?xi1>) : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
  // CHECK: tfm.sdpa %[[Q]], %[[K]], %[[K]] mask(%[[ADD]] : tensor<2x1x1x?xf32>) {causal, scale = 5.000000e-01 : f64}
  %1 = tfm.sdpa %q, %k, %k mask(%add : tensor<2x1x1x?xf32>) {causal, scale = 0.5 : f64} : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
  // CHECK: tfm.sdpa %[[Q]], %[[K]], %[[K]] {causal} :
  %2 = tfm.sdpa %q, %k, %k {causal} : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
  return %0, %1, %2 : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>
}

// CHECK-LABEL: func.func @multi_head_attention_options
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xf32>, %[[M:.*]]: tensor<2x7x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[PAD:.*]]: tensor<2x7xi1>, %[[AM:.*]]: tensor<4x5x7xf32>)
func.func @multi_head_attention_options(%x: tensor<2x5x8xf32>, %m: tensor<2x7x8xf32>,
    %w: tensor<8x8xf32>, %pad: tensor<2x7xi1>, %am: tensor<4x5x7xf32>)
    -> (tensor<2x5x8xf32>, tensor<2x5x7xf32>, tensor<2x5x8xf32>, tensor<2x2x5x7xf32>) {
  // CHECK: %{{.*}}, %{{.*}} = tfm.multi_head_attention(%[[X]], %[[M]], %[[M]]) weights(%[[W]], %[[W]], %[[W]], %[[W]]) key_padding_mask(%[[PAD]]) heads 2 :
  // CHECK-SAME: -> (tensor<2x5x8xf32>, tensor<2x5x7xf32>)
  %0, %1 = tfm.multi_head_attention (%x, %m, %m) weights (%w, %w, %w, %w)
      key_padding_mask(%pad) heads 2
      : (tensor<2x5x8xf32>, tensor<2x7x8xf32>, tensor<2x7x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x7xi1>)
        -> (tensor<2x5x8xf32>, tensor<2x5x7xf32>)
  // CHECK: tfm.multi_head_attention(%[[X]], %[[M]], %[[M]]) weights(%[[W]], %[[W]], %[[W]], %[[W]]) key_padding_mask(%[[PAD]]) attn_mask(%[[AM]]) heads 2 {average_attn_weights = false} :
  // CHECK-SAME: -> (tensor<2x5x8xf32>, tensor<2x2x5x7xf32>)
  %2, %3 = tfm.multi_head_attention (%x, %m, %m) weights (%w, %w, %w, %w)
      key_padding_mask(%pad) attn_mask(%am) heads 2 {average_attn_weights = false}
      : (tensor<2x5x8xf32>, tensor<2x7x8xf32>, tensor<2x7x8xf32>, tensor<8x8xf32>,
         tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x7xi1>, tensor<4x5x7xf32>)
        -> (tensor<2x5x8xf32>, tensor<2x2x5x7xf32>)
  return %0, %1, %2, %3 : tensor<2x5x8xf32>, tensor<2x5x7xf32>, tensor<2x5x8xf32>, tensor<2x2x5x7xf32>
}

// CHECK-LABEL: func.func @packed_linear(
// CHECK:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x7x3xf32>, tensor<2x3x8xf32>) bias(%{{.*}} : tensor<16xf32>) residual(%{{.*}} : tensor<?x7x13xf32>) outs(%{{.*}} : tensor<?x7x13xf32>) activation gelu -> tensor<?x7x13xf32>
// CHECK:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : memref<?x3xf32>, memref<2x3x8xf32>) outs(%{{.*}} : memref<?x13xf32>) activation relu
func.func @packed_linear(%x: tensor<?x7x3xf32>, %w: tensor<2x3x8xf32>, %b: tensor<16xf32>, %r: tensor<?x7x13xf32>, %i: tensor<?x7x13xf32>,
                         %mx: memref<?x3xf32>, %mw: memref<2x3x8xf32>, %my: memref<?x13xf32>) -> tensor<?x7x13xf32> {
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x7x3xf32>, tensor<2x3x8xf32>) bias(%b : tensor<16xf32>) residual(%r : tensor<?x7x13xf32>) outs(%i : tensor<?x7x13xf32>) activation gelu -> tensor<?x7x13xf32>
  tfm.packed_linear ins(%mx, %mw : memref<?x3xf32>, memref<2x3x8xf32>) outs(%my : memref<?x13xf32>) activation relu
  return %0 : tensor<?x7x13xf32>
}

// The i8 forms: per-column scales and sums, or block scales alone (Q8_0).
// CHECK-LABEL: func.func @packed_linear_i8(
// CHECK:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<1x16x32xi8>) dequant(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xi32>) outs(%{{.*}} : tensor<?x5xf32>) activation none -> tensor<?x5xf32>
// CHECK:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<1x16x32xi8>) dequant(%{{.*}} : tensor<2x8xf32>) outs(%{{.*}} : tensor<?x5xf32>) activation none -> tensor<?x5xf32>
func.func @packed_linear_i8(%x: tensor<?x64xf32>, %w: tensor<1x16x32xi8>, %s: tensor<8xf32>, %u: tensor<8xi32>, %bs: tensor<2x8xf32>, %i: tensor<?x5xf32>) -> (tensor<?x5xf32>, tensor<?x5xf32>) {
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x64xf32>, tensor<1x16x32xi8>) dequant(%s, %u : tensor<8xf32>, tensor<8xi32>) outs(%i : tensor<?x5xf32>) activation none -> tensor<?x5xf32>
  %1 = tfm.packed_linear ins(%x, %w : tensor<?x64xf32>, tensor<1x16x32xi8>) dequant(%bs : tensor<2x8xf32>) outs(%i : tensor<?x5xf32>) activation none -> tensor<?x5xf32>
  return %0, %1 : tensor<?x5xf32>, tensor<?x5xf32>
}

// GGUF scales as the file keeps them: f16 per block (and offset), or a
// K-quant's i8 sub-block scales and mins with f16 super-block d and -dmin.
// CHECK-LABEL: func.func @packed_linear_small_scales(
// CHECK:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x256xf32>, tensor<1x32x32xi8>) dequant(%{{.*}} : tensor<8x8xf16>) offsets(%{{.*}} : tensor<8x8xf16>) outs(%{{.*}} : tensor<?x5xf32>) activation none -> tensor<?x5xf32>
// CHECK:         tfm.packed_linear ins(%{{.*}}, %{{.*}} : tensor<?x256xf32>, tensor<1x32x32xi8>) dequant(%{{.*}} : tensor<8x8xi8>) offsets(%{{.*}} : tensor<8x8xi8>) super_scales(%{{.*}} : tensor<2x1x8xf16>) outs(%{{.*}} : tensor<?x5xf32>) activation none -> tensor<?x5xf32>
func.func @packed_linear_small_scales(%x: tensor<?x256xf32>, %w: tensor<1x32x32xi8>, %hs: tensor<8x8xf16>, %ho: tensor<8x8xf16>, %ks: tensor<8x8xi8>, %km: tensor<8x8xi8>, %d: tensor<2x1x8xf16>, %i: tensor<?x5xf32>) -> (tensor<?x5xf32>, tensor<?x5xf32>) {
  %0 = tfm.packed_linear ins(%x, %w : tensor<?x256xf32>, tensor<1x32x32xi8>) dequant(%hs : tensor<8x8xf16>) offsets(%ho : tensor<8x8xf16>) outs(%i : tensor<?x5xf32>) activation none -> tensor<?x5xf32>
  %1 = tfm.packed_linear ins(%x, %w : tensor<?x256xf32>, tensor<1x32x32xi8>) dequant(%ks : tensor<8x8xi8>) offsets(%km : tensor<8x8xi8>) super_scales(%d : tensor<2x1x8xf16>) outs(%i : tensor<?x5xf32>) activation none -> tensor<?x5xf32>
  return %0, %1 : tensor<?x5xf32>, tensor<?x5xf32>
}
