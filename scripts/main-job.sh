#!/usr/bin/env bash
# The README's main job: build fa if needed, compile a variant, run it
# forward and backward (on the GPU when fa can use one, else on the CPU
# backend) and check every output against a float64 reference.
# Usage: scripts/main-job.sh [spec] [fa-run flags...]
#   (default: kernels_spec/gpt_oss.mlir --backward --target auto --check)
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC=${1:-kernels_spec/gpt_oss.mlir}
shift || true
scripts/build.sh build >/dev/null
if [ $# -eq 0 ]; then
  set -- --backward --target auto --check
fi
exec build/bin/fa-run "$SPEC" "$@"
