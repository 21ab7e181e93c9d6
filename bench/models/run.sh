#!/usr/bin/env bash
# bench/models/run.sh [--quick] [--threads 1,2] [--tfm-bin DIR] [main.py options]
#
# Compiles and times whole models (nn.TransformerEncoderLayer, a 12-layer
# BERT-base encoder, transformers' BertModel, attention alone, an nn.Linear
# sweep) with tfm and, in the same run, with PyTorch eager, torch.compile,
# ONNX Runtime and IREE; on the BertModel rows also the low-precision peers
# (ONNX Runtime int8, OpenVINO f32 and default precision, CTranslate2 f32 and
# int8) and tfm's bf16 and int8 rows; prints a markdown report on stdout
# (progress on stderr). See bench/README.md.
#
#   --quick               3 small models (one a 2-layer BertModel with every
#                         low-precision row), 1 attention shape, 3 linears:
#                         a few minutes, to check the script itself
#   --only a,b            workloads whose names contain a or b (hfbert12 for the
#                         BertModel rows: hfbert12_s128, hfbert12_s512)
#   --peers LIST          eager,compile,ort,iree,ort-int8,openvino-f32,
#                         openvino-default,ct2-f32,ct2-int8 (the default: all)
#   --dtypes LIST         tfm rows on the BertModel: f32 (always), bf16
#                         (tfm-compile --dtype bf16), int8 (--quantize int8);
#                         default f32,bf16,int8. A build that refuses the flag
#                         gets "not supported by this build" in its row
#   --tfm-keep-fp32 GLOB  passed to the int8 row's tfm-compile as --keep-fp32
#   --ort-int8-per-channel  quantize_dynamic per channel (default per tensor)
#
# It installs what it needs: python3-venv (apt) when missing, a venv in
# bench/models/.venv with the peers from PyPI (each package on its own: one
# that fails leaves its column saying so), and a small C helper (FMA,
# vdpbf16ps and vpdpbusd peaks, max RSS) built with cc -O3 -march=native. tfm's
# tools come from --tfm-bin DIR (default: $TFM_BIN, else build/bin of this
# checkout); they are not built here.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tfm_bin="${TFM_BIN:-$root/build/bin}"
args=()
orig_args="$*"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tfm-bin) tfm_bin="$2"; shift 2 ;;
    --tfm-bin=*) tfm_bin="${1#*=}"; shift ;;
    -h|--help) sed -n "2,31p" "$0"; echo "# other options: see main.py --help (--budget, --timeout, --retries, --tfm-cpu)"; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done

say() { echo "[run.sh] $*" >&2; }
sudo_() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

# 1. Python venv with the peers. Each package is installed on its own so that
#    one that cannot be installed leaves its column saying so.
venv="$here/.venv"
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  say "installing python3-venv"
  sudo_ apt-get update -qq && sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
fi
if ! command -v cc >/dev/null; then
  say "installing a C compiler"
  sudo_ apt-get update -qq && sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc >&2
fi
if [[ ! -x "$venv/bin/python" ]]; then
  say "creating $venv"
  python3 -m venv "$venv"
fi
py="$venv/bin/python"
# The stamp holds the list installed: a list that grew installs the new ones.
packages=(torch transformers onnx onnxscript onnxruntime openvino ctranslate2 "iree-base-compiler iree-base-runtime")
stamp="$venv/.tfm-bench-installed"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "${packages[*]}" ]]; then
  say "installing packages into $venv (torch pulls ~3 GB of CUDA wheels; PyPI has no CPU-only torch)"
  "$py" -m pip install -q numpy safetensors >&2
  failed=""
  for pkg in "${packages[@]}"; do
    # shellcheck disable=SC2086
    if ! nice -n 10 "$py" -m pip install -q $pkg >&2; then failed="$failed $pkg"; fi
  done
  if [[ -n "$failed" ]]; then
    say "could not install:$failed (their columns will say so); retried on the next run"
  else
    echo "${packages[*]}" > "$stamp"
  fi
fi
"$py" -c 'import torch' 2>/dev/null || { say "torch is required (exports and the reference)"; exit 2; }

# 2. The C helper.
work="$here/work"
mkdir -p "$work"
helper="$work/helper"
if [[ ! -x "$helper" || "$here/helper.c" -nt "$helper" ]]; then
  cc -O3 -march=native -pthread -o "$helper" "$here/helper.c"
fi

# 3. tfm's tools (a concurrent build may be relinking them: wait a little).
for i in 1 2 3 4 5 6; do
  [[ -x "$tfm_bin/tfm-compile" && -x "$tfm_bin/tfm-run" || ! -d "$tfm_bin" ]] && break
  say "waiting for $tfm_bin/tfm-compile and tfm-run"; sleep 20
done
[[ -x "$tfm_bin/tfm-compile" && -x "$tfm_bin/tfm-run" ]] || {
  say "no tfm-compile/tfm-run in $tfm_bin (build them: scripts/build.sh, or pass --tfm-bin)"; exit 2; }

export TFM_BENCH_ARGV="$orig_args"
export PYTHONDONTWRITEBYTECODE=1
# main.py runs from here: a relative --tfm-bin means the caller's directory.
tfm_bin="$(cd "$tfm_bin" && pwd)"
cd "$here"
exec "$py" "$here/main.py" --tfm-bin "$tfm_bin" --helper "$helper" --work "$work" ${args[@]+"${args[@]}"}
