#!/usr/bin/env bash
# Runs on the GPU machine (see README, "On the GPU"): unpacks the bundle
# made by scripts/pack-bundle.sh, runs the GPU conformance suite and the
# benchmark, and writes logs and CSV into the output folder.
# Usage: scripts/gpu-run.sh [out-dir]   (default: $OUT, else ./gpu-out)
# FA_GPU_STAGES picks stages (default: "specs sass export pytest bench
# conformance"), so that each call fits the device's 10-minute limit.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=${1:-${OUT:-gpu-out}}
mkdir -p "$OUT_DIR"
FA=/tmp/fa-bundle
rm -rf "$FA" && mkdir -p "$FA"
tar -xJf bundle/fa-bundle.tar.xz -C "$FA" || exit 1
export LD_LIBRARY_PATH="$FA/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
status=0
STAGES=" ${FA_GPU_STAGES:-specs sass export pytest bench conformance} "
stage() { [[ "$STAGES" == *" $1 "* ]]; }

nvidia-smi > "$OUT_DIR/nvidia-smi.txt" 2>&1

# Every spec, forward and backward, on the GPU against the float64
# reference (outputs poisoned with NaN before each run).
stage specs && {
  for spec in kernels_spec/*.mlir; do
    for dtype in bf16 f32; do
      timeout 300 "$FA/bin/fa-run" "$spec" --target gpu --check --backward \
        --dtype "$dtype" 2>&1 || status=1
    done
  done
  # Every tensor-core config the autotuner may pick, checked explicitly.
  for config in "--mma-warps 8" "--mma-block-n 128" "--mma-block-n 128 --mma-warps 8"; do
    for case in "causal 1,8,8,197,197,64;2,8,2,300,700,128;1,8,8,1500,1500,64" \
                "gpt_oss 1,64,8,197,197,64;1,64,8,700,300,64"; do
      FA_AUTOTUNE=0 timeout 300 "$FA/bin/fa-run" kernels_spec/${case% *}.mlir \
        --target gpu --check --backward --dtype bf16 $config \
        --shape "${case#* }" 2>&1 || status=1
    done
  done
} > "$OUT_DIR/specs.log" 2>&1

# SASS of the tensor-core kernels: fa-compile's PTX through ptxas, then
# cuobjdump; each kernel's registers, spills and HMMA count.
stage sass && {
  "$FA/bin/fa-compile" kernels_spec/causal.mlir --arch sm_90 --dtype bf16 \
    -o "$OUT_DIR/causal-bf16.ptx" || status=1
  for kernel in $(grep -o '^// fa-compile: .*_mma_.*' "$OUT_DIR/causal-bf16.ptx" | cut -d' ' -f3); do
    awk -v k="// fa-compile: $kernel" '$0 == k {f = 1; next} /^\/\/ fa-compile:/ {f = 0} f' \
      "$OUT_DIR/causal-bf16.ptx" > "/tmp/$kernel.ptx"
    ptxas -arch=sm_90 -v "/tmp/$kernel.ptx" -o "/tmp/$kernel.cubin" 2>&1 | grep -E 'registers|spill'
    echo "$kernel: $(cuobjdump -sass "/tmp/$kernel.cubin" | grep -c HMMA) HMMA"
  done
} > "$OUT_DIR/sass.log" 2>&1

# An fa-compile export (PTX, cubins, host object, C header and runtime)
# built into a C program with this machine's C compiler and run: it checks
# the causal f16 forward against float64 itself.
if stage export; then {
  rm -rf /tmp/fa-export && mkdir -p /tmp/fa-export
  "$FA/bin/fa-compile" kernels_spec/causal.mlir --arch sm_90 --dtype f16 \
    -o /tmp/fa-export/causal &&
  ls /tmp/fa-export/causal &&
  cc -std=c99 -O2 -I/tmp/fa-export/causal test/fa-compile/Inputs/export_main.c \
    /tmp/fa-export/causal/fa_export_runtime.c /tmp/fa-export/causal/causal.o \
    -ldl -lm -o /tmp/fa-export/main &&
  /tmp/fa-export/main
} > "$OUT_DIR/export.log" 2>&1 || status=1; fi

# The Python package, built against this machine's Python and pybind11,
# tested with torch (CPU and CUDA tensors) against PyTorch in float64.
stage pytest && {
PY_DIR=/tmp/fa-python
rm -rf "$PY_DIR" && mkdir -p "$PY_DIR/fa" && cp python/fa/*.py "$PY_DIR/fa/"
suffix=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
if g++ -O2 -shared -fPIC -std=c++17 python/src/FaModule.cpp -Iinclude \
     -I"$(python3 -c 'import pybind11; print(pybind11.get_include())')" \
     -I"$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")" \
     "$FA/lib/libFARuntime.so.22.1" -Wl,-rpath,"$FA/lib" \
     -o "$PY_DIR/fa/_fa$suffix" > "$OUT_DIR/pytest.log" 2>&1; then
  # The default config: each new shape class would otherwise compile and
  # time every candidate (the autotuning test turns it on for itself).
  PYTHONPATH="$PY_DIR" FA_CACHE_DIR=/tmp/fa-pycache FA_AUTOTUNE=0 timeout 420 \
    python3 -m pytest -q -p no:cacheprovider ${FA_PYTEST_ARGS:-python/tests} >> "$OUT_DIR/pytest.log" 2>&1 || status=1
  for example in examples/*.py; do
    PYTHONPATH="$PY_DIR" FA_AUTOTUNE=0 timeout 120 python3 "$example" --device cuda \
      >> "$OUT_DIR/pytest.log" 2>&1 || status=1
  done
else
  status=1
fi
tail -n 3 "$OUT_DIR/pytest.log"
}

if stage bench; then
  timeout "${FA_BENCH_TIMEOUT:-540}" python3 bench/bench_gpu.py --fa-run "$FA/bin/fa-run" \
    --csv "$OUT_DIR/bench.csv" ${FA_BENCH_ARGS:-} > "$OUT_DIR/bench.log" 2>&1 || status=1
fi
if stage conformance; then
  timeout "${FA_CONFORMANCE_TIMEOUT:-420}" python3 test/conformance/run.py "$FA/bin/fa-run" kernels_spec /tmp/fa-conf \
    --target gpu > "$OUT_DIR/conformance.log" 2>&1 || status=1
  tail -n 8 "$OUT_DIR/conformance.log"
fi
grep -h "FAIL\|error" "$OUT_DIR"/*.log | head -20
exit $status
