// RUN: tfm-opt %s -tfm-cpu-pipeline=weights=%S/../Transforms/Inputs/weights.safetensors \
// RUN:   | FileCheck %s
// RUN: tfm-opt %s -tfm-cpu-pipeline=weights=%S/../Transforms/Inputs/weights.safetensors \
// RUN:   | FileCheck %s --check-prefix=CLEAN --implicit-check-not=memrefCopy \
// RUN:       --implicit-check-not='{{^ *(%[^ ]+ = )?(tfm|linalg|memref|tensor|bufferization|scf|cf|arith|math|affine|func)\.}}'
// RUN: tfm-opt %s -tfm-to-linalg=weights=%S/../Transforms/Inputs/weights.safetensors \
// RUN:   | FileCheck %s --check-prefix=LINALG
// RUN: tfm-opt %s -tfm-cpu-pipeline="weights=%S/../Transforms/Inputs/weights.safetensors export-artifact-metadata=true" \
// RUN:   | FileCheck %s --check-prefix=EXPORT

// A small model (a biased linear layer, sdpa, a concatenation) as the
// frontend emits it goes all the way to the LLVM dialect with the entry
// points of docs/artifact.md. Weights come from Transforms/Inputs.

// No op of a dialect above LLVM survives (CLEAN's --implicit-check-not
// covers the whole output), and the strided copies of the concat became
// loops, not calls to the MLIR runner library's memrefCopy.
// CLEAN: llvm.func internal @attn(

// The model function is internal and takes x then the two outputs as memref
// descriptors, then the tfm_exec pointer that tfm-dispatch-tasks appends for
// the attention's parallel tasks, and returns a status (-2 when its scratch
// workspace cannot be allocated). The bound weights are read-only globals.
// The weight is packed into one panel of 32 columns (two AVX-512 vectors,
// tfm-opt's default width), the bias padded to match.
// CHECK-DAG:   llvm.mlir.global private constant @[[W:__constant_1x3x32xf32[_0-9]*]](dense<{{\[\[\[}}1.000000e+00, 4.000000e+00, 0.000000e+00,
// CHECK-DAG:   llvm.mlir.global private constant @[[B:__constant_32xf32[_0-9]*]](dense<[5.000000e-01, -5.000000e-01, 0.000000e+00,
// CHECK-LABEL: llvm.func internal @attn(
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// The caller's workspace (tfm-plan-workspace), then the exec.
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr) -> i32
// CHECK-SAME:    attributes {tfm.signature
// CHECK-DAG:     llvm.mlir.addressof @[[W]] : !llvm.ptr
// CHECK-DAG:     llvm.mlir.addressof @[[B]] : !llvm.ptr
// CHECK:       llvm.mlir.global internal constant @tfm_attn_metadata_json("{\22abi\22:1,\22model\22:\22attn\22,\22entry\22:\22tfm_attn_run_packed\22,{{.*}}\22symbols\22:[\22seq\22],
// CHECK-SAME:    \22outputs\22:[{\22name\22:\22y\22,\22dtype\22:\22f32\22,\22shape\22:[\22seq\22,4]},{\22name\22:\22h\22,\22dtype\22:\22f32\22,\22shape\22:[\22seq\22,2]}]}\00")
// CHECK-LABEL: llvm.func @tfm_attn_metadata() -> !llvm.ptr
// run_packed hands its exec to the model; the typed entry point passes NULL.
// CHECK-LABEL: llvm.func @tfm_attn_run_packed(
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[EXEC:[^:]*]]: !llvm.ptr) -> i32
// CHECK:         llvm.call @attn({{.*}}, %[[EXEC]]) :
// CHECK-LABEL: llvm.func @tfm_attn_run(
// CHECK-SAME:    %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64) -> i32
// CHECK:         %[[NOWS:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         llvm.call @attn({{.*}}, %[[NOWS]], %[[NOWS]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[NULL]]) :
// CHECK-NOT:   tfm_artifact_metadata

// EXPORT: llvm.func @tfm_artifact_metadata() -> !llvm.ptr

// The first half stops at linalg on tensors with the weights bound and the
// attention chain fused into tfm.attention (scale 1/sqrt(2)), the one tfm op
// that has a lowering of its own after bufferization.
// LINALG-LABEL: func.func @attn
// LINALG-NOT:   {{(= |^ *)tfm\.}}
// LINALG:       %[[W:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 4.000000e+00, {{.*}}> : tensor<1x3x32xf32>
// LINALG:       %[[H:.*]] = tfm.packed_linear ins(%{{.*}}, %[[W]] : tensor<?x3xf32>, tensor<1x3x32xf32>)
// LINALG-NOT:   {{(= |^ *)tfm\.}}
// LINALG:       %[[A:.*]] = tfm.attention ins(%[[H]], %[[H]], %[[H]] : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>) outs(%{{.*}} : tensor<?x2xf32>) scale 0.70710678118654746 -> tensor<?x2xf32>
// LINALG-NOT:   {{(= |^ *)tfm\.}}
// LINALG:       tensor.insert_slice %[[H]]
// LINALG:       tensor.insert_slice %[[A]]
// LINALG-NOT:   {{(= |^ *)tfm\.}}

func.func @attn(%x: tensor<?x3xf32>) -> (tensor<?x4xf32>, tensor<?x2xf32>) attributes {tfm.signature = #tfm.signature<
    model = "attn", symbols = ["seq"],
    inputs = [#tfm.tensor<name = "x", elementType = f32, shape = ["seq", 3]>],
    outputs = [#tfm.tensor<name = "y", elementType = f32, shape = ["seq", 4]>,
               #tfm.tensor<name = "h", elementType = f32, shape = ["seq", 2]>]>} {
  %w = tfm.weight "linear.weight" : tensor<2x3xf32>
  %b = tfm.weight "linear.bias" : tensor<2xf32>
  %h = tfm.linear %x, %w, %b : tensor<?x3xf32>, tensor<2x3xf32>, tensor<2xf32> -> tensor<?x2xf32>
  %a = tfm.sdpa %h, %h, %h : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>
  %y = tfm.concat %h, %a dim -1 : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x4xf32>
  return %y, %h : tensor<?x4xf32>, tensor<?x2xf32>
}
