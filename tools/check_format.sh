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

# The tree is laid out by clang-format 14 (Debian 12's); other major versions lay out a few constructs differently, so
# the check runs with version 14 only (clang-format-14 where both are installed) and is skipped, saying so, otherwise.
WANTED_MAJOR=14
if [[ -z ${CLANG_FORMAT:-} ]]; then
    CLANG_FORMAT=clang-format
    command -v clang-format-$WANTED_MAJOR >/dev/null && CLANG_FORMAT=clang-format-$WANTED_MAJOR
fi
if ! command -v "$CLANG_FORMAT" >/dev/null; then
    echo "check_format: skipped: $CLANG_FORMAT is not installed (apt-get install clang-format, or tools/setup.sh)"
    exit 0
fi
major="$("$CLANG_FORMAT" --version | grep -o 'version [0-9]*' | grep -o '[0-9]*' || true)"
if [[ $major != "$WANTED_MAJOR" ]]; then
    echo "check_format: skipped: the tree is laid out by clang-format $WANTED_MAJOR, and $CLANG_FORMAT is version" \
        "${major:-unknown} (install clang-format-$WANTED_MAJOR to check)"
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
