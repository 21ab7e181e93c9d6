#!/usr/bin/env bash
# Sets up, builds and runs every test, as CI does (.ci/run):
# 1. build/ with warnings as errors: lit, unit, end-to-end, examples, embedding.
# 2. build-asan/ (TFM_FUZZ: AddressSanitizer + UBSan, libFuzzer): the unit
#    tests, a subset of the end-to-end tests (label `sanitize`) and each fuzz
#    target for TFM_FUZZ_SECONDS (label `fuzz`). README.md, "Tests", says
#    what runs where and why.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hashes paths relative to the checkout, so build-asan/ gets the
# compiler's objects (not instrumented) from build/ wherever the checkout is.
export CCACHE_BASEDIR="$PWD"
scripts/setup.sh
scripts/build.sh build -DTFM_WERROR=ON
(cd build && ctest --output-on-failure -j2)

TFM_TARGETS="tfm-runtime-tests tfm-runtime-fixtures tfm-frontend-tests
  tfm-e2e-tests tfm-fuzz-tfm tfm-fuzz-safetensors tfm-fuzz-npy
  tfm-fuzz-metadata tfm-fuzz-gguf tfm-fuzz-tokenizer" \
  scripts/build.sh build-asan -DTFM_WERROR=ON -DTFM_FUZZ=ON
(cd build-asan && ctest --output-on-failure -j2 -L 'sanitize|fuzz')
