#!/usr/bin/env bash
# The main job: installs and builds fastnn, converts Debian's Fashion-MNIST to
# TFRecords, exports LeNet from the model zoo, compiles its training step
# with fastnnc, trains it for two epochs with train.bin
# (configs/fashion_mnist_lenet.txt) and evaluates it on the test split. A
# rerun resumes the saved run (nothing left to train) and evaluates again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
out="$root/out"
data="$out/fashion-mnist"
config="$root/configs/fashion_mnist_lenet.txt"
mkdir -p "$out"
if [ ! -f "$data/.complete" ]; then
  rm -rf "$data"
  "$root/build/tools/fastnn-data/fastnn-data" convert --format=idx \
    --input=/usr/share/datasets/fashion-mnist --output="$data" \
    --name=fashion-mnist --shards=4 --no-progress
  touch "$data/.complete"
fi
/usr/bin/python3 "$root/tools/zoo/export.py" --model lenet -o "$out/lenet.onnx"
"$root/build/bin/fastnnc" "$out/lenet.onnx" --batch-size=64 --emit=summary
"$root/build/bin/fastnnc" "$out/lenet.onnx" -o "$out/train.bin" --hparams "$config"
run="$out/fashion_mnist_lenet"
"$out/train.bin" --hparams "$config" --dataset_dir="$data" --train_dir="$run"
"$out/train.bin" --hparams "$config" --dataset_dir="$data" --train_dir="$run" \
  --eval | tee "$out/eval.txt"
top1=$(sed -n 's/^eval: .* top1=\([0-9.]*\) .*/\1/p' "$out/eval.txt")
echo "Fashion-MNIST test top-1 accuracy: $top1 (TensorBoard: tensorboard --logdir $run)"
