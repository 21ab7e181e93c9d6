// RUN: tfm-opt %s -pass-pipeline='builtin.module(gpu.module(tfm-gpu-occupancy-hint))' | FileCheck %s

// Shared-memory tiled kernels are told one block per SM is enough, so that
// ptxas does not spill to reach more: where the second product's A
// fragment is packed from the first one's accumulators (flash attention's
// P·V), and an f32 tiled kernel of 256 threads (ptxas aims at 64
// registers there).
// CHECK-LABEL: gpu.func @chained(
// CHECK-SAME:    kernel attributes {nvvm.minctasm = 1 : i32}
// CHECK-LABEL: gpu.func @f32_tiles(
// CHECK-SAME:    kernel attributes {known_block_size = array<i32: 16, 16, 1>, nvvm.minctasm = 1 : i32}
// The tensor-core GEMM (A from ldmatrix, through the registers' extracts),
// an f32 tiled kernel of 128 threads (the flash attention's) and a kernel
// without shared memory keep ptxas's choice.
// CHECK-LABEL: gpu.func @gemm(
// CHECK-NOT:     nvvm.minctasm
// CHECK-LABEL: gpu.func @f32_attention(
// CHECK-NOT:     nvvm.minctasm
// CHECK-LABEL: gpu.func @scalar(
// CHECK-NOT:     nvvm.minctasm
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @chained(%b0: vector<2xf16>, %b1: vector<2xf16>, %c: f32)
        workgroup(%s : memref<16x24xf16, #gpu.address_space<workgroup>>) kernel {
      %d = nvvm.mma.sync A[%b0, %b1, %b0, %b1] B[%b0, %b1] C[%c, %c, %c, %c]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>}
        : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %p0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
      %p1 = llvm.extractvalue %d[1] : !llvm.struct<(f32, f32, f32, f32)>
      %h0 = arith.truncf %p0 : f32 to f16
      %h1 = arith.truncf %p1 : f32 to f16
      %a = vector.from_elements %h0, %h1 : vector<2xf16>
      %e = nvvm.mma.sync A[%a, %a, %a, %a] B[%b0, %b1] C[%c, %c, %c, %c]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>}
        : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      gpu.return
    }
    gpu.func @f32_tiles(%x: f32)
        workgroup(%s : memref<1024xf32, #gpu.address_space<workgroup>>) kernel
        attributes {known_block_size = array<i32: 16, 16, 1>} {
      gpu.barrier
      gpu.return
    }
    gpu.func @gemm(%i: index, %b0: vector<2xf16>, %c: f32)
        workgroup(%tile : memref<64x40xf16, #gpu.address_space<workgroup>>) kernel {
      %f = nvgpu.ldmatrix %tile[%i, %i] {numTiles = 4 : i32, transpose = false}
        : memref<64x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
      %a0 = vector.extract %f[0] : vector<2xf16> from vector<4x2xf16>
      %a1 = vector.extract %f[1] : vector<2xf16> from vector<4x2xf16>
      %a2 = vector.extract %f[2] : vector<2xf16> from vector<4x2xf16>
      %a3 = vector.extract %f[3] : vector<2xf16> from vector<4x2xf16>
      %d = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b0] C[%c, %c, %c, %c]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>}
        : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      gpu.return
    }
    gpu.func @f32_attention(%x: f32)
        workgroup(%s : memref<4160xf32, #gpu.address_space<workgroup>>) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      gpu.barrier
      gpu.return
    }
    gpu.func @scalar(%x: f32) kernel {
      gpu.return
    }
  }
}
