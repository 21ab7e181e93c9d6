#!/usr/bin/env python3
"""Flash attention on a GPU: attention models at the shapes the fixtures do
not reach (sequences across several query and key tiles, heads of 32 to
128, causal or not, a dynamic sequence length, a single query), compiled
with tfm-compile --target cuda, run by tfm-run on random inputs and
compared with a float64 reference: in f32 (the f32 kernel, within fp32
tolerance) and with --dtype f16 and bf16 (the tensor-core kernel, within
1e-2 of the largest output).

usage: run_attention.py TFM_COMPILE TFM_RUN ARCH
Exits 77 (ctest's SKIP_RETURN_CODE) where no GPU can run ARCH's cubins.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

from device import unusable

SKIP = 77

# (batch, heads, queries, keys, head dim, causal, dynamic sequence)
SHAPES = [
    (2, 3, 70, 70, 64, True, True),
    (2, 3, 70, 70, 64, False, True),
    (1, 2, 257, 257, 128, True, False),
    (1, 4, 129, 129, 32, False, False),
    (3, 2, 1, 300, 64, False, False),
    (1, 1, 5, 200, 80, False, False),
    (2, 2, 33, 90, 40, True, False),
]

# --dtype runs: the largest error over the largest |y|.
DTYPES = ("f16", "bf16")
RTOL = 1e-2


def model(B, H, Sq, Sk, D, causal, dynamic):
    seq_q = "seq" if dynamic else str(Sq)
    seq_k = "seq" if dynamic else str(Sk)
    scores = f"q @ transpose(k) / sqrt({D})"
    if causal:
        scores = f"causal_mask({scores})"
    return "\n".join([
        f"model attention",
        f"input q: f32[{B}, {H}, {seq_q}, {D}]",
        f"input k: f32[{B}, {H}, {seq_k}, {D}]",
        f"input v: f32[{B}, {H}, {seq_k}, {D}]",
        f"y = softmax({scores}) @ v", "output y", ""])


def reference(q, k, v, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.arange(sk)[None, :] > np.arange(sq)[:, None],
                     -np.inf, s)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    tfm_compile, tfm_run, arch = sys.argv[1:]
    if why := unusable(tfm_run, arch):
        print(f"skipped: {why}")
        return SKIP
    rng = np.random.default_rng(11)
    failures = 0
    with tempfile.TemporaryDirectory() as workdir:
        for n, (B, H, Sq, Sk, D, causal, dynamic) in enumerate(SHAPES):
            name = f"b{B}_h{H}_q{Sq}_k{Sk}_d{D}{'_causal' if causal else ''}"
            path = os.path.join(workdir, f"attention{n}")
            with open(path + ".tfm", "w") as f:
                f.write(model(B, H, Sq, Sk, D, causal, dynamic))
            q = rng.standard_normal((B, H, Sq, D)).astype(np.float32)
            k = rng.standard_normal((B, H, Sk, D)).astype(np.float32)
            v = rng.standard_normal((B, H, Sk, D)).astype(np.float32)
            files = {}
            for key, value in (("q", q), ("k", k), ("v", v),
                               ("y", reference(q, k, v, causal))):
                files[key] = f"{path}_{key}.npy"
                np.save(files[key], value.astype(np.float32))
            compiled = subprocess.run(
                [tfm_compile, path + ".tfm", "--target", "cuda",
                 "--gpu-arch", arch, "-o", path + ".so"],
                capture_output=True, text=True)
            if compiled.returncode != 0:
                failures += 1
                print(f"FAIL {name}: tfm-compile:\n{compiled.stderr}")
                continue
            inputs = ["--input", f"q={files['q']}", "--input",
                      f"k={files['k']}", "--input", f"v={files['v']}"]
            result = subprocess.run(
                [tfm_run, path + ".so", "--quiet", *inputs, "--expected",
                 f"y={files['y']}", "--rtol", "1e-4", "--atol", "1e-5"],
                capture_output=True, text=True)
            ok = result.returncode == 0
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name} f32"
                  + ("" if ok else f":\n{result.stdout}{result.stderr}"))
            y = reference(q, k, v, causal)
            for dtype in DTYPES:
                artifact = f"{path}_{dtype}.so"
                compiled = subprocess.run(
                    [tfm_compile, path + ".tfm", "--target", "cuda",
                     "--gpu-arch", arch, "--dtype", dtype, "-o", artifact],
                    capture_output=True, text=True)
                result = compiled if compiled.returncode else subprocess.run(
                    [tfm_run, artifact, "--quiet", *inputs, "--output",
                     f"y={path}_{dtype}_y.npy"],
                    capture_output=True, text=True)
                if result.returncode != 0:
                    failures += 1
                    print(f"FAIL {name} {dtype}:\n{result.stdout}"
                          f"{result.stderr}")
                    continue
                got = np.load(f"{path}_{dtype}_y.npy").astype(np.float64)
                error = (np.abs(got - y).max() / np.abs(y).max()
                         if got.shape == y.shape else np.inf)
                ok = error <= RTOL
                failures += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {name} {dtype}: largest "
                      f"error {error:.2e} of the largest value")
    print(f"{arch}: {len(SHAPES)} attention shapes in f32, "
          f"{', '.join(DTYPES)}, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
