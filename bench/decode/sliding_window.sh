#!/usr/bin/env bash
# A decode step of examples/llama/llama.tfm on the Gemma 3 fixture
# (tests/reference/decoders/gemma3: 6 layers, 5 of them local with a
# window of 4) at a position deep in the cache, against the same model with
# the window turned off (every layer global), interleaved A/B in one run:
#   bench/decode/sliding_window.sh [--position 1000] [--rounds 5] [--runs 200]
# The local layers' attention should read window + one key block, not the
# whole cache. Needs a built tree (scripts/build.sh) and /usr/bin/python3
# with numpy.
set -euo pipefail
cd "$(dirname "$0")/../.."
position=1000 rounds=5 runs=200
while [ $# -gt 0 ]; do
  case "$1" in
    --position) position="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
fixture=tests/reference/decoders/gemma3
out="$(mktemp -d "${TMPDIR:-/tmp}/tfm-bench-window.XXXXXX")"
trap 'rm -rf "$out"' EXIT
# B: the window wider than the cache, so every layer attends to all keys.
sed 's/^    W = config(arch + ".attention.sliding_window")$/    W = 100000/' \
  examples/llama/llama.tfm >"$out/global.tfm"
grep -q 'W = 100000' "$out/global.tfm"
build/bin/tfm-compile examples/llama/llama.tfm --weights "$fixture/model.gguf" -o "$out/window.so"
build/bin/tfm-compile "$out/global.tfm" --weights "$fixture/model.gguf" -o "$out/global.so"
/usr/bin/python3 - "$out" "$position" <<'PY'
import sys, numpy as np
out, position = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
np.save(f"{out}/ids.npy", np.array([[7]], np.int64))
np.save(f"{out}/past.npy", np.array([position], np.int64))
np.save(f"{out}/cache.npy", rng.standard_normal((6, 1, 2, 1024, 16)).astype(np.float32))
PY
bench() {
  build/bin/tfm-run "$out/$1.so" --quiet --bench "$runs" \
    --input input_ids="$out/ids.npy" --input past="$out/past.npy" \
    --input k_cache="$out/cache.npy" --input v_cache="$out/cache.npy" |
    grep '^bench:' | sed -E 's/.*min ([0-9.]+) ms.*/\1/'
}
printf '%6s  %16s  %16s  %6s\n' round "window ms (min)" "global ms (min)" ratio
for ((r = 1; r <= rounds; r++)); do
  a=$(bench window) b=$(bench global)
  printf '%6s  %16s  %16s  %6.2f\n' "$r" "$a" "$b" "$(echo "$b / $a" | bc -l)"
done
