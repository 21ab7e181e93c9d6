#!/usr/bin/env bash
# Installs what tfm needs from Debian's packages. Idempotent: does nothing when all is there.
set -euo pipefail
packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22 libfmt-dev catch2
          ninja-build nlohmann-json3-dev cmake ccache python3-numpy libdnnl-dev
          libclang-rt-22-dev libfuzzer-22-dev clang-format-22)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
