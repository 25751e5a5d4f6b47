#!/usr/bin/env bash
# Configures (once) and builds fastnn into build/ with clang-22, lld and ccache.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FASTNN_BUILD_DIR:-$root/build}
jobs=${FASTNN_JOBS:-$(nproc)}
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
fi
ninja -C "$build" -j "$jobs"
