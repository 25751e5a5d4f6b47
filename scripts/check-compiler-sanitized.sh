#!/usr/bin/env bash
# fastnnc and fastnnc-opt under AddressSanitizer + UndefinedBehaviorSanitizer:
# configures <build-dir> with FASTNN_SANITIZE_COMPILER=ON, builds the two
# tools there and runs every lit suite (the importer's, the passes', the
# lowering's, fastnnc's) and the zoo import checks with them. Fails on a
# failing test and on any sanitizer report, including one from a run that
# a test expects to fail (`not fastnnc ...`): reports go to files, not to
# the test's stderr. The Long test compiler.sanitized runs it.
#
#   scripts/check-compiler-sanitized.sh <build-dir> [cmake -D options]
#
# CMAKE_BUILD_PARALLEL_LEVEL and CTEST_PARALLEL_LEVEL bound the jobs.
# The runtime libraries train.bin links stay uninstrumented.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: check-compiler-sanitized.sh <build-dir> [cmake -D options]}
shift

start=$SECONDS
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFASTNN_SANITIZE_COMPILER=ON "$@" >"$build/configure.log" ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target fastnnc fastnnc-opt
echo "check-compiler-sanitized: configured and built in $((SECONDS - start)) s"

reports=$build/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs and
# unpoisons what it hands out only where its inline code is instrumented.
# A slab that our code (instrumented) allocated and libMLIR (not) carves
# up reads as use-after-poison: fastnnc-opt on test/Dialect/FastNN/ops.mlir
# reported one inside MLIR's attribute uniquer.
# Defaults otherwise: leaks are checked (ONNX's schema registry and MLIR's
# process-lifetime tables stay reachable from globals, so nothing needs
# suppressing), and so are container overflows and UBSan's vptr checks
# across MLIR's RTTI (no false reports from the uninstrumented libraries).
export ASAN_OPTIONS=log_path=$reports/report:allow_user_poisoning=0:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=log_path=$reports/report:print_stacktrace=1
if symbolizer=$(command -v llvm-symbolizer-22 || command -v llvm-symbolizer); then
  export ASAN_SYMBOLIZER_PATH=$symbolizer
fi

tests_start=$SECONDS
status=0
(cd "$build" && ctest --output-on-failure -R '^(lit\.|zoo\.import\.)') ||
  status=$?
echo "check-compiler-sanitized: tests ran in $((SECONDS - tests_start)) s"

shopt -s nullglob
found=("$reports"/*)
if ((${#found[@]})); then
  echo "check-compiler-sanitized: ${#found[@]} sanitizer report(s):"
  for report in "${found[@]}"; do
    echo "=== $report"
    cat "$report"
  done
  status=1
fi
exit "$status"
