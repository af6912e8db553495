#!/usr/bin/env bash
# Installs fa's build and test dependencies when they are missing: Debian's
# LLVM/MLIR 22 toolchain and Python test packages from PyPI.
set -euo pipefail

PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 libgtest-dev
          lld-22 cmake ninja-build pybind11-dev python3-dev python3-venv)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
  # The downloaded .deb files (about 1.6 GB with LLVM/MLIR) are not needed
  # once installed; the tests' virtualenv needs the disk.
  $SUDO apt-get clean
fi

python3 -c 'import numpy, pytest' 2>/dev/null ||
  python3 -m pip install -q --no-cache-dir numpy pytest
