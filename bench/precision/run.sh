#!/usr/bin/env bash
# Mixed precision on CPU (see bench.py): resnet_v1_50 training throughput in
# bf16 against fp32, and LeNet's Fashion-MNIST accuracy in fp32, bf16 and
# fp16, then replaces the "## Mixed precision (CPU backend)" section of
# bench/RESULTS.md. Tens of minutes on two cores.
# Usage: bench/precision/run.sh [BUILD_DIR] [bench.py options...]
# (e.g. --rounds 3, --skip-accuracy, --threads 1).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
source "$root/bench/common.sh"
build_targets "$build" fastnnc fastnn-data
record_section "$build" "$root/bench/precision/bench.py" "$@"
