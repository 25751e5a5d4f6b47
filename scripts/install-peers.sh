#!/usr/bin/env bash
# Installs the benchmarks' peers (bench/*/run.sh) into virtual environments
# of their own, pinned by scripts/requirements-peers-*.txt; safe to run
# again (a venv whose requirements file is unchanged is left alone, in about
# a second). Not part of scripts/install-deps.sh or CI: the PyTorch venv
# alone is 5.6 GB (~80 s here), ORT Training's 6.3 GB; the only tests that
# use them are the exporter matrix's (ctest -C Long -L onnx-exporters), which
# skip with one line without .venv-torch2.
#   .venv-torch2        PyTorch 2.15 (eager, torch.compile, bf16 autocast),
#                       ONNX Runtime 1.32 (inference), torchvision, timm
#   .venv-ort-training  ONNX Runtime Training 1.19.2 (onnx 1.16, numpy<2)
# torch.compile (inductor) also needs g++ (Debian's g++, not in apt-packages.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# install_venv DIR REQUIREMENTS: the virtual environment DIR holding exactly
# REQUIREMENTS' pins, reinstalled when that file changes (the stamp is its
# hash). As in scripts/install-deps.sh.
install_venv() {
  local dir=$1 requirements=$2
  if [ ! -x "$dir/bin/python" ]; then
    /usr/bin/python3 -m venv "$dir"
  fi
  local stamp="$dir/.requirements.sha" want
  want=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "install-peers: installing $(basename "$requirements") into $(basename "$dir")"
    "$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
    echo "$want" >"$stamp"
  fi
}
install_venv "$root/.venv-torch2" "$root/scripts/requirements-peers-torch.txt"
install_venv "$root/.venv-ort-training" "$root/scripts/requirements-peers-ort-training.txt"
