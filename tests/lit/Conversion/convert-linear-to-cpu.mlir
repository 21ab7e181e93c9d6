// RUN: tfm-opt %s -split-input-file -convert-linear-to-cpu="vector-bits=128 micro-rows=2" | FileCheck %s
// RUN: tfm-opt %s -split-input-file -convert-linear-to-cpu="vector-bits=128 micro-rows=2" \
// RUN:   | FileCheck %s --check-prefix=TASK
// RUN: tfm-opt %s -split-input-file -convert-linear-to-cpu="multiversion=true" \
// RUN:   | FileCheck %s --check-prefix=MULTI
// RUN: tfm-opt %s -split-input-file -convert-linear-to-cpu="multiversion=true" \
// RUN:   | FileCheck %s --check-prefixes=BF16,I8
// RUN: tfm-opt %s -split-input-file -convert-linear-to-cpu="multiversion=true" \
// RUN:   | FileCheck %s --check-prefix=AMX
// RUN: tfm-opt %s -split-input-file -convert-linear-to-cpu="vector-bits=512 target-bf16-dot=true target-int8-dot=true" \
// RUN:   | FileCheck %s --check-prefix=ONE-DOT
// RUN: tfm-opt %s -split-input-file -convert-linear-to-cpu="vector-bits=512" \
// RUN:   | FileCheck %s --check-prefix=ONE-WIDE
// RUN: tfm-opt %s -split-input-file -convert-linear-to-cpu="vector-bits=512 target-bf16-dot=true" \
// RUN:   | FileCheck %s --check-prefix=GELU

// Each bufferized tfm.packed_linear becomes a call to an outlined task
// function over [0, row blocks x column blocks), sized by the caller's
// thread count; two ops of the same shapes and epilogue share one task
// function.

// CHECK-LABEL: func.func @shares_task(
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x3xf32>, %[[W:[^:]*]]: memref<2x3x8xf32>, %[[B:[^:]*]]: memref<16xf32>, %[[R:[^:]*]]: memref<?x13xf32>, %[[Y:[^:]*]]: memref<?x13xf32>)
// CHECK-NOT:     tfm.packed_linear
// CHECK:         %[[THREADS:.*]] = call @__tfm_exec_threads() : () -> index
// CHECK:         arith.ceildivsi %[[THREADS]]
// CHECK:         call @__tfm_task_linear_0(%[[X]], %[[W]], %[[B]], %[[R]], %[[Y]], %[[PANELS:[^,]*]], %[[ROWS:[^,]*]], %{{[^,]*}}, %{{[^,]*}})
// CHECK:         call @__tfm_exec_threads()
// CHECK:         call @__tfm_task_linear_0(%[[X]], %[[W]], %[[B]], %[[R]], %[[Y]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}})
// CHECK-NOT:     __tfm_task_linear_1

// The task: tasks, K chunks, row groups whose K chunk of A is copied to a
// stack tile, panels, micro-kernels of up to 2 rows chosen by a switch on
// the rows left.
// TASK:       func.func private @__tfm_exec_threads() -> index attributes {tfm.exec_threads}
// TASK-LABEL: func.func private @__tfm_task_linear_0(
// TASK-SAME:     %[[X:[^:]*]]: memref<?x3xf32>
// TASK:         %[[TILE:.*]] = memref.alloca() {alignment = 64 : i64} : memref<24x512xf32>
// TASK:         scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %c1 {
// TASK:           scf.for %[[K0:.*]] = %c0 to %c3 step %c512
// TASK:             %[[KC:.*]] = arith.minsi %{{.*}}, %c512
// TASK:             scf.for %[[G:.*]] = %{{.*}} to %{{.*}} step %c24 {
// K = 3 is no whole vector: the copy is masked.
// TASK:               scf.for %[[ROW:.*]] =
// TASK:                 scf.for %[[KK:.*]] = %c0 to %[[KC]] step %c4
// TASK:                   %[[A:.*]] = vector.maskedload %[[X]][%[[ROW]], {{.*}}], {{.*}} : memref<?x3xf32>
// TASK:                   vector.maskedstore %[[TILE]][%{{.*}}, %[[KK]]], %{{.*}}, %[[A]]
// TASK:               scf.for %[[P:.*]] =
// The next panel (after the last: the first one at the next chunk) is
// prefetched into L2 while this one runs.
// TASK:                 %[[NEXT:.*]] = arith.addi %[[P]], %c1
// TASK:                 %[[LASTP:.*]] = arith.cmpi sge, %[[NEXT]]
// TASK:                 %[[NEXTP:.*]] = arith.select %[[LASTP]], %{{.*}}, %[[NEXT]]
// TASK:                 %[[NEXTK0:.*]] = arith.select %[[LASTP]], %{{.*}}, %[[K0]]
// TASK:                 scf.for %[[I:.*]] =
// TASK:                   scf.index_switch
// TASK:                   case 1 {
// The one-row kernel: a prefetch, two weight vectors of the panel, one
// broadcast from the tile, two FMAs.
// TASK:                     scf.for %[[K:.*]] = %c0 to %[[KC]] step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<4xf32>, vector<4xf32>)
// TASK:                       %[[PK:.*]] = arith.addi %[[NEXTK0]], %[[K]]
// TASK:                       %[[PKC:.*]] = arith.minsi %[[PK]], %c2
// TASK:                       memref.prefetch %{{.*}}[%[[NEXTP]], %[[PKC]], %c0], read, locality<2>, data : memref<2x3x8xf32>
// TASK:                       %[[WK:.*]] = arith.addi %[[K0]], %[[K]]
// TASK:                       vector.load %{{.*}}[%[[P]], %[[WK]], %{{.*}}] : memref<2x3x8xf32>, vector<4xf32>
// TASK:                       vector.load %{{.*}}[%[[P]], %{{.*}}, %{{.*}}] : memref<2x3x8xf32>, vector<4xf32>
// TASK:                       memref.load %[[TILE]][%{{.*}}, %[[K]]] : memref<24x512xf32>
// TASK:                       vector.broadcast
// TASK-COUNT-2:               vector.fma
// TASK-NEXT:                  scf.yield
// TASK:                     vector.maskedstore
// TASK:                   default {
// TASK-COUNT-4:               vector.fma
// After the last chunk, the epilogue over the tile just stored: bias, exact
// GELU with erf as a polynomial (no math.erf left), the residual, stored
// with a mask (13 columns).
// TASK:                 scf.if
// TASK:                   scf.for
// TASK:                     vector.maskedload {{.*}} : memref<?x13xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
// TASK:                     vector.load %{{.*}} : memref<16xf32>, vector<4xf32>
// TASK-NOT:                 math.erf
// TASK:                     vector.maskedload {{.*}} : memref<?x13xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
// TASK:                     vector.maskedstore

// With multiversion, the task exists for SSE, AVX2 and AVX-512 (its own
// target features) behind one task that picks the variant by the CPU level;
// the call site calls that task.
// MULTI-DAG:   llvm.func internal @__tfm_cpu_level() -> i32
// MULTI-DAG:   func.func private @__tfm_task_linear_0_sse({{.*}}) attributes {tfm.task}
// MULTI-DAG:   func.func private @__tfm_task_linear_0_avx2({{.*}}) attributes {target_features = #llvm.target_features<["+avx", "+avx2", "+fma", "+f16c", "-slow-unaligned-mem-32"]>
// MULTI-DAG:   func.func private @__tfm_task_linear_0_avx512({{.*}}) attributes {target_features = #llvm.target_features<[{{.*}}"+avx512f"
// MULTI:       func.func private @__tfm_task_linear_0({{.*}}) attributes {tfm.task} {
// MULTI-NEXT:    %[[LEVEL:.*]] = llvm.call @__tfm_cpu_level() : () -> i32
// MULTI:         %[[INDEX:.*]] = arith.index_cast %{{.*}} : i32 to index
// MULTI:         scf.index_switch %[[INDEX]]
// MULTI:         case 2 {
// MULTI:           call @__tfm_task_linear_0_avx2(
// MULTI:         case 3 {
// MULTI:           call @__tfm_task_linear_0_avx512(
// MULTI:         default {
// MULTI:           call @__tfm_task_linear_0_sse(
// MULTI-LABEL: func.func @shares_task(
// MULTI-NOT:     __tfm_cpu_level
// MULTI:         call @__tfm_task_linear_0(
// MULTI-NOT:     __tfm_cpu_level
// MULTI:         call @__tfm_task_linear_0(
// MULTI-NOT:     __tfm_cpu_level
// MULTI:         return
func.func @shares_task(%x: memref<?x3xf32>, %w: memref<2x3x8xf32>, %b: memref<16xf32>, %r: memref<?x13xf32>, %y: memref<?x13xf32>) {
  tfm.packed_linear ins(%x, %w : memref<?x3xf32>, memref<2x3x8xf32>) bias(%b : memref<16xf32>) residual(%r : memref<?x13xf32>) outs(%y : memref<?x13xf32>) activation gelu
  tfm.packed_linear ins(%x, %w : memref<?x3xf32>, memref<2x3x8xf32>) bias(%b : memref<16xf32>) residual(%r : memref<?x13xf32>) outs(%y : memref<?x13xf32>) activation gelu
  return
}

// -----

// Whole panels need no masks; leading dims are flattened into rows; relu is
// a max with zero. A different epilogue gets its own task. K = 8 copies A
// in whole vectors.

// CHECK-LABEL: func.func @relu_whole_panels(
// CHECK:         call @__tfm_task_linear_0(
// TASK-LABEL: func.func private @__tfm_task_linear_0(
// TASK-SAME:     %[[X:[^:]*]]: memref<2x?x8xf32>
// TASK:         memref.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : memref<2x?x8xf32> into memref<?x8xf32>
// TASK-NOT:     vector.masked
// TASK:         arith.maximumf
// TASK-NOT:     vector.masked
// TASK:         {{^    return$}}
func.func @relu_whole_panels(%x: memref<2x?x8xf32>, %w: memref<1x8x8xf32>, %y: memref<2x?x8xf32>) {
  tfm.packed_linear ins(%x, %w : memref<2x?x8xf32>, memref<1x8x8xf32>) outs(%y : memref<2x?x8xf32>) activation relu
  return
}

// -----

// A bf16 packed weight (pairs of k per 32-bit lane: [1, ceil(3/2), 2 * 32]).
// With multiversion, a fourth variant for AVX512-BF16 (level 5) rounds A
// with truncf (vcvtneps2bf16) and multiplies with vdpbf16ps; the SSE, AVX2
// and AVX-512 variants round on the bits (NaN kept, denormals flushed) and
// split each pair into two f32 FMAs, and never use the intrinsic. Task
// functions are named per split, so each label names the bf16 operands.

// BF16-LABEL: func.func private @__tfm_task_linear_0_sse(%arg0: memref<?x3xf32>, %arg1: memref<1x2x64xbf16>
// BF16-SAME:     attributes {tfm.task} {
// BF16-NOT:      llvm.call_intrinsic
// BF16:          arith.cmpf uno, %{{.*}}, %{{.*}} : vector<4xf32>
// BF16-NOT:      llvm.call_intrinsic
// BF16:          vector.fma %{{.*}} : vector<4xf32>
// BF16-NOT:      llvm.call_intrinsic
// BF16:          {{^    return$}}
// BF16-LABEL: func.func private @__tfm_task_linear_0_avx2(%arg0: memref<?x3xf32>, %arg1: memref<1x2x64xbf16>
// BF16-SAME:     "+avx2", "+fma"
// BF16-NOT:      llvm.call_intrinsic
// BF16:          arith.cmpf uno, %{{.*}}, %{{.*}} : vector<8xf32>
// BF16-NOT:      llvm.call_intrinsic
// BF16:          vector.fma %{{.*}} : vector<8xf32>
// BF16-NOT:      llvm.call_intrinsic
// BF16:          {{^    return$}}
// BF16-LABEL: func.func private @__tfm_task_linear_0_avx512(%arg0: memref<?x3xf32>, %arg1: memref<1x2x64xbf16>
// BF16-SAME:     "+avx512vl", "-slow-unaligned-mem-32"]>, tfm.task}
// BF16-NOT:      llvm.call_intrinsic
// BF16:          arith.cmpf uno, %{{.*}}, %{{.*}} : vector<16xf32>
// BF16-NOT:      llvm.call_intrinsic
// BF16:          vector.fma %{{.*}} : vector<16xf32>
// BF16-NOT:      llvm.call_intrinsic
// BF16:          {{^    return$}}
// BF16-LABEL: func.func private @__tfm_task_linear_0_avx512bf16(%arg0: memref<?x3xf32>, %arg1: memref<1x2x64xbf16>
// BF16-SAME:     "+avx512vnni", "+avx512bf16"]>, tfm.task}
// BF16-NOT:      arith.cmpf uno
// BF16:          arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// BF16-NOT:      vector.fma
// BF16:          llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%{{.*}}) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
// BF16-NOT:      vector.fma
// BF16:          {{^    return$}}
// The dispatcher: the last variant whose level the CPU's reaches (>=):
// levels 2, 3, 5 (none for 4: VNNI alone does not help bf16) and 6 (AMX),
// SSE below.
// BF16-LABEL: func.func private @__tfm_task_linear_0(%arg0: memref<?x3xf32>, %arg1: memref<1x2x64xbf16>
// BF16:          %[[LEVEL:.*]] = llvm.call @__tfm_cpu_level() : () -> i32
// BF16:          %[[FIVE:.*]] = arith.constant 5 : i32
// BF16-NEXT:     %[[REACHES:.*]] = arith.cmpi sge, %[[LEVEL]], %[[FIVE]] : i32
// BF16:          arith.select %[[REACHES]], %{{.*}}, %{{.*}} : i32
// BF16:          scf.index_switch
// BF16-NEXT:     case 2 {
// BF16-NEXT:       func.call @__tfm_task_linear_0_avx2(
// BF16:          case 3 {
// BF16-NEXT:       func.call @__tfm_task_linear_0_avx512(
// BF16-NOT:      case 4
// BF16:          case 5 {
// BF16-NEXT:       func.call @__tfm_task_linear_0_avx512bf16(
// BF16:          case 6 {
// BF16-NEXT:       func.call @__tfm_task_linear_0_amx(
// BF16:          default {
// BF16-NEXT:       func.call @__tfm_task_linear_0_sse(
// BF16-LABEL: func.func @bf16_variants(
// BF16:          call @__tfm_task_linear_0(

// The AMX variant (level 6). N = 13 is not whole panels, so every row
// takes the all-of-K path: the task's rows of A rounded to bf16 into a
// stack buffer of whole 64-byte tile rows per row (K = 3: 2 pairs, zeros
// from the copied vector's 8 lanes to 16), the packed weights' last partial
// K tile (here all 2 packed rows) copied into 16 zeroed rows, then per
// panel and 32 rows 2 x 2 C tiles over the K tiles (one a step: the
// chunked path below unrolls by 4): A tiles read with the buffer's stride, B tiles (16
// packed rows of 16 columns, the panel's halves) straight from the packed
// weight with its 128-byte stride; the C tiles stored to a 32 x 32 f32
// scratch, which the epilogue reads.
// AMX-LABEL: func.func private @__tfm_task_linear_0_amx(%arg0: memref<?x3xf32>, %arg1: memref<1x2x64xbf16>
// AMX-SAME:     "+avx512bf16", "+amx-tile", "+amx-bf16", "+amx-int8"]>, tfm.task}
// AMX:          %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<18432xi8>
// AMX-NEXT:     %[[A:.*]] = memref.view %[[BUF]][%c0][] : memref<18432xi8> to memref<288x16xi32>
// AMX-NOT:      memref.view
// AMX:          %[[C:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32x32xf32>
// AMX:          %[[TAIL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x64xbf16>
// AMX:          vector.store %{{.*}}, %[[TAIL]][%{{.*}}, %c0] : memref<16x64xbf16>, vector<64xbf16>
// AMX:          scf.for %{{.*}} = %c8 to %c16 step %c1 {
// AMX-NEXT:       memref.store %c0_i32, %[[A]]
// AMX:          arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// AMX:          vector.store %{{.*}}, %[[A]][%{{.*}}, %{{.*}}] : memref<288x16xi32>, vector<8xi32>
// AMX:          %[[W:.*]] = vector.load %arg1[%{{.*}}, %c0, %c0] : memref<1x2x64xbf16>, vector<64xbf16>
// AMX-NEXT:     vector.store %[[W]], %[[TAIL]][%c0, %c0]
// AMX:          %[[Z:.*]] = llvm.call_intrinsic "llvm.x86.tilezero.internal"
// AMX:          scf.for %{{.*}} = %c0 to %c0 step %c1 iter_args(%{{.*}} = %[[Z]], {{.*}}) -> (!llvm.x86_amx, !llvm.x86_amx, !llvm.x86_amx, !llvm.x86_amx) {
// AMX-COUNT-2:    llvm.call_intrinsic "llvm.x86.tileloadd64.internal"(%{{.*}}, %{{.*}}, %{{.*}}, %c64_i64)
// AMX-COUNT-2:    llvm.call_intrinsic "llvm.x86.tileloadd64.internal"(%{{.*}}, %{{.*}}, %{{.*}}, %c128_i64)
// AMX-COUNT-4:    llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// AMX:          llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// AMX:          llvm.call_intrinsic "llvm.x86.tilestored64.internal"
// AMX-NOT:      vector.fma
// AMX-NOT:      llvm.x86.avx512bf16.dpbf16ps
// AMX:          vector.load %[[C]]
// AMX:          {{^    return$}}

// Built for one CPU, the one task has vdpbf16ps where the target has
// AVX512-BF16, the widening FMAs where it does not; no CPU level either way.
// ONE-DOT-LABEL: func.func private @__tfm_task_linear_0(%arg0: memref<?x3xf32>, %arg1: memref<1x2x64xbf16>
// ONE-DOT-NOT:     __tfm_cpu_level
// ONE-DOT:         arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// ONE-DOT:         llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// ONE-DOT-NOT:     __tfm_cpu_level
// ONE-DOT:         {{^    return$}}
// ONE-WIDE-LABEL: func.func private @__tfm_task_linear_0(%arg0: memref<?x3xf32>, %arg1: memref<1x2x64xbf16>
// ONE-WIDE-NOT:     llvm.call_intrinsic
// ONE-WIDE:         arith.cmpf uno, %{{.*}}, %{{.*}} : vector<16xf32>
// ONE-WIDE-NOT:     llvm.call_intrinsic
// ONE-WIDE:         vector.fma %{{.*}} : vector<16xf32>
// ONE-WIDE-NOT:     llvm.call_intrinsic
// ONE-WIDE:         {{^    return$}}
func.func @bf16_variants(%x: memref<?x3xf32>, %w: memref<1x2x64xbf16>, %y: memref<?x13xf32>) {
  tfm.packed_linear ins(%x, %w : memref<?x3xf32>, memref<1x2x64xbf16>) outs(%y : memref<?x13xf32>) activation none
  return
}

// -----

// An i8 packed weight (quads of k per lane: [1, ceil(3/4), 4 * 32]) with its
// per-column scales and sums. Every variant first finds each row's range
// and zero point over all of K, quantizes A to u8 as it copies it, and
// dequantizes in the epilogue: the zero point's share (zero * column sum)
// removed in i32, then row scale * column scale, then bias and activation.
// The AVX512-VNNI variant (level 4) multiplies with vpdpbusd, the others
// with four i32 multiplies per quad.

// I8-LABEL: func.func private @__tfm_task_linear_0_sse(%arg0: memref<?x3xf32>, %arg1: memref<1x1x128xi8>, %arg2: memref<32xf32>, %arg3: memref<32xi32>, %arg4: memref<32xf32>
// I8-SAME:     attributes {tfm.task} {
// I8-NOT:      llvm.call_intrinsic
// I8:          vector.reduction <minnumf>
// I8:          vector.reduction <maxnumf>
// I8:          math.roundeven %{{.*}} : f32
// I8:          math.roundeven %{{.*}} : vector<4xf32>
// I8:          arith.fptoui %{{.*}} : vector<4xf32> to vector<4xi32>
// I8-NOT:      llvm.call_intrinsic
// I8:          arith.muli %{{.*}} : vector<4xi32>
// I8-NOT:      llvm.call_intrinsic
// I8:          %[[SUMS:.*]] = vector.load %arg3[%{{.*}}] : memref<32xi32>, vector<4xi32>
// I8:          %[[ACC:.*]] = vector.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// I8:          %[[SHARE:.*]] = arith.muli %{{.*}}, %[[SUMS]] : vector<4xi32>
// I8:          %[[EXACT:.*]] = arith.subi %[[ACC]], %[[SHARE]] : vector<4xi32>
// I8:          %[[SCALES:.*]] = vector.load %arg2[%{{.*}}] : memref<32xf32>, vector<4xf32>
// I8:          %[[F:.*]] = arith.sitofp %[[EXACT]] : vector<4xi32> to vector<4xf32>
// I8:          %[[S:.*]] = arith.mulf %[[SCALES]], %{{.*}} : vector<4xf32>
// I8:          %[[Y:.*]] = arith.mulf %[[F]], %[[S]] : vector<4xf32>
// I8:          %[[B:.*]] = vector.load %arg4[%{{.*}}] : memref<32xf32>, vector<4xf32>
// I8:          %[[YB:.*]] = arith.addf %[[Y]], %[[B]] : vector<4xf32>
// I8:          arith.maximumf %[[YB]], %{{.*}} : vector<4xf32>
// I8-NOT:      llvm.call_intrinsic
// I8:          {{^    return$}}
// I8-LABEL: func.func private @__tfm_task_linear_0_avx2(%arg0: memref<?x3xf32>, %arg1: memref<1x1x128xi8>
// I8-SAME:     "+avx2", "+fma"
// I8-NOT:      llvm.call_intrinsic
// I8:          arith.muli %{{.*}} : vector<8xi32>
// I8-NOT:      llvm.call_intrinsic
// I8:          arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// I8-NOT:      llvm.call_intrinsic
// I8:          {{^    return$}}
// I8-LABEL: func.func private @__tfm_task_linear_0_avx512(%arg0: memref<?x3xf32>, %arg1: memref<1x1x128xi8>
// I8-SAME:     "+avx512vl", "-slow-unaligned-mem-32"]>, tfm.task}
// I8-NOT:      llvm.call_intrinsic
// I8:          arith.muli %{{.*}} : vector<16xi32>
// I8-NOT:      llvm.call_intrinsic
// I8:          arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// I8-NOT:      llvm.call_intrinsic
// I8:          {{^    return$}}
// I8-LABEL: func.func private @__tfm_task_linear_0_avx512vnni(%arg0: memref<?x3xf32>, %arg1: memref<1x1x128xi8>
// I8-SAME:     "+avx512vl", "-slow-unaligned-mem-32", "+avx512vnni"]>, tfm.task}
// I8-NOT:      arith.muli %{{.*}} : vector<16xi32>
// I8:          llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// I8-NOT:      arith.muli %{{.*}} : vector<16xi32>
// I8:          vector.load %arg3[%{{.*}}] : memref<32xi32>, vector<16xi32>
// I8:          arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// I8:          {{^    return$}}
// The dispatcher: levels 2, 3, 4 and 6; a CPU at 5 runs the VNNI variant.
// I8-LABEL: func.func private @__tfm_task_linear_0(%arg0: memref<?x3xf32>, %arg1: memref<1x1x128xi8>
// I8:          %[[LEVEL:.*]] = llvm.call @__tfm_cpu_level() : () -> i32
// I8:          %[[FOUR:.*]] = arith.constant 4 : i32
// I8-NEXT:     %[[REACHES:.*]] = arith.cmpi sge, %[[LEVEL]], %[[FOUR]] : i32
// I8:          arith.select %[[REACHES]], %{{.*}}, %{{.*}} : i32
// I8:          scf.index_switch
// I8-NEXT:     case 2 {
// I8-NEXT:       func.call @__tfm_task_linear_0_avx2(
// I8:          case 3 {
// I8-NEXT:       func.call @__tfm_task_linear_0_avx512(
// I8:          case 4 {
// I8-NEXT:       func.call @__tfm_task_linear_0_avx512vnni(
// I8-NOT:      case 5
// I8:          case 6 {
// I8-NEXT:       func.call @__tfm_task_linear_0_amx(
// I8:          default {
// I8-NEXT:       func.call @__tfm_task_linear_0_sse(
// I8-LABEL: func.func @i8_variants(
// I8:          call @__tfm_task_linear_0(

// The AMX variant with u8 rows of A (quantized per row as everywhere) and
// s8 quads of weights: tdpbusd onto i32 C tiles, dequantized by the same
// epilogue (zero point x column sums off in i32, then the scales).
// AMX-LABEL: func.func private @__tfm_task_linear_0_amx(%arg0: memref<?x3xf32>, %arg1: memref<1x1x128xi8>
// AMX:          %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<18432xi8>
// AMX-NEXT:     memref.view %[[BUF]][%c0][] : memref<18432xi8> to memref<288x16xi32>
// AMX:          memref.alloca() {alignment = 64 : i64} : memref<16x128xi8>
// AMX:          vector.reduction <minnumf>
// AMX:          arith.fptoui %{{.*}} : vector<16xf32> to vector<16xi32>
// AMX:          llvm.call_intrinsic "llvm.x86.tdpbusd.internal"
// AMX:          llvm.call_intrinsic "llvm.x86.tilestored64.internal"
// AMX-NOT:      llvm.x86.avx512.vpdpbusd
// AMX:          %[[SUMS:.*]] = vector.load %arg3[%{{.*}}] : memref<32xi32>, vector<16xi32>
// AMX:          arith.subi %{{.*}}, %{{.*}} : vector<16xi32>
// AMX:          arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// AMX:          {{^    return$}}

// ONE-DOT-LABEL: func.func private @__tfm_task_linear_0(%arg0: memref<?x3xf32>, %arg1: memref<1x1x128xi8>
// ONE-DOT-NOT:     __tfm_cpu_level
// ONE-DOT:         llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// ONE-DOT-NOT:     __tfm_cpu_level
// ONE-DOT:         {{^    return$}}
// ONE-WIDE-LABEL: func.func private @__tfm_task_linear_0(%arg0: memref<?x3xf32>, %arg1: memref<1x1x128xi8>
// ONE-WIDE-NOT:     llvm.call_intrinsic
// ONE-WIDE:         arith.muli %{{.*}} : vector<16xi32>
// ONE-WIDE-NOT:     llvm.call_intrinsic
// ONE-WIDE:         {{^    return$}}
func.func @i8_variants(%x: memref<?x3xf32>, %w: memref<1x1x128xi8>, %s: memref<32xf32>, %u: memref<32xi32>, %b: memref<32xf32>, %y: memref<?x13xf32>) {
  tfm.packed_linear ins(%x, %w : memref<?x3xf32>, memref<1x1x128xi8>) dequant(%s, %u : memref<32xf32>, memref<32xi32>) bias(%b : memref<32xf32>) outs(%y : memref<?x13xf32>) activation relu
  return
}

// -----

// N in whole panels (64) and K = 1030 in bf16 (515 packed rows: 32 whole K
// tiles and 3 rows): the AMX variant's groups of 32 rows run K in two
// chunks of 16 tiles. One 238 KB stack buffer is both the row-major A of
// the rows left over (96 rows of 528 lanes) and the blocked A of a chunk
// (224 rows: 14 row tiles of 17 K tiles of 16 x 16 lanes); the first chunk
// starts from zeros and stores its tiles to C (rows 256 bytes apart), the
// last reloads them, adds its tiles and the partial one (the weights' last
// 3 rows copied into zeroed rows), and stores to the scratch that the
// epilogue reads; a middle chunk (none here) would go from C to C.
// AMX-LABEL: func.func private @__tfm_task_linear_0_amx(%arg0: memref<?x1030xf32>, %arg1: memref<2x515x64xbf16>
// AMX:          %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<243712xi8>
// AMX-NEXT:     %[[ROWS:.*]] = memref.view %[[BUF]][%c0][] : memref<243712xi8> to memref<96x528xi32>
// AMX-NEXT:     %[[BLOCKED:.*]] = memref.view %[[BUF]][%c0][] : memref<243712xi8> to memref<3808x16xi32>
// AMX:          %[[SCRATCH:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32x32xf32>
// AMX:          %[[SCRATCH_AT:.*]] = memref.extract_aligned_pointer_as_index %[[SCRATCH]]
// AMX:          scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c224 {
// AMX:            scf.for %[[CHUNK:.*]] = %c0 to %c2 step %c1 {
// AMX:              %[[LAST:.*]] = arith.cmpi eq, %[[CHUNK]], %c1 : index
// AMX:              vector.store %{{.*}}, %[[BLOCKED]][%{{.*}}, %{{.*}}] : memref<3808x16xi32>, vector<8xi32>
// AMX:              scf.if %[[LAST]] {
// AMX:                scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32 {
// AMX:                  %[[FIRST:.*]] = arith.cmpi eq, %[[CHUNK]], %c0 : index
// AMX-NEXT:             scf.if %[[FIRST]] {
// AMX-COUNT-4:            llvm.call_intrinsic "llvm.x86.tilezero.internal"
// AMX:                    llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// AMX-COUNT-4:            llvm.call_intrinsic "llvm.x86.tilestored64.internal"(%{{.*}}, %{{.*}}, %{{.*}}, %c256_i64, %{{.*}})
// AMX-NEXT:             } else {
// AMX-NEXT:               scf.if %[[LAST]] {
// AMX-COUNT-4:              llvm.call_intrinsic "llvm.x86.tileloadd64.internal"(%{{.*}}, %{{.*}}, %{{.*}}, %c256_i64)
// AMX:                      llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// AMX:                      arith.addi %[[SCRATCH_AT]], %c2112 : index
// AMX:                      llvm.call_intrinsic "llvm.x86.tilestored64.internal"(%{{.*}}, %{{.*}}, %{{.*}}, %c128_i64, %{{.*}})
// AMX:                      vector.load %[[SCRATCH]]
// AMX:                    } else {
// AMX-COUNT-4:              llvm.call_intrinsic "llvm.x86.tileloadd64.internal"(%{{.*}}, %{{.*}}, %{{.*}}, %c256_i64)
// AMX:                      llvm.call_intrinsic "llvm.x86.tilestored64.internal"(%{{.*}}, %{{.*}}, %{{.*}}, %c256_i64, %{{.*}})
// AMX:          vector.store %{{.*}}, %[[ROWS]][%{{.*}}, %{{.*}}] : memref<96x528xi32>, vector<8xi32>
// AMX:          {{^    return$}}
// The caller's column blocks: at most 32 panels (512 KB of a K chunk of
// 256), or, where the CPU runs the AMX variant (level 6), 95 (6 MB of
// packed weights, a panel being 515 x 128 bytes).
// AMX-LABEL: func.func @bf16_chunks(
// AMX:          %[[LEVEL:.*]] = llvm.call @__tfm_cpu_level() : () -> i32
// AMX-NEXT:     %[[SIX:.*]] = arith.constant 6 : i32
// AMX-NEXT:     %[[RUNS_AMX:.*]] = arith.cmpi sge, %[[LEVEL]], %[[SIX]] : i32
// AMX-NEXT:     %[[WIDE:.*]] = arith.constant 95 : index
// AMX-NEXT:     %[[MAX_PANELS:.*]] = arith.select %[[RUNS_AMX]], %[[WIDE]], %c32{{(_[0-9]+)?}} : index
// AMX-NEXT:     arith.ceildivsi %{{.*}}, %[[MAX_PANELS]] : index
// AMX:          call @__tfm_task_linear_0(
func.func @bf16_chunks(%x: memref<?x1030xf32>, %w: memref<2x515x64xbf16>, %y: memref<?x64xf32>) {
  tfm.packed_linear ins(%x, %w : memref<?x1030xf32>, memref<2x515x64xbf16>) outs(%y : memref<?x64xf32>) activation "none"
  return
}

// -----

// Block-quantized i8 (GGUF Q8_0): the copy quantizes each row per block of
// 32 (s8, amax / 127, rounded to nearest even), the K loop runs block by
// block with i32 sums, each scaled by the weight's and the input's block
// scales into f32 accumulators; with VNNI the weights are shifted to u8 (an
// xor with 0x80) and 128 x the input block's sum comes off; the widening
// form multiplies s8 by s8. No dequantizing epilogue: the relu alone.

// ONE-DOT-LABEL: func.func private @__tfm_task_linear_0(%arg0: memref<?x64xf32>, %arg1: memref<1x16x128xi8>, %arg2: memref<2x32xf32>
// ONE-DOT:         math.roundeven %{{.*}} : vector<16xf32>
// ONE-DOT:         arith.xori %{{.*}}, %{{.*}} : vector<16xi32>
// ONE-DOT:         llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// ONE-DOT:         arith.subi %{{.*}}, %{{.*}} : vector<16xi32>
// ONE-DOT:         arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// ONE-DOT:         vector.fma
// ONE-DOT:         arith.maximumf
// ONE-DOT:         {{^    return$}}
// ONE-WIDE-LABEL: func.func private @__tfm_task_linear_0(%arg0: memref<?x64xf32>, %arg1: memref<1x16x128xi8>, %arg2: memref<2x32xf32>
// ONE-WIDE-NOT:     llvm.call_intrinsic
// ONE-WIDE:         arith.muli %{{.*}} : vector<16xi32>
// ONE-WIDE-NOT:     llvm.call_intrinsic
// ONE-WIDE:         arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// ONE-WIDE-NOT:     llvm.call_intrinsic
// ONE-WIDE:         {{^    return$}}
func.func @q8_0_blocks(%x: memref<?x64xf32>, %w: memref<1x16x128xi8>, %s: memref<2x32xf32>, %y: memref<?x13xf32>) {
  tfm.packed_linear ins(%x, %w : memref<?x64xf32>, memref<1x16x128xi8>) dequant(%s : memref<2x32xf32>) outs(%y : memref<?x13xf32>) activation relu
  return
}

// -----

// Q4_0 blocks, two k per byte ([panels, K / 8, 4 nr]): each packed row's
// lanes are split in registers into their low nibbles (a shift-free and)
// and high ones (a shift and an and), u8 already (u = q + 8): no xor, and
// 8 x the input block's sum comes off, in the widening form too.

// ONE-DOT-LABEL: func.func private @__tfm_task_linear_0(%arg0: memref<?x64xf32>, %arg1: memref<1x8x128xi8>, %arg2: memref<2x32xf32>
// ONE-DOT-NOT:     arith.xori
// ONE-DOT:         arith.shrui %{{.*}}, %{{.*}} : vector<16xi32>
// ONE-DOT-NOT:     arith.xori
// ONE-DOT:         llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// ONE-DOT-NOT:     arith.xori
// ONE-DOT:         arith.subi %{{.*}}, %{{.*}} : vector<16xi32>
// ONE-DOT-NOT:     arith.xori
// ONE-DOT:         {{^    return$}}
// ONE-WIDE-LABEL: func.func private @__tfm_task_linear_0(%arg0: memref<?x64xf32>, %arg1: memref<1x8x128xi8>, %arg2: memref<2x32xf32>
// ONE-WIDE-NOT:     llvm.call_intrinsic
// ONE-WIDE:         arith.shrui %{{.*}}, %{{.*}} : vector<16xi32>
// ONE-WIDE:         arith.muli %{{.*}} : vector<16xi32>
// ONE-WIDE:         arith.subi %{{.*}}, %{{.*}} : vector<16xi32>
// ONE-WIDE-NOT:     llvm.call_intrinsic
// ONE-WIDE:         {{^    return$}}
func.func @q4_0_blocks(%x: memref<?x64xf32>, %w: memref<1x8x128xi8>, %s: memref<2x32xf32>, %y: memref<?x13xf32>) {
  tfm.packed_linear ins(%x, %w : memref<?x64xf32>, memref<1x8x128xi8>) dequant(%s : memref<2x32xf32>) outs(%y : memref<?x13xf32>) activation none
  return
}

// -----

// GELU in a bf16 GEMM's epilogue is one rational function of x / sqrt(2)
// clamped to [-4, 4], z P(z^2) / Q(z^2): no lanes selected between
// intervals. An f32 GEMM keeps math.erf's expansion, which selects its
// coefficients lane by lane.

// GELU-LABEL: func.func private @__tfm_task_linear_0(%arg0: memref<?x5xf32>, %arg1: memref<1x3x64xbf16>
// GELU-DAG:     %[[FOUR:.*]] = arith.constant dense<4.000000e+00> : vector<16xf32>
// GELU-DAG:     %[[MINUS_FOUR:.*]] = arith.constant dense<-4.000000e+00> : vector<16xf32>
// GELU-DAG:     %[[HALF:.*]] = arith.constant dense<5.000000e-01> : vector<16xf32>
// GELU:         %[[X:.*]] = arith.addf
// GELU-NEXT:    %[[SCALED:.*]] = arith.mulf %[[X]], %{{.*}} : vector<16xf32>
// GELU-NEXT:    %[[LOW:.*]] = arith.minnumf %[[SCALED]], %[[FOUR]] : vector<16xf32>
// GELU-NEXT:    %[[Z:.*]] = arith.maxnumf %[[LOW]], %[[MINUS_FOUR]] : vector<16xf32>
// GELU-NEXT:    %[[Z2:.*]] = arith.mulf %[[Z]], %[[Z]] : vector<16xf32>
// GELU-COUNT-6: vector.fma %{{.*}}, %[[Z2]], %{{.*}} : vector<16xf32>
// GELU-NEXT:    %[[P:.*]] = arith.mulf %[[Z]], %{{.*}} : vector<16xf32>
// GELU-COUNT-4: vector.fma %{{.*}}, %[[Z2]], %{{.*}} : vector<16xf32>
// GELU-NEXT:    %[[ERF:.*]] = arith.divf %[[P]], %{{.*}} : vector<16xf32>
// GELU-NEXT:    %[[H:.*]] = arith.mulf %[[X]], %[[HALF]] : vector<16xf32>
// GELU-NEXT:    vector.fma %[[H]], %[[ERF]], %[[H]] : vector<16xf32>
// GELU-NOT:     arith.select {{.*}} : vector<16xi1>, vector<16xf32>
// GELU:         {{^    return$}}
func.func @bf16_gelu(%x: memref<?x5xf32>, %w: memref<1x3x64xbf16>, %b: memref<32xf32>, %y: memref<?x13xf32>) {
  tfm.packed_linear ins(%x, %w : memref<?x5xf32>, memref<1x3x64xbf16>) bias(%b : memref<32xf32>) outs(%y : memref<?x13xf32>) activation gelu
  return
}

// -----

// GELU-LABEL: func.func private @__tfm_task_linear_0(%arg0: memref<?x5xf32>, %arg1: memref<1x5x32xf32>
// GELU:         arith.select %{{.*}} : vector<16xi1>, vector<16xf32>
// GELU:         {{^    return$}}
func.func @f32_gelu(%x: memref<?x5xf32>, %w: memref<1x5x32xf32>, %b: memref<32xf32>, %y: memref<?x13xf32>) {
  tfm.packed_linear ins(%x, %w : memref<?x5xf32>, memref<1x5x32xf32>) bias(%b : memref<32xf32>) outs(%y : memref<?x13xf32>) activation gelu
  return
}
