// RUN: tfm-opt %s -split-input-file -tfm-expand-half-casts | FileCheck %s
// RUN: tfm-opt %s -split-input-file -tfm-expand-half-casts=native-bf16=true \
// RUN:   | FileCheck %s --check-prefix=NATIVE

// Conversions between f32/f64 and bf16/f16, scalar and vector, become
// integer and f32 operations; no arith op on a 16-bit float is left for LLVM
// to turn into a library call. Arith ops on other types stay.

// bf16 -> f32 is a shift of the bits; f32 -> bf16 adds the rounding bias
// 0x7fff plus the lowest kept bit, and picks the quiet NaN for NaNs.
// CHECK-LABEL: func.func @bf16
// CHECK-SAME: (%[[X:.*]]: f32, %[[B:.*]]: bf16)
// CHECK-NOT:  arith.truncf
// CHECK-NOT:  arith.extf
// CHECK:      arith.bitcast %[[X]] : f32 to i32
// CHECK-DAG:  arith.constant 32767 : i32
// CHECK-DAG:  arith.constant 32704 : i32
// CHECK-DAG:  arith.constant 2139095040 : i32
// CHECK:      arith.select
// CHECK:      %[[T:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK:      %[[R:.*]] = arith.bitcast %[[T]] : i16 to bf16
// CHECK:      %[[BI:.*]] = arith.bitcast %[[B]] : bf16 to i16
// CHECK:      %[[BW:.*]] = arith.extui %[[BI]] : i16 to i32
// CHECK:      %[[BS:.*]] = arith.shli %[[BW]], %{{.*}} : i32
// CHECK:      %[[F:.*]] = arith.bitcast %[[BS]] : i32 to f32
// CHECK:      %[[M:.*]] = arith.maximumf %[[F]], %[[X]] : f32
// CHECK:      return %[[R]], %[[M]]
func.func @bf16(%x: f32, %b: bf16) -> (bf16, f32) {
  %0 = arith.truncf %x : f32 to bf16
  %1 = arith.extf %b : bf16 to f32
  %2 = arith.maximumf %1, %x : f32
  return %0, %2 : bf16, f32
}

// -----

// f16 on vectors: the f32 arithmetic of FP16's conversions, lane by lane.
// CHECK-LABEL: func.func @f16
// CHECK-NOT:  arith.truncf
// CHECK-NOT:  arith.extf
// CHECK-DAG:  arith.constant dense<5.19229686E+33> : vector<16xf32>
// CHECK-DAG:  arith.constant dense<7.70371977E-34> : vector<16xf32>
// CHECK:      arith.trunci %{{.*}} : vector<16xi32> to vector<16xi16>
// CHECK:      arith.bitcast %{{.*}} : vector<16xi16> to vector<16xf16>
// CHECK:      arith.bitcast %{{.*}} : vector<16xf16> to vector<16xi16>
// CHECK:      arith.extui %{{.*}} : vector<16xi16> to vector<16xi32>
// CHECK-DAG:  arith.constant dense<1.925930e-34> : vector<16xf32>
// CHECK-DAG:  arith.constant dense<5.000000e-01> : vector<16xf32>
// CHECK:      return
func.func @f16(%x: vector<16xf32>, %h: vector<16xf16>) -> (vector<16xf16>, vector<16xf32>) {
  %0 = arith.truncf %x : vector<16xf32> to vector<16xf16>
  %1 = arith.extf %h : vector<16xf16> to vector<16xf32>
  return %0, %1 : vector<16xf16>, vector<16xf32>
}

// -----

// f64 goes through f32 both ways: narrowing rounds twice, as PyTorch.
// CHECK-LABEL: func.func @f64
// CHECK-SAME: (%[[D:.*]]: f64, %[[H:.*]]: f16)
// CHECK:      %[[N:.*]] = arith.truncf %[[D]] : f64 to f32
// CHECK:      arith.bitcast %[[N]] : f32 to i32
// CHECK-NOT:  arith.truncf
// CHECK:      arith.bitcast %{{.*}} : i16 to bf16
// CHECK:      %[[SEL:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[OR:.*]] = arith.ori %{{.*}}, %[[SEL]] : i32
// CHECK-NEXT: %[[W:.*]] = arith.bitcast %[[OR]] : i32 to f32
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[W]] : f32 to f64
// CHECK-NEXT: return %{{.*}}, %[[E]]
func.func @f64(%d: f64, %h: f16) -> (bf16, f64) {
  %0 = arith.truncf %d : f64 to bf16
  %1 = arith.extf %h : f16 to f64
  return %0, %1 : bf16, f64
}

// -----

// Other arith ops on bf16/f16 lanes (a canonicalized sitofp straight to
// bf16, a comparison of halves) compute in f32 between the conversions;
// selects of halves move bits and stay.
// CHECK-LABEL: func.func @arithmetic
// CHECK-SAME: (%[[I:.*]]: vector<8xi8>, %[[A:.*]]: f16, %[[B:.*]]: f16)
// CHECK:      %[[F:.*]] = arith.sitofp %[[I]] : vector<8xi8> to vector<8xf32>
// CHECK:      arith.bitcast %[[F]] : vector<8xf32> to vector<8xi32>
// CHECK:      arith.bitcast %{{.*}} : vector<8xi16> to vector<8xbf16>
// CHECK:      %[[C:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[S:.*]] = arith.select %[[C]], %[[A]], %[[B]] : f16
// CHECK-NEXT: return %{{.*}}, %[[S]]
func.func @arithmetic(%i: vector<8xi8>, %a: f16, %b: f16) -> (vector<8xbf16>, f16) {
  %0 = arith.sitofp %i : vector<8xi8> to vector<8xbf16>
  %1 = arith.cmpf olt, %a, %b : f16
  %2 = arith.select %1, %a, %b : f16
  return %0, %2 : vector<8xbf16>, f16
}

// -----

// Where the target has vcvtneps2bf16 (a function that is an AVX512-BF16
// variant, or the whole target with native-bf16) f32 -> bf16 stays for
// LLVM; f32 -> f16 is expanded everywhere.
// CHECK-LABEL: func.func @variant
// CHECK-SAME:    target_features = #llvm.target_features<["+avx512f", "+avx512bf16"]>
// CHECK:      %[[B:.*]] = arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK-NOT:  arith.truncf
// CHECK:      arith.bitcast %{{.*}} : vector<16xi16> to vector<16xf16>
// CHECK:      return %[[B]]
// CHECK-LABEL: func.func @baseline
// CHECK-NOT:  arith.truncf
// CHECK:      return
// NATIVE-LABEL: func.func @variant
// NATIVE:       arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// NATIVE-LABEL: func.func @baseline
// NATIVE:       %[[B:.*]] = arith.truncf %{{.*}} : f32 to bf16
// NATIVE-NEXT:  return %[[B]]
func.func @variant(%x: vector<16xf32>) -> (vector<16xbf16>, vector<16xf16>)
    attributes {target_features = #llvm.target_features<["+avx512f", "+avx512bf16"]>} {
  %0 = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  %1 = arith.truncf %x : vector<16xf32> to vector<16xf16>
  return %0, %1 : vector<16xbf16>, vector<16xf16>
}
func.func @baseline(%x: f32) -> bf16 {
  %0 = arith.truncf %x : f32 to bf16
  return %0 : bf16
}

// -----

// f16 -> f32 stays for LLVM's vcvtph2ps in an F16C or AVX-512F variant (an
// f16 KV cache read by the attention kernel); elsewhere, and f32 -> f16
// everywhere, it is expanded.
// CHECK-LABEL: func.func @f16c_variant
// CHECK:       %[[W:.*]] = arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK-NOT:   arith.truncf
// CHECK:       return %[[W]]
// CHECK-LABEL: func.func @avx512_variant
// CHECK:       %[[W:.*]] = arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// CHECK-NEXT:  return %[[W]]
// CHECK-LABEL: func.func @sse_baseline
// CHECK-NOT:   arith.extf
// CHECK:       return
func.func @f16c_variant(%h: vector<8xf16>, %x: vector<8xf32>) -> (vector<8xf32>, vector<8xf16>)
    attributes {target_features = #llvm.target_features<["+avx", "+avx2", "+fma", "+f16c"]>} {
  %0 = arith.extf %h : vector<8xf16> to vector<8xf32>
  %1 = arith.truncf %x : vector<8xf32> to vector<8xf16>
  return %0, %1 : vector<8xf32>, vector<8xf16>
}
func.func @avx512_variant(%h: vector<16xf16>) -> vector<16xf32>
    attributes {target_features = #llvm.target_features<["+avx512f"]>} {
  %0 = arith.extf %h : vector<16xf16> to vector<16xf32>
  return %0 : vector<16xf32>
}
func.func @sse_baseline(%h: vector<4xf16>) -> vector<4xf32> {
  %0 = arith.extf %h : vector<4xf16> to vector<4xf32>
  return %0 : vector<4xf32>
}
