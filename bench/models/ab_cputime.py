"""A/B of two tfm builds on the HF BertModel rows by CPU time, interleaved.

  bench/models/.venv/bin/python bench/models/ab_cputime.py \
      --a /work/main/build/bin --b build/bin [--dtype bf16] [--threads 1] \
      [--only hfbert12_s128,hfbert12_s512] [--reps 6]

On a machine shared with other work, wall time mostly measures how often the
scheduler took the core away (ab_bf16.py's medians moved 1.1-1.9x between
runs there). This times the CPU the process itself used instead: `perf stat
-e task-clock` around `tfm-run --bench N` and around one plain run, per
forward (T(bench N) - T(one run)) / N, which leaves out loading the artifact
and the warm-up. Caches and memory bandwidth are still shared with the other
work, so only ratios of the interleaved runs mean anything. Needs a
`bench/models/run.sh --only hfbert12` run before (work/<name>/), like
ab_bf16.py; both artifacts run under B's tfm-run, A and B in alternating
order. Prints the median and minimum ms of CPU per forward and B's speedup
over A (ratio of medians).
"""
import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ab_bf16 import FLAGS, compile_tfm  # noqa: E402

INPUTS = ["input_ids", "token_type_ids", "attention_mask"]


def cpu_ms(bin_dir, so, d, threads, bench):
    cmd = ["perf", "stat", "-x,", "-e", "task-clock",
           os.path.join(bin_dir, "tfm-run"), so, "--threads", str(threads), "--quiet"]
    for n in INPUTS:
        cmd += ["--input", f"{n}={os.path.join(d, n + '.npy')}"]
    if bench:
        cmd += ["--bench", str(bench)]
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    for line in p.stderr.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith("task-clock"):
            return float(fields[0])
    raise RuntimeError(f"perf stat printed no task-clock: {p.stderr}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="build A's bin directory (the baseline)")
    ap.add_argument("--b", required=True, help="build B's bin directory")
    ap.add_argument("--dtype", default="bf16", choices=sorted(FLAGS))
    ap.add_argument("--threads", default="1")
    ap.add_argument("--only", default="hfbert12_s128,hfbert12_s512")
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    args = ap.parse_args()

    for name in args.only.split(","):
        d = os.path.join(args.work, name)
        runs = 4 if "s512" in name else 16
        sos = {label: compile_tfm(b, d, args.dtype, label)
               for label, b in (("a", args.a), ("b", args.b))}
        for threads in map(int, args.threads.split(",")):
            ms = {"a": [], "b": []}
            for rep in range(args.reps):
                for label in (("a", "b") if rep % 2 == 0 else ("b", "a")):
                    full = cpu_ms(args.b, sos[label], d, threads, runs)
                    once = cpu_ms(args.b, sos[label], d, threads, 0)
                    ms[label].append((full - once) / runs)
            med = {k: statistics.median(v) for k, v in ms.items()}
            print(f"| {name} | {threads} | {args.dtype} | {med['a']:.1f} (min {min(ms['a']):.1f}) "
                  f"| {med['b']:.1f} (min {min(ms['b']):.1f}) | {med['a'] / med['b']:.2f}x |",
                  flush=True)


if __name__ == "__main__":
    main()
