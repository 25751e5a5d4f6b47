#!/usr/bin/env bash
# The main job: installs and builds fastnn, exports a zoo model (lenet for
# Fashion-MNIST), compiles it with fastnnc and prints a summary of its IR.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${FASTNN_MODEL:-lenet}
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
out="$root/out"
mkdir -p "$out"
/usr/bin/python3 "$root/tools/zoo/export.py" --model "$model" -o "$out/$model.onnx"
"$root/build/bin/fastnnc" "$out/$model.onnx" --batch-size=64 --emit=mlir -o "$out/$model.mlir"
"$root/build/bin/fastnnc" "$out/$model.onnx" --batch-size=64 --emit=summary
echo "fastnn IR written to out/$model.mlir (inspect or transform it with build/bin/fastnnc-opt)"
