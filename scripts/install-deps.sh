#!/usr/bin/env bash
# Installs everything fastnn needs on Debian 12, as root; safe to run again.
# Debian packages come from scripts/apt-packages.txt; Python test oracles from
# scripts/requirements.txt go into the project virtual environment .venv, which sees
# Debian's torch/onnx/numpy through --system-site-packages; the pinned PyPI onnx
# of scripts/requirements-onnx.txt goes into .venv-onnx, a venv of its own.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

mapfile -t packages < <(grep -v '^\s*#' "$root/scripts/apt-packages.txt" | grep -v '^\s*$')
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# libopenblas0-pthread is only the benchmarks' fast BLAS for PyTorch (loaded
# through LD_LIBRARY_PATH); keep the system's default BLAS/LAPACK the
# reference ones its installation would otherwise replace.
for pair in libblas.so.3:blas liblapack.so.3:lapack; do
  lib=${pair%%:*}
  ref=/usr/lib/x86_64-linux-gnu/${pair##*:}/$lib
  if [ -e "$ref" ]; then
    update-alternatives --set "$lib-x86_64-linux-gnu" "$ref" >/dev/null
  fi
done

# install_venv DIR REQUIREMENTS [VENV-OPTIONS]: the virtual environment DIR
# holding REQUIREMENTS' pins, reinstalled when that file changes.
install_venv() {
  local dir=$1 requirements=$2
  shift 2
  [ -s "$requirements" ] || return 0
  if [ ! -x "$dir/bin/python" ]; then
    /usr/bin/python3 -m venv "$@" "$dir"
  fi
  local stamp="$dir/.requirements.sha" want
  want=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "install-deps: installing $(basename "$requirements") into $(basename "$dir")"
    "$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
    echo "$want" >"$stamp"
  fi
}
install_venv "$root/.venv" "$root/scripts/requirements.txt" --system-site-packages
# The pinned PyPI onnx (the test oracle of the ONNX importer) in a venv of its
# own: its pins conflict with tensorflow-cpu's (see requirements-onnx.txt).
install_venv "$root/.venv-onnx" "$root/scripts/requirements-onnx.txt"
