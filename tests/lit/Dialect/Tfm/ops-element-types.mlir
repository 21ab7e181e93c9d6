// RUN: tfm-opt %s | tfm-opt | FileCheck %s
// RUN: tfm-opt %s -mlir-print-op-generic | tfm-opt | FileCheck %s

// Round trip of ops on bf16, f16 and i8 tensors: element types are a
// parameter of the ops, whose type inference keeps them.

// CHECK-LABEL: func.func @low_precision_math
func.func @low_precision_math(%x: tensor<?x4xbf16>, %c: tensor<bf16>,
                              %h: tensor<2x?xf16>) {
  // CHECK: tfm.add %{{.*}}, %{{.*}} : tensor<?x4xbf16>, tensor<bf16> -> tensor<?x4xbf16>
  %0 = tfm.add %x, %c : tensor<?x4xbf16>, tensor<bf16> -> tensor<?x4xbf16>
  // CHECK: tfm.div %{{.*}}, %{{.*}} : tensor<?x4xbf16>, tensor<?x4xbf16> -> tensor<?x4xbf16>
  %1 = tfm.div %x, %x : tensor<?x4xbf16>, tensor<?x4xbf16> -> tensor<?x4xbf16>
  // CHECK: tfm.exp %{{.*}} : tensor<2x?xf16>
  %2 = tfm.exp %h : tensor<2x?xf16>
  // CHECK: tfm.compare lt %{{.*}}, %{{.*}} : tensor<?x4xbf16>, tensor<bf16> -> tensor<?x4xi1>
  %3 = tfm.compare lt %x, %c : tensor<?x4xbf16>, tensor<bf16> -> tensor<?x4xi1>
  // CHECK: tfm.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x4xi1>, tensor<?x4xbf16>, tensor<bf16> -> tensor<?x4xbf16>
  %4 = tfm.where %3, %x, %c : tensor<?x4xi1>, tensor<?x4xbf16>, tensor<bf16> -> tensor<?x4xbf16>
  // CHECK: tfm.reduce mean %{{.*}} dims [1] : tensor<2x?xf16> -> tensor<2xf16>
  %5 = tfm.reduce mean %h dims [1] : tensor<2x?xf16> -> tensor<2xf16>
  // CHECK: tfm.softmax %{{.*}}, -1 : tensor<?x4xbf16>
  %6 = tfm.softmax %x, -1 : tensor<?x4xbf16>
  // CHECK: tfm.scale %{{.*}}, 5.000000e-01 {divide} : tensor<2x?xf16>
  %7 = tfm.scale %h, 0.5 {divide} : tensor<2x?xf16>
  // CHECK: tfm.gelu %{{.*}} : tensor<?x4xbf16>
  %8 = tfm.gelu %x : tensor<?x4xbf16>
  // CHECK: tfm.matmul %{{.*}}, %{{.*}} : tensor<?x4xbf16>, tensor<4x?xbf16> -> tensor<?x?xbf16>
  %t = tfm.transpose %x, 0, 1 : tensor<?x4xbf16> -> tensor<4x?xbf16>
  %9 = tfm.matmul %x, %t : tensor<?x4xbf16>, tensor<4x?xbf16> -> tensor<?x?xbf16>
  // CHECK: tfm.masked_fill %{{.*}}, %{{.*}}, 0xFFF0000000000000 : tensor<?x4xbf16>, tensor<?x4xi1> -> tensor<?x4xbf16>
  %10 = tfm.masked_fill %x, %3, 0xFFF0000000000000 : tensor<?x4xbf16>, tensor<?x4xi1> -> tensor<?x4xbf16>
  return
}

// CHECK-LABEL: func.func @casts
func.func @casts(%x: tensor<?x4xf32>, %d: tensor<3xf64>, %q: tensor<5xi8>) {
  // CHECK: tfm.cast %{{.*}} : tensor<?x4xf32> -> tensor<?x4xbf16>
  %0 = tfm.cast %x : tensor<?x4xf32> -> tensor<?x4xbf16>
  // CHECK: tfm.cast %{{.*}} : tensor<?x4xbf16> -> tensor<?x4xf16>
  %1 = tfm.cast %0 : tensor<?x4xbf16> -> tensor<?x4xf16>
  // CHECK: tfm.cast %{{.*}} : tensor<3xf64> -> tensor<3xbf16>
  %2 = tfm.cast %d : tensor<3xf64> -> tensor<3xbf16>
  // CHECK: tfm.cast %{{.*}} : tensor<5xi8> -> tensor<5xf16>
  %3 = tfm.cast %q : tensor<5xi8> -> tensor<5xf16>
  // CHECK: tfm.cast %{{.*}} : tensor<?x4xf16> -> tensor<?x4xi8>
  %4 = tfm.cast %1 : tensor<?x4xf16> -> tensor<?x4xi8>
  return
}

// CHECK-LABEL: func.func @bytes
func.func @bytes(%q: tensor<?x3xi8>, %c: tensor<i8>) {
  // CHECK: tfm.add %{{.*}}, %{{.*}} : tensor<?x3xi8>, tensor<i8> -> tensor<?x3xi8>
  %0 = tfm.add %q, %c : tensor<?x3xi8>, tensor<i8> -> tensor<?x3xi8>
  // CHECK: tfm.mul %{{.*}}, %{{.*}} : tensor<?x3xi8>, tensor<?x3xi8> -> tensor<?x3xi8>
  %1 = tfm.mul %q, %q : tensor<?x3xi8>, tensor<?x3xi8> -> tensor<?x3xi8>
  // CHECK: tfm.neg %{{.*}} : tensor<?x3xi8>
  %2 = tfm.neg %q : tensor<?x3xi8>
  // CHECK: tfm.reduce max %{{.*}} dims [0] : tensor<?x3xi8> -> tensor<3xi8>
  %3 = tfm.reduce max %q dims [0] : tensor<?x3xi8> -> tensor<3xi8>
  // CHECK: tfm.concat %{{.*}}, %{{.*}} dim 1 : (tensor<?x3xi8>, tensor<?x3xi8>) -> tensor<?x6xi8>
  %4 = tfm.concat %q, %q dim 1 : (tensor<?x3xi8>, tensor<?x3xi8>) -> tensor<?x6xi8>
  // CHECK: tfm.permute %{{.*}} [1, 0] : tensor<?x3xi8> -> tensor<3x?xi8>
  %5 = tfm.permute %q [1, 0] : tensor<?x3xi8> -> tensor<3x?xi8>
  return
}

// CHECK-LABEL: func.func @layers
func.func @layers(%x: tensor<?x?x8xbf16>, %w: tensor<8x8xbf16>,
                  %b: tensor<8xbf16>) {
  // CHECK: tfm.linear %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x?x8xbf16>, tensor<8x8xbf16>, tensor<8xbf16> -> tensor<?x?x8xbf16>
  %0 = tfm.linear %x, %w, %b : tensor<?x?x8xbf16>, tensor<8x8xbf16>, tensor<8xbf16> -> tensor<?x?x8xbf16>
  // CHECK: tfm.layer_norm %{{.*}} weight %{{.*}} bias %{{.*}} eps
  %1 = tfm.layer_norm %x weight %b bias %b eps 1.0e-05
         : (tensor<?x?x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<?x?x8xbf16>
  // CHECK: tfm.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal} : tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?x8xbf16> -> tensor<?x?x8xbf16>
  %2 = tfm.sdpa %x, %x, %x {causal} : tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?x8xbf16> -> tensor<?x?x8xbf16>
  return
}
