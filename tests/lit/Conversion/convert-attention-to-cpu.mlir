// RUN: tfm-opt %s -split-input-file -convert-attention-to-cpu -canonicalize | FileCheck %s
// RUN: tfm-opt %s -split-input-file -convert-attention-to-cpu="vector-bits=256" -canonicalize | FileCheck %s --check-prefix=AVX2
// RUN: tfm-opt %s -split-input-file -convert-attention-to-cpu="block-q=32 micro-rows=2 key-vectors=1" -canonicalize | FileCheck %s --check-prefix=TILES
// RUN: tfm-opt %s -split-input-file -convert-attention-to-cpu="multiversion=true bf16=true" | FileCheck %s --check-prefix=BF16

// The work is outlined into a task function over a range of
// (batch*head, query block) tasks; the op becomes one call over all tasks.
// CHECK-LABEL: func.func private @__tfm_task_attention_0
// CHECK-SAME:    (%[[Q:.*]]: memref<?x?x64xf32>, %[[K:.*]]: memref<?x?x64xf32>, %[[V:.*]]: memref<?x?x48xf32>, %[[O:.*]]: memref<?x?x48xf32>, %[[BEGIN:.*]]: index, %[[END:.*]]: index)
// Stack tiles: the scaled query block transposed [Dk][Bq], the scores
// transposed [Bk][Bq], the accumulator [Bq][Dv = 48 as 3 vectors], and the
// per-query max, sum and correction.
// CHECK-DAG:   %[[QT:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK-DAG:   memref.alloca() {alignment = 64 : i64} : memref<64x48xf32>
// CHECK-DAG:   memref.alloca() {alignment = 64 : i64} : memref<64xf32>
// CHECK:       scf.for %{{.*}} = %[[BEGIN]] to %[[END]]
// CHECK:       %[[QR:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [%{{.*}}, 64], strides: [{{.*}}, 1]
// CHECK:       %[[KR:.*]] = memref.reinterpret_cast
// CHECK:       %[[VR:.*]] = memref.reinterpret_cast
// CHECK:       %[[OR:.*]] = memref.reinterpret_cast
// The query block is packed (and scaled) once per task: 16 rows of Q as
// vectors, transposed by shuffles (no vector.transpose left, no scalar
// copies) into 16 rows of Qt.
// CHECK-NOT:   memref.store
// CHECK:       vector.load %[[QR]]
// CHECK:       arith.mulf
// CHECK-NOT:   vector.transpose
// CHECK:       vector.shuffle
// CHECK:       vector.store %{{.*}}, %[[QT]]
// Scores micro-kernel: 4 keys x 4 query vectors of accumulators carried over
// Dk, keys read straight from K.
// CHECK:       scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-4: vector.load %[[QT]]
// CHECK:       memref.load %[[KR]]
// CHECK:       vector.fma
// Online softmax across lanes (queries): running max and sum per lane, exp
// as a polynomial, no horizontal reductions.
// CHECK-NOT:   vector.reduction
// CHECK-NOT:   math.exp
// CHECK:       arith.maximumf
// P V micro-kernel over the valid keys.
// CHECK:       vector.load %[[VR]]
// CHECK:       vector.fma
// Normalized output rows.
// CHECK:       arith.divf
// CHECK:       vector.store %{{.*}}, %[[OR]]
// CHECK-LABEL: func.func @attention
// CHECK-NOT:   tfm.attention
// CHECK:       call @__tfm_task_attention_0({{.*}}) : (memref<?x?x64xf32>, memref<?x?x64xf32>, memref<?x?x48xf32>, memref<?x?x48xf32>, index, index) -> ()

// With 256-bit vectors: 8 lanes, 4 rows x 2 vectors.
// AVX2-LABEL: func.func private @__tfm_task_attention_0
// AVX2-DAG:   memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// AVX2:       iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)

// TILES-LABEL: func.func private @__tfm_task_attention_0
// TILES-DAG:   memref.alloca() {alignment = 64 : i64} : memref<16x32xf32>
// TILES:       iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
func.func @attention(%q: memref<?x?x64xf32>, %k: memref<?x?x64xf32>, %v: memref<?x?x48xf32>, %o: memref<?x?x48xf32>) {
  tfm.attention ins(%q, %k, %v : memref<?x?x64xf32>, memref<?x?x64xf32>, memref<?x?x48xf32>) outs(%o : memref<?x?x48xf32>) scale 0.125
  return
}

// -----

// Causal attention stops the key loop at the block's last query row and
// compares key and query indices per lane; a float mask is gathered (lanes
// are queries, a mask row apart). A 4-D [B, H, S, D] operand is viewed as
// [B*H, S, D].
// CHECK-LABEL: func.func private @__tfm_task_attention_0
// CHECK-SAME:    memref<2x?x?x32xf32>
// CHECK:       memref.extract_strided_metadata
// CHECK:       arith.minsi
// CHECK:       vector.step
// CHECK:       vector.gather
// CHECK:       arith.cmpi ule
// CHECK-LABEL: func.func @causal_masked
func.func @causal_masked(%q: memref<2x?x?x32xf32>, %k: memref<2x?x?x32xf32>, %v: memref<2x?x?x32xf32>, %m: memref<?x?xf32>, %o: memref<2x?x?x32xf32>) {
  tfm.attention ins(%q, %k, %v : memref<2x?x?x32xf32>, memref<2x?x?x32xf32>, memref<2x?x?x32xf32>) mask(%m : memref<?x?xf32>) outs(%o : memref<2x?x?x32xf32>) scale 0.17677669529663687 {causal}
  return
}

// -----

// A mask that broadcasts over some leading dims but not all ([3, Sq, Sk]
// against [2, 3, Sq, Sk] scores: one mask per head, shared by the batch) is
// read through a stride per leading dim: the task splits batch*head back
// into (batch, head) with the query's dims and steps the mask by head only.

// CHECK-LABEL: func.func private @__tfm_task_attention_0(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<2x3x4x8xf32>
// CHECK:         arith.remui %{{.*}}, %c3 : index
// CHECK:         vector.gather
// CHECK-LABEL: func.func @partial_batch_mask(
// CHECK:         call @__tfm_task_attention_0(
func.func @partial_batch_mask(%q: memref<2x3x4x8xf32>, %m: memref<3x4x4xf32>, %o: memref<2x3x4x8xf32>) {
  tfm.attention ins(%q, %q, %q : memref<2x3x4x8xf32>, memref<2x3x4x8xf32>, memref<2x3x4x8xf32>) mask(%m : memref<3x4x4xf32>) outs(%o : memref<2x3x4x8xf32>) scale 1.0
  return
}

// -----

// A padding mask [B, 1, 1, Sk] has a query stride of 0: each key's value is
// one scalar load broadcast to the lanes (queries), never a gather.

// CHECK-LABEL: func.func private @__tfm_task_attention_0(
// CHECK-SAME:    %{{[^:]*}}: memref<2x1x1x4xf32>
// CHECK:         %[[FLAT:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [8], strides: [1] : memref<2x1x1x4xf32>
// CHECK-NOT:     vector.gather
// CHECK:         %[[M:.*]] = memref.load %[[FLAT]][%{{.*}}] : memref<8xf32, strided<[1]>>
// CHECK-NEXT:    vector.broadcast %[[M]] : f32 to vector<16xf32>
// CHECK-NOT:     vector.gather
// CHECK-LABEL: func.func @padding_mask(
func.func @padding_mask(%q: memref<2x3x4x8xf32>, %m: memref<2x1x1x4xf32>, %o: memref<2x3x4x8xf32>) {
  tfm.attention ins(%q, %q, %q : memref<2x3x4x8xf32>, memref<2x3x4x8xf32>, memref<2x3x4x8xf32>) mask(%m : memref<2x1x1x4xf32>) outs(%o : memref<2x3x4x8xf32>) scale 1.0
  return
}

// -----

// Over a cache, sequence b = bh / heads reads its valid keys and its query
// offset once per query block (clamped into [0, Sk]); the key loop stops at
// min(kv_length, offset + the block's last query + 1), so it never visits
// the cache's capacity, and causal visibility compares keys with the
// queries' positions (offset + index). A layer's slice of a cache (a
// strided view with row-major inner strides) is read in place.

// CHECK-LABEL: func.func private @__tfm_task_attention_0(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<?x4x?x16xf32>, %[[K:[^:]*]]: memref<?x4x32x16xf32, strided<[2048, 512, 16, 1], offset: ?>>
// CHECK-SAME:    %[[LEN:[^:]*]]: memref<?xi64>, %[[OFF:[^:]*]]: memref<?xi64>
// CHECK:         arith.divui
// CHECK:         memref.load %[[LEN]]
// CHECK:         arith.index_cast
// CHECK:         memref.load %[[OFF]]
// CHECK:         scf.for %{{.*}} = %c0 to %{{.*}} step %c64
// CHECK:         vector.step
// CHECK:         arith.cmpi ule
// A decode step (at most one vector of queries) takes a task function tiled
// for one query vector (blocks of 16 queries, one query vector per scores
// micro-kernel); longer query blocks take the usual tiling.
// CHECK-LABEL: func.func private @__tfm_task_attention_1(
// CHECK:         memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// CHECK:         iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-LABEL: func.func @cached
// CHECK:         %[[FEW:.*]] = arith.cmpi ule, %{{.*}}, %c16
// CHECK:         scf.if %[[FEW]]
// CHECK:           call @__tfm_task_attention_0(
// CHECK:         } else {
// CHECK:           call @__tfm_task_attention_1(
func.func @cached(%q: memref<?x4x?x16xf32>, %k: memref<?x4x32x16xf32, strided<[2048, 512, 16, 1], offset: ?>>, %len: memref<?xi64>, %off: memref<?xi64>, %o: memref<?x4x?x16xf32>) {
  tfm.attention ins(%q, %k, %k : memref<?x4x?x16xf32>, memref<?x4x32x16xf32, strided<[2048, 512, 16, 1], offset: ?>>, memref<?x4x32x16xf32, strided<[2048, 512, 16, 1], offset: ?>>) kv_length(%len : memref<?xi64>) query_offset(%off : memref<?xi64>) outs(%o : memref<?x4x?x16xf32>) scale 0.25 {causal}
  return
}

// -----

// Only the kernel's exponentials become polynomials: an exponential elsewhere
// in the module (the unfused path's softmax, a model's own exp) keeps its
// numerics.
// CHECK-LABEL: func.func @other_exp
// CHECK:         math.exp %{{.*}} : f32
// CHECK-LABEL: func.func @other_exp_vector
// CHECK:         math.exp %{{.*}} : vector<8xf32>
func.func @other_exp(%x: f32) -> f32 {
  %e = math.exp %x : f32
  return %e : f32
}
func.func @other_exp_vector(%x: vector<8xf32>) -> vector<8xf32> {
  %e = math.exp %x : vector<8xf32>
  return %e : vector<8xf32>
}
func.func @with_attention(%q: memref<1x2x8x16xf32>, %o: memref<1x2x8x16xf32>) {
  tfm.attention ins(%q, %q, %q : memref<1x2x8x16xf32>, memref<1x2x8x16xf32>, memref<1x2x8x16xf32>) outs(%o : memref<1x2x8x16xf32>) scale 0.25
  return
}

// -----

// bf16=true: the AVX512-BF16 variant (level 5) computes QK^T and PV with
// vdpbf16ps over bf16 pairs: the query block's pairs of head dims
// (interleaved), the key rows rounded, the probabilities' and the values'
// pairs of keys; the other variants stay f32 (FMA, no rounding). The AMX
// variant (level 6) multiplies the same rounded operands on tiles, in
// blocks of 128 queries (so every variant's tasks are 128 queries): key
// rows [64 keys, 32 head dims (16 padded with zeros)] by the query pairs
// [16 pairs, 2 x 128 queries] (scores: 2 x 2 C tiles per 32 keys and 32
// queries, one K tile), then the value block transposed through registers
// [16 dims, 64 keys] by the probabilities' pairs of keys [32, 128] onto the
// transposed accumulator [16 dims, 128 queries] (1 x 2 C tiles, loaded,
// multiplied, stored); no vector FMA or vdpbf16ps in its products.
// BF16-LABEL: func.func private @__tfm_task_attention_0_avx2(%{{.*}}: memref<1x2x9x16xf32>
// BF16-NOT:     arith.truncf
// BF16:         vector.fma
// BF16-NOT:     arith.truncf
// BF16:         return
// BF16-LABEL: func.func private @__tfm_task_attention_0_avx512bf16(%{{.*}}: memref<1x2x9x16xf32>
// BF16-SAME:    target_features = #llvm.target_features<[{{.*}}"+avx512bf16"
// BF16:         memref.alloca() {{.*}} : memref<8x128xbf16>
// BF16:         vector.interleave {{.*}} : vector<16xbf16> -> vector<32xbf16>
// BF16:         llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// BF16:         llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// BF16-NOT:     vector.fma
// BF16:         return
// BF16-LABEL: func.func private @__tfm_task_attention_0_amx(%{{.*}}: memref<1x2x9x16xf32>
// BF16-SAME:    target_features = #llvm.target_features<[{{.*}}"+amx-tile", "+amx-bf16"
// BF16:         memref.alloca() {{.*}} : memref<64x128xf32>
// BF16-NEXT:    memref.alloca() {{.*}} : memref<128xf32>
// BF16-NEXT:    memref.alloca() {{.*}} : memref<128xf32>
// BF16-NEXT:    memref.alloca() {{.*}} : memref<128xf32>
// BF16-NEXT:    memref.alloca() {{.*}} : memref<64x16xi32>
// BF16-NEXT:    memref.alloca() {{.*}} : memref<16x256xbf16>
// BF16-NEXT:    memref.alloca() {{.*}} : memref<32x128xi32>
// BF16-NEXT:    memref.alloca() {{.*}} : memref<16x64xbf16>
// BF16-NEXT:    memref.alloca() {{.*}} : memref<16x128xf32>
// BF16-NOT:     vector.fma
// BF16-NOT:     dpbf16ps.512
// BF16:         vector.shuffle
// BF16:         arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// BF16-COUNT-4: llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// BF16-COUNT-4: llvm.call_intrinsic "llvm.x86.tilestored64.internal"
// BF16:         arith.maximumf
// BF16-COUNT-2: llvm.call_intrinsic "llvm.x86.tileloadd64.internal"
// BF16:         llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// BF16-NOT:     vector.fma
// BF16-NOT:     dpbf16ps.512
// BF16:         return
// BF16-LABEL: func.func private @__tfm_task_attention_0(%{{.*}}: memref<1x2x9x16xf32>
// BF16:         case 5 {
// BF16-NEXT:      func.call @__tfm_task_attention_0_avx512bf16(
// BF16:         case 6 {
// BF16-NEXT:      func.call @__tfm_task_attention_0_amx(
func.func @bf16_attention(%q: memref<1x2x9x16xf32>, %o: memref<1x2x9x16xf32>) {
  tfm.attention ins(%q, %q, %q : memref<1x2x9x16xf32>, memref<1x2x9x16xf32>, memref<1x2x9x16xf32>) outs(%o : memref<1x2x9x16xf32>) scale 0.25
  return
}

// -----

// A bf16 key cache and an f16 value cache under an f32 query: K and V are
// read in place in their own type and widened by vector conversions (the
// partial last vector masked): each key block into a [64 keys][32] f32
// tile on the stack that the scores micro-kernel reads one element at a
// time, the values straight into the P V micro-kernel's registers. The
// cache itself is never copied.
// CHECK-LABEL: func.func private @__tfm_task_attention_0(%{{[^:]*}}: memref<?x2x?x24xf32>, %{{[^:]*}}: memref<?x2x32x24xbf16, strided<[1536, 768, 24, 1], offset: ?>>, %{{[^:]*}}: memref<?x2x32x24xf16, strided<[1536, 768, 24, 1], offset: ?>>
// CHECK-NOT:     memref.alloca() {{.*}}f16>
// CHECK:         %[[WK:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x32xf32>
// CHECK:         %[[KR:.*]] = memref.reinterpret_cast %{{.*}} to memref<32x24xbf16, strided<[24, 1], offset: ?>>
// CHECK:         %[[VR:.*]] = memref.reinterpret_cast %{{.*}} to memref<32x24xf16, strided<[24, 1], offset: ?>>
// CHECK:         %[[KV:.*]] = vector.load %[[KR]][{{.*}}] : memref<32x24xbf16, strided<[24, 1], offset: ?>>, vector<16xbf16>
// CHECK-NEXT:    %[[KW:.*]] = arith.extf %[[KV]] : vector<16xbf16> to vector<16xf32>
// CHECK-NEXT:    vector.store %[[KW]], %[[WK]]
// CHECK:         vector.maskedload %[[KR]]
// CHECK:         memref.load %[[WK]]
// CHECK:         %[[VV:.*]] = vector.load %[[VR]][{{.*}}] : memref<32x24xf16, strided<[24, 1], offset: ?>>, vector<16xf16>
// CHECK-NEXT:    arith.extf %[[VV]] : vector<16xf16> to vector<16xf32>
// CHECK:         %[[VM:.*]] = vector.maskedload %[[VR]][{{.*}}], {{.*}} : memref<32x24xf16, strided<[24, 1], offset: ?>>, vector<16xi1>, vector<16xf16> into vector<16xf16>
// CHECK-NEXT:    arith.extf %[[VM]] : vector<16xf16> to vector<16xf32>
// CHECK-LABEL: func.func @low_precision_cache
func.func @low_precision_cache(%q: memref<?x2x?x24xf32>, %k: memref<?x2x32x24xbf16, strided<[1536, 768, 24, 1], offset: ?>>, %v: memref<?x2x32x24xf16, strided<[1536, 768, 24, 1], offset: ?>>, %off: memref<?xi64>, %o: memref<?x2x?x24xf32>) {
  tfm.attention ins(%q, %k, %v : memref<?x2x?x24xf32>, memref<?x2x32x24xbf16, strided<[1536, 768, 24, 1], offset: ?>>, memref<?x2x32x24xf16, strided<[1536, 768, 24, 1], offset: ?>>) query_offset(%off : memref<?xi64>) outs(%o : memref<?x2x?x24xf32>) scale 0.25 {causal}
  return
}
