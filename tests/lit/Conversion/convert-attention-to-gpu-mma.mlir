// RUN: tfm-opt %s -split-input-file -convert-attention-to-gpu="mma=f16" -canonicalize -cse | FileCheck %s
// RUN: tfm-opt %s -split-input-file -convert-attention-to-gpu="mma=bf16" -canonicalize -cse | FileCheck %s --check-prefix=BF16
// RUN: not tfm-opt %s -split-input-file -convert-attention-to-gpu="mma=f8" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: mma must be f16 or bf16, not 'f8'

// Head 64: 4 warps of 16 queries, Q, K and V tiles of 64 rows in f16,
// rows padded to 72 halves (27 KB). The scores (8 n8 tiles) and the
// output (8 n8 tiles) are 32 f32 registers each per lane; the loop also
// carries the two rows' max and partial sum.
// CHECK-LABEL: func.func @causal(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<?x8x?x64xf32>, %[[K:[^:]*]]: memref<?x8x?x64xf32>, %[[V:[^:]*]]: memref<?x8x?x64xf32>, %[[O:[^:]*]]: memref<?x8x?x64xf32>)
// CHECK:         arith.ceildivui %{{.*}}, %c64
// CHECK:         gpu.launch {{.*}} threads(%[[TID:[^,]*]], {{.*}} in (%{{[^ ]*}} = %c128,
// CHECK-SAME:      workgroup(%[[QS:[^ ]*]] : memref<64x72xf16, #gpu.address_space<workgroup>>, %[[KS:[^ ]*]] : memref<64x72xf16, #gpu.address_space<workgroup>>, %[[VS:[^ ]*]] : memref<64x72xf16, #gpu.address_space<workgroup>>)
// Causal: the key blocks stop at the block's last query.
// CHECK:           %[[ROWS:.*]] = arith.minsi %{{.*}}, %c64
// CHECK:           %[[LIMIT:.*]] = arith.minsi
// CHECK:           %[[LAST:.*]] = arith.addi %{{.*}}, %[[ROWS]]
// CHECK:           %[[END:.*]] = arith.minsi %[[LIMIT]], %[[LAST]]
// The query block, scaled then rounded.
// CHECK:           scf.for %{{.*}} = %[[TID]] to %c4096 step %c128
// CHECK:             memref.load %[[Q]]
// CHECK:             arith.mulf
// CHECK:             arith.truncf %{{.*}} : f32 to f16
// CHECK:             memref.store %{{.*}}, %[[QS]]
// CHECK:           %[[ACC:.*]]:36 = scf.for %{{.*}} = %c0 to %[[END]] step %c64 iter_args(
// CHECK:             memref.load %[[K]]
// CHECK:             memref.store %{{.*}}, %[[KS]]
// CHECK:             memref.load %[[V]]
// CHECK:             memref.store %{{.*}}, %[[VS]]
// CHECK:             gpu.barrier
// S = Q K^T: per k16 step one A fragment and four B loads of two n8 tiles.
// CHECK:             nvgpu.ldmatrix %[[QS]]{{.*}}transpose = false
// CHECK:             nvgpu.ldmatrix %[[KS]]{{.*}}transpose = false
// CHECK-COUNT-2:     nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK:             arith.cmpi sle
// CHECK:             arith.select
// The row max over the quad, then the probabilities.
// CHECK:             gpu.shuffle xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK:             gpu.shuffle xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK:             math.exp
// P stays in registers: packed into A fragments, V read transposed.
// CHECK:             vector.from_elements %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK:             nvgpu.ldmatrix %[[VS]]{{.*}}transpose = true
// CHECK-COUNT-2:     nvvm.mma.sync
// CHECK:             gpu.barrier
// CHECK:             scf.yield
// The partial sums over the quad, then O = acc / l where any key was seen.
// CHECK:           gpu.shuffle xor %[[ACC]]#34, %c1_i32
// CHECK:           gpu.shuffle xor
// CHECK:           arith.cmpf ogt
// CHECK:           arith.divf %[[ACC]]#0
// CHECK:           memref.store %{{.*}}, %[[O]]
// CHECK-NOT:     tfm.attention

// BF16-LABEL: func.func @causal(
// BF16:         workgroup(%{{[^ ]*}} : memref<64x72xbf16, #gpu.address_space<workgroup>>
// BF16:         arith.truncf %{{.*}} : f32 to bf16
// BF16:         nvgpu.ldmatrix {{.*}} -> vector<4x2xbf16>
// mma.sync takes bf16 pairs as 32-bit registers.
// BF16:         vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// BF16:         nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
func.func @causal(%q: memref<?x8x?x64xf32>, %k: memref<?x8x?x64xf32>, %v: memref<?x8x?x64xf32>, %o: memref<?x8x?x64xf32>) {
  tfm.attention ins(%q, %k, %v : memref<?x8x?x64xf32>, memref<?x8x?x64xf32>, memref<?x8x?x64xf32>) outs(%o : memref<?x8x?x64xf32>) scale 0.125 {causal}
  return
}

// -----

// A decode step: one query gets one warp (16 rows). Values of 24 columns
// are padded to 32 in shared memory (zeros past 24) and only the first 24
// output columns are stored. The key padding mask is read per score.
// CHECK-LABEL: func.func @decode(
// CHECK-SAME:    %[[MASK:[^:]*]]: memref<2x1x1x?xi1>, %[[O:[^:]*]]: memref<2x4x1x24xf32>)
// CHECK:         gpu.launch {{.*}} in (%{{[^ ]*}} = %c8, {{.*}} threads({{.*}} in (%{{[^ ]*}} = %c32,
// CHECK-SAME:      workgroup(%{{[^ ]*}} : memref<16x40xf16, {{.*}}>, %{{[^ ]*}} : memref<64x40xf16, {{.*}}>, %{{[^ ]*}} : memref<64x40xf16, {{.*}}>)
// CHECK:           scf.for {{.*}} iter_args(
// CHECK:             arith.cmpi slt, %{{.*}}, %c24
// CHECK:             memref.load %[[MASK]]
// CHECK:             arith.select
// CHECK-COUNT-12:  memref.store %{{.*}}, %[[O]]
// CHECK-NOT:       memref.store %{{.*}}, %[[O]]
func.func @decode(%q: memref<2x4x1x32xf32>, %k: memref<2x4x?x32xf32>, %v: memref<2x4x?x24xf32>, %mask: memref<2x1x1x?xi1>, %o: memref<2x4x1x24xf32>) {
  tfm.attention ins(%q, %k, %v : memref<2x4x1x32xf32>, memref<2x4x?x32xf32>, memref<2x4x?x24xf32>) mask(%mask : memref<2x1x1x?xi1>) outs(%o : memref<2x4x1x24xf32>) scale 0.17677669529663687
  return
}

// -----

// Values wider than 128 would need more than 64 accumulator registers per
// lane: the f32 kernel takes the op.
// CHECK-LABEL: func.func @wide(
// CHECK:         gpu.launch {{.*}} workgroup(%{{[^ ]*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>
// CHECK-NOT:     nvvm.mma.sync
func.func @wide(%q: memref<2x4x8x256xf32>, %k: memref<2x4x8x256xf32>, %v: memref<2x4x8x256xf32>, %o: memref<2x4x8x256xf32>) {
  tfm.attention ins(%q, %k, %v : memref<2x4x8x256xf32>, memref<2x4x8x256xf32>, memref<2x4x8x256xf32>) outs(%o : memref<2x4x8x256xf32>) scale 0.0625
  return
}
