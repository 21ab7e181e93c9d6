// RUN: tfm-opt %s -split-input-file -convert-attention-to-gpu -canonicalize -cse | FileCheck %s
// RUN: tfm-opt %s -split-input-file -convert-attention-to-gpu="threads=256 block-q=16 block-k=16" -canonicalize -cse \
// RUN:   | FileCheck %s --check-prefix=TILES

// One block per (batch*head, 64 queries), 128 threads. Head 64: queries
// [64][65], keys then values [32][65], scores [64][33] and the running max,
// sum and correction [64] in shared memory (34 KB).
// CHECK-LABEL: func.func @causal(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<?x8x?x64xf32>, %[[K:[^:]*]]: memref<?x8x?x64xf32>, %[[V:[^:]*]]: memref<?x8x?x64xf32>, %[[O:[^:]*]]: memref<?x8x?x64xf32>)
// CHECK:         %[[SQ:.*]] = memref.dim %[[Q]], %c2
// CHECK:         %[[SK:.*]] = memref.dim %[[K]], %c2
// CHECK:         %[[B:.*]] = memref.dim %[[Q]], %c0
// CHECK:         %[[BH:.*]] = arith.muli %[[B]], %c8
// CHECK:         %[[QB:.*]] = arith.ceildivui %[[SQ]], %c64
// CHECK:         %[[BLOCKS:.*]] = arith.muli %[[BH]], %[[QB]]
// CHECK:         %[[GRID:.*]] = arith.maxui %[[BLOCKS]], %c1
// CHECK:         gpu.launch blocks(%[[BID:[^,]*]], {{.*}} in (%{{[^ ]*}} = %[[GRID]], {{.*}} threads(%[[TID:[^,]*]], {{.*}} in (%{{[^ ]*}} = %c128,
// CHECK-SAME:      workgroup(%[[QS:[^ ]*]] : memref<4160xf32, #gpu.address_space<workgroup>>, %[[KV:[^ ]*]] : memref<2080xf32, #gpu.address_space<workgroup>>, %[[S:[^ ]*]] : memref<2112xf32, #gpu.address_space<workgroup>>, %[[M:[^ ]*]] : memref<64xf32, #gpu.address_space<workgroup>>, %[[L:[^ ]*]] : memref<64xf32, #gpu.address_space<workgroup>>, %[[A:[^ ]*]] : memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK:           scf.if
// CHECK:             %[[I0:.*]] = arith.muli %{{.*}}, %c64
// CHECK:             %[[IDX:.*]]:2 = affine.delinearize_index %{{.*}} into (%[[B]], 8)
// Causal: the key blocks stop at the block's last query.
// CHECK:             %[[ROWS:.*]] = arith.minsi %{{.*}}, %c64
// CHECK:             %[[LIMIT:.*]] = arith.minsi %[[SK]], %[[SQ]]
// CHECK:             %[[LAST:.*]] = arith.addi %[[I0]], %[[ROWS]]
// CHECK:             %[[END:.*]] = arith.minsi %[[LIMIT]], %[[LAST]]
// The query block, scaled, strided over the threads.
// CHECK:             scf.for %{{.*}} = %[[TID]] to %c4096 step %c128
// CHECK:               memref.load %[[Q]][%[[IDX]]#0, %[[IDX]]#1,
// CHECK:               arith.mulf %{{.*}}, %cst
// CHECK:               memref.store %{{.*}}, %[[QS]]
// CHECK:             gpu.barrier
// 64 x 64 outputs over 128 threads: 32 accumulators each, in registers.
// CHECK:             %[[ACC:.*]]:32 = scf.for %{{.*}} = %c0 to %[[END]] step %c32 iter_args(
// CHECK:               memref.load %[[K]]
// CHECK:               memref.store %{{.*}}, %[[KV]]
// CHECK:               gpu.barrier
// CHECK:               scf.for %{{.*}} = %[[TID]] to %c2048 step %c128
// CHECK:                 memref.load %[[QS]]
// CHECK:                 memref.load %[[KV]]
// CHECK:                 arith.cmpi sle
// CHECK:                 memref.store %{{.*}}, %[[S]]
// CHECK:               gpu.barrier
// CHECK:               memref.load %[[V]]
// CHECK:               memref.store %{{.*}}, %[[KV]]
// Online softmax, a row per thread.
// CHECK:               memref.load %[[M]]
// CHECK:               arith.maximumf
// CHECK:               math.exp
// CHECK:               math.exp
// CHECK:               memref.store %{{.*}}, %[[L]]
// CHECK:               memref.store %{{.*}}, %[[M]]
// CHECK:               memref.store %{{.*}}, %[[A]]
// CHECK:               gpu.barrier
// CHECK-COUNT-32:      memref.load %[[A]]
// CHECK:               scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(
// CHECK:                 memref.load %[[S]]
// CHECK:                 memref.load %[[KV]]
// CHECK:               gpu.barrier
// CHECK:             memref.load %[[L]]
// CHECK:             arith.divf %[[ACC]]#0
// CHECK:             memref.store %{{.*}}, %[[O]][%[[IDX]]#0, %[[IDX]]#1,
// CHECK-NOT:     tfm.attention

// TILES-LABEL: func.func @causal(
// TILES:         arith.ceildivui %{{.*}}, %c16
// TILES:         gpu.launch {{.*}} threads({{.*}} in (%{{[^ ]*}} = %c256,
// TILES-SAME:      workgroup(%{{[^ ]*}} : memref<1040xf32, #gpu.address_space<workgroup>>, %{{[^ ]*}} : memref<1040xf32, #gpu.address_space<workgroup>>, %{{[^ ]*}} : memref<272xf32, #gpu.address_space<workgroup>>
// TILES:         scf.for {{.*}} step %c16 iter_args({{[^)]*}}) -> (f32, f32, f32, f32)
func.func @causal(%q: memref<?x8x?x64xf32>, %k: memref<?x8x?x64xf32>, %v: memref<?x8x?x64xf32>, %o: memref<?x8x?x64xf32>) {
  tfm.attention ins(%q, %k, %v : memref<?x8x?x64xf32>, memref<?x8x?x64xf32>, memref<?x8x?x64xf32>) outs(%o : memref<?x8x?x64xf32>) scale 0.125 {causal}
  return
}

// -----

// A decode step over a cache: one query gets a one-query block, the keys
// stop at the sequence's kv_length and query_offset + 1, the key padding
// mask broadcasts over heads and the query ([B, 1, 1, Sk]).
// CHECK-LABEL: func.func @decode(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<?x2x1x128xf32>, %{{[^:]*}}: memref<?x2x256x128xf32>, %{{[^:]*}}: memref<?x2x256x128xf32>, %[[MASK:[^:]*]]: memref<?x1x1x256xi1>, %[[LEN:[^:]*]]: memref<?xi64>, %[[OFF:[^:]*]]: memref<?xi64>,
// CHECK:         gpu.launch
// CHECK-SAME:      workgroup(%{{[^ ]*}} : memref<129xf32, #gpu.address_space<workgroup>>, %{{[^ ]*}} : memref<8256xf32, #gpu.address_space<workgroup>>, %{{[^ ]*}} : memref<65xf32, #gpu.address_space<workgroup>>, %{{[^ ]*}} : memref<1xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[IDX:.*]]:2 = affine.delinearize_index
// CHECK:           %[[N:.*]] = memref.load %[[LEN]][%[[IDX]]#0]
// CHECK:           arith.index_cast %[[N]]
// CHECK:           %[[P:.*]] = memref.load %[[OFF]][%[[IDX]]#0]
// CHECK:           arith.index_cast %[[P]]
// CHECK:           scf.for {{.*}} iter_args(%{{[^)]*}}) -> (f32) {
// CHECK:             memref.load %[[MASK]][%[[IDX]]#0, %c0, %c0, %{{.*}}]
// CHECK:             arith.select %{{.*}}, %cst{{.*}}, %{{.*}} : f32
func.func @decode(%q: memref<?x2x1x128xf32>, %k: memref<?x2x256x128xf32>, %v: memref<?x2x256x128xf32>, %m: memref<?x1x1x256xi1>, %len: memref<?xi64>, %off: memref<?xi64>, %o: memref<?x2x1x128xf32>) {
  tfm.attention ins(%q, %k, %v : memref<?x2x1x128xf32>, memref<?x2x256x128xf32>, memref<?x2x256x128xf32>) mask(%m : memref<?x1x1x256xi1>) kv_length(%len : memref<?xi64>) query_offset(%off : memref<?xi64>) outs(%o : memref<?x2x1x128xf32>) scale 0.088 {causal}
  return
}

// -----

// No batch dims, a float mask added to the scores.
// CHECK-LABEL: func.func @unbatched(
// CHECK-SAME:    %{{[^:]*}}: memref<?x16xf32>, %{{[^:]*}}: memref<?x16xf32>, %{{[^:]*}}: memref<?x8xf32>, %[[MASK:[^:]*]]: memref<?x?xf32>,
// CHECK:         gpu.launch
// CHECK-NOT:       affine.delinearize_index
// CHECK:           %[[X:.*]] = memref.load %[[MASK]][%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK:           arith.addf %{{.*}}, %[[X]]
func.func @unbatched(%q: memref<?x16xf32>, %k: memref<?x16xf32>, %v: memref<?x8xf32>, %m: memref<?x?xf32>, %o: memref<?x8xf32>) {
  tfm.attention ins(%q, %k, %v : memref<?x16xf32>, memref<?x16xf32>, memref<?x8xf32>) mask(%m : memref<?x?xf32>) outs(%o : memref<?x8xf32>) scale 0.25
  return
}

// -----

// A sliding window (Gemma's local layers): a key is visible while the
// query's position (query_offset + i) is below key + window.
// CHECK-LABEL: func.func @window(
// CHECK:         gpu.launch
// CHECK:           arith.cmpi sle, %[[KEY:.*]], %[[POS:.*]] : index
// CHECK:           %[[END:.*]] = arith.addi %[[KEY]], %c5 : index
// CHECK:           arith.cmpi slt, %[[POS]], %[[END]] : index
func.func @window(%q: memref<?x2x?x16xf32>, %k: memref<?x2x64x16xf32>, %v: memref<?x2x64x16xf32>, %off: memref<?xi64>, %o: memref<?x2x?x16xf32>) {
  tfm.attention ins(%q, %k, %v : memref<?x2x?x16xf32>, memref<?x2x64x16xf32>, memref<?x2x64x16xf32>) query_offset(%off : memref<?xi64>) outs(%o : memref<?x2x?x16xf32>) scale 0.25 {causal, window = 5 : i64}
  return
}
