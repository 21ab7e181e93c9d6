// RUN: tfm-opt %s -pass-pipeline='builtin.module(gpu.module(tfm-gpu-align-workgroup-memory))' | FileCheck %s

// CHECK-LABEL: gpu.func @tiles(
// CHECK-SAME:    workgroup(%{{.*}} : memref<64x40xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64},
// CHECK-SAME:              %{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64})
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @tiles(%out: memref<1xf32>)
        workgroup(%a : memref<64x40xf16, #gpu.address_space<workgroup>>,
                  %b : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64})
        kernel {
      gpu.return
    }
  }
}
