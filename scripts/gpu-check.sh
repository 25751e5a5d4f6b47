#!/usr/bin/env bash
# The CUDA backend's check on a GPU machine (issue 17, item 10).
#
#   bash scripts/gpu-check.sh            here: build the bundle out/gpu-check
#                                        from build/, then run it if this
#                                        machine has a GPU; else stop, saying so
#   bash scripts/gpu-check.sh --device   on the GPU machine, from the repo
#                                        root with out/gpu-check beside it:
#                                        run the checks, write the report
#
# The GPU machine has no MLIR and no compiler of ours, its CUDA libraries
# are its PyTorch environment's wheels, at most 64 MiB travel to it and a
# command runs at most 10 minutes. So every executable is built here with
# --weights=external and the weights do not travel: scripts/gpu_check/
# weights.py rebuilds each model's ONNX file there from a description of
# its initializers and a seed, byte for byte the one this machine trained
# and ran its CPU references from (the report compares their SHA-256), and
# train.bin starts from it with init_from_onnx, infer.bin with
# --init-from-onnx. The report (results.md) goes into bench/RESULTS.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUNDLE=${FASTNN_GPU_CHECK_DIR:-$ROOT/out/gpu-check}
BUILD=${FASTNN_BUILD_DIR:-$ROOT/build}
# What travels besides the repository's tracked files (~3 MiB).
BUNDLE_LIMIT_BYTES=$((58 * 1024 * 1024))
# Models of the parity checks: name, image size, batch of infer.bin.
PARITY_MODELS="lenet:28:64 mobilenet_v2:96:8 resnet_v1_50:128:8"
TRAIN_STEPS=20
THROUGHPUT_BATCH=128

fail() {
  echo "gpu-check: error: $*" >&2
  exit 1
}

# The parity runs' flags, into FIXED_BATCH: TRAIN_STEPS steps on one fixed
# mock batch of $1 samples, a small fixed learning rate, every loss logged.
fixed_batch_flags() {
  FIXED_BATCH=(--dataset_name=mock --num_sample_per_epoch="$1"
    --num_epochs="$TRAIN_STEPS" --stop_at_step="$TRAIN_STEPS"
    --log_loss_every_n_iters=1 --learning_rate=0.001
    --learning_rate_decay_type=fixed)
}

# The host libraries train.bin needs that a machine with only PyTorch's
# environment lacks; the CUDA ones come from its wheels.
HOST_LIBRARIES="libonnx_proto.so.1 libprotobuf.so.32 libturbojpeg.so.0 libjpeg.so.62 libpng16.so.16"

prepare() {
  local fastnnc=$BUILD/bin/fastnnc
  local kernel_tests=$BUILD/test/runtime/kernels/cuda/fastnn-cuda-kernel-tests
  [[ -x $fastnnc ]] || fail "$fastnnc: not built; run bash scripts/build.sh"
  [[ -x $kernel_tests ]] ||
    fail "$kernel_tests: not built (a build without the CUDA toolkit?)"
  local onnx_python=$ROOT/.venv-onnx/bin/python
  [[ -x $onnx_python ]] ||
    fail "$onnx_python: missing; run bash scripts/install-deps.sh"

  rm -rf "$BUNDLE"
  mkdir -p "$BUNDLE/lib" "$BUNDLE/work"
  local work=$BUNDLE/work
  cp "$kernel_tests" "$BUNDLE/"
  for library in $HOST_LIBRARIES; do
    cp -L "/usr/lib/x86_64-linux-gnu/$library" "$BUNDLE/lib/"
  done

  local spec
  for spec in $PARITY_MODELS; do
    IFS=: read -r model size batch <<<"$spec"
    echo "gpu-check: preparing $model (image $size, batch $batch)"
    /usr/bin/python3 "$ROOT/tools/zoo/export.py" --model "$model" \
      --num-classes 10 --image-size "$size" -o "$work/$model.export.onnx" \
      >/dev/null
    "$onnx_python" "$ROOT/scripts/gpu_check/weights.py" describe \
      "$work/$model.export.onnx" -o "$BUNDLE/$model.spec.json" \
      --graph "$BUNDLE/$model.graph.onnx"
    "$onnx_python" "$ROOT/scripts/gpu_check/weights.py" build \
      "$BUNDLE/$model.spec.json" "$BUNDLE/$model.graph.onnx" \
      -o "$work/$model.onnx" >"$BUNDLE/$model.sha256"

    # The CPU references: infer.bin's outputs on its seeded input, and
    # the losses of TRAIN_STEPS steps on the mock batches.
    "$fastnnc" "$work/$model.onnx" --mode=infer --batch-size="$batch" \
      --weights=external -o "$work/$model.cpu.infer.bin"
    "$work/$model.cpu.infer.bin" --init-from-onnx "$work/$model.onnx" \
      --seed 1 --output-dir "$BUNDLE/$model.cpu.outputs" >/dev/null
    local hparams="--hparam=batch_size=$batch --hparam=num_classes=10"
    hparams+=" --hparam=optimizer=momentum"
    # shellcheck disable=SC2086
    "$fastnnc" "$work/$model.onnx" $hparams --weights=external \
      -o "$work/$model.cpu.train.bin"
    fixed_batch_flags "$batch"
    "$work/$model.cpu.train.bin" "${FIXED_BATCH[@]}" \
      --init_from_onnx="$work/$model.onnx" >"$BUNDLE/$model.cpu.train.log"

    "$fastnnc" "$work/$model.onnx" --target=cuda --mode=infer \
      --batch-size="$batch" --weights=external -o "$BUNDLE/$model.infer.bin"
    # shellcheck disable=SC2086
    "$fastnnc" "$work/$model.onnx" --target=cuda $hparams \
      --weights=external -o "$BUNDLE/$model.train.bin"
  done

  # Loop sinking: the same run in loops of 100 iterations.
  "$fastnnc" "$work/lenet.onnx" --target=cuda --hparam=batch_size=64 \
    --hparam=num_classes=10 --hparam=optimizer=momentum \
    --hparam=iterations_per_loop=100 --weights=external \
    -o "$BUNDLE/lenet.sunk.train.bin"

  # Throughput: ResNet-50 as it is trained (224 x 224, 1000 classes).
  /usr/bin/python3 "$ROOT/tools/zoo/export.py" --model resnet_v1_50 \
    -o "$work/resnet_v1_50.full.export.onnx" >/dev/null
  "$onnx_python" "$ROOT/scripts/gpu_check/weights.py" describe \
    "$work/resnet_v1_50.full.export.onnx" \
    -o "$BUNDLE/resnet_v1_50.full.spec.json" \
    --graph "$BUNDLE/resnet_v1_50.full.graph.onnx"
  local precision
  for precision in fp32 bf16; do
    "$fastnnc" "$work/resnet_v1_50.full.export.onnx" --target=cuda \
      --hparam=batch_size=$THROUGHPUT_BATCH --hparam=num_classes=1000 \
      --hparam=optimizer=momentum --hparam=precision=$precision \
      --weights=external -o "$BUNDLE/resnet_v1_50.$precision.train.bin"
  done
  rm -rf "$work"
  rm -f "$BUNDLE"/*.weights

  local bytes
  bytes=$(du -sb "$BUNDLE" | cut -f1)
  ((bytes <= BUNDLE_LIMIT_BYTES)) ||
    fail "$BUNDLE holds $((bytes >> 20)) MiB, over the $((BUNDLE_LIMIT_BYTES >> 20)) MiB that may travel"
  echo "gpu-check: bundle ready: $BUNDLE, $((bytes >> 20)) MiB"
}

# --- on the GPU machine -----------------------------------------------------

report() { echo "$*" | tee -a "$RESULTS"; }

device() {
  [[ -d $BUNDLE ]] || fail "$BUNDLE: no bundle; run bash scripts/gpu-check.sh on the build machine and carry out/gpu-check"
  RESULTS=${OUT:-$BUNDLE}/results.md
  : >"$RESULTS"
  local site
  site=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))')
  export LD_LIBRARY_PATH=$site/nvidia/cudnn/lib:$site/nvidia/cu13/lib:$site/nvidia/nccl/lib:$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local work=/tmp/gpu-check
  rm -rf "$work" && mkdir -p "$work"
  local started=$SECONDS

  report "## CUDA backend on a GPU (scripts/gpu-check.sh, $(date -u +%F))"
  report ""
  report "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
  report "- Python $(python3 -c 'import sys; print(sys.version.split()[0])'), torch $(python3 -c 'import torch; print(torch.__version__)'), cuDNN $(python3 -c 'import torch; print(torch.backends.cudnn.version())')"
  report ""

  report "### Each CUDA kernel against the CPU kernel"
  "$BUNDLE/fastnn-cuda-kernel-tests" --gtest_brief=1 >"$work/kernels.log" 2>&1 || true
  report "$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$work/kernels.log" | sed 's/^/    /')"
  report ""

  report "### Parity with the CPU (same weights, same inputs)"
  report ""
  report "| model | weights match | infer.bin max rel. error (<= 1e-4) | train.bin $TRAIN_STEPS steps, max rel. loss difference (<= 1e-3) |"
  report "|---|---|---|---|"
  local spec
  for spec in $PARITY_MODELS; do
    IFS=: read -r model size batch <<<"$spec"
    local digest
    digest=$(python3 "$ROOT/scripts/gpu_check/weights.py" build \
      "$BUNDLE/$model.spec.json" "$BUNDLE/$model.graph.onnx" \
      -o "$work/$model.onnx")
    local weights="no ($digest)"
    [[ $digest == "$(cat "$BUNDLE/$model.sha256")" ]] && weights=yes
    "$BUNDLE/$model.infer.bin" --init-from-onnx "$work/$model.onnx" --seed 1 \
      --output-dir "$work/$model.gpu.outputs" >"$work/$model.infer.log" 2>&1 || true
    local infer
    infer=$(python3 "$ROOT/scripts/gpu_check/compare.py" outputs \
      "$BUNDLE/$model.cpu.outputs" "$work/$model.gpu.outputs" --tolerance 1e-4)
    fixed_batch_flags "$batch"
    "$BUNDLE/$model.train.bin" "${FIXED_BATCH[@]}" \
      --init_from_onnx="$work/$model.onnx" >"$work/$model.train.log" 2>&1 || true
    local train
    train=$(python3 "$ROOT/scripts/gpu_check/compare.py" losses \
      "$BUNDLE/$model.cpu.train.log" "$work/$model.train.log" --tolerance 1e-3)
    report "| $model | $weights | $infer | $train |"
  done
  report ""

  report "### Loop sinking: iterations_per_loop 100 against 1 (lenet, 200 steps)"
  local run
  for run in lenet lenet.sunk; do
    "$BUNDLE/$run.train.bin" --dataset_name=mock \
      --init_from_onnx="$work/lenet.onnx" --stop_at_step=200 \
      --log_loss_every_n_iters=100 --learning_rate=0.01 \
      --learning_rate_decay_type=fixed >"$work/$run.200.log" 2>&1 || true
  done
  report "    $(python3 "$ROOT/scripts/gpu_check/compare.py" losses \
    "$work/lenet.200.log" "$work/lenet.sunk.200.log" --tolerance 0)"
  report ""

  report "### compute-sanitizer (memcheck, lenet, 3 steps)"
  if command -v compute-sanitizer >/dev/null; then
    if compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$BUNDLE/lenet.train.bin" --dataset_name=mock \
      --init_from_onnx="$work/lenet.onnx" --stop_at_step=3 \
      >"$work/sanitizer.log" 2>&1; then
      report "    no errors"
    else
      report "    $(grep -m3 -E 'ERROR SUMMARY|Invalid|error' "$work/sanitizer.log" | tr '\n' ' ')"
    fi
  else
    report "    compute-sanitizer is not on this machine's PATH"
  fi
  report ""

  report "### ResNet-50 training throughput, batch $THROUGHPUT_BATCH, against PyTorch on the same GPU"
  report ""
  report "| precision | fastnn train.bin img/s | PyTorch (channels_last, autocast, torch.compile) img/s | ratio |"
  report "|---|---|---|---|"
  python3 "$ROOT/scripts/gpu_check/weights.py" build \
    "$BUNDLE/resnet_v1_50.full.spec.json" \
    "$BUNDLE/resnet_v1_50.full.graph.onnx" -o "$work/resnet_v1_50.full.onnx" >/dev/null
  local precision
  for precision in fp32 bf16; do
    "$BUNDLE/resnet_v1_50.$precision.train.bin" --dataset_name=mock \
      --init_from_onnx="$work/resnet_v1_50.full.onnx" --stop_at_step=60 \
      --log_loss_every_n_iters=20 >"$work/throughput.$precision.log" 2>&1 || true
    local ours theirs
    # The last logged interval's rate: warm-up and algorithm choice are
    # behind it.
    ours=$(grep -o 'images/s=[0-9.]*' "$work/throughput.$precision.log" | tail -1 | cut -d= -f2)
    theirs=$(timeout 300 python3 "$ROOT/scripts/gpu_check/torch_peer.py" \
      --precision $precision --batch-size $THROUGHPUT_BATCH 2>"$work/torch.$precision.log" |
      grep -o 'images_per_second=[0-9.]*' | cut -d= -f2)
    report "| $precision | ${ours:-failed} | ${theirs:-failed} | $(python3 -c "print(f'{float(\"${ours:-0}\") / float(\"${theirs:-1}\"):.2f}')" 2>/dev/null || echo -) |"
  done
  report ""
  report "The README's Fashion-MNIST epoch is not part of the check: its 47 MB of records do not fit beside the executables in what travels."
  report ""
  report "Whole check: $((SECONDS - started)) s."
  # $OUT returns at most 8 files: the logs travel back as one.
  if [[ -n ${OUT:-} ]]; then
    tar czf "$OUT/gpu-check-logs.tar.gz" -C "$work" .
  fi
}

# --- here -------------------------------------------------------------------

if [[ ${1:-} == --device ]]; then
  device
  exit 0
fi
prepare
if ! nvidia-smi -L >/dev/null 2>&1; then
  reason=$("$BUNDLE/fastnn-cuda-kernel-tests" --gtest_filter='*' 2>&1 | grep -m1 -o 'no CUDA device[^)]*' || echo "no CUDA device")
  echo "gpu-check: stopped before the device checks: this machine has no GPU ($reason)." >&2
  echo "gpu-check: on a GPU machine, from the repository root with $BUNDLE carried: bash scripts/gpu-check.sh --device" >&2
  exit 3
fi
device
