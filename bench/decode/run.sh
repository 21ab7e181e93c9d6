#!/usr/bin/env bash
# Decode time per token against the position in the cache (docs/generation.md):
#   bench/decode/run.sh [--layers 4 --hidden 512 --heads 8 --capacity 2048
#                        --positions 16,128,512,1024,2047] [--threads N]
# Writes a random GPT-2-style decoder with caches (make_model.py, numpy),
# compiles it with build/bin/tfm-compile, and times one decode step (seq = 1)
# at each position with tfm-run --bench: the step's cost should grow with the
# tokens in the cache (attention reads past + 1 keys per head), not with the
# cache's capacity. Needs a built tree (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
threads=1 runs=50 args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
positions=16,128,512,1024,2047
for ((i = 0; i < ${#args[@]}; i++)); do
  [ "${args[$i]}" = --positions ] && positions="${args[$((i + 1))]}"
done
out="$(mktemp -d "${TMPDIR:-/tmp}/tfm-bench-decode.XXXXXX")"
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 bench/decode/make_model.py "$out" "${args[@]}"
build/bin/tfm-compile "$out/decoder.tfm" --weights "$out/weights.safetensors" -o "$out/decoder.so"
printf '%8s  %12s  %12s\n' position "min ms/token" "median ms"
for p in ${positions//,/ }; do
  line=$(build/bin/tfm-run "$out/decoder.so" --quiet --threads "$threads" --bench "$runs" \
    --input ids="$out/ids.npy" --input past="$out/past_$p.npy" \
    --input k_cache="$out/cache.npy" --input v_cache="$out/cache.npy" | grep '^bench:')
  min=$(sed -E 's/.*min ([0-9.]+) ms.*/\1/' <<<"$line")
  median=$(sed -E 's/.*median ([0-9.]+) ms.*/\1/' <<<"$line")
  printf '%8s  %12s  %12s\n' "$p" "$min" "$median"
done
