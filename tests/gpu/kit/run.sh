#!/usr/bin/env bash
# Runs the GPU kit on the machine it was sent to (docs/gpu.md, "The GPU
# kit"): every case with tfm-run --expected, compute-sanitizer on a small
# model of each kernel kind, the benchmarks beside PyTorch and ncu counters,
# within KIT_BUDGET_S seconds (default 450); never stops at a failure.
#
#   gpu-kit/run.sh [--only REGEX] [--budget S] [--phases cases,sanitize,bench,ncu]
#
# Results go to $OUT (the device tool's folder), else gpu-kit/results:
# summary.md (also printed last), summary.json and the logs of what failed.
# Without a CUDA driver or device every case is reported as skipped.
# KIT_PYTHON picks the interpreter (default python3; it needs numpy, and
# torch with CUDA for the PyTorch columns). The payload is unpacked under
# $TMPDIR (else /tmp) on the first run.
set -uo pipefail
kit="$(cd "$(dirname "$0")" && pwd)"
export PYTHONUNBUFFERED=1
exec "${KIT_PYTHON:-python3}" "$kit/run_kit.py" --kit "$kit" \
  --out "${OUT:-$kit/results}" "$@"
