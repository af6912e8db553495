#!/usr/bin/env bash
# The README's main job: build fa if needed, then compile a variant.
# Usage: scripts/main-job.sh [spec]   (default: kernels_spec/gpt_oss.mlir)
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC=${1:-kernels_spec/gpt_oss.mlir}
scripts/build.sh build >/dev/null
build/bin/fa-opt "$SPEC" --fa-specialize-element-type=element-type=f32
