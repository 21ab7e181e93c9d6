#!/usr/bin/env bash
# Builds the GPU kit: tfm-compile and tfm-run (build/), then every GPU test
# model and benchmark compiled for sm_90 (and sm_80 as PTX) with their
# inputs and references, and tfm-run with the libraries it needs, into
# gpu-kit/ (git-ignored). On a GPU machine: gpu-kit/run.sh. docs/gpu.md,
# "The GPU kit", says what it holds and how long it runs.
#
#   scripts/gpu-kit.sh [--quick] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
TFM_TARGETS="tfm-compile tfm-run" scripts/build.sh build
exec /usr/bin/python3 tests/gpu/kit/make_kit.py --build build "$@"
