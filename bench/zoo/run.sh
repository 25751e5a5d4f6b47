#!/usr/bin/env bash
# Compile time and training step speed of every zoo model (see bench.py),
# then replaces the "## Model zoo" section of bench/RESULTS.md. About an
# hour on two cores for all 32 models.
# Usage: bench/zoo/run.sh [BUILD_DIR] [bench.py options...]
# (e.g. --models lenet,nasnet_mobile).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
source "$root/bench/common.sh"
build_targets "$build" fastnnc
record_section "$build" "$root/bench/zoo/bench.py" "$@"
