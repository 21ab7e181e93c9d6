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
file's integer values (1 byte for Q8_0, 1/2 for 4-bit types, plus 1/8 per
bit above 4 for 5- and 6-bit ones) plus the scales (and
the asymmetric types' offsets) as the file has them: an f16 per block of 32,
or a K-quant's byte per sub-block (of 32, 16 for Q6_K) and f16 per
super-block of 256 (tfm-pack-linear's remarks state the same per layer).
The GGUF's own bytes per weight are beside it. GB/s is the artifact's bytes
over the min time.

--base-bin [NAME=]DIR (repeatable: other builds, e.g. main's) compiles each
model with each build too and times all builds interleaved in every round,
with the ratio other / this per row. --prefill 32,512 also times prompts of those lengths from position
0 (the same artifacts), both builds interleaved as well.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Bytes per weight: in the artifact (tfm-pack-linear), and in the file.
PACKED = {"Q8_0": 1 + 2 / 32, "Q4_0": 0.5 + 2 / 32,
          "Q5_0": 0.625 + 2 / 32, "Q5_1": 0.625 + 4 / 32,
          "Q4_K": 0.5 + 2 / 32 + 4 / 256, "Q5_K": 0.625 + 2 / 32 + 4 / 256,
          "Q6_K": 0.75 + 1 / 16 + 2 / 256}
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


def write_prompt(path, length):
    """input_ids [1, length] of token 1, as make_gguf_q8.py writes them."""
    header = "{'descr': '<i8', 'fortran_order': False, 'shape': (1, %d), }" \
        % length
    header += " " * (-(len(header) + 11) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little"))
        f.write(header.encode())
        f.write((1).to_bytes(8, "little") * length)


def write_zero_past(path):
    header = "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }"
    header += " " * (-(len(header) + 11) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little"))
        f.write(header.encode())
        f.write(bytes(8))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--types", default="Q8_0,Q4_0,Q4_K,Q6_K,Q4_K_M")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--position", type=int, default=64)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tfm-bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--work", default="/tmp/tfm-bench-gguf-types")
    p.add_argument("--base-bin", action="append", default=[])
    p.add_argument("--prefill", default="")
    p.add_argument("--reuse", action="store_true",
                   help="keep a type's GGUF and artifacts from an earlier "
                        "run in --work (same builds) instead of remaking")
    a, size_args = p.parse_known_args()
    prefills = [int(n) for n in a.prefill.split(",") if n]
    builds = {"this": a.tfm_bin}
    for i, spec in enumerate(a.base_bin):
        name, _, path = spec.rpartition("=")
        builds[name or f"base{i}"] = path
    models = {}
    for kind in a.types.split(","):
        work = os.path.join(a.work, kind)
        mix_file = os.path.join(work, "mix.txt")
        if a.reuse and os.path.exists(mix_file):
            made = open(mix_file).read()
        else:
            made = subprocess.run(
                [sys.executable, os.path.join(HERE, "make_gguf_q8.py"), work,
                 "--type", kind, "--position", str(a.position)] + size_args,
                check=True, capture_output=True, text=True).stdout
            with open(mix_file, "w") as f:
                f.write(made)
        mix = dict((t, int(n)) for t, n in re.findall(
            r"(Q\d_[0-9K]) (\d+)", made.splitlines()[-1]))
        sos = {}
        for build, bin_dir in builds.items():
            so = os.path.join(work, f"tfm-{build}.so")
            sos[build] = so
            if a.reuse and os.path.exists(so):
                continue
            subprocess.run([os.path.join(bin_dir, "tfm-compile"),
                            os.path.join(ROOT, "examples", "llama",
                                         "llama.tfm"),
                            "--weights", os.path.join(work, "model.gguf"),
                            "-o", so], check=True)
            sos[build] = so
        for n in prefills:
            write_prompt(os.path.join(work, f"prompt{n}.npy"), n)
        write_zero_past(os.path.join(work, "past0.npy"))
        models[kind] = (work, sos, mix)
        print(f"{kind}: {mix}", file=sys.stderr)
    # (kind, build, step) -> (min, median); step "decode" or "prefill N".
    best = {}
    steps = [("decode", "input_ids.npy", "past.npy")] + [
        (f"prefill {n}", f"prompt{n}.npy", "past0.npy") for n in prefills]
    for r in range(a.rounds):
        for kind, (work, sos, _) in models.items():
            cache = os.path.join(work, "cache.npy")
            for step, ids, past in steps:
                for build, so in sos.items():
                    t = tfm_bench(builds[build], so, {
                        "input_ids": os.path.join(work, ids),
                        "past": os.path.join(work, past),
                        "k_cache": cache, "v_cache": cache}, a.threads,
                        a.runs if step == "decode" else max(3, a.runs // 4))
                    key = (kind, build, step)
                    old = best.get(key, t)
                    best[key] = (min(old[0], t[0]), min(old[1], t[1]))
                    print(f"round {r} {kind} {build} {step}: {t}",
                          file=sys.stderr)
    print(f"| type | matrices (M weights) | file B/weight | tfm B/weight | "
          f"tfm MB read/token | decode ms (min / median), {a.threads} thr | "
          f"GB/s | vs Q8_0 |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    base = best.get(("Q8_0", "this", "decode"))
    for kind, (_, _, mix) in models.items():
        weights = sum(mix.values())
        packed = sum(n * PACKED[t] for t, n in mix.items())
        filed = sum(n * FILE[t] for t, n in mix.items())
        ms = best[(kind, "this", "decode")]
        ratio = f"{base[0] / ms[0]:.2f}x" if base else "-"
        print(f"| {kind} | " +
              ", ".join(f"{t} {n / 1e6:.1f}" for t, n in mix.items()) +
              f" | {filed / weights:.3f} | {packed / weights:.3f} | "
              f"{packed / 1e6:.0f} | {ms[0]:.2f} / {ms[1]:.2f} | "
              f"{packed / ms[0] / 1e6:.1f} | {ratio} |")


    if len(builds) > 1 or prefills:
        others = [b for b in builds if b != "this"]
        print()
        print("| type | step | this build ms (min / median) | " +
              "".join(f"{o} ms (min / median) | {o} / this (min) | "
                      for o in others))
        print("|---|---|--:|" + "--:|--:|" * len(others))
        for kind in models:
            for step, _, _ in steps:
                this = best[(kind, "this", step)]
                line = f"| {kind} | {step} | {this[0]:.2f} / {this[1]:.2f} | "
                for o in others:
                    other = best[(kind, o, step)]
                    line += (f"{other[0]:.2f} / {other[1]:.2f} | "
                             f"{other[0] / this[0]:.2f}x | ")
                print(line.rstrip())


if __name__ == "__main__":
    main()
