#!/usr/bin/env python3
"""bench/decode/gguf_types.py: tfm's decode step per GGUF block type.

    bench/decode/gguf_types.py [--types Q8_0,Q4_0,Q4_K,Q6_K,Q4_K_M]
        [--threads 1] [--position 64] [--runs 20] [--rounds 3]
        [--tfm-bin build/bin] [--work DIR] [make_gguf_q8.py size options]

Writes a random Llama GGUF per type with make_gguf_q8.py (SmolLM2-135M's
shape unless told otherwise; llama.cpp's fallbacks where a row is not whole
super-blocks), compiles examples/llama/llama.tfm against each, then times
one decode step at --position with tfm-run --bench, the types interleaved
round after round (the machine is shared: each round runs every type once,
and the table keeps each type's best min and median over the rounds).

Bytes of weights read per decoded token: every matrix once (the tied head
included), in the artifact's form, which is what the step streams: the
file's integer values (1 byte, or 1/2 for 4-bit types) plus an f32 scale,
and for the asymmetric types an f32 offset, per block of 32 (16 for Q6_K)
(tfm-pack-linear's remarks state the same per layer). The GGUF's own bytes
per weight are beside it. GB/s is the artifact's bytes over the min time.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Bytes per weight: in the artifact (tfm-pack-linear), and in the file.
PACKED = {"Q8_0": 1 + 4 / 32, "Q4_0": 0.5 + 4 / 32, "Q5_0": 1 + 4 / 32,
          "Q5_1": 1 + 8 / 32, "Q4_K": 0.5 + 8 / 32, "Q5_K": 1 + 8 / 32,
          "Q6_K": 1 + 4 / 16}
FILE = {"Q8_0": 34 / 32, "Q4_0": 18 / 32, "Q5_0": 22 / 32, "Q5_1": 24 / 32,
        "Q4_K": 144 / 256, "Q5_K": 176 / 256, "Q6_K": 210 / 256}


def tfm_bench(tfm_bin, so, inputs, threads, runs):
    cmd = [os.path.join(tfm_bin, "tfm-run"), so, "--quiet", "--threads",
           str(threads), "--bench", str(runs)]
    for name, path in inputs.items():
        cmd += ["--input", f"{name}={path}"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"min ([0-9.]+) ms, median ([0-9.]+) ms", out)
    return float(m.group(1)), float(m.group(2))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--types", default="Q8_0,Q4_0,Q4_K,Q6_K,Q4_K_M")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--position", type=int, default=64)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tfm-bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--work", default="/tmp/tfm-bench-gguf-types")
    a, size_args = p.parse_known_args()
    models = {}
    for kind in a.types.split(","):
        work = os.path.join(a.work, kind)
        made = subprocess.run(
            [sys.executable, os.path.join(HERE, "make_gguf_q8.py"), work,
             "--type", kind, "--position", str(a.position)] + size_args,
            check=True, capture_output=True, text=True).stdout
        mix = dict((t, int(n)) for t, n in re.findall(
            r"(Q\d_[0-9K]) (\d+)", made.splitlines()[-1]))
        so = os.path.join(work, "tfm.so")
        subprocess.run([os.path.join(a.tfm_bin, "tfm-compile"),
                        os.path.join(ROOT, "examples", "llama", "llama.tfm"),
                        "--weights", os.path.join(work, "model.gguf"),
                        "-o", so], check=True)
        models[kind] = (work, so, mix)
        print(f"{kind}: {mix}", file=sys.stderr)
    best = {}
    for r in range(a.rounds):
        for kind, (work, so, _) in models.items():
            cache = os.path.join(work, "cache.npy")
            t = tfm_bench(a.tfm_bin, so, {
                "input_ids": os.path.join(work, "input_ids.npy"),
                "past": os.path.join(work, "past.npy"),
                "k_cache": cache, "v_cache": cache}, a.threads, a.runs)
            old = best.get(kind, t)
            best[kind] = (min(old[0], t[0]), min(old[1], t[1]))
            print(f"round {r} {kind}: {t}", file=sys.stderr)
    print(f"| type | matrices (M weights) | file B/weight | tfm B/weight | "
          f"tfm MB read/token | decode ms (min / median), {a.threads} thr | "
          f"GB/s | vs Q8_0 |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    base = best.get("Q8_0")
    for kind, (_, _, mix) in models.items():
        weights = sum(mix.values())
        packed = sum(n * PACKED[t] for t, n in mix.items())
        filed = sum(n * FILE[t] for t, n in mix.items())
        ms = best[kind]
        ratio = f"{base[0] / ms[0]:.2f}x" if base else "-"
        print(f"| {kind} | " +
              ", ".join(f"{t} {n / 1e6:.1f}" for t, n in mix.items()) +
              f" | {filed / weights:.3f} | {packed / weights:.3f} | "
              f"{packed / 1e6:.0f} | {ms[0]:.2f} / {ms[1]:.2f} | "
              f"{packed / ms[0] / 1e6:.1f} | {ratio} |")


if __name__ == "__main__":
    main()
