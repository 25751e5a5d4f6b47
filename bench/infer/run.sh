#!/usr/bin/env bash
# Forward throughput of infer.bin vs ONNX Runtime on the same ONNX file (see
# bench.py), then replaces the "## Inference (CPU backend)" section of
# bench/RESULTS.md. ONNX Runtime comes from scripts/install-peers.sh.
# Usage: bench/infer/run.sh [BUILD_DIR] [bench.py options...]
# (e.g. --threads 2,1 --rounds 5; bench.py sets each side's thread count).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
source "$root/bench/common.sh"
require_peers
build_targets "$build" fastnnc
record_section "$build" "$root/bench/infer/bench.py" "$@"
