#!/usr/bin/env bash
# Builds and runs the input-pipeline benchmark, then replaces the
# "## Data pipeline" section of bench/RESULTS.md with its output.
# Usage: bench/data/run.sh [BUILD_DIR] [IMAGES] [SECONDS] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
source "$root/bench/common.sh"
build_targets "$build" fastnn-pipeline-bench
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$build/bench/data/fastnn-pipeline-bench" "${2:-256}" "${3:-4}" "${4:-3}" | tee "$out"
replace_results_section "$root/bench/RESULTS.md" "$out"
