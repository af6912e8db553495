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
"$VENV/bin/pip" install -q --no-cache-dir --upgrade pip
# torch from PyPI brings its CUDA libraries: about 3.3 GB of wheels that
# install to 5.6 GB. One `pip install` holds every download (and its cache's
# copy) beside the growing install, twice that at its peak, which filled a CI
# machine's disk. So resolve once, then install the wheels one at a time with
# no cache: the peak is the install plus the largest wheel.
"$VENV/bin/pip" install -q --no-cache-dir --dry-run --ignore-installed \
  --report "$VENV/resolved.json" ".[hf]" pytest
"$VENV/bin/python" - "$VENV/resolved.json" >"$VENV/wheels.txt" <<'PY'
import json, sys
for item in json.load(open(sys.argv[1]))["install"]:
    url = item["download_info"]["url"]
    if not url.startswith("file:"):  # fa itself: the last step builds it
        print(url)
PY
while read -r wheel; do
  "$VENV/bin/pip" install -q --no-cache-dir --no-deps "$wheel"
done <"$VENV/wheels.txt"
"$VENV/bin/pip" install -q --no-cache-dir ".[hf]" pytest
cd "$VENV"
"$VENV/bin/python" -c "
import fa, os, sys
where = os.path.dirname(fa.__file__)
print('installed fa', fa.__version__, 'at', where, '; GPU:', fa.gpu_available())
sys.exit(where.startswith(os.path.join('$ROOT', 'python')))"
FA_CACHE_DIR="$VENV/kernel-cache" "$VENV/bin/python" -m pytest -q \
  -p no:cacheprovider "$ROOT/python/tests"
