# Shared by the bench/*/run.sh scripts: building through the shared lock,
# the peers' venvs, Debian PyTorch's best BLAS, and writing one section of
# bench/RESULTS.md.

# build_targets BUILD_DIR TARGET...: one job, behind the lock every build in
# this checkout takes (a 2-core machine shared with other engineers' builds).
build_targets() {
  local build=$1
  shift
  flock /tmp/fastnn-build.lock ninja -C "$build" -j1 "$@"
}

# require_peers: exits with a one-line message naming scripts/install-peers.sh
# if a peer venv is missing (before anything is built).
require_peers() {
  /usr/bin/python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import benchlib; benchlib.require_peers()' \
    "$(dirname "${BASH_SOURCE[0]}")"
}

# PyTorch's best configuration here (shared/TOOLCHAIN.md): Debian's torch
# links the reference BLAS, ~30x slower on its fully-connected layers;
# OpenBLAS (libopenblas0-pthread) is put in front through LD_LIBRARY_PATH so
# the system's BLAS choice stays untouched. One BLAS thread: torch's own
# intra-op threads already use both cores.
use_openblas() {
  local openblas=/usr/lib/x86_64-linux-gnu/openblas-pthread
  if [ ! -e "$openblas/libblas.so.3" ]; then
    echo "run.sh: $openblas/libblas.so.3 missing (apt-get install" \
      "libopenblas0-pthread)" >&2
    exit 1
  fi
  export LD_LIBRARY_PATH=$openblas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX
}

# record_section BUILD_DIR BENCH_PY [ARGS...]: runs BENCH_PY --build-dir
# BUILD_DIR ARGS with the system Python, shows its markdown section as it is
# printed and puts it into bench/RESULTS.md (replace_results_section).
record_section() {
  local build=$1 bench=$2
  shift 2
  record_section_out=$(mktemp)
  trap 'rm -f "$record_section_out"' EXIT
  /usr/bin/python3 "$bench" --build-dir "$build" "$@" | tee "$record_section_out"
  replace_results_section "$(dirname "${BASH_SOURCE[0]}")/RESULTS.md" \
    "$record_section_out"
}

# replace_results_section RESULTS_MD NEW_SECTION_FILE: replaces the section
# whose "## " heading starts NEW_SECTION_FILE (up to the next "## "
# heading), or appends it.
replace_results_section() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import os, re, sys
path, new = sys.argv[1], open(sys.argv[2]).read().rstrip() + "\n"
heading = new.splitlines()[0]
old = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
pat = re.compile("^" + re.escape(heading) + r"\n.*?(?=^## |\Z)", re.S | re.M)
if pat.search(old):
    text = pat.sub(lambda m: new + "\n", old, count=1)
else:
    text = old.rstrip() + "\n\n" + new
open(path, "w").write(text.rstrip() + "\n")
PY
}
