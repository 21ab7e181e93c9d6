"""A/B of two tfm builds on one linear layer, interleaved in one run.

  bench/models/.venv/bin/python bench/models/ab_linear.py \\
      --a /work/main/build/bin --b build/bin [--dtype bf16,int8] \\
      [--shapes 128x768x3072g,512x3072x768] [--threads 1] [--reps 5]

Each shape is M x K x N, with a trailing `g` for gelu(linear(...)): the
model `y = [gelu(]linear(x, weight = "weight", bias = "bias")[)]` with x
[1, M, K] and random weights (fixed seed), compiled by each build's
tfm-compile (`--cpu portable`, so the CPU picks its variant: AMX on a
Sapphire Rapids) and timed under B's tfm-run, A and B in alternating order
so that a machine shared with other work slows both alike. Prints, per
shape and dtype, the median over repetitions of each one's minimum ms over
`--runs` calls, GFLOP/s and B's speedup over A. TFM_CPU_LEVEL in the
environment picks a narrower variant for both.
"""
import argparse
import os
import re
import statistics
import subprocess

import numpy as np
from safetensors.numpy import save_file

FLAGS = {"bf16": ["--dtype=bf16"], "int8": ["--quantize=int8"], "f32": []}


def parse_shape(text):
    gelu = text.endswith("g")
    m, k, n = (int(v) for v in text.rstrip("g").split("x"))
    return m, k, n, gelu


def prepare(work, m, k, n, gelu):
    """Writes the model, weights and input of one shape; returns their paths."""
    name = f"linear_{m}x{k}x{n}{'_gelu' if gelu else ''}"
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(m * 31 + k * 7 + n)
    body = 'linear(x, weight = "weight", bias = "bias")'
    if gelu:
        body = f"gelu({body})"
    model = os.path.join(d, "model.tfm")
    with open(model, "w") as f:
        f.write(f"model {name}\ninput x: f32[1, {m}, {k}]\ny = {body}\noutput y\n")
    weights = os.path.join(d, "weights.safetensors")
    save_file({"weight": (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32),
               "bias": rng.standard_normal(n).astype(np.float32)}, weights)
    x = os.path.join(d, "x.npy")
    np.save(x, rng.standard_normal((1, m, k)).astype(np.float32))
    return d, model, weights, x


def compile_tfm(bin_dir, d, model, weights, dtype, label):
    so = os.path.join(d, f"{label}.{dtype}.so")
    subprocess.run([os.path.join(bin_dir, "tfm-compile"), model, "--weights", weights,
                    "--cpu", "portable", *FLAGS[dtype], "-o", so], check=True)
    return so


def time_tfm(bin_dir, so, x, threads, runs):
    p = subprocess.run([os.path.join(bin_dir, "tfm-run"), so, "--input", f"x={x}",
                        "--threads", str(threads), "--bench", str(runs), "--quiet"],
                       capture_output=True, text=True, check=True)
    m = re.search(r"min ([\d.]+) ms", p.stdout)
    if not m:
        raise RuntimeError(f"tfm-run printed no time: {p.stdout}{p.stderr}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="build A's bin directory (the baseline)")
    ap.add_argument("--b", required=True, help="build B's bin directory")
    ap.add_argument("--dtype", default="bf16,int8")
    ap.add_argument("--shapes", default="128x768x3072g,512x768x3072g,128x3072x768,512x3072x768,"
                                        "128x768x3072,512x768x3072")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--work", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "work", "ab_linear"))
    args = ap.parse_args()
    print("| M x K x N | dtype | thr | A ms | B ms | A GFLOP/s | B GFLOP/s | B / A |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    for shape in args.shapes.split(","):
        m, k, n, gelu = parse_shape(shape)
        d, model, weights, x = prepare(args.work, m, k, n, gelu)
        for dtype in args.dtype.split(","):
            sos = {label: compile_tfm(b, d, model, weights, dtype, label)
                   for label, b in (("a", args.a), ("b", args.b))}
            for threads in map(int, args.threads.split(",")):
                ms = {"a": [], "b": []}
                for rep in range(args.reps):
                    for label in (("a", "b") if rep % 2 == 0 else ("b", "a")):
                        ms[label].append(time_tfm(args.b, sos[label], x, threads, args.runs))
                med = {key: statistics.median(v) for key, v in ms.items()}
                flop = 2.0 * m * k * n
                print(f"| {m} x {k} x {n}{', GELU' if gelu else ''} | {dtype} | {threads} "
                      f"| {med['a']:.3f} | {med['b']:.3f} | {flop / med['a'] / 1e6:.0f} "
                      f"| {flop / med['b'] / 1e6:.0f} | {med['a'] / med['b']:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
