"""Compiles work/<name>/model.onnx to model.vmfb for IREE's llvm-cpu backend.

    iree-import-onnx model.onnx -o model.mlir      (weights inlined)
    iree-compile model.mlir --iree-hal-target-device=local
        --iree-hal-local-target-device-backends=llvm-cpu
        --iree-llvmcpu-target-cpu=host -o model.vmfb

The result (seconds for import + compile, or the error) goes to iree.json and
is reused while model.onnx is unchanged.
"""

import json
import os
import subprocess
import sys
import time

FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=host"]


def compile_iree(venv_bin, d, timeout, log):
    """Returns {"compile_s": s} or {"error": message}."""
    onnx_path = os.path.join(d, "model.onnx")
    vmfb = os.path.join(d, "model.vmfb")
    meta_path = os.path.join(d, "iree.json")
    if not os.path.exists(onnx_path):
        return {"error": "no model.onnx (the ONNX export failed)"}
    stamp = [os.path.getmtime(onnx_path), FLAGS]
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        if meta.get("stamp") == stamp and ("error" in meta or os.path.exists(vmfb)):
            return meta
    mlir = os.path.join(d, "model.mlir")
    t0 = time.perf_counter()
    meta = {"stamp": stamp}
    steps = [[os.path.join(venv_bin, "iree-import-onnx"), onnx_path, "-o", mlir],
             [os.path.join(venv_bin, "iree-compile"), mlir, *FLAGS, "-o", vmfb]]
    for cmd in steps:
        left = timeout - (time.perf_counter() - t0)
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=max(left, 1))
        except subprocess.TimeoutExpired:
            meta["error"] = f"{os.path.basename(cmd[0])}: timeout after {timeout:.0f} s"
            break
        except OSError as e:
            meta["error"] = f"{os.path.basename(cmd[0])}: {e}"
            break
        log.write(f"$ {' '.join(cmd)}\n{p.stdout[-4000:]}{p.stderr[-4000:]}\n")
        if p.returncode != 0:
            lines = [ln for ln in p.stderr.splitlines() if "error" in ln.lower()] or \
                p.stderr.strip().splitlines() or [f"exit {p.returncode}"]
            meta["error"] = f"{os.path.basename(cmd[0])}: {lines[0]}"[:300]
            with open(os.path.join(d, "iree_error.txt"), "w") as f:
                f.write(p.stderr)
            break
    else:
        meta["compile_s"] = time.perf_counter() - t0
    if os.path.exists(mlir):
        os.remove(mlir)
    if "error" in meta and os.path.exists(vmfb):
        os.remove(vmfb)
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    return meta


if __name__ == "__main__":
    # python iree_compile.py VENV_BIN WORK_DIR/NAME
    print(compile_iree(sys.argv[1], sys.argv[2], 900, sys.stderr))
