#!/usr/bin/env bash
# Forward throughput of infer.bin vs PyTorch eval mode (see bench.py), then
# replaces the "## Inference (CPU backend)" section of bench/RESULTS.md.
# Usage: bench/infer/run.sh [BUILD_DIR] [bench.py options...]
# (e.g. --threads 2,1 --rounds 5; bench.py sets each side's thread count).
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
/usr/bin/python3 "$root/bench/infer/bench.py" --build-dir "$build" "$@" \
  | tee "$out"
replace_results_section "$root/bench/RESULTS.md" "$out"
