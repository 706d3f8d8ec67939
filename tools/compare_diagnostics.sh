#!/usr/bin/env bash
# Compares what two builds of streamscope-cli say about the same traces, byte for byte: `analyze --json` (metrics,
# critical path and every diagnostic with its message and spans) of every lesson and lesson variant (simulated once,
# by NEW_CLI), and of every trace under tests/data/ (files the CLI cannot open compare their error and exit code).
# For changes that must not change a finding, e.g. making the diagnostics faster. With BENCH_OLD and BENCH_NEW (two
# builds of tests/bench/bench_sim) it also compares the diagnostics of bench_sim's 1M-operation trace.
#
#   tools/compare_diagnostics.sh OLD_CLI NEW_CLI [WORK_DIR]
#   BENCH_OLD=old/bench_sim BENCH_NEW=build/tests/bench/bench_sim tools/compare_diagnostics.sh OLD_CLI NEW_CLI
#
# Prints one line per difference and a summary; exits 1 when anything differs.
set -uo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: tools/compare_diagnostics.sh OLD_CLI NEW_CLI [WORK_DIR]" >&2
    exit 2
fi
OLD="$(realpath "$1")"
NEW="$(realpath "$2")"
WORK="${3:-$(mktemp -d)}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$WORK/traces" "$WORK/old" "$WORK/new"

compared=0
differ=0
compare() { # NAME FILE
    local name="$1" file="$2"
    "$OLD" analyze --json "$file" >"$WORK/old/$name.out" 2>&1
    echo "exit $?" >>"$WORK/old/$name.out"
    "$NEW" analyze --json "$file" >"$WORK/new/$name.out" 2>&1
    echo "exit $?" >>"$WORK/new/$name.out"
    compared=$((compared + 1))
    if ! cmp -s "$WORK/old/$name.out" "$WORK/new/$name.out"; then
        echo "DIFFERS: $name ($file)"
        differ=$((differ + 1))
    fi
}

# Every lesson, and each of its variants.
for preset in "$ROOT"/resources/presets/*.json; do
    id="$(basename "$preset" .json)"
    variants="$(python3 -c 'import json,sys; v=json.load(open(sys.argv[1])).get("variants") or []
print("\n".join(x.get("id", "") for x in v if isinstance(x, dict)))' "$preset")"
    for variant in "" $variants; do
        name="lesson-$id${variant:+--$variant}"
        if "$NEW" run "$id" --backend sim ${variant:+--variant "$variant"} -o "$WORK/traces/$name.json" \
            >/dev/null 2>"$WORK/traces/$name.err"; then
            compare "$name" "$WORK/traces/$name.json"
        else
            echo "could not simulate $name: $(head -c 300 "$WORK/traces/$name.err")"
        fi
    done
done

# Every trace (and every other JSON file) under tests/data/.
while IFS= read -r file; do
    rel="${file#"$ROOT"/tests/data/}"
    compare "data-${rel//\//--}" "$file"
done < <(find "$ROOT/tests/data" -type f \( -name '*.json' -o -name '*.json.gz' -o -name '*.sstrace' \) | sort)

# bench_sim's 1M-operation trace (1.5 M spans).
if [[ -n ${BENCH_OLD:-} && -n ${BENCH_NEW:-} ]]; then
    "$BENCH_OLD" --sizes 1000000 --diagnostics "$WORK/old/bench" >/dev/null
    "$BENCH_NEW" --sizes 1000000 --diagnostics "$WORK/new/bench" >/dev/null
    compared=$((compared + 1))
    if ! cmp -s "$WORK/old/bench.1000000.json" "$WORK/new/bench.1000000.json"; then
        echo "DIFFERS: bench_sim 1M-operation trace"
        differ=$((differ + 1))
    fi
fi

echo "compare_diagnostics: $compared compared, $differ differ (outputs in $WORK)"
[[ $differ -eq 0 ]]
