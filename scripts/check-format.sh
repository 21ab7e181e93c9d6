#!/usr/bin/env bash
# Checks that every C and C++ file tracked by git is formatted as
# .clang-format says (clang-format-22 --dry-run -Werror); lists the files that
# are not. The ctest `format` test runs it when configured with
# TFM_CHECK_FORMAT (on by default when clang-format-22 is installed).
set -euo pipefail
cd "$(dirname "$0")/.."
format=${CLANG_FORMAT:-clang-format-22}
mapfile -t files < <(git ls-files '*.c' '*.cpp' '*.h')
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "check-format: ${#bad[@]} of ${#files[@]} files differ from .clang-format" \
       "(fix with: $format -i FILE):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
