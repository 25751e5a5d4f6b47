#!/usr/bin/env bash
# Training throughput and peak RSS of train.bin vs PyTorch 2 (eager,
# torch.compile, bf16 autocast) and ONNX Runtime Training (see bench.py),
# then replaces the "## Training (CPU backend)" section of bench/RESULTS.md.
# The peers come from scripts/install-peers.sh. Tens of minutes on two cores.
# Usage: bench/train/run.sh [BUILD_DIR] [bench.py options...]
# (e.g. --rounds 3 --models lenet --precisions fp32).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
source "$root/bench/common.sh"
require_peers
build_targets "$build" fastnnc
record_section "$build" "$root/bench/train/bench.py" "$@"
