#!/usr/bin/env bash
# The README's test command: installs what fa needs on a fresh Debian 12
# machine, builds, and runs every test through ctest.
# Usage: scripts/test.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
scripts/build.sh "$BUILD_DIR"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
