#!/usr/bin/env bash
# Installs missing dependencies, then configures and builds fa (Release,
# clang-22 + lld, Ninja). Usage: scripts/build.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
scripts/install-deps.sh
cmake -G Ninja -S . -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DLLVM_USE_LINKER=lld >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
