#!/usr/bin/env bash
# The README's test command: installs what fa needs on a fresh Debian 12
# machine, builds, runs every test through ctest, then installs the package
# as a user would (`pip install .[hf]` into a fresh virtualenv, with torch
# and transformers from PyPI) and runs the Python tests against that install.
# Usage: scripts/test.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_DIR=${1:-build}
scripts/build.sh "$BUILD_DIR"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"

# `pip install .` (scikit-build-core; its build folder build/wheel-* stays,
# so a second run rebuilds only what changed), outside the source tree.
VENV="$ROOT/$BUILD_DIR/venv"
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
"$VENV/bin/pip" install -q ".[hf]" pytest
cd "$VENV"
"$VENV/bin/python" -c "
import fa, os, sys
where = os.path.dirname(fa.__file__)
print('installed fa', fa.__version__, 'at', where, '; GPU:', fa.gpu_available())
sys.exit(where.startswith(os.path.join('$ROOT', 'python')))"
FA_CACHE_DIR="$VENV/kernel-cache" "$VENV/bin/python" -m pytest -q \
  -p no:cacheprovider "$ROOT/python/tests"
