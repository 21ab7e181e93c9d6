// RUN: tfm-opt %s -split-input-file -convert-linalg-to-gpu=mma=f16 -canonicalize -cse \
// RUN:   | FileCheck %s --check-prefixes=CHECK,F16
// RUN: tfm-opt %s -split-input-file -convert-linalg-to-gpu=mma=bf16 -canonicalize -cse \
// RUN:   | FileCheck %s --check-prefixes=CHECK,BF16

// A linear layer (weight [N, K], dynamic rows): a grid of 64 x 64 tiles of
// 128 threads, two shared tiles of 64 rows by 32 k (+8 halves of padding),
// both operands rounded as they are loaded, ldmatrix.x4 fragments, 2 x 4
// m16n8k16 mma.sync per warp and k16 step (K = 5: one K slice, two steps;
// N = 40: 4 n8 tiles per warp, the second warp column partly past N).
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %[[X:.*]]: memref<?x5xf32>, %[[Y:.*]]: memref<?x40xf32>)
// CHECK:         %[[W:.*]] = memref.get_global @w
// CHECK:         %[[ROWS:.*]] = memref.dim %[[X]]
// CHECK:         %[[TILES:.*]] = arith.ceildivui %[[ROWS]], %c64
// CHECK:         %[[GRIDY:.*]] = arith.maxui %[[TILES]], %c1
// CHECK:         gpu.launch blocks({{.*}}) in (%{{[^ ]*}} = %c1, %{{[^ ]*}} = %[[GRIDY]], %{{[^ ]*}} = %c1)
// CHECK-SAME:      threads({{.*}}) in (%{{[^ ]*}} = %c128, %{{[^ ]*}} = %c1, %{{[^ ]*}} = %c1)
// F16-SAME:        workgroup(%[[AS:.*]] : memref<64x40xf16, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<64x40xf16, #gpu.address_space<workgroup>>)
// BF16-SAME:       workgroup(%[[AS:.*]] : memref<64x40xbf16, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<64x40xbf16, #gpu.address_space<workgroup>>)
// The accumulators start from C (the bias, when there is one).
// CHECK-COUNT-32: memref.load %[[Y]]
// Each thread loads runs of 8 along the operand's innermost dimension:
// 64 x 32 / 8 = 256 runs per tile.
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c256 step %c128 {
// CHECK:           memref.load %[[X]]
// F16-NEXT:        arith.truncf %{{.*}} : f32 to f16
// BF16-NEXT:       arith.truncf %{{.*}} : f32 to bf16
// CHECK:           memref.store %{{.*}}, %[[AS]]
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c256 step %c128 {
// CHECK:           memref.load %[[W]]
// CHECK-NEXT:      arith.truncf
// CHECK:           memref.store %{{.*}}, %[[BS]]
// CHECK:         gpu.barrier
// CHECK-COUNT-2: nvgpu.ldmatrix %[[AS]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK-COUNT-2: nvgpu.ldmatrix %[[BS]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// BF16:          vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// F16-COUNT-8:   nvvm.mma.sync {{.*}}layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32)
// BF16-COUNT-8:  nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32)
// CHECK-COUNT-4: nvgpu.ldmatrix
// CHECK-COUNT-8: nvvm.mma.sync
// CHECK-NOT:     nvvm.mma.sync
// CHECK:         gpu.barrier
// CHECK-COUNT-32: memref.store %{{.*}}, %[[Y]]
// CHECK-NOT:     linalg.
memref.global "private" constant @w : memref<40x5xf32> = dense<0.5>
func.func @linear(%x: memref<?x5xf32>, %y: memref<?x40xf32>) {
  %w = memref.get_global @w : memref<40x5xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                   affine_map<(d0, d1, d2) -> (d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x5xf32>, memref<40x5xf32>) outs(%y : memref<?x40xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// batch_matmul, every size dynamic: the batch is the grid's z, the K loop
// steps 32 with the 32 accumulators carried; A [M, K] is loaded in runs of
// 8 along K (4 runs per row), B [K, N] in runs of 8 along N (8 runs per k),
// both coalesced, into As[m][k] and Bs[n][k].
// CHECK-LABEL: func.func @batch_matmul(
// CHECK-SAME:    %[[A:.*]]: memref<?x?x?xf32>, %[[B:.*]]: memref<?x?x?xf32>, %[[C:.*]]: memref<?x?x?xf32>)
// CHECK-DAG:     %[[BATCH:.*]] = memref.dim %[[A]], %c0
// CHECK-DAG:     %[[K:.*]] = memref.dim %[[A]], %c2
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %[[GZ:[^)]*]])
// CHECK:           scf.for %{{.*}} = %c0 to %[[K]] step %c32 iter_args(
// CHECK-SAME:        -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK:             scf.for %[[E:.*]] = %{{.*}} to %c256 step %c128 {
// CHECK:               arith.divui %[[E]], %c4
// CHECK:             scf.for %[[E2:.*]] = %{{.*}} to %c256 step %c128 {
// CHECK:               arith.divui %[[E2]], %c8
// CHECK-COUNT-16:    nvvm.mma.sync
// CHECK:             scf.yield
func.func @batch_matmul(%a: memref<?x?x?xf32>, %b: memref<?x?x?xf32>, %c: memref<?x?x?xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<?x?x?xf32>, memref<?x?x?xf32>)
                      outs(%c : memref<?x?x?xf32>)
  return
}

// -----

// Operands already in the MMA type (extended in the body) are read as they
// are, with no rounding.
// F16-LABEL: func.func @half_operands(
// F16-NOT:     arith.truncf
// F16:         nvvm.mma.sync
// F16-NOT:     arith.truncf
// BF16-LABEL: func.func @half_operands(
// BF16-NOT:    nvvm.mma.sync
func.func @half_operands(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                   affine_map<(d0, d1, d2) -> (d2, d1)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %m = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction other than a multiply-add keeps its own kernel.
// CHECK-LABEL: func.func @max_plus(
// CHECK-NOT:     nvvm.mma.sync
// CHECK:         gpu.launch
// CHECK:           arith.maximumf
// CHECK-NOT:     nvvm.mma.sync
func.func @max_plus(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                   affine_map<(d0, d1, d2) -> (d2, d1)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.addf %x, %y : f32
    %s = arith.maximumf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Fewer than 16 static columns: no tensor-core GEMM, and no f32 tiled GEMM
// either (with mma on, every tiled GEMM is a tensor-core one): one thread
// per output.
// CHECK-LABEL: func.func @narrow(
// CHECK-NOT:     workgroup
// CHECK:         gpu.launch
// CHECK-SAME:      threads({{.*}}) in (%{{[^ ]*}} = %c128, %{{[^ ]*}} = %c1, %{{[^ ]*}} = %c1)
// CHECK:           scf.for
// CHECK:             arith.mulf
// CHECK-NOT:     nvvm.mma.sync
func.func @narrow(%a: memref<?x64xf32>, %b: memref<64x8xf32>, %c: memref<?x8xf32>) {
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x8xf32>) outs(%c : memref<?x8xf32>)
  return
}

// -----

// A linear layer as the GPU pipeline bufferizes it: the bias broadcast into
// a temporary C, the GEMM, then GELU into the output. One launch: C starts
// as the bias where the kernel loads it, GELU is applied where it stores,
// and the temporary, never used, is gone.
// CHECK-LABEL: func.func @fused_linear(
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x64xf32>, %[[W:[^:]*]]: memref<32x64xf32>, %[[BIAS:[^:]*]]: memref<32xf32>, %[[Y:[^:]*]]: memref<?x32xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         gpu.launch
// CHECK:           memref.load %[[BIAS]]
// CHECK:           nvvm.mma.sync
// CHECK:           math.erf
// CHECK:           memref.store %{{.*}}, %[[Y]]
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK-NOT:     memref.alloc
// CHECK:         return
func.func @fused_linear(%x: memref<?x64xf32>, %w: memref<32x64xf32>, %bias: memref<32xf32>, %y: memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x64xf32>
  %t = memref.alloc(%rows) : memref<?x32xf32>
  linalg.generic {indexing_maps = [affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<32xf32>) outs(%t : memref<?x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xf32>, memref<32x64xf32>) outs(%t : memref<?x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<?x32xf32>) outs(%y : memref<?x32xf32>) {
  ^bb0(%v: f32, %out: f32):
    %c = arith.constant 0.70710678 : f32
    %s = arith.mulf %v, %c : f32
    %e = math.erf %s : f32
    %g = arith.mulf %v, %e : f32
    linalg.yield %g : f32
  }
  memref.dealloc %t : memref<?x32xf32>
  return
}

// -----

// The residual written into the GEMM's own input (x = x + x W^T): a block
// would overwrite rows of x that other blocks still read, so the add keeps
// its own launch after the GEMM. The zero fill before it is the GEMM's.
// CHECK-LABEL: func.func @epilogue_writes_gemm_input(
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x64xf32>
// CHECK:         gpu.launch
// CHECK:           nvvm.mma.sync
// CHECK:           gpu.terminator
// CHECK:         gpu.launch
// CHECK:           arith.addf
// CHECK:           memref.store %{{.*}}, %[[X]]
// CHECK-NOT:     gpu.launch
func.func @epilogue_writes_gemm_input(%x: memref<?x64xf32>, %w: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x64xf32>
  %t = memref.alloc(%rows) : memref<?x64xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%t : memref<?x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xf32>, memref<64x64xf32>) outs(%t : memref<?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<?x64xf32>) outs(%x : memref<?x64xf32>) {
  ^bb0(%v: f32, %out: f32):
    %s = arith.addf %v, %out : f32
    linalg.yield %s : f32
  }
  memref.dealloc %t : memref<?x64xf32>
  return
}
