#!/usr/bin/env bash
# Training throughput of train.bin vs PyTorch (see bench.py), then
# replaces the "## Training (CPU backend)" section of bench/RESULTS.md.
# Usage: bench/train/run.sh [BUILD_DIR] [bench.py options...]
# (e.g. --rounds 3 --models lenet).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
# One job: a 2-core machine, shared with whatever else is building.
ninja -C "$build" -j1 fastnnc
source "$root/bench/common.sh"
use_openblas
out=$(mktemp)
trap 'rm -f "$out"' EXIT
/usr/bin/python3 "$root/bench/train/bench.py" --build-dir "$build" "$@" \
  | tee "$out"
replace_results_section "$root/bench/RESULTS.md" "$out"
