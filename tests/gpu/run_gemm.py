#!/usr/bin/env python3
"""Tensor-core GEMMs on a GPU: linear layers and batched matmuls at odd and
dynamic sizes (partial 64 x 64 tiles, K not a multiple of 16, one row,
several M loops), compiled with tfm-compile --target cuda --dtype f16 and
bf16, run by tfm-run on random inputs and compared with a float64
reference of the f32 model: the largest error must be within 1e-2 of the
largest reference value (the operands are rounded to 11 or 8 bits, the sums
are f32).

usage: run_gemm.py TFM_COMPILE TFM_RUN ARCH
Exits 77 (ctest's SKIP_RETURN_CODE) where no GPU can run ARCH's cubins.
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from device import unusable

SKIP = 77
RTOL = 1e-2
DTYPES = ("f16", "bf16")

# Linear layers y = x W^T + b over x [rows..., K] with a dynamic row count:
# (leading static dims, rows, K, N, bias)
LINEARS = [
    ((), 70, 100, 72, True),
    ((), 257, 64, 200, False),
    ((), 1, 33, 17, True),
    ((2,), 33, 40, 24, True),
]
# Batched matmuls a [B, seq, K] @ b [B, K, N] with a dynamic seq.
MATMULS = [
    (2, 65, 48, 130),
    (3, 129, 17, 20),
]


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, value in tensors.items():
        data = np.ascontiguousarray(value, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(value.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


def cases(rng):
    """(name, model text, weights, inputs, reference output)."""
    for lead, rows, K, N, bias in LINEARS:
        dims = ", ".join([str(d) for d in lead] + ["seq", str(K)])
        weights = {"w": rng.standard_normal((N, K)).astype(np.float32)}
        call = 'linear(x, weight = "w"'
        if bias:
            weights["b"] = rng.standard_normal(N).astype(np.float32)
            call += ', bias = "b"'
        x = rng.standard_normal(lead + (rows, K)).astype(np.float32)
        y = x.astype(np.float64) @ weights["w"].astype(np.float64).T
        if bias:
            y += weights["b"]
        text = (f"model gemm\ninput x: f32[{dims}]\ny = {call})\n"
                "output y\n")
        name = f"linear_{'x'.join(map(str, lead + (rows, K, N)))}"
        yield name, text, weights, {"x": x}, y
    for B, S, K, N in MATMULS:
        a = rng.standard_normal((B, S, K)).astype(np.float32)
        b = rng.standard_normal((B, K, N)).astype(np.float32)
        text = (f"model gemm\ninput a: f32[{B}, seq, {K}]\n"
                f"input b: f32[{B}, {K}, {N}]\ny = a @ b\noutput y\n")
        y = a.astype(np.float64) @ b.astype(np.float64)
        yield f"matmul_{B}x{S}x{K}x{N}", text, None, {"a": a, "b": b}, y


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    tfm_compile, tfm_run, arch = sys.argv[1:]
    if why := unusable(tfm_run, arch):
        print(f"skipped: {why}")
        return SKIP
    rng = np.random.default_rng(13)
    failures, total = 0, 0
    with tempfile.TemporaryDirectory() as workdir:
        for n, (name, text, weights, inputs, y) in enumerate(cases(rng)):
            path = os.path.join(workdir, f"gemm{n}")
            with open(path + ".tfm", "w") as f:
                f.write(text)
            command = [tfm_compile, path + ".tfm", "--target", "cuda",
                       "--gpu-arch", arch]
            if weights:
                write_safetensors(path + ".safetensors", weights)
                command += ["--weights", path + ".safetensors"]
            run = [tfm_run, None, "--quiet", "--output",
                   f"y={path}_y.npy"]
            for key, value in inputs.items():
                np.save(f"{path}_{key}.npy", value)
                run += ["--input", f"{key}={path}_{key}.npy"]
            for dtype in DTYPES:
                total += 1
                artifact = f"{path}_{dtype}.so"
                compiled = subprocess.run(
                    command + ["--dtype", dtype, "-o", artifact],
                    capture_output=True, text=True)
                if compiled.returncode != 0:
                    failures += 1
                    print(f"FAIL {name} {dtype}: tfm-compile:\n"
                          f"{compiled.stderr}")
                    continue
                run[1] = artifact
                result = subprocess.run(run, capture_output=True, text=True)
                if result.returncode != 0:
                    failures += 1
                    print(f"FAIL {name} {dtype}: tfm-run:\n{result.stdout}"
                          f"{result.stderr}")
                    continue
                got = np.load(f"{path}_y.npy").astype(np.float64)
                error = (np.abs(got - y).max() / np.abs(y).max()
                         if got.shape == y.shape else np.inf)
                ok = error <= RTOL
                failures += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {name} {dtype}: largest "
                      f"error {error:.2e} of the largest value"
                      + ("" if got.shape == y.shape else
                         f" (shape {got.shape}, expected {y.shape})"))
    print(f"{arch}: {total} tensor-core GEMM cases, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
