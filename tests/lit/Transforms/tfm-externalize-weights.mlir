// RUN: tfm-opt %s -tfm-emit-entry-points \
// RUN:   -tfm-externalize-weights=weights-file=%t.safetensors | FileCheck %s
// RUN: FileCheck %s --check-prefix=FILE < %t.safetensors
// RUN: tfm-opt %s -tfm-emit-entry-points -tfm-externalize-weights=embed=1 \
// RUN:   | FileCheck %s --check-prefix=EMBED

// Dense constants leave the module: the widest elements first in the file,
// each read at its offset from the bound base pointer. A splat stays (it
// is no data to speak of), and so does the metadata string.

// CHECK-NOT:   @__constant_4xf32
// CHECK-NOT:   @__constant_2xi64
// CHECK:       llvm.mlir.global private constant @splat(
// CHECK-LABEL: llvm.func internal @m(
// CHECK:         %[[SLOT:.*]] = llvm.mlir.addressof @__tfm_weights_base : !llvm.ptr
// CHECK-NEXT:    %[[BASE:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[OFFSET:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK-NEXT:    %[[W:.*]] = llvm.getelementptr inbounds %[[BASE]][%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    llvm.load %[[W]] : !llvm.ptr -> f32
// CHECK:         %[[SLOT2:.*]] = llvm.mlir.addressof @__tfm_weights_base : !llvm.ptr
// CHECK-NEXT:    %[[IDS:.*]] = llvm.load %[[SLOT2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.load %[[IDS]] : !llvm.ptr -> i64

// Every run entry point refuses to run while nothing is bound.
// CHECK-LABEL: llvm.func @tfm_m_run_packed(
// CHECK:         %[[B:.*]] = llvm.load %{{.*}} atomic acquire {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:    %[[UNBOUND:.*]] = llvm.icmp "eq" %[[B]], %[[NULL]] : !llvm.ptr
// CHECK-NEXT:    llvm.cond_br %[[UNBOUND]], ^[[FAIL:bb[0-9]+]], ^
// CHECK:       ^[[FAIL]]:
// CHECK-NEXT:    %[[MINUS6:.*]] = llvm.mlir.constant(-6 : i32) : i32
// CHECK-NEXT:    llvm.return %[[MINUS6]] : i32

// CHECK:       llvm.mlir.global internal @__tfm_weights_base() {{.*}} : !llvm.ptr {
// CHECK-NEXT:    %[[Z:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:    llvm.return %[[Z]] : !llvm.ptr

// bind_weights takes NULL with 0, or a 64-byte aligned pointer to exactly
// the 32 bytes of the file's data.
// CHECK-LABEL: llvm.func @tfm_m_bind_weights(
// CHECK-SAME:    %{{.*}}: !llvm.ptr, %{{.*}}: i64) -> i32
// CHECK:         llvm.mlir.constant(32 : i64) : i64
// CHECK:         llvm.mlir.constant(63 : i64) : i64
// CHECK:         llvm.store %{{.*}}, %{{.*}} atomic release {alignment = 8 : i64} : !llvm.ptr, !llvm.ptr
// CHECK:         llvm.mlir.constant(-3 : i32) : i32

// The manifest: what the file must hold, with each tensor's content hash.
// CHECK:       llvm.mlir.global internal constant @tfm_m_weights_manifest_json("{\22format\22:1,\22model\22:\22m\22,\22file\22:\22{{.*}}\22,\22bytes\22:32,\22hash\22:\22{{[0-9a-f]+}}\22,\22tensors\22:[{\22name\22:\22ids\22,\22dtype\22:\22I64\22,\22shape\22:[2],\22offset\22:0,\22bytes\22:16,\22hash\22:\22{{[0-9a-f]+}}\22},{\22name\22:\22w.packed\22,\22dtype\22:\22F32\22,\22shape\22:[4],\22offset\22:16,\22bytes\22:16,\22hash\22:\22{{[0-9a-f]+}}\22}]}\00")
// CHECK-LABEL: llvm.func @tfm_m_weights_manifest() -> !llvm.ptr

// FILE: "ids":{"data_offsets":[0,16],"dtype":"I64","shape":[2]}
// FILE-SAME: "w.packed":{"data_offsets":[16,32],"dtype":"F32","shape":[4]}

// Embedded: the same tensors, each on a 64-byte boundary, read at offsets
// from one hidden declaration that module assembly defines as a local
// label opening an empty section; the declaration records what the object
// writer puts where. Nothing to bind, so no bind, manifest or guard.

// EMBED:       module attributes {llvm.module_asm = ["\09.pushsection .rodata.tfm_weights,\22a\22,@progbits", "\09.p2align 6", "__tfm_weights:", "\09# 80 bytes of weights, written here in objects and libraries", "\09.popsection"]}
// EMBED-NOT:   @__constant_4xf32
// EMBED-NOT:   @__constant_2xi64
// EMBED:       llvm.mlir.global private constant @splat(
// EMBED-LABEL: llvm.func internal @m(
// EMBED:         %[[BASE:.*]] = llvm.mlir.addressof @__tfm_weights : !llvm.ptr
// EMBED-NEXT:    %[[OFFSET:.*]] = llvm.mlir.constant(64 : i64) : i64
// EMBED-NEXT:    %[[W:.*]] = llvm.getelementptr inbounds %[[BASE]][%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// EMBED-NEXT:    llvm.load %[[W]] : !llvm.ptr -> f32
// EMBED:         %[[IDS:.*]] = llvm.mlir.addressof @__tfm_weights : !llvm.ptr
// EMBED-NEXT:    llvm.load %[[IDS]] : !llvm.ptr -> i64
// EMBED-LABEL: llvm.func @tfm_m_run_packed(
// EMBED-NOT:     atomic acquire
// EMBED:       llvm.mlir.global external hidden constant @__tfm_weights()
// EMBED-SAME:    alignment = 64 : i64, dso_local, tfm_embedded_weights = {size = 80 : i64, tensors = [
// EMBED-SAME:    {data = dense<[7, 8]> : tensor<2xi64>, name = "ids", offset = 0 : i64},
// EMBED-SAME:    {data = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>, name = "w.packed", offset = 64 : i64}]}
// EMBED-SAME:    : !llvm.array<80 x i8>
// EMBED-NOT:   bind_weights
// EMBED-NOT:   weights_manifest

module {
  llvm.mlir.global private constant @__constant_4xf32(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) : !llvm.array<4 x f32> loc(#named)
  llvm.mlir.global private constant @__constant_2xi64(dense<[7, 8]> : tensor<2xi64>) : !llvm.array<2 x i64> loc(#ids)
  llvm.mlir.global private constant @splat(dense<0.0> : tensor<4xf32>) : !llvm.array<4 x f32>
  llvm.func @m(%ya: !llvm.ptr, %yb: !llvm.ptr, %yo: i64, %ys0: i64, %yt0: i64) attributes {tfm.signature = #tfm.signature<
      model = "m", symbols = [], inputs = [],
      outputs = [#tfm.tensor<name = "y", elementType = f32, shape = [4]>]>} {
    %0 = llvm.mlir.addressof @__constant_4xf32 : !llvm.ptr
    %1 = llvm.load %0 : !llvm.ptr -> f32
    llvm.store %1, %yb : f32, !llvm.ptr
    %2 = llvm.mlir.addressof @__constant_2xi64 : !llvm.ptr
    %3 = llvm.load %2 : !llvm.ptr -> i64
    %4 = llvm.sitofp %3 : i64 to f32
    llvm.store %4, %yb : f32, !llvm.ptr
    %5 = llvm.mlir.addressof @splat : !llvm.ptr
    %6 = llvm.load %5 : !llvm.ptr -> f32
    llvm.store %6, %yb : f32, !llvm.ptr
    llvm.return
  }
}
#named = loc("w.packed"("model.tfm":3:5))
#ids = loc("ids"("model.tfm":4:5))
