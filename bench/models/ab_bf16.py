"""A/B of two tfm builds on the HF BertModel rows, interleaved, with OpenVINO.

  bench/models/.venv/bin/python bench/models/ab_bf16.py \
      --a /work/main/build/bin --b build/bin [--dtype bf16] [--threads 1,2] \
      [--only hfbert12_s128] [--reps 5]

Needs a `bench/models/run.sh --only hfbert12` run before (it writes
work/<name>/ with model.tfm, the checkpoint, the inputs, ref.npy and
model.onnx). Compiles the model with each build's tfm-compile (`--dtype
bf16`, or `--quantize int8`, or nothing for f32), then for each repetition
and thread count times build A, build B and OpenVINO (default precision:
bf16 on AVX512-BF16 and AMX CPUs; `--ov-hint f32` for its f32 row) one
after the other (both artifacts under B's tfm-run, A and B in alternating
order), so that a machine shared with other work slows all three
alike. Prints, per row, the median over repetitions of each one's minimum
ms over a run of calls, B's ratio to A and to OpenVINO, and each output's
max abs error and cosine against PyTorch fp32 (ref.npy).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import workloads  # noqa: E402

FLAGS = {"bf16": ["--dtype=bf16"], "int8": ["--quantize=int8"], "f32": []}


def compile_tfm(bin_dir, d, dtype, label):
    so = os.path.join(d, f"ab_{label}.{dtype}.so")
    cmd = [os.path.join(bin_dir, "tfm-compile"), os.path.join(d, "model.tfm"),
           "--weights", os.path.join(d, "hf", "model.safetensors"),
           "--cpu", "portable", *FLAGS[dtype], "-o", so]
    subprocess.run(cmd, check=True)
    return so


def time_tfm(bin_dir, so, d, names, threads, runs):
    out = os.path.join(d, "ab_out.npy")
    cmd = [os.path.join(bin_dir, "tfm-run"), so]
    for n in names:
        cmd += ["--input", f"{n}={os.path.join(d, n + '.npy')}"]
    cmd += ["--threads", str(threads), "--bench", str(runs), "--quiet",
            "--output", f"last_hidden_state={out}"]
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    m = re.search(r"min ([\d.]+) ms", p.stdout)
    if not m:
        raise RuntimeError(f"tfm-run printed no time: {p.stdout}{p.stderr}")
    return float(m.group(1)), np.load(out)


class OpenVino:
    def __init__(self, d, names, threads, hint):
        import openvino as ov
        cfg = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": threads}
        if hint:
            cfg["INFERENCE_PRECISION_HINT"] = hint
        core = ov.Core()
        self.compiled = core.compile_model(
            core.read_model(os.path.join(d, "model.onnx")), "CPU", cfg)
        self.req = self.compiled.create_infer_request()
        self.feed = {n: np.load(os.path.join(d, n + ".npy")) for n in names}
        self.precision = str(self.compiled.get_property("INFERENCE_PRECISION_HINT"))

    def time(self, runs):
        self.req.infer(self.feed)  # warm-up
        best = float("inf")
        for _ in range(runs):
            t0 = time.perf_counter()
            self.req.infer(self.feed)
            best = min(best, time.perf_counter() - t0)
        return best * 1e3, np.array(self.req.get_output_tensor(0).data)


def accuracy(out, ref):
    a, b = out.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    return float(np.abs(a - b).max()), cos


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="build A's bin directory (the baseline)")
    ap.add_argument("--b", required=True, help="build B's bin directory")
    ap.add_argument("--dtype", default="bf16", choices=sorted(FLAGS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="hfbert12_s128,hfbert12_s512")
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--ov-hint", default="", help="OpenVINO INFERENCE_PRECISION_HINT (default: its own)")
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    args = ap.parse_args()

    for name in args.only.split(","):
        d = os.path.join(args.work, name)
        names = list(workloads.input_shapes(
            next(w for w in workloads.all_workloads(only=[name]) if w["name"] == name)))
        ref = np.load(os.path.join(d, "ref.npy"))
        runs = 3 if "s512" in name else 8
        sos = {label: compile_tfm(b, d, args.dtype, label)
               for label, b in (("a", args.a), ("b", args.b))}
        for threads in map(int, args.threads.split(",")):
            ov = OpenVino(d, names, threads, args.ov_hint)
            ms = {"a": [], "b": [], "ov": []}
            outs = {}
            for rep in range(args.reps):
                # Both artifacts run under B's tfm-run: what differs is the
                # compiled code. The order alternates: at 2 threads the one
                # run first after OpenVINO measured ~25% faster, whichever
                # it was.
                for label in (("a", "b") if rep % 2 == 0 else ("b", "a")):
                    t, outs[label] = time_tfm(args.b, sos[label], d, names, threads, runs)
                    ms[label].append(t)
                t, outs["ov"] = ov.time(runs)
                ms["ov"].append(t)
            med = {k: statistics.median(v) for k, v in ms.items()}
            acc = {k: accuracy(outs[k], ref) for k in outs}
            print(f"| {name} | {threads} | {args.dtype} | {med['a']:.2f} | {med['b']:.2f} "
                  f"| {med['a'] / med['b']:.2f}x | OpenVINO ({ov.precision}) {med['ov']:.2f} "
                  f"| {med['b'] / med['ov']:.2f} | {acc['b'][0]:.1e} / {acc['b'][1]:.6f} "
                  f"| {acc['ov'][0]:.1e} / {acc['ov'][1]:.6f} |", flush=True)


if __name__ == "__main__":
    main()
