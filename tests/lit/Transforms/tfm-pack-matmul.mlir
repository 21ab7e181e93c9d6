// RUN: tfm-opt %s -split-input-file -tfm-pack-matmul -canonicalize -cse | FileCheck %s
// RUN: tfm-opt %s -split-input-file -tfm-pack-matmul=vector-bits=256 | FileCheck %s --check-prefix=AVX2

#a = affine_map<(b, m, n, k) -> (b, m, k)>
#b = affine_map<(b, m, n, k) -> (b, k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>

// Q·Kᵀ of 8 heads left unfused: Kᵀ is packed at run time into 32-column
// panels (zero past N, which is dynamic), and each head's product is a
// packed_linear on that head's slices, accumulated in place into the output.

// CHECK-LABEL: func.func @per_batch
// CHECK-SAME: (%[[Q:.*]]: tensor<8x?x64xf32>, %[[KT:.*]]: tensor<8x64x?xf32>, %[[E:.*]]: tensor<8x?x?xf32>)
// CHECK-NOT:  linalg.generic
// CHECK:      %[[N:.*]] = tensor.dim %[[KT]], %c2
// CHECK-NOT:  linalg.generic
// CHECK:      %[[P:.*]] = affine.apply #{{.*}}()[%[[N]]]
// CHECK-NOT:  linalg.generic
// CHECK:      %[[ZEROS:.*]] = linalg.fill
// CHECK-NOT:  linalg.generic
// CHECK:      %[[PADDED:.*]] = tensor.insert_slice %[[KT]] into %[[ZEROS]][0, 0, 0] [8, 64, %[[N]]]
// CHECK-NOT:  linalg.generic
// CHECK:      %[[EXP:.*]] = tensor.expand_shape %[[PADDED]] {{\[}}[0], [1], [2, 3]] output_shape [8, 64, %[[P]], 32]
// CHECK-NOT:  linalg.generic
// CHECK:      %[[PACKED:.*]] = linalg.transpose ins(%[[EXP]] : tensor<8x64x?x32xf32>) outs(%{{.*}} : tensor<8x?x64x32xf32>) permutation = [0, 2, 1, 3]
// CHECK-NOT:  linalg.generic
// CHECK:      %[[R:.*]] = scf.for %[[B:.*]] = %c0 to %c8 step %c1 iter_args(%[[ACC:.*]] = %[[E]])
// CHECK-NOT:  linalg.generic
// CHECK:        %[[QB:.*]] = tensor.extract_slice %[[Q]][%[[B]], 0, 0] [1, %{{.*}}, 64] [1, 1, 1] : tensor<8x?x64xf32> to tensor<?x64xf32>
// CHECK-NOT:  linalg.generic
// CHECK:        %[[KB:.*]] = tensor.extract_slice %[[PACKED]][%[[B]], 0, 0, 0] [1, %[[P]], 64, 32] [1, 1, 1, 1] : tensor<8x?x64x32xf32> to tensor<?x64x32xf32>
// CHECK-NOT:  linalg.generic
// CHECK:        %[[CB:.*]] = tensor.extract_slice %[[ACC]][%[[B]], 0, 0]
// CHECK-NOT:  linalg.generic
// CHECK:        %[[G:.*]] = tfm.packed_linear ins(%[[QB]], %[[KB]] : tensor<?x64xf32>, tensor<?x64x32xf32>) outs(%[[CB]] : tensor<?x?xf32>) activation none
// CHECK-NOT:  linalg.generic
// CHECK:        %[[NEXT:.*]] = tensor.insert_slice %[[G]] into %[[ACC]][%[[B]], 0, 0]
// CHECK-NOT:  linalg.generic
// CHECK:        scf.yield %[[NEXT]]
// CHECK-NOT:  linalg.generic
// CHECK:      return %[[R]]
// AVX2-LABEL: func.func @per_batch
// AVX2:       output_shape [8, 64, %{{.*}}, 16]
func.func @per_batch(%q: tensor<8x?x64xf32>, %kt: tensor<8x64x?xf32>, %e: tensor<8x?x?xf32>) -> tensor<8x?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x?x?xf32>) -> tensor<8x?x?xf32>
  %s = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kt : tensor<8x?x64xf32>, tensor<8x64x?xf32>) outs(%z : tensor<8x?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x?x?xf32>
  return %s : tensor<8x?x?xf32>
}

// -----

// A right operand without batch dims serves every batch's rows at once, and
// one whose N is a multiple of the panel width needs no zero padding.

// CHECK-LABEL: func.func @shared_right_operand
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x24xf32>, %[[M:.*]]: tensor<24x64xf32>
// CHECK-NOT:  linalg.fill
// CHECK:      %[[EXP:.*]] = tensor.expand_shape %[[M]] {{\[}}[0], [1, 2]] output_shape [24, 2, 32]
// CHECK:      %[[PACKED:.*]] = linalg.transpose ins(%[[EXP]] : tensor<24x2x32xf32>) outs(%{{.*}} : tensor<2x24x32xf32>) permutation = [1, 0, 2]
// CHECK-NOT:  scf.for
// CHECK:      tfm.packed_linear ins(%[[X]], %[[PACKED]] : tensor<?x?x24xf32>, tensor<2x24x32xf32>)
#xs = affine_map<(b, m, n, k) -> (b, m, k)>
#ms = affine_map<(b, m, n, k) -> (k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @shared_right_operand(%x: tensor<?x?x24xf32>, %m: tensor<24x64xf32>, %e: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %s = linalg.generic {indexing_maps = [#xs, #ms, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %m : tensor<?x?x24xf32>, tensor<24x64xf32>) outs(%z : tensor<?x?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?x64xf32>
  return %s : tensor<?x?x64xf32>
}

// -----

// A left operand whose batch dim broadcasts ([1, M, K] against 3 batches of
// B) is read at batch 0 in every iteration.

// CHECK-LABEL: func.func @broadcast_left
// CHECK-SAME: (%[[A:.*]]: tensor<1x?x8xf32>
// CHECK:      scf.for %[[B:.*]] = %c0 to %c3
// CHECK:        tensor.extract_slice %[[A]][0, 0, 0] [1, %{{.*}}, 8] [1, 1, 1] : tensor<1x?x8xf32> to tensor<?x8xf32>
// CHECK:        tfm.packed_linear
#a0 = affine_map<(b, m, n, k) -> (0, m, k)>
#b = affine_map<(b, m, n, k) -> (b, k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @broadcast_left(%a: tensor<1x?x8xf32>, %b: tensor<3x8x5xf32>, %e: tensor<3x?x5xf32>) -> tensor<3x?x5xf32> {
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x?x5xf32>) -> tensor<3x?x5xf32>
  %s = linalg.generic {indexing_maps = [#a0, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<1x?x8xf32>, tensor<3x8x5xf32>) outs(%z : tensor<3x?x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x?x5xf32>
  return %s : tensor<3x?x5xf32>
}

// -----

// Left alone: fewer static rows than min-rows (packing would cost as much
// as the product), an output that does not start at zero, and f64.

// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:  tfm.packed_linear
#a2 = affine_map<(m, n, k) -> (m, k)>
#b2 = affine_map<(m, n, k) -> (k, n)>
#c2 = affine_map<(m, n, k) -> (m, n)>
func.func @left_alone(%row: tensor<2x16xf32>, %x: tensor<?x16xf32>, %w: tensor<16x?xf32>, %acc: tensor<?x?xf32>,
                      %x64: tensor<?x16xf64>, %w64: tensor<16x?xf64>, %e64: tensor<?x?xf64>, %e2: tensor<2x?xf32>)
    -> (tensor<2x?xf32>, tensor<?x?xf32>, tensor<?x?xf64>) {
  %zero = arith.constant 0.0 : f32
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x?xf32>) -> tensor<2x?xf32>
  %few = linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%row, %w : tensor<2x16xf32>, tensor<16x?xf32>) outs(%z2 : tensor<2x?xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x?xf32>
  %accumulate = linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x16xf32>, tensor<16x?xf32>) outs(%acc : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  %zero64 = arith.constant 0.0 : f64
  %z64 = linalg.fill ins(%zero64 : f64) outs(%e64 : tensor<?x?xf64>) -> tensor<?x?xf64>
  %double = linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x64, %w64 : tensor<?x16xf64>, tensor<16x?xf64>) outs(%z64 : tensor<?x?xf64>) {
  ^bb0(%a: f64, %b: f64, %c: f64):
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %c, %p : f64
    linalg.yield %s : f64
  } -> tensor<?x?xf64>
  return %few, %accumulate, %double : tensor<2x?xf32>, tensor<?x?xf32>, tensor<?x?xf64>
}
