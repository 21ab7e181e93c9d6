#!/usr/bin/env bash
# Builds and runs one benchmark: bench/run.sh attention [options of the benchmark]
#   e.g. bench/run.sh attention --quick
#        bench/run.sh attention --shape 1,8,1024,64 --threads 1
# Installs missing packages (scripts/setup.sh), configures build/ if needed
# (scripts/build.sh's settings), builds only the benchmark, then runs it.
# Set TFM_BUILD_LOCK to a file to serialize builds with others (flock).
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:-}"
case "$name" in
  attention) shift ;;
  ""|-h|--help) echo "usage: bench/run.sh attention [benchmark options, see --help]"; exit 2 ;;
  *) echo "bench/run.sh: unknown benchmark '$name' (known: attention)" >&2; exit 2 ;;
esac
scripts/setup.sh
lock=()
if [ -n "${TFM_BUILD_LOCK:-}" ]; then lock=(flock "$TFM_BUILD_LOCK"); fi
if [ ! -f build/build.ninja ]; then
  "${lock[@]}" cmake -G Ninja -S . -B build \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
elif ! grep -q tfm-bench-attention build/build.ninja; then
  "${lock[@]}" cmake build   # configured before bench/ existed
fi
"${lock[@]}" cmake --build build --target tfm-bench-attention
exec build/bin/tfm-bench-attention "$@"
