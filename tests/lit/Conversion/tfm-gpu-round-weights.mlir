// RUN: tfm-opt %s -split-input-file -tfm-gpu-round-weights | FileCheck %s

// A weight read only to be rounded gets a rounded copy (to nearest even:
// 0.1 -> 0x2E66 in f16, 0x3DCD in bf16) and the f32 global goes; one read
// both ways keeps both.
// CHECK-NOT:   memref.global "private" constant @w :
// CHECK-DAG:   memref.global "private" constant @w_f16 : memref<2x2xf16> = dense<{{\[}}[1.000000e+00, 9.997550e-02], [-2.500000e+00, 6.550400e+04]]>
// CHECK-DAG:   memref.global "private" constant @w_bf16 : memref<2x2xbf16> = dense<{{\[}}[1.000000e+00, 1.000980e-01], [-2.500000e+00, 6.553600e+04]]>
// CHECK-DAG:   memref.global "private" constant @v : memref<2xf32>
// CHECK-DAG:   memref.global "private" constant @v_f16 : memref<2xf16>
// CHECK-LABEL: func.func @round(
// CHECK-DAG:     %[[W16:.*]] = memref.get_global @w_f16 : memref<2x2xf16>
// CHECK-DAG:     %[[WB:.*]] = memref.get_global @w_bf16 : memref<2x2xbf16>
// CHECK-DAG:     %[[V:.*]] = memref.get_global @v : memref<2xf32>
// CHECK-DAG:     %[[V16:.*]] = memref.get_global @v_f16 : memref<2xf16>
// CHECK:         gpu.launch
// CHECK:           %[[A:.*]] = memref.load %[[W16]][%{{.*}}, %{{.*}}] : memref<2x2xf16>
// CHECK:           memref.store %[[A]]
// CHECK:           %[[B:.*]] = memref.load %[[WB]][%{{.*}}, %{{.*}}] : memref<2x2xbf16>
// CHECK:           memref.store %[[B]]
// CHECK:           %[[C:.*]] = memref.load %[[V16]][%{{.*}}] : memref<2xf16>
// CHECK:           memref.store %[[C]]
// CHECK:           %[[D:.*]] = memref.load %[[V]][%{{.*}}] : memref<2xf32>
// CHECK:           memref.store %[[D]]
// CHECK-NOT:     arith.truncf
memref.global "private" constant @w : memref<2x2xf32> = dense<[[1.0, 0.1], [-2.5, 65500.0]]>
memref.global "private" constant @v : memref<2xf32> = dense<[0.5, 3.0]>
func.func @round(%h: memref<4xf16>, %hb: memref<4xbf16>, %f: memref<4xf32>) {
  %w = memref.get_global @w : memref<2x2xf32>
  %v = memref.get_global @v : memref<2xf32>
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %x = memref.load %w[%tx, %ty] : memref<2x2xf32>
    %xh = arith.truncf %x : f32 to f16
    memref.store %xh, %h[%tx] : memref<4xf16>
    %y = memref.load %w[%ty, %tx] : memref<2x2xf32>
    %yb = arith.truncf %y : f32 to bf16
    memref.store %yb, %hb[%tx] : memref<4xbf16>
    %z = memref.load %v[%tx] : memref<2xf32>
    %zh = arith.truncf %z : f32 to f16
    memref.store %zh, %h[%ty] : memref<4xf16>
    %u = memref.load %v[%ty] : memref<2xf32>
    memref.store %u, %f[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// Mutable globals and loads used otherwise are left alone.
// CHECK-LABEL: memref.global "private" @state : memref<2xf32>
// CHECK-NOT:   @state_f16
// CHECK-LABEL: func.func @mutable(
// CHECK:         arith.truncf
memref.global "private" @state : memref<2xf32> = dense<[0.5, 3.0]>
func.func @mutable(%h: memref<4xf16>, %i: index) {
  %s = memref.get_global @state : memref<2xf32>
  %x = memref.load %s[%i] : memref<2xf32>
  %xh = arith.truncf %x : f32 to f16
  memref.store %xh, %h[%i] : memref<4xf16>
  return
}
