#!/usr/bin/env bash
# Data-parallel training with mpirun -np 2, fused against unfused gradient
# allreduces (see bench.py), then replaces the "## Data-parallel training"
# section of bench/RESULTS.md.
# Usage: bench/dist/run.sh [BUILD_DIR] [bench.py options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
# One job: a 2-core machine, shared with whatever else is building.
ninja -C "$build" -j1 fastnnc
source "$root/bench/common.sh"
record_section "$build" "$root/bench/dist/bench.py" "$@"
