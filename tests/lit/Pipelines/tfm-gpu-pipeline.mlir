// REQUIRES: cuda-toolkit
// RUN: tfm-opt %s -tfm-gpu-pipeline="weights=%S/../Transforms/Inputs/weights.safetensors format=isa" \
// RUN:   | FileCheck %s
// RUN: tfm-opt %s -tfm-gpu-to-linalg=weights=%S/../Transforms/Inputs/weights.safetensors \
// RUN:   -tfm-gpu-kernels | FileCheck %s --check-prefix=KERNELS \
// RUN:   --implicit-check-not='{{(= |^ *)tfm\.}}'
// RUN: tfm-opt %s -tfm-gpu-pipeline="weights=%S/../Transforms/Inputs/weights.safetensors format=isa chip=sm_90" \
// RUN:   | FileCheck %s --check-prefix=SM90

// The CPU pipeline's model (a biased linear layer, sdpa, a concatenation)
// through the GPU pipelines. tfm-gpu-to-linalg keeps the linear layer as
// linalg (no packed GEMM) and fuses the attention, which
// convert-attention-to-gpu lowers to its flash kernel, so every op becomes a
// kernel and no tfm op is left anywhere (--implicit-check-not); the strided
// copies of the concat are kernels too.
// KERNELS:     module attributes {gpu.container_module}
// KERNELS-LABEL: func.func @attn(
// KERNELS-SAME:    %{{.*}}: memref<?x3xf32>, %{{.*}}: memref<?x4xf32>, %{{.*}}: memref<?x2xf32>)
// KERNELS:       gpu.alloc
// KERNELS:       gpu.launch_func
// KERNELS-NOT:   linalg.
// KERNELS-NOT:   memref.copy
// KERNELS:       return
// KERNELS:     gpu.module @attn_kernel
// KERNELS:       gpu.func @attn_kernel({{.*}}) kernel

// All the way: the host in the LLVM dialect calling the runtime, the
// kernels as PTX in gpu.binary ops, the entry points of docs/artifact.md,
// and the model's status from the GPU runtime.
// CHECK:       llvm.func @tfm_gpu_status() -> i32
// CHECK-LABEL: llvm.func internal @attn(
// CHECK:         llvm.call @mgpuStreamCreate()
// CHECK:         gpu.launch_func <%{{.*}} : !llvm.ptr> @attn_kernel::@attn_kernel
// CHECK:         llvm.call @mgpuStreamSynchronize(
// CHECK:         llvm.call @tfm_gpu_status()
// CHECK:       gpu.binary @attn_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">, {{.*}}assembly = "
// CHECK-SAME:    .target sm_80
// CHECK:       llvm.func @tfm_attn_run_packed(
// SM90:        gpu.binary @attn_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "
// SM90-SAME:     .target sm_90
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
