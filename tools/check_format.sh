#!/usr/bin/env bash
# The C++ layout of .clang-format, checked on every tracked C++ source and header (ctest: check_format, label core):
# `clang-format --dry-run --Werror` prints each place that differs from the style as FILE:LINE:COL and exits 1.
# tests/data/ (fixtures, byte-exact) is not C++ to format. Without clang-format (the package clang-format, which
# tools/setup.sh installs) it says so and exits 0, so that a machine without it still runs the other tests.
#
#   tools/check_format.sh [SOURCE_ROOT]     fix what it reports with: clang-format -i FILE (or git clang-format)
set -euo pipefail

ROOT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
cd "$ROOT"

CLANG_FORMAT="${CLANG_FORMAT:-clang-format}"
if ! command -v "$CLANG_FORMAT" >/dev/null; then
    echo "check_format: skipped: $CLANG_FORMAT is not installed (apt-get install clang-format, or tools/setup.sh)"
    exit 0
fi

# The tracked C++ files; from a source tree that is not a git checkout (an unpacked archive), every such file.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files -- '*.cpp' '*.h' '*.cu' '*.cuh' ':(exclude)tests/data' |
        while IFS= read -r f; do [[ -f $f ]] && printf '%s\n' "$f"; done)
else
    mapfile -t files < <(find . -path ./tests/data -prune -o -path './build*' -prune -o -type f \
        \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print | sed 's|^\./||' | sort)
fi
if ((${#files[@]} == 0)); then
    echo "check_format: no C++ files found under $ROOT"
    exit 1
fi

version="$("$CLANG_FORMAT" --version | grep -o 'version [0-9][0-9.]*' || echo 'version unknown')"
if "$CLANG_FORMAT" --dry-run --Werror --style=file "${files[@]}"; then
    echo "check_format: ${#files[@]} files keep to .clang-format (clang-format $version)"
else
    echo "check_format: files above differ from .clang-format (clang-format $version); fix with: clang-format -i FILE"
    exit 1
fi
