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

# PyTorch's best configuration here (shared/TOOLCHAIN.md): Debian's torch
# links the reference BLAS, ~30x slower on its fully-connected layers;
# OpenBLAS (libopenblas0-pthread) is put in front through LD_LIBRARY_PATH so
# the system's BLAS choice stays untouched. One BLAS thread: torch's own
# intra-op threads already use both cores.
openblas=/usr/lib/x86_64-linux-gnu/openblas-pthread
if [ ! -e "$openblas/libblas.so.3" ]; then
  echo "run.sh: $openblas/libblas.so.3 missing (apt-get install" \
    "libopenblas0-pthread)" >&2
  exit 1
fi
export LD_LIBRARY_PATH=$openblas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX

out=$(mktemp)
trap 'rm -f "$out"' EXIT
/usr/bin/python3 "$root/bench/infer/bench.py" --build-dir "$build" "$@" \
  | tee "$out"
/usr/bin/python3 - "$root/bench/RESULTS.md" "$out" <<'PY'
import os, re, sys
path, new = sys.argv[1], open(sys.argv[2]).read().rstrip() + "\n"
old = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
# Replace only our section: from its heading to the next "## " heading.
pat = re.compile(r"^## Inference \(CPU backend\)\n.*?(?=^## |\Z)", re.S | re.M)
if pat.search(old):
    text = pat.sub(lambda m: new + "\n", old, count=1)
else:
    text = old.rstrip() + "\n\n" + new
open(path, "w").write(text.rstrip() + "\n")
PY
