#!/usr/bin/env bash
# Installs everything fastnn needs on Debian 12, as root; safe to run again.
# Debian packages come from scripts/apt-packages.txt; Python test oracles from
# scripts/requirements.txt go into the project virtual environment .venv, which sees
# Debian's torch/onnx/numpy through --system-site-packages.
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

if [ -s "$root/scripts/requirements.txt" ]; then
  if [ ! -x "$root/.venv/bin/python" ]; then
    /usr/bin/python3 -m venv --system-site-packages "$root/.venv"
  fi
  stamp="$root/.venv/.requirements.sha"
  want=$(sha256sum "$root/scripts/requirements.txt" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "install-deps: installing Python test oracles into .venv"
    "$root/.venv/bin/python" -m pip install -q --disable-pip-version-check \
      -r "$root/scripts/requirements.txt"
    echo "$want" >"$stamp"
  fi
fi
