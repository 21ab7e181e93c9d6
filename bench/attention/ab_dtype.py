"""A/B of two tfm builds on fused attention alone, interleaved in one run.

  bench/models/.venv/bin/python bench/attention/ab_dtype.py \
      --a /work/main/build/bin --b build/bin [--dtype bf16] \
      [--shapes 1,12,128,64 1,12,512,64] [--causal no,yes] [--threads 1,2] \
      [--reps 7] [--levels 6]

tfm-bench-attention compiles its model in-process with its own build, so
two builds cannot share one of its runs; this script compiles `sdpa(q, k,
v)` over [B, H, S, D] f32 inputs with each build's tfm-compile (`--cpu
portable`, `--dtype bf16` by default) and times both artifacts under B's
tfm-run, A and B alternating in order, for every repetition, so that a
machine shared with other work slows both alike. `--levels 6,5` also runs
B's artifact with TFM_CPU_LEVEL=5 (the AVX512-BF16 kernel on a CPU with
AMX; level 6 is the host's own). Prints per row the median over
repetitions of each one's minimum ms over a run of calls, GFLOP/s
(4 B H S^2 D, half of it causal), B's speedup over A, and the largest
difference between A's and B's outputs.
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

import numpy as np


def model_text(b, h, s, d, causal, sq):
    """sdpa over [b, h, s, d]; with sq, sq queries at the end of a cache of
    s keys (a decode step for sq = 1): causal, query_offset = past."""
    kv = f"f32[{b}, {h}, {s}, {d}]"
    if sq:
        return (f"model attention\ninput q: f32[{b}, {h}, {sq}, {d}]\n"
                f"input k: {kv}\ninput v: {kv}\ninput past: i64[{b}]\n"
                "y = sdpa(q, k, v, is_causal = true, query_offset = past)\n"
                "output y\n")
    flag = ", is_causal = true" if causal else ""
    return (f"model attention\ninput q: {kv}\ninput k: {kv}\n"
            f"input v: {kv}\ny = sdpa(q, k, v{flag})\noutput y\n")


def compile_model(bin_dir, src, out, dtype):
    cmd = [os.path.join(bin_dir, "tfm-compile"), src, "--cpu", "portable", "-o", out]
    if dtype != "f32":
        cmd.append(f"--dtype={dtype}")
    subprocess.run(cmd, check=True)


def time_run(bin_dir, so, inputs, out, threads, runs, level):
    cmd = [os.path.join(bin_dir, "tfm-run"), so]
    for name, path in inputs.items():
        cmd += ["--input", f"{name}={path}"]
    cmd += ["--threads", str(threads), "--bench", str(runs), "--quiet",
            "--output", f"y={out}"]
    env = dict(os.environ)
    env.pop("TFM_CPU_LEVEL", None)
    if level < 6:
        env["TFM_CPU_LEVEL"] = str(level)
    p = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    m = re.search(r"min ([\d.]+) ms", p.stdout)
    if not m:
        raise RuntimeError(f"tfm-run printed no time: {p.stdout}{p.stderr}")
    return float(m.group(1)), np.load(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="build A's bin directory (the baseline)")
    ap.add_argument("--b", required=True, help="build B's bin directory")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f32"])
    ap.add_argument("--shapes", nargs="+", default=["1,12,128,64", "1,12,512,64"],
                    help="B,H,S,D, or B,H,S,D,Sq: Sq queries at the end of S cached keys")
    ap.add_argument("--causal", default="no")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--levels", default="6", help="CPU levels to run B at")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="tfm-ab-attention-")
    levels = [int(x) for x in args.levels.split(",")]
    print("| B,H,S,D | causal | thr | A ms | " +
          " | ".join(f"B L{lv} ms | GFLOP/s | A/B" for lv in levels) +
          " | max diff |")
    print("|---|---|--:|--:|" + "--:|--:|--:|" * len(levels) + "--:|")
    for shape in args.shapes:
        b, h, s, d, *rest = map(int, shape.split(","))
        sq = rest[0] if rest else 0
        rng = np.random.default_rng(s * 31 + d)
        inputs = {}
        for name in "qkv":
            path = os.path.join(work, f"{shape}.{name}.npy")
            rows = sq if (name == "q" and sq) else s
            np.save(path, rng.uniform(-1, 1, (b, h, rows, d)).astype(np.float32))
            inputs[name] = path
        if sq:
            inputs["past"] = os.path.join(work, f"{shape}.past.npy")
            np.save(inputs["past"], np.full((b,), s - sq, dtype=np.int64))
        for causal in ([True] if sq else [c == "yes" for c in args.causal.split(",")]):
            tag = f"{shape}.{int(causal)}"
            src = os.path.join(work, f"{tag}.tfm")
            with open(src, "w") as f:
                f.write(model_text(b, h, s, d, causal, sq))
            sos = {}
            for label, bin_dir in (("a", args.a), ("b", args.b)):
                sos[label] = os.path.join(work, f"{tag}.{label}.so")
                compile_model(bin_dir, src, sos[label], args.dtype)
            flop = (4.0 * b * h * sq * s * d if sq else
                    4.0 * b * h * s * s * d * (0.5 if causal else 1.0))
            runs = max(5, min(200, int(2e9 / flop)))
            for threads in map(int, args.threads.split(",")):
                runners = [("a", 6)] + [("b", lv) for lv in levels]
                ms = {r: [] for r in runners}
                outs = {}
                for rep in range(args.reps):
                    order = runners if rep % 2 == 0 else runners[::-1]
                    for label, lv in order:
                        out = os.path.join(work, f"out.{label}{lv}.npy")
                        t, outs[(label, lv)] = time_run(args.b, sos[label], inputs, out,
                                                        threads, runs, lv)
                        ms[(label, lv)].append(t)
                med = {r: statistics.median(v) for r, v in ms.items()}
                diff = max(float(np.abs(outs[r].astype(np.float64) -
                                        outs[("a", 6)]).max()) for r in runners)
                cells = " | ".join(
                    f"{med[('b', lv)]:.3f} | {flop / med[('b', lv)] / 1e6:.0f} | "
                    f"{med[('a', 6)] / med[('b', lv)]:.2f}x" for lv in levels)
                print(f"| {shape} | {'yes' if causal else 'no'} | {threads} | "
                      f"{med[('a', 6)]:.3f} | {cells} | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
