#!/usr/bin/env python3
"""End-to-end on a GPU: compiles every example model with tfm-compile
--target cuda to a shared library and runs it with tfm-run on the fixture's
inputs, comparing each output with PyTorch's (tests/reference/manifest.json
tolerances; the seeds' outputs at 1e-4/1e-5). With --dtype=f16 or bf16 the
models are compiled with that --dtype (tensor-core GEMMs and attention) and
every output must be within 1e-2 (f16) or 3e-2 (bf16) of the reference,
relative, or absolute times its largest reference value (at least 1).

usage: run_reference.py TFM_COMPILE TFM_RUN SOURCE_DIR ARCH [--dtype=D]
Exits 77 (ctest's SKIP_RETURN_CODE) when no CUDA driver or device is there
(tfm-run --gpu-info says), when there is no CUDA toolkit to compile with, or
when the device cannot run ARCH's cubins.
"""

import os
import subprocess
import sys
import tempfile

from device import unusable
from models import example_models

SKIP = 77

def seed_files(path):
    """A seed's inputs and outputs that have a .npy file next to the model:
    the notebook's own values."""
    folder = os.path.dirname(path)
    inputs, outputs = [], []
    with open(path) as f:
        for line in f:
            words = line.split("#")[0].split()
            if len(words) >= 2 and words[0] == "input":
                inputs.append(words[1].rstrip(":"))
            elif words and words[0] == "output":
                outputs += [w.strip(",") for w in words[1:]]
    exists = lambda n: os.path.isfile(os.path.join(folder, n + ".npy"))
    if not all(exists(n) for n in inputs):
        return None
    return ([(n, os.path.join(folder, n + ".npy")) for n in inputs],
            [(n, os.path.join(folder, n + ".npy")) for n in outputs
             if exists(n)])


# f16 keeps 11 significant bits, bf16 8: a chain of two rounded products
# (attention's scores, then P·V) is off by a few bf16 ulps (first GPU run,
# an H200: up to 1.9e-2 on values near 1, 0.4 on seed 001's unscaled
# scores of up to 143). Each output within TOL relative, or TOL times its
# largest reference value (at least 1: tfm-run --atol-scaled).
HALF_TOLERANCE = {"f16": 1e-2, "bf16": 3e-2}


def half_tolerance(dtype):
    tol = repr(HALF_TOLERANCE[dtype])
    return ["--rtol", tol, "--atol", tol, "--atol-scaled"]


def run_arguments(model, dtype):
    name, path, _, fixture = model
    if fixture:
        folder = fixture["folder"]
        args = []
        for i in fixture["inputs"]:
            args += ["--input", f"{i['name']}={os.path.join(folder, i['file'])}"]
        for o in fixture["outputs"]:
            args += ["--expected",
                     f"{o['name']}={os.path.join(folder, o['file'])}"]
        if dtype != "f32":
            return args + half_tolerance(dtype)
        args += ["--rtol", str(fixture.get("rtol", fixture["default_rtol"])),
                 "--atol", str(fixture.get("atol", fixture["default_atol"]))]
        return args
    files = seed_files(path)
    if files is None:
        return None
    args = []
    for n, f in files[0]:
        args += ["--input", f"{n}={f}"]
    for n, f in files[1]:
        args += ["--expected", f"{n}={f}"]
    if dtype != "f32":
        args += half_tolerance(dtype)
    return args


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--dtype=")]
    dtypes = [a.split("=", 1)[1] for a in sys.argv[1:]
              if a.startswith("--dtype=")]
    dtype = dtypes[-1] if dtypes else "f32"
    if len(args) != 4 or dtype not in ("f32", "f16", "bf16"):
        print(__doc__)
        return 2
    tfm_compile, tfm_run, source_dir, arch = args
    if why := unusable(tfm_run, arch):
        print(f"skipped: {why}")
        return SKIP
    info = subprocess.run([tfm_run, "--gpu-info"], capture_output=True,
                          text=True)
    device = info.stdout.strip()
    print(f"device: {device}")
    failures, ran = 0, 0
    with tempfile.TemporaryDirectory() as workdir:
        for model in example_models(source_dir):
            args = run_arguments(model, dtype)
            if args is None:
                continue
            name, path, weights, _ = model
            artifact = os.path.join(workdir, name.replace("/", "_") + ".so")
            command = [tfm_compile, path, "--target", "cuda", "--gpu-arch",
                       arch, "--dtype", dtype, "-o", artifact]
            if weights:
                command += ["--weights", weights]
            compiled = subprocess.run(command, capture_output=True, text=True)
            if compiled.returncode != 0:
                failures += 1
                print(f"FAIL {name}: tfm-compile:\n{compiled.stderr}")
                continue
            result = subprocess.run([tfm_run, artifact, "--quiet"] + args,
                                    capture_output=True, text=True)
            ran += 1
            if result.returncode != 0:
                failures += 1
                print(f"FAIL {name}:\n{result.stdout}{result.stderr}")
    print(f"{arch} {dtype}: {ran} models ran on the GPU, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
