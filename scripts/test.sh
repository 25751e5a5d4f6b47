#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs ctest (lit
# suites, unit tests, the zoo import checks). Extra arguments go to ctest,
# e.g. `scripts/test.sh -L zoo` or `-R lit`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
cd "${FASTNN_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)" "$@"
