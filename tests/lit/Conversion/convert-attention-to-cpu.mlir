// RUN: tfm-opt %s -split-input-file -convert-attention-to-cpu -canonicalize | FileCheck %s
// RUN: tfm-opt %s -split-input-file -convert-attention-to-cpu="vector-bits=256" -canonicalize | FileCheck %s --check-prefix=AVX2
// RUN: tfm-opt %s -split-input-file -convert-attention-to-cpu="block-q=32 micro-rows=2 key-vectors=1" -canonicalize | FileCheck %s --check-prefix=TILES

// The work is outlined into a task function over a range of
// (batch*head, query block) tasks; the op becomes one call over all tasks.
// CHECK-LABEL: func.func private @__tfm_task_attention_0
// CHECK-SAME:    (%[[Q:.*]]: memref<?x?x64xf32>, %[[K:.*]]: memref<?x?x64xf32>, %[[V:.*]]: memref<?x?x48xf32>, %[[O:.*]]: memref<?x?x48xf32>, %[[BEGIN:.*]]: index, %[[END:.*]]: index)
// Stack tiles: packed K^T, scores, accumulator (Dv = 48 padded to 3 vectors), max, sum, correction.
// CHECK-DAG:   memref.alloca() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK-DAG:   memref.alloca() {alignment = 64 : i64} : memref<64x48xf32>
// CHECK-DAG:   memref.alloca() {alignment = 64 : i64} : memref<64xf32>
// CHECK:       scf.for %{{.*}} = %[[BEGIN]] to %[[END]]
// Scores micro-kernel: 4 rows x 4 vectors of accumulators carried over Dk.
// CHECK:       scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-16: vector.fma
// Online softmax: row max as a vector reduction, exp as a polynomial.
// CHECK:       vector.reduction <maximumf>
// CHECK-NOT:   math.exp
// CHECK:       vector.reduction <add>
// P V micro-kernel over the valid keys.
// CHECK:       vector.fma
// Normalized output rows.
// CHECK:       arith.divf
// CHECK:       vector.store %{{.*}}, %[[O]]
// CHECK-LABEL: func.func @attention
// CHECK-NOT:   tfm.attention
// CHECK:       call @__tfm_task_attention_0({{.*}}) : (memref<?x?x64xf32>, memref<?x?x64xf32>, memref<?x?x48xf32>, memref<?x?x48xf32>, index, index) -> ()

// With 256-bit vectors: 8 lanes, 4 rows x 2 vectors.
// AVX2-LABEL: func.func private @__tfm_task_attention_0
// AVX2-DAG:   memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// AVX2:       iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)

// TILES-LABEL: func.func private @__tfm_task_attention_0
// TILES-DAG:   memref.alloca() {alignment = 64 : i64} : memref<32x16xf32>
// TILES:       iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>)
func.func @attention(%q: memref<?x?x64xf32>, %k: memref<?x?x64xf32>, %v: memref<?x?x48xf32>, %o: memref<?x?x48xf32>) {
  tfm.attention ins(%q, %k, %v : memref<?x?x64xf32>, memref<?x?x64xf32>, memref<?x?x48xf32>) outs(%o : memref<?x?x48xf32>) scale 0.125
  return
}

// -----

// Causal attention stops the key loop at the block's last query row, and a
// float mask is read with masked vector loads. A 4-D [B, H, S, D] operand is
// viewed as [B*H, S, D].
// CHECK-LABEL: func.func private @__tfm_task_attention_0
// CHECK-SAME:    memref<2x?x?x32xf32>
// CHECK:       memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : memref<2x?x?x32xf32> into memref<?x?x32xf32>
// CHECK:       arith.minsi
// CHECK:       vector.maskedload
// CHECK-LABEL: func.func @causal_masked
func.func @causal_masked(%q: memref<2x?x?x32xf32>, %k: memref<2x?x?x32xf32>, %v: memref<2x?x?x32xf32>, %m: memref<?x?xf32>, %o: memref<2x?x?x32xf32>) {
  tfm.attention ins(%q, %k, %v : memref<2x?x?x32xf32>, memref<2x?x?x32xf32>, memref<2x?x?x32xf32>) mask(%m : memref<?x?xf32>) outs(%o : memref<2x?x?x32xf32>) scale 0.17677669529663687 {causal}
  return
}
