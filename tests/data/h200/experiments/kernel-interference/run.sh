#!/usr/bin/env bash
# Runs every scenario of this experiment in ROUNDS processes each (tools/run_scenario_rounds.sh): untimed_runs.txt
# (NAME RUN UNTIMED_NS TIMED_NS) and the first round's traces as NAME.json.   run.sh CLI OUTDIR [ROUNDS]
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$HERE/../../../../../tools/run_scenario_rounds.sh" "$1" "$HERE/scenarios" "${@:2}"
