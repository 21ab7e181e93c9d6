#!/usr/bin/env python3
"""bench/compile: tfm-compile's time and peak memory against model size.

    bench/compile/run.py [--build build] [--quick] [--work DIR]

Generates models that grow in one direction each and compiles them to .so
with tfm-compile, timed by /usr/bin/time (wall seconds, peak resident KB):
  outputs N   one relu returned N times (N outputs of one value)
  inputs N    N inputs [seq, 4], one used
  chain N     N chained elementwise ops (x = relu(x) + 1 ...)
  layers N    N post-norm encoder layers (E = 64, 4 heads) sharing weights
Prints a markdown table with the time per unit (output, input, op, layer)
and the ratio of each row's time to the smallest of its kind, so that a
cost growing faster than the size shows. Compile time is measured here,
never asserted in tests (the machine is shared).
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from safetensors_io import write_safetensors  # noqa: E402

SIZES = {"outputs": [500, 1000, 2000, 5000], "inputs": [1000, 2000, 5000],
         "chain": [1000, 4000, 10000], "layers": [4, 16, 64]}
QUICK = {"outputs": [500, 1000], "inputs": [1000, 2000], "chain": [1000, 2000],
         "layers": [4, 8]}


def model(kind, n):
    if kind == "outputs":
        return ("model m\ninput x: f32[seq, 4]\n"
                + "".join(f"o{i} = relu(x)\n" for i in range(n))
                + "output " + ", ".join(f"o{i}" for i in range(n)) + "\n")
    if kind == "inputs":
        return ("model m\n" + "".join(f"input x{i}: f32[seq, 4]\n"
                                      for i in range(n))
                + "y = relu(x0)\noutput y\n")
    if kind == "chain":  # n ops: 500 iterations of two per 1000
        return ("model m\ninput x: f32[seq, 4]\nh = x\n"
                f"for a in 0..{n // 1000}:\n    for b in 0..500:\n"
                "        h = relu(h) + 1\n    end\nend\noutput h\n")
    return ("model deep\ninput x: f32[batch, seq, 64]\nh = x\n"
            f"for i in 0..{n}:\n"
            '    h = transformer_encoder_layer(h, heads = 4, weights = "l")\n'
            "end\noutput h\n")


def layer_weights(path):
    rng = np.random.default_rng(0)
    E, F = 64, 2048
    shapes = {"self_attn.in_proj_weight": (3 * E, E),
              "self_attn.in_proj_bias": (3 * E,),
              "self_attn.out_proj.weight": (E, E),
              "self_attn.out_proj.bias": (E,),
              "linear1.weight": (F, E), "linear1.bias": (F,),
              "linear2.weight": (E, F), "linear2.bias": (E,),
              "norm1.weight": (E,), "norm1.bias": (E,),
              "norm2.weight": (E,), "norm2.bias": (E,)}
    write_safetensors(path, {"l." + k: rng.standard_normal(s) * 0.05
                             for k, s in shapes.items()})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--work")
    args = parser.parse_args()
    compiler = os.path.join(args.build, "bin", "tfm-compile")
    work = args.work or tempfile.mkdtemp(prefix="tfm-bench-compile-")
    weights = os.path.join(work, "layers.safetensors")
    layer_weights(weights)
    print("| model | size | seconds | peak MB | seconds per unit | "
          "time / smallest's, per unit |")
    print("|---|---|---|---|---|---|")
    for kind, sizes in (QUICK if args.quick else SIZES).items():
        first = None
        for n in sizes:
            path = os.path.join(work, f"{kind}-{n}.tfm")
            with open(path, "w") as f:
                f.write(model(kind, n))
            command = ["/usr/bin/time", "-f", "%e %M", compiler, path, "-o",
                       os.path.join(work, f"{kind}-{n}.so")]
            if kind == "layers":
                command += ["--weights", weights]
            run = subprocess.run(command, capture_output=True, text=True)
            if run.returncode != 0:
                print(f"| {kind} | {n} | failed: "
                      f"{run.stderr.strip().splitlines()[-1]} | | | |")
                continue
            seconds, peak = run.stderr.strip().splitlines()[-1].split()
            per = float(seconds) / n
            first = first or per
            print(f"| {kind} | {n} | {float(seconds):.2f} | "
                  f"{int(peak) / 1024:.0f} | {per * 1000:.2f} ms | "
                  f"{per / first:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
