// RUN: tfm-opt %s -split-input-file -tfm-gpu-device-buffers -verify-diagnostics

// The host cannot write device memory.
func.func @host_store(%y: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
             threads(%t0, %t1, %t2) in (%k0 = %c1, %k1 = %c1, %k2 = %c1) {
    memref.store %f, %y[%c0] : memref<4xf32>
    gpu.terminator
  }
  // expected-error @+1 {{writes from the host into a buffer that GPU kernels use}}
  memref.store %f, %y[%c1] : memref<4xf32>
  return
}

// -----

memref.global "private" constant @far : memref<4xf32, 1> = dense<1.0>

// A weight outside the default memory space has no resident copy.
func.func @far_weight(%y: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{reads a weight of type 'memref<4xf32, 1>' that --target cuda cannot keep on the device}}
  %w = memref.get_global @far : memref<4xf32, 1>
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
             threads(%t0, %t1, %t2) in (%k0 = %c1, %k1 = %c1, %k2 = %c1) {
    %e = memref.load %w[%c0] : memref<4xf32, 1>
    memref.store %e, %y[%c0] : memref<4xf32>
    gpu.terminator
  }
  return
}
