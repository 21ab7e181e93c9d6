#!/usr/bin/env python3
"""bench/decode/kv_cache_dtype.py: a decode step over f32, bf16 and f16 caches.

    bench/decode/kv_cache_dtype.py [--type Q8_0] [--position 1000]
        [--dtypes f32,bf16,f16] [--threads 1] [--runs 20] [--rounds 3]
        [--tfm-bin build/bin] [--work DIR] [make_gguf_q8.py size options]

Writes one random Llama GGUF with make_gguf_q8.py (SmolLM2-135M's shape
unless told otherwise), compiles examples/llama/llama.tfm against it once
per --kv-cache-dtype, and times one decode step at --position (the cache
holds that many tokens; llama.tfm's capacity is 1024) with tfm-run --bench,
the cache types interleaved round after round (the machine is shared: the
table keeps each type's best min and median over the rounds).

Bytes read per decoded token: the weights in the artifact's form (as
gguf_types.py counts them) plus the K and V cache rows the step attends
over, layers x 2 x kv_heads x (position + 1) x head_dim x the element size.
GB/s is their sum over the min time.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from gguf_types import PACKED, tfm_bench  # noqa: E402
from make_gguf_q8 import write_npy  # noqa: E402

SIZE = {"f32": 4, "bf16": 2, "f16": 2}
# numpy has no bfloat16: tfm reads '<u2' as bf16 bits (runtime/src/Npy.cpp).
DESCR = {"f32": "<f4", "bf16": "<u2", "f16": "<f2"}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--type", default="Q8_0")
    p.add_argument("--position", type=int, default=1000)
    p.add_argument("--dtypes", default="f32,bf16,f16")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tfm-bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--work", default="/tmp/tfm-bench-kv-cache-dtype")
    a, size_args = p.parse_known_args()
    sizes = dict(layers=30, hidden=576, heads=9, kv_heads=3)
    for key, value in zip(size_args[::2], size_args[1::2]):
        name = key.lstrip("-").replace("-", "_")
        if name in sizes:
            sizes[name] = int(value)
    head_dim = sizes["hidden"] // sizes["heads"]
    work = os.path.join(a.work, a.type)
    # The file is made once per work directory and sizes (it takes minutes).
    made_log = os.path.join(work, "made-" + "_".join(
        [str(a.position)] + [s.lstrip("-") for s in size_args]) + ".txt")
    if os.path.exists(made_log):
        made = open(made_log).read()
    else:
        made = subprocess.run(
            [sys.executable, os.path.join(HERE, "make_gguf_q8.py"), work,
             "--type", a.type, "--position", str(a.position)] + size_args,
            check=True, capture_output=True, text=True).stdout
        with open(made_log, "w") as f:
            f.write(made)
    mix = dict((t, int(n)) for t, n in re.findall(
        r"(Q\d_[0-9K]) (\d+)", made.splitlines()[-1]))
    weight_bytes = sum(n * PACKED[t] for t, n in mix.items())
    shape = (sizes["layers"], 1, sizes["kv_heads"], 1024, head_dim)
    count = 1
    for d in shape:
        count *= d
    models = {}
    for dtype in a.dtypes.split(","):
        so = os.path.join(work, f"tfm-{dtype}.so")
        subprocess.run([os.path.join(a.tfm_bin, "tfm-compile"),
                        os.path.join(ROOT, "examples", "llama", "llama.tfm"),
                        "--weights", os.path.join(work, "model.gguf"),
                        "--kv-cache-dtype", dtype, "-o", so], check=True)
        cache = os.path.join(work, f"cache-{dtype}.npy")
        write_npy(cache, DESCR[dtype], shape, bytes(SIZE[dtype] * count))
        models[dtype] = (so, cache)
    best = {}
    for r in range(a.rounds):
        for dtype, (so, cache) in models.items():
            t = tfm_bench(a.tfm_bin, so, {
                "input_ids": os.path.join(work, "input_ids.npy"),
                "past": os.path.join(work, "past.npy"),
                "k_cache": cache, "v_cache": cache}, a.threads, a.runs)
            old = best.get(dtype, t)
            best[dtype] = (min(old[0], t[0]), min(old[1], t[1]))
            print(f"round {r} {dtype}: {t}", file=sys.stderr)
    print(f"| cache | weights MB/token ({a.type}) | cache MB/token at "
          f"position {a.position} | decode ms (min / median), {a.threads} "
          f"thr | GB/s | vs f32 |")
    print("|---|--:|--:|--:|--:|--:|")
    base = best.get("f32")
    for dtype in models:
        cache_bytes = (sizes["layers"] * 2 * sizes["kv_heads"] *
                       (a.position + 1) * head_dim * SIZE[dtype])
        ms = best[dtype]
        ratio = f"{base[0] / ms[0]:.2f}x" if base else "-"
        print(f"| {dtype} | {weight_bytes / 1e6:.0f} | {cache_bytes / 1e6:.1f} "
              f"| {ms[0]:.2f} / {ms[1]:.2f} | "
              f"{(weight_bytes + cache_bytes) / ms[0] / 1e6:.1f} | {ratio} |")


if __name__ == "__main__":
    main()
