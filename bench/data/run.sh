#!/usr/bin/env bash
# Builds and runs the input-pipeline benchmark, then replaces the
# "## Data pipeline" section of bench/RESULTS.md with its output.
# Usage: bench/data/run.sh [BUILD_DIR] [IMAGES] [SECONDS] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
ninja -C "$build" fastnn-pipeline-bench
out=$(mktemp)
"$build/bench/data/fastnn-pipeline-bench" "${2:-256}" "${3:-4}" "${4:-3}" | tee "$out"
python3 - "$root/bench/RESULTS.md" "$out" <<'PY'
import re, sys, os
path, new = sys.argv[1], open(sys.argv[2]).read().rstrip() + "\n"
old = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
# Replace only our section: from its heading to the next "## " heading.
pat = re.compile(r"^## Data pipeline\n.*?(?=^## |\Z)", re.S | re.M)
if pat.search(old):
    text = pat.sub(lambda m: new + "\n", old, count=1)
else:
    text = old.rstrip() + "\n\n" + new
open(path, "w").write(text.rstrip() + "\n")
PY
rm -f "$out"
