#!/usr/bin/env python3
"""bench/gpu: tfm's CUDA artifacts beside PyTorch on the same GPU.

    bench/gpu/run.py [--build build] [--work bench/gpu/work] [--quick]
                     [--runs 20] [--models] [--dtype f32,f16,bf16]

Times, on CUDA device 0:
  - attention y = softmax(q k^T / sqrt(D)) v, f32[B, H, S, D], at the CPU
    benchmark's shapes plus (1,16,8192,128) and (4,32,2048,128), causal and
    not: tfm (tfm-compile --target cuda, timed by tfm-run --bench with CUDA
    events around each run) and, when torch with CUDA is importable,
    torch.nn.functional.scaled_dot_product_attention on the same inputs;
  - GEMMs y = a @ b, f32[M, K] by f32[K, N], for each --dtype (f16 and
    bf16: tfm-compile --dtype, tensor cores with f32 accumulation; PyTorch
    in that dtype), beside torch.matmul;
  - with --models, bench/models' encoder workloads, for each --dtype: tfm
    against the eager torch module on the GPU (f32).
Prints a markdown table (stdout): time, TFLOP/s, % of the device's dense
peak (f32 CUDA cores and f16 tensor cores, from the table below) and the
ratio to PyTorch. Needs numpy; builds tfm-compile and tfm-run if missing.
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "models"))

# Dense peaks (TFLOP/s): f32 on CUDA cores, f16 on tensor cores with f32
# accumulation, from NVIDIA's data sheets (SXM parts).
PEAKS = {"H100": (67.0, 989.0), "H200": (67.0, 989.0), "A100": (19.5, 312.0)}

CPU_SHAPES = [(1, 8, 128, 64), (1, 8, 512, 64), (1, 8, 1024, 64),
              (1, 8, 2048, 64), (1, 12, 4096, 64), (4, 8, 512, 64),
              (1, 8, 1024, 128)]
GPU_SHAPES = [(1, 16, 8192, 128), (4, 32, 2048, 128)]
QUICK_SHAPES = [(1, 8, 1024, 64), (4, 32, 2048, 128)]
GEMM_SHAPES = [(1024, 1024, 1024), (4096, 4096, 4096), (8192, 1024, 4096),
               (77, 3000, 1000)]
QUICK_GEMM_SHAPES = [(1024, 1024, 1024), (4096, 4096, 4096)]


def progress(message):
    print(message, file=sys.stderr, flush=True)


def run(command, **kwargs):
    progress("$ " + " ".join(command))
    return subprocess.run(command, check=True, capture_output=True, text=True,
                          **kwargs)


def attention_flops(B, H, S, D, causal):
    flops = 4 * B * H * S * S * D
    return flops / 2 if causal else flops


def attention_model(B, H, S, D, causal):
    scores = f"q @ transpose(k) / sqrt({D})"
    if causal:
        scores = f"causal_mask({scores})"
    return "\n".join([
        f"model attn_b{B}_h{H}_s{S}_d{D}{'_causal' if causal else ''}",
        f"input q: f32[{B}, {H}, {S}, {D}]",
        f"input k: f32[{B}, {H}, {S}, {D}]",
        f"input v: f32[{B}, {H}, {S}, {D}]",
        f"y = softmax({scores}) @ v", "output y", ""])


def device_info(tfm_run):
    info = subprocess.run([tfm_run, "--gpu-info"], capture_output=True,
                          text=True)
    if info.returncode != 0:
        sys.exit(f"bench/gpu: no usable GPU: {info.stderr.strip()}")
    name, arch = info.stdout.strip().rsplit(": ", 1)
    return name, arch


def tfm_time(tfm_compile, tfm_run, arch, model, weights, inputs, runs, flops,
             work, dtype="f32"):
    artifact = os.path.join(work, f"{os.path.basename(model)}.{dtype}.so")
    command = [tfm_compile, model, "--target", "cuda", "--gpu-arch", arch,
               "--dtype", dtype, "-o", artifact]
    if weights:
        command += ["--weights", weights]
    run(command)
    args = [tfm_run, artifact, "--quiet", "--bench", str(runs), "--flops",
            str(flops)]
    for name, path in inputs.items():
        args += ["--input", f"{name}={path}"]
    out = run(args).stdout
    m = re.search(r"device time min ([0-9.]+) ms", out)
    return float(m.group(1))


def torch_time(fn, runs):
    import torch
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return min(times)


def have_torch_cuda():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def peak_for(name):
    for key, peak in PEAKS.items():
        if key in name:
            return peak
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--work", default=os.path.join(HERE, "work"))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--models", action="store_true")
    parser.add_argument("--dtype", default="f32,f16,bf16",
                        help="comma-separated: the dtypes of the GEMM and "
                        "model rows (tfm-compile --dtype)")
    args = parser.parse_args()
    dtypes = args.dtype.split(",")
    bin_dir = os.path.join(args.build, "bin")
    tfm_compile = os.path.join(bin_dir, "tfm-compile")
    tfm_run = os.path.join(bin_dir, "tfm-run")
    if not (os.path.exists(tfm_compile) and os.path.exists(tfm_run)):
        run(["cmake", "--build", args.build, "--target", "tfm-compile",
             "tfm-run"])
    os.makedirs(args.work, exist_ok=True)
    name, arch = device_info(tfm_run)
    peak = peak_for(name)
    torch_ok = have_torch_cuda()
    progress(f"device {name} ({arch}); PyTorch with CUDA: {torch_ok}")

    rows = []
    shapes = QUICK_SHAPES if args.quick else CPU_SHAPES + GPU_SHAPES
    rng = np.random.default_rng(0)
    for B, H, S, D in shapes:
        for causal in (False, True):
            label = f"attention {B},{H},{S},{D}{' causal' if causal else ''}"
            model = os.path.join(args.work, f"attn_{B}_{H}_{S}_{D}_{int(causal)}.tfm")
            with open(model, "w") as f:
                f.write(attention_model(B, H, S, D, causal))
            inputs = {}
            for n in "qkv":
                path = os.path.join(args.work, f"{n}_{B}_{H}_{S}_{D}.npy")
                if not os.path.exists(path):
                    np.save(path, rng.standard_normal((B, H, S, D), np.float32))
                inputs[n] = path
            flops = attention_flops(B, H, S, D, causal)
            ms = tfm_time(tfm_compile, tfm_run, arch, model, None, inputs,
                          args.runs, flops, args.work)
            ref = None
            if torch_ok:
                import torch
                q, k, v = (torch.from_numpy(np.load(inputs[n])).cuda()
                           for n in "qkv")
                ref = torch_time(lambda: torch.nn.functional
                                 .scaled_dot_product_attention(
                                     q, k, v, is_causal=causal), args.runs)
            rows.append((label, "f32", ms, flops, ref))

    gemm_shapes = QUICK_GEMM_SHAPES if args.quick else GEMM_SHAPES
    for M, N, K in gemm_shapes:
        model = os.path.join(args.work, f"gemm_{M}_{N}_{K}.tfm")
        with open(model, "w") as f:
            f.write(f"model gemm_{M}_{N}_{K}\ninput a: f32[{M}, {K}]\n"
                    f"input b: f32[{K}, {N}]\ny = a @ b\noutput y\n")
        inputs = {}
        for n, shape in (("a", (M, K)), ("b", (K, N))):
            path = os.path.join(args.work, f"{n}_{M}_{N}_{K}.npy")
            if not os.path.exists(path):
                np.save(path, rng.standard_normal(shape, np.float32))
            inputs[n] = path
        flops = 2 * M * N * K
        for dtype in dtypes:
            ms = tfm_time(tfm_compile, tfm_run, arch, model, None, inputs,
                          args.runs, flops, args.work, dtype)
            ref = None
            if torch_ok:
                import torch
                kind = {"f32": torch.float32, "f16": torch.float16,
                        "bf16": torch.bfloat16}[dtype]
                a, b = (torch.from_numpy(np.load(inputs[n])).cuda().to(kind)
                        for n in "ab")
                ref = torch_time(lambda: a @ b, args.runs)
            rows.append((f"gemm {M},{N},{K}", dtype, ms, flops, ref))

    if args.models:
        if not torch_ok:
            progress("--models needs torch with CUDA: skipped")
        else:
            import torch
            import workloads
            from export import export_workload
            for w in workloads.all_workloads(quick=args.quick):
                if w["kind"] != "encoder":
                    continue
                meta_dir = os.path.join(args.work, w["name"])
                export_workload(w, args.work, log=progress)
                module = workloads.build_module(w).cuda().eval()
                x = torch.from_numpy(
                    np.load(os.path.join(meta_dir, "x.npy"))).cuda()
                with torch.no_grad():
                    ref = torch_time(lambda: module(x), args.runs)
                for dtype in dtypes:
                    ms = tfm_time(tfm_compile, tfm_run, arch,
                                  os.path.join(meta_dir, "model.tfm"),
                                  os.path.join(meta_dir, "weights.safetensors"),
                                  {"x": os.path.join(meta_dir, "x.npy")},
                                  args.runs, w["flops"], args.work, dtype)
                    rows.append((w["label"], dtype, ms, w["flops"], ref))

    print(f"GPU: {name} ({arch}); times are the minimum of {args.runs} runs "
          f"(CUDA events); peak f32 {peak[0] if peak else '?'} TFLOP/s, "
          f"f16 tensor {peak[1] if peak else '?'} TFLOP/s\n")
    print("| workload | dtype | tfm ms | tfm TFLOP/s | % f32 peak | "
          "% f16 TC peak | PyTorch ms | tfm / PyTorch speed |")
    print("|---|---|---|---|---|---|---|---|")
    for label, dtype, ms, flops, ref in rows:
        tflops = flops / (ms * 1e9)
        pct = (f"{100 * tflops / peak[0]:.1f}", f"{100 * tflops / peak[1]:.2f}") \
            if peak else ("?", "?")
        print(f"| {label} | {dtype} | {ms:.3f} | {tflops:.2f} | {pct[0]} | "
              f"{pct[1]} | {f'{ref:.3f}' if ref else '-'} | "
              f"{f'{ref / ms:.2f}x' if ref else '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
