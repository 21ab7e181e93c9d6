#!/usr/bin/env bash
# Configures (once) and builds tfm with clang-22, lld and ninja.
#   scripts/build.sh                      build/, everything
#   scripts/build.sh DIR [CMAKE_ARGS...]  DIR configured with CMAKE_ARGS (on
#                                         the first run), everything
# TFM_TARGETS="a b" builds only those targets.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ ! -f "$dir/build.ninja" ]; then
  cmake -G Ninja -S . -B "$dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir "$@"
elif (($#)); then
  cmake "$dir" "$@" >/dev/null
fi
if [ -n "${TFM_TARGETS:-}" ]; then
  # shellcheck disable=SC2086
  cmake --build "$dir" --target ${TFM_TARGETS}
else
  cmake --build "$dir"
fi
