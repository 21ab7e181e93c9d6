#!/usr/bin/env python3
"""Compiles every example model with tfm-compile --target cuda for one GPU
architecture and assembles each kernel module with `ptxas -v`: every kernel
must assemble with no spill stores or loads, at most 255 registers and
static shared memory within the 48 KB a block gets without opting in. The
kernels that use shared memory (flash attention, the one kernel of each
fused tfm.attention) are counted apart: at least one must be there, so that
attention fusion on the GPU path cannot silently switch off.

usage: check_ptxas.py TFM_COMPILE SOURCE_DIR ARCH [PTXAS]
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


def check_model(tfm_compile, ptxas, arch, model, workdir):
    name, path, weights, _ = model
    command = [tfm_compile, path, "--target", "cuda", "--gpu-arch", arch,
               "--emit=ptx", "-o", "-"]
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
    if len(sys.argv) not in (4, 5):
        print(__doc__)
        return 2
    tfm_compile, source_dir, arch = sys.argv[1:4]
    ptxas = sys.argv[4] if len(sys.argv) == 5 else "/usr/local/cuda/bin/ptxas"
    if not os.access(ptxas, os.X_OK):
        print(f"skipped: no ptxas at {ptxas}")
        return SKIP
    models = example_models(source_dir)
    failures, total_kernels, registers, shared = 0, 0, 0, 0
    tiled, tiled_registers = 0, 0
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = pool.map(
            lambda m: check_model(tfm_compile, ptxas, arch, m, workdir),
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
            if problems:
                failures += 1
                print(f"FAIL {name}:")
                for p in problems:
                    print("  " + p.replace("\n", "\n  "))
    print(f"{arch}: {len(models)} models, {total_kernels} kernels assembled "
          f"by ptxas; at most {registers} registers and {shared} bytes of "
          f"shared memory per kernel; {tiled} kernels use shared memory "
          f"(at most {tiled_registers} registers); {failures} models failed")
    if not tiled:
        print("FAIL: no kernel uses shared memory: attention was not fused "
              "into the flash-attention kernel")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
