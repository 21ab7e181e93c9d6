#!/usr/bin/env bash
# Sets up, builds, compiles the seed-000 self-attention model to a shared
# library and runs it on the notebook's input, checking the printed numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
seed=examples/seeds/000_self_attention
mkdir -p build/examples
build/bin/tfm-compile "$seed/model.tfm" --weights "$seed/weights.safetensors" \
  -o build/examples/self_attention.so
build/bin/tfm-run build/examples/self_attention.so --input "x=$seed/x.npy" \
  --expected "y=$seed/y.npy"
