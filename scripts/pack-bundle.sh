#!/usr/bin/env bash
# Packs a release build of fa for the GPU machine (which has no LLVM/MLIR):
# fa's tools (fa-run, fa-opt, fa-compile) and runtime library (the Python module is built there against
# it), and the shared libraries they load that the GPU machine lacks
# (Debian's libLLVM and libMLIR, and libz3 that libLLVM needs), stripped and xz-compressed into
# bundle/fa-bundle.tar.xz (git-ignored; carry it with the device tool).
# Usage: scripts/pack-bundle.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
scripts/build.sh "$BUILD_DIR" >/dev/null

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/lib" bundle
for tool in fa-run fa-opt fa-compile; do
  strip -o "$STAGE/bin/$tool" "$BUILD_DIR/bin/$tool"
done
# Everything fa-run links that is not part of the base system.
for lib in libFARuntime.so.22.1 libMLIR.so.22.1 libLLVM.so.22.1 libz3.so.4; do
  path=$(ldd "$BUILD_DIR/bin/fa-run" | awk -v l="$lib" '$1 == l {print $3}')
  [ -n "$path" ] || { echo "pack-bundle: fa-run does not load $lib" >&2; exit 1; }
  strip -o "$STAGE/lib/$lib" "$(readlink -f "$path")"
done
tar -cf - -C "$STAGE" bin lib | xz -T0 -6 > bundle/fa-bundle.tar.xz
size=$(stat -c %s bundle/fa-bundle.tar.xz)
echo "bundle/fa-bundle.tar.xz: $((size / 1048576)) MiB"
if [ "$size" -ge $((60 * 1048576)) ]; then
  echo "pack-bundle: the bundle is over 60 MiB" >&2
  exit 1
fi
