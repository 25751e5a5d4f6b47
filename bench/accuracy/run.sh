#!/usr/bin/env bash
# The README's main job, train.bin against PyTorch over several seeds (see
# bench.py), then replaces the "## Fashion-MNIST accuracy (README job)"
# section of bench/RESULTS.md, with trajectory.py's first steps against
# float64 appended. About 4 minutes per seed on two cores.
# Usage: bench/accuracy/run.sh [BUILD_DIR] [bench.py options...]
# (e.g. --seeds 3).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
source "$root/bench/common.sh"
build_targets "$build" fastnnc fastnn-data
use_openblas
out=$(mktemp)
trap 'rm -f "$out"' EXIT
/usr/bin/python3 "$root/bench/accuracy/bench.py" --build-dir "$build" "$@" \
  | tee "$out"
echo >> "$out"
/usr/bin/python3 "$root/bench/accuracy/trajectory.py" --build-dir "$build" \
  | tee -a "$out"
replace_results_section "$root/bench/RESULTS.md" "$out"
