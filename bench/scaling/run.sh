#!/usr/bin/env bash
# How train.bin and infer.bin scale with batch (1 to 64), threads (1, 2)
# and model size, and how compile time grows with the model (see bench.py),
# then replaces the "## Scaling" section of bench/RESULTS.md. About half an
# hour on two cores.
# Usage: bench/scaling/run.sh [BUILD_DIR] [bench.py options...]
# (e.g. --models lenet --batches 1,64 --min-seconds 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
source "$root/bench/common.sh"
build_targets "$build" fastnnc
record_section "$build" "$root/bench/scaling/bench.py" "$@"
