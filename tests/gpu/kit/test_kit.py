#!/usr/bin/env python3
"""The GPU kit's own test (ctest gpu.kit): make_kit.py --quick builds a kit,
run.sh runs it to the end. Without a GPU every case, sanitizer run and
benchmark must be reported as skipped with the reason; with one, no case
may fail.

usage: test_kit.py BUILD_DIR
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    build = os.path.abspath(sys.argv[1])
    if not os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"):
        print("skipped: no CUDA toolkit (/usr/local/cuda) to build a kit with")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        kit, out = os.path.join(tmp, "kit"), os.path.join(tmp, "out")
        subprocess.run([sys.executable, os.path.join(HERE, "make_kit.py"),
                        "--build", build, "--out", kit, "--quick"],
                       check=True)
        env = dict(os.environ, OUT=out, KIT_PYTHON=sys.executable)
        run = subprocess.run([os.path.join(kit, "run.sh")], env=env,
                             capture_output=True, text=True, timeout=900)
        print(run.stdout[-3000:], run.stderr[-3000:])
        sys.path.insert(0, kit)
        from run_kit import unpack
        unpacked = unpack(kit)
        with open(os.path.join(unpacked, "manifest.json")) as f:
            manifest = json.load(f)
        shutil.rmtree(unpacked)
        failed = [c for c in manifest["cases"] if "compile_error" in c]
        assert not failed, f"compile errors: {failed[:3]}"
        groups = {c["group"] for c in manifest["cases"]}
        for group in ("e2e-sm_90-f32", "e2e-sm_90-bf16", "attention-sm_90",
                      "gemm-sm_90"):
            assert group in groups, f"no {group} cases in {sorted(groups)}"
        assert any(len(c["steps"]) > 1 for c in manifest["cases"]), \
            "no chained (KV-cache decode) case"
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        assert os.path.exists(os.path.join(out, "summary.md"))
        assert len(summary["cases"]) == len(manifest["cases"])
        if "skipped_because" in summary:
            why = summary["skipped_because"]
            assert run.returncode == 0, f"exit {run.returncode}"
            assert "no usable GPU" in why, why
            for kind in ("cases", "sanitize", "bench"):
                assert summary[kind], f"no {kind} reported"
                bad = [r for r in summary[kind] if r["status"] != "skipped"
                       or r["message"] != why]
                assert not bad, f"{kind} not skipped: {bad[:3]}"
            print(f"gpu.kit: {len(summary['cases'])} cases, "
                  f"{len(summary['sanitize'])} sanitizer runs and "
                  f"{len(summary['bench'])} benchmarks skipped: {why}")
        else:
            bad = [c for c in summary["cases"]
                   if c["status"] in ("fail", "error")]
            assert not bad and run.returncode == 0, f"failed: {bad[:3]}"
    return 0


if __name__ == "__main__":
    sys.exit(main())
