#!/usr/bin/env python3
"""Compiles every example model with tfm-compile --target cuda for one GPU
architecture and assembles each kernel module with `ptxas -v`: every kernel
must assemble with no spill stores or loads, at most 255 registers and
static shared memory within the 48 KB a block gets without opting in. The
kernels that use shared memory (flash attention, the one kernel of each
fused tfm.attention) are counted apart: at least one must be there, so that
attention fusion on the GPU path cannot silently switch off.

With --dtype=f16 or bf16 the models are compiled with that --dtype: every
contraction the f32 build runs as a tiled GEMM (the kernels of 16 x 16
threads) is then a tensor-core GEMM (or, under 16 columns, a simple
kernel), so no 16 x 16 kernel may be left, and the kernels with `mma.sync`
(of that type) are counted: at least one. Every attention is then the
tensor-core flash-attention kernel (told by its transposed `ldmatrix` of
V): an f32 flash-attention kernel (told by its six shared buffers) fails
the check, since no example model has a head wider than the 128 that
kernel takes; at least one must be there.

usage: check_ptxas.py TFM_COMPILE SOURCE_DIR ARCH [PTXAS] [--dtype=D]
Exits 77 (ctest's SKIP_RETURN_CODE) when ptxas is not there.
"""

import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

from models import example_models

SKIP = 77
MAX_REGISTERS = 255
MAX_STATIC_SHARED = 48 * 1024

FUNCTION = re.compile(r"Compiling entry function '([^']+)' for '(sm_\d+)'")
SPILLS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                    r"(\d+) bytes spill loads")
USAGE = re.compile(r"Used (\d+) registers")
SHARED = re.compile(r"(\d+) bytes smem")
ENTRY = re.compile(r"^\.visible \.entry (\w+)\(", re.M)
F32_GEMM_BLOCK = ".maxntid 16, 16, 1"
MMA_ATTENTION = "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"


def kernel_bodies(ptx):
    """{kernel name: its PTX} of one module."""
    starts = [(m.group(1), m.start()) for m in ENTRY.finditer(ptx)]
    return {name: ptx[start:(starts[i + 1][1] if i + 1 < len(starts)
                             else len(ptx))]
            for i, (name, start) in enumerate(starts)}


def parse_ptxas(report):
    """{kernel: {registers, shared, spill_stores, spill_loads, stack}}."""
    kernels, current = {}, None
    for line in report.splitlines():
        if m := FUNCTION.search(line):
            current = kernels.setdefault(m.group(1), {
                "registers": 0, "shared": 0, "spill_stores": 0,
                "spill_loads": 0, "stack": 0})
            continue
        if current is None:
            continue
        if m := SPILLS.search(line):
            current["stack"] = int(m.group(1))
            current["spill_stores"] = int(m.group(2))
            current["spill_loads"] = int(m.group(3))
        if m := USAGE.search(line):
            current["registers"] = int(m.group(1))
            if s := SHARED.search(line):
                current["shared"] = int(s.group(1))
    return kernels


def split_modules(ptx):
    """(name, PTX) of each gpu.binary in tfm-compile --emit=ptx's output."""
    modules, current = [], None
    for line in ptx.splitlines(keepends=True):
        if line.startswith("// gpu.binary @"):
            current = []
            modules.append((line.split("@", 1)[1].strip(), current))
        elif current is not None:
            current.append(line)
    return [(name, "".join(lines)) for name, lines in modules]


def check_model(tfm_compile, ptxas, arch, model, workdir, dtype):
    name, path, weights, _ = model
    command = [tfm_compile, path, "--target", "cuda", "--gpu-arch", arch,
               "--dtype", dtype, "--emit=ptx", "-o", "-"]
    if weights:
        command += ["--weights", weights]
    compiled = subprocess.run(command, capture_output=True, text=True)
    if compiled.returncode != 0:
        return name, None, [f"tfm-compile failed:\n{compiled.stderr}"]
    modules = split_modules(compiled.stdout)
    if not modules:
        return name, None, ["no kernel module in --emit=ptx's output"]
    problems, kernels = [], {}
    for index, (module, ptx) in enumerate(modules):
        file = os.path.join(workdir, f"{name.replace('/', '_')}_{index}.ptx")
        with open(file, "w") as f:
            f.write(ptx)
        assembled = subprocess.run(
            [ptxas, f"-arch={arch}", "-v", file, "-o", os.devnull],
            capture_output=True, text=True)
        if assembled.returncode != 0:
            problems.append(f"ptxas failed on {module}:\n{assembled.stderr}")
            continue
        found = parse_ptxas(assembled.stderr)
        if not found:
            problems.append(f"ptxas -v reported no kernel of {module}")
        for kernel, body in kernel_bodies(ptx).items():
            if kernel not in found:
                continue
            found[kernel]["mma"] = (
                f"mma.sync.aligned.m16n8k16.row.col.f32.{dtype}.{dtype}.f32"
                in body)
            found[kernel]["mma_attention"] = MMA_ATTENTION in body
            if dtype != "f32" and f"__wg_{kernel}_5[" in body:
                problems.append(f"{module}::{kernel}: an f32 flash-attention "
                                f"kernel with --dtype {dtype}: an attention "
                                "missed the tensor-core kernel")
            if dtype != "f32" and F32_GEMM_BLOCK in body:
                problems.append(f"{module}::{kernel}: an f32 tiled GEMM "
                                f"(16 x 16 threads) with --dtype {dtype}: a "
                                "contraction missed the tensor-core GEMM")
        # Outlined modules may name their kernels alike.
        kernels.update({f"{module}::{k}": v for k, v in found.items()})
    for kernel, info in kernels.items():
        if info["spill_stores"] or info["spill_loads"]:
            problems.append(f"{kernel}: spills ({info['spill_stores']} bytes "
                            f"stored, {info['spill_loads']} loaded)")
        if info["registers"] > MAX_REGISTERS:
            problems.append(f"{kernel}: {info['registers']} registers")
        if info["shared"] > MAX_STATIC_SHARED:
            problems.append(f"{kernel}: {info['shared']} bytes of shared "
                            f"memory, over {MAX_STATIC_SHARED}")
    return name, kernels, problems


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--dtype=")]
    dtypes = [a.split("=", 1)[1] for a in sys.argv[1:]
              if a.startswith("--dtype=")]
    dtype = dtypes[-1] if dtypes else "f32"
    if len(args) not in (3, 4) or dtype not in ("f32", "f16", "bf16"):
        print(__doc__)
        return 2
    tfm_compile, source_dir, arch = args[:3]
    ptxas = args[3] if len(args) == 4 else "/usr/local/cuda/bin/ptxas"
    if not os.access(ptxas, os.X_OK):
        print(f"skipped: no ptxas at {ptxas}")
        return SKIP
    models = example_models(source_dir)
    failures, total_kernels, registers, shared = 0, 0, 0, 0
    tiled, tiled_registers = 0, 0
    mma, mma_registers = 0, 0
    attention, attention_registers = 0, 0
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = pool.map(
            lambda m: check_model(tfm_compile, ptxas, arch, m, workdir,
                                  dtype),
            models)
        for name, kernels, problems in results:
            if kernels:
                total_kernels += len(kernels)
                registers = max([registers] +
                                [k["registers"] for k in kernels.values()])
                shared = max([shared] + [k["shared"] for k in kernels.values()])
                with_shared = [k for k in kernels.values() if k["shared"]]
                tiled += len(with_shared)
                tiled_registers = max([tiled_registers] +
                                      [k["registers"] for k in with_shared])
                with_mma = [k for k in kernels.values()
                            if k.get("mma") and not k.get("mma_attention")]
                mma_attention = [k for k in kernels.values()
                                 if k.get("mma_attention")]
                attention += len(mma_attention)
                attention_registers = max([attention_registers] +
                                          [k["registers"]
                                           for k in mma_attention])
                mma += len(with_mma)
                mma_registers = max([mma_registers] +
                                    [k["registers"] for k in with_mma])
            if problems:
                failures += 1
                print(f"FAIL {name}:")
                for p in problems:
                    print("  " + p.replace("\n", "\n  "))
    print(f"{arch} {dtype}: {len(models)} models, {total_kernels} kernels "
          f"assembled by ptxas; at most {registers} registers and {shared} "
          f"bytes of shared memory per kernel; {tiled} kernels use shared "
          f"memory (at most {tiled_registers} registers); {mma} tensor-core "
          f"GEMMs (at most {mma_registers} registers); {attention} "
          f"tensor-core flash attentions (at most {attention_registers} "
          f"registers); {failures} models failed")
    if not tiled:
        print("FAIL: no kernel uses shared memory: attention was not fused "
              "into the flash-attention kernel")
        return 1
    if dtype != "f32" and not mma:
        print(f"FAIL: --dtype {dtype} produced no mma.sync kernel")
        return 1
    if dtype != "f32" and not attention:
        print(f"FAIL: --dtype {dtype} produced no tensor-core flash-attention "
              "kernel")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
