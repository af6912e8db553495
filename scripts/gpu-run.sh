#!/usr/bin/env bash
# Runs on the GPU machine (see README, "On the GPU"): unpacks the bundle
# made by scripts/pack-bundle.sh, runs the GPU conformance suite and the
# benchmarks, and writes logs, CSVs (and PNGs where matplotlib is) into the
# output folder.
# Usage: scripts/gpu-run.sh [out-dir]   (default: $OUT, else ./gpu-out)
# FA_GPU_STAGES picks stages, so that each call fits the device's 10-minute
# limit (one stage a call for the benchmarks; bench/README.md). Default:
# "specs configs sass export pytest homework variants-d64 variants-d128
# flex-d64 flex-d128 compile conformance". Stages:
#   specs, configs, sass, export, pytest, conformance   correctness (logs)
#   sanitize        compute-sanitizer's four tools on every spec and the
#                   tuner's configs (sanitize-<tool>.log, sanitize.log)
#   large           python/tests/test_large.py: past 2^31 elements, B * H
#                   past 65535 (large.log; 60 GB of GPU memory)
#   hopper          the wgmma forwards: checks and SASS (hopper-checks.log,
#                   hopper-sass.log; not in the default list)
#   hopper-speed    their TFLOP/s against mma.sync's (hopper-speed.log)
#   mma-sync-dims   the mma.sync kernels at D 32-256: checks, sanitizers,
#                   TFLOP/s (mma-sync-checks.log, -memcheck, -racecheck,
#                   -speed.log)
#   hopper-schedules  serial against pipelined consumers per head dim
#                   (hopper-schedules.log)
#   speeds          fa-run forward TFLOP/s of the FA_SPEEDS cases
#                   ("generation|spec|shape|flags;...": speeds.log)
#   checks          check_jobs over the FA_CHECKS cases ("spec|shapes|flags",
#                   one per line: checks.log)
#   hopper-ncu      ncu's full set on the wgmma forward (mha D 128 4k) per
#                   schedule in FA_NCU_SCHEDULES: details and per-SASS
#                   stall samples (ncu-<schedule>.log, -sass.csv)
#   host-overhead   bench/host_overhead.py (FA_HOST_ARGS): host time per
#                   call, single-call against queued timing
#   homework        bench/bench_homework.py: softmax_matmul_benchmark.csv,
#                   attention_benchmark.csv (FA_HOMEWORK_ARGS)
#   variants-d64, variants-d128   bench/bench_gpu.py without FlexAttention,
#                   one head dim each: variants-d<D>.csv (FA_VARIANTS_ARGS)
#   flex-d64, flex-d128   its FlexAttention rows: flex-d<D>.csv, S in
#                   FA_FLEX_SEQS (default 1024,4096,16384: each shape
#                   compiles anew) (FA_VARIANTS_ARGS)
#   hf              bench/bench_hf.py: a Hugging Face model's training step
#                   under eager, sdpa and fa: hf.csv (FA_HF_ARGS)
#   compile         bench/bench_compile.py: compile.csv (FA_COMPILE_ARGS)
#   tuning-table    bench/make_tuning_table.py: TunedConfigs.inc, the table
#                   of tuned configs to check in as lib/Runtime/ (not in the
#                   default list; FA_TUNING_ARGS, e.g. "--cases
#                   gpt-oss-window-128:64 --update
#                   lib/Runtime/TunedConfigs.inc" to make one class's rows
#                   again)
#   bench           bench/bench_gpu.py with FA_BENCH_ARGS: bench.csv (not in
#                   the default list; the stages above cover its grid)
#   decode          bench/bench_decode.py with FA_DECODE_ARGS: decode.csv
#                   (not in the default list)
#   varlen          bench/bench_varlen.py: varlen.csv (not in the default
#                   list)
# Each benchmark stage stops starting rows after FA_BENCH_TIME_LIMIT seconds
# (default 450) and is killed at FA_BENCH_TIMEOUT (default 520).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=${1:-${OUT:-gpu-out}}
mkdir -p "$OUT_DIR"
FA=/tmp/fa-bundle
rm -rf "$FA" && mkdir -p "$FA"
tar -xJf bundle/fa-bundle.tar.xz -C "$FA" || exit 1
# FA_BUNDLE_OVERLAY: a .tar.xz of bin/ and lib/ files unpacked over the
# bundle, e.g. a second build's fa-run and libFARuntime for an A/B.
if [ -n "${FA_BUNDLE_OVERLAY:-}" ]; then
  tar -xJf "$FA_BUNDLE_OVERLAY" -C "$FA" || exit 1
fi
export LD_LIBRARY_PATH="$FA/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
status=0
STAGES=" ${FA_GPU_STAGES:-specs configs sass export pytest homework variants-d64 variants-d128 flex-d64 flex-d128 compile conformance} "
stage() { [[ "$STAGES" == *" $1 "* ]]; }

nvidia-smi > "$OUT_DIR/nvidia-smi.txt" 2>&1

# Checks with fa-run --target gpu --check --backward (fresh random inputs,
# outputs poisoned with NaN before each run, float64 reference), one per
# stdin line "spec|shapes|flags" (shapes may be empty: the spec's own),
# each under FA_CHECK_PREFIX (a command, e.g. compute-sanitizer) if set,
# FA_CHECK_JOBS at once: only their answers count, not their times. All
# logs go to $1; fails when any check did.
check_jobs() {
  local dir=/tmp/fa-checks n=0
  rm -rf "$dir" && mkdir -p "$dir"
  while IFS= read -r line; do
    n=$((n + 1))
    printf '%s\n' "$line" > "$dir/$(printf %03d $n).job"
  done
  ls "$dir"/*.job | FA="$FA" FA_CHECK_PREFIX="${FA_CHECK_PREFIX:-}" xargs -P "${FA_CHECK_JOBS:-6}" -I{} bash -c '
    IFS="|" read -r spec shapes flags < "{}"
    { echo "== $spec ${shapes:+--shape $shapes }$flags"
      FA_AUTOTUNE=0 timeout 300 $FA_CHECK_PREFIX "$FA/bin/fa-run" "$spec" \
        --target gpu --check --backward $flags ${shapes:+--shape "$shapes"} \
        2>&1 || echo "FAILED: $spec $flags"
    } > "{}.log"'
  cat "$dir"/*.log > "$1"
  ! grep -q '^FAILED' "$1"
}

# Every spec, forward and backward: bf16, f32 (three tf32 MMAs per product,
# f32 tolerance) and f32 with one (--allow-tf32).
if stage specs; then
  for spec in kernels_spec/*.mlir; do
    for dtype in "bf16" "f32" "f32 --allow-tf32"; do
      echo "$spec||--dtype $dtype"
    done
  done | check_jobs "$OUT_DIR/specs.log" || status=1
fi

# Every tensor-core config the autotuner may pick (tuningCandidates: block-n,
# forward warps, K/V stages, the shared memory their full tiles need), forced,
# on odd shapes at both head dims; plus f16 and f32 in dynamic shared memory.
# One set of flags serves both head dims: the comment after each names the
# tuner's configs (block-n, warps, stages, KiB) it is exactly.
if stage configs; then
  {
    for config in "--mma-warps 8" `#64,8,1,48` \
                  "--mma-kv-stages 2" `#D64: 64,4,2,48` \
                  "--mma-kv-stages 2 --mma-warps 8" `#D64: 64,8,2,48` \
                  "--mma-block-n 128" `#D64: 128,4,1,48` \
                  "--mma-block-n 128 --mma-warps 8" `#D64: 128,8,1,48` \
                  "--mma-kv-stages 2 --mma-shared-bytes 65536" `#D128: 64,4,2,64` \
                  "--mma-kv-stages 2 --mma-warps 8 --mma-shared-bytes 65536" `#D128: 64,8,2,64` \
                  "--mma-shared-bytes 65536" `#D128 backward: 64,4,1,64` \
                  "--mma-block-n 128 --mma-shared-bytes 65536" `#D128: 128,4,1,64` \
                  "--mma-block-n 128 --mma-warps 8 --mma-shared-bytes 65536" `#D128: 128,8,1,64` \
                  "--mma-block-n 128 --mma-kv-stages 2 --mma-shared-bytes 65536" `#D64: 128,4,2,64` \
                  "--mma-block-n 128 --mma-kv-stages 2 --mma-warps 8 --mma-shared-bytes 65536" `#D64: 128,8,2,64` \
                  "--mma-block-n 128 --mma-kv-stages 2 --mma-shared-bytes 131072" `#D128: 128,4,2,128` \
                  "--mma-block-n 128 --mma-kv-stages 2 --mma-warps 8 --mma-shared-bytes 131072" `#D128: 128,8,2,128`; do
    for case in "causal|1,8,8,197,197,64;2,8,2,300,700,128;1,8,8,1500,1500,64" \
                  "gpt_oss|1,64,8,197,197,64;1,64,8,700,300,64" \
                  "mha|2,4,4,1000,777,128"; do
        echo "kernels_spec/${case%%|*}.mlir|${case#*|}|--dtype bf16 $config"
      done
    done
    for config in "--dtype f16 --mma-block-n 128 --mma-kv-stages 2 --mma-warps 8 --mma-shared-bytes 131072" \
                  "--dtype f32 --mma-shared-bytes 98304"; do
      echo "kernels_spec/causal.mlir|2,8,2,300,700,128;1,8,8,197,197,64|$config"
    done
  } | check_jobs "$OUT_DIR/configs.log" || status=1
fi

# SASS of the causal spec's bf16 kernels for arch $1 whose names contain
# $2: fa-compile's PTX (kept as $4) through ptxas, then cuobjdump; each
# kernel's registers, spills and count of the instruction $3.
sass_report() {
  "$FA/bin/fa-compile" kernels_spec/causal.mlir --arch "$1" --dtype bf16 \
    -o "$4" || return 1
  for kernel in $(grep -o "^// fa-compile: .*$2.*" "$4" | cut -d' ' -f3); do
    awk -v k="// fa-compile: $kernel" '$0 == k {f = 1; next} /^\/\/ fa-compile:/ {f = 0} f' \
      "$4" > "/tmp/$kernel.ptx"
    ptxas -arch="$1" -v "/tmp/$kernel.ptx" -o "/tmp/$kernel.cubin" 2>&1 | grep -E 'registers|spill'
    echo "$kernel: $(cuobjdump -sass "/tmp/$kernel.cubin" | grep -c "$3") $3"
  done
}

# compute-sanitizer's memcheck, racecheck, synccheck and initcheck on every
# spec, forward and backward, at odd shapes: the default kernels (wgmma
# forwards on Hopper), mma.sync's forwards, and the other configs the tuner
# may pick (wgmma consumer groups and grid order; mma.sync's block-n, warps
# and stages), and the split-KV forward at decode shapes (key_lengths too).
# Any report, or a wrong answer, fails the stage. The kernel cache is
# shared, so each kernel compiles once, under the first tool.
if stage sanitize; then
  export FA_CACHE_DIR=/tmp/fa-sanitize-cache
  rm -rf "$FA_CACHE_DIR"
  sanitize_cases() {
    for case in "causal|1,8,2,197,197,64;1,4,4,300,300,128" \
                "gqa_causal|1,32,8,129,257,128" \
                "gpt_oss|1,64,8,197,197,64" \
                "mha|1,4,4,333,177,128" \
                "swa|1,8,2,1000,1000,64" \
                "streaming|1,8,8,1000,1000,128" \
                "vit|2,12,12,197,197,64"; do
      echo "kernels_spec/${case%%|*}.mlir|${case#*|}|--dtype bf16"
    done
    echo "kernels_spec/softmax_matmul.mlir||--dtype bf16"
    for flags in "--dtype bf16 --mma-generation mma-sync" \
                 "--dtype bf16 --mma-generation mma-sync --mma-block-n 128 --mma-kv-stages 2 --mma-warps 8 --mma-shared-bytes 65536" \
                 "--dtype bf16 --wgmma-groups 2 --grid-section 1" "--dtype f16" \
                 "--dtype bf16 --dq-atomics=false"; do
      echo "kernels_spec/causal.mlir|1,8,2,197,197,64;1,4,4,300,300,128|$flags"
      echo "kernels_spec/gpt_oss.mlir|1,64,8,197,197,64|$flags"
    done
    for d in 80 96 192 256; do
      echo "kernels_spec/causal.mlir|1,4,2,197,197,$d|--dtype bf16"
    done
    # Decode shapes: the split-KV forward and its merge (a GQA group packed
    # in a block; learnable sinks joining in the merge; sink tokens).
    echo "kernels_spec/causal.mlir|1,28,4,1,3000,128;1,12,4,30,2000,64|--dtype bf16"
    echo "kernels_spec/gpt_oss.mlir|1,64,8,2,2000,64|--dtype bf16"
    echo "kernels_spec/streaming.mlir|1,8,8,3,2100,128|--dtype bf16"
    echo "kernels_spec/gpt_oss_decode.mlir|3,64,8,1,3000,64;40,64,8,2,300,64|--dtype bf16"
    # Packed sequences: blocks that find their sequence, spare blocks.
    echo "kernels_spec/gpt_oss_packed.mlir|3,64,8,197,300,64|--dtype bf16"
  }
  : > "$OUT_DIR/sanitize.log"
  for tool in ${FA_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
    log="$OUT_DIR/sanitize-$tool.log"
    sanitize_cases | FA_CHECK_PREFIX="compute-sanitizer --tool $tool --error-exitcode 9" \
      check_jobs "$log" || status=1
    echo "$tool: $(grep -c '^== ' "$log") runs," \
      "$(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$log") clean," \
      "$(grep -c '^FAILED' "$log") failed" | tee -a "$OUT_DIR/sanitize.log"
  done
  unset FA_CACHE_DIR
fi

# The Hopper (wgmma) forwards: every attention spec at bf16 and f16, on odd
# shapes at each head dim the wgmma forward covers (the backward, on wgmma
# at the same head dims, checked alongside); then their registers, spills
# and HGMMA count; then forward TFLOP/s of wgmma against mma.sync's default config
# on the same shapes (FA_AUTOTUNE=0).
if stage hopper; then
  {
    for dtype in bf16 f16; do
      for case in "causal|1,8,8,197,197,64;2,8,2,300,700,128;1,4,4,1000,1000,128" \
                  "gqa_causal|1,32,8,333,333,128;1,32,8,129,257,64" \
                  "gpt_oss|1,64,8,197,197,64;1,64,8,700,300,64" \
                  "mha|2,4,4,1000,777,128;1,8,8,63,1025,64" \
                  "swa|1,8,2,5000,5000,64" \
                  "streaming|1,8,8,2100,2100,128" \
                  "vit|2,12,12,197,197,64"; do
        echo "kernels_spec/${case%%|*}.mlir|${case#*|}|--dtype $dtype"
      done
    done
    # The backward with dQ's own kernel (the default adds dQ by atomics from
    # the dK/dV kernel).
    for case in "causal|1,8,8,197,197,64;2,8,2,300,700,128" \
                "gqa_causal|1,32,8,333,333,128;1,32,8,129,257,64" \
                "gpt_oss|1,64,8,700,300,64"; do
      echo "kernels_spec/${case%%|*}.mlir|${case#*|}|--dtype bf16 --dq-atomics=false"
    done
    # Grids of more query blocks than the GPU has SMs: the persistent
    # forward's blocks take several items each.
    for case in "causal|2,16,4,1000,1000,128;2,32,8,1000,1000,64" \
                "gpt_oss|1,64,8,1000,1000,64" "swa|1,32,8,3000,3000,64" \
                "causal|2,16,4,1000,1000,256"; do
      echo "kernels_spec/${case%%|*}.mlir|${case#*|}|--dtype bf16"
    done
    for d in 32 80 96 192 256; do
      echo "kernels_spec/causal.mlir|1,8,8,197,197,$d;2,8,2,300,700,$d|--dtype bf16"
      echo "kernels_spec/mha.mlir|1,4,4,1000,777,$d|--dtype f16"
      echo "kernels_spec/streaming.mlir|1,4,2,1500,1500,$d|--dtype bf16"
    done
  } | check_jobs "$OUT_DIR/hopper-checks.log" || status=1
  sass_report sm_90a _wgmma_ HGMMA "$OUT_DIR/causal-sm90a.ptx" \
    > "$OUT_DIR/hopper-sass.log" 2>&1
fi
# One forward's TFLOP/s line: generation, spec, shape, more fa-run flags.
speed() {
  echo "== $1 $2 $3 ${4:-}"
  FA_AUTOTUNE=0 timeout 120 "$FA/bin/fa-run" "kernels_spec/$2.mlir" \
    --target gpu --dtype bf16 --repeat 30 --mma-generation $1 ${4:-} \
    --shape "$3" 2>&1 | grep -iE 'tflop|error'
}
if stage hopper-speed; then
  # Forward TFLOP/s at B*S = 16k tokens: wgmma (its defaults, and the
  # block-n 64 tiles) against mma.sync's default config (FA_AUTOTUNE=0).
  {
    for gen in wgmma mma-sync; do
      speed $gen causal 2,16,16,8192,8192,128
      speed $gen gqa_causal 2,32,8,8192,8192,128
      speed $gen mha 4,32,32,4096,4096,64
      speed $gen swa 2,32,8,8192,8192,128
      speed $gen gpt_oss 2,64,8,8192,8192,64
    done
    speed wgmma causal 2,16,16,8192,8192,128 "--mma-block-n 64"
    speed wgmma mha 4,32,32,4096,4096,64 "--mma-block-n 64"
    for d in 32 80 96 192 256; do
      speed wgmma causal 2,16,16,8192,8192,$d
      speed wgmma mha 4,16,16,4096,4096,$d
    done
  } > "$OUT_DIR/hopper-speed.log" 2>&1
fi
if stage mma-sync-dims; then
  # The mma.sync kernels (sm_80/sm_89's path; f32's on Hopper) at every head
  # dim: checks of each spec forward and backward (D 192 and 256 backward
  # on the scalar loops), the tuner's other tiles, f16 and f32, compute-
  # sanitizer at one odd shape per head dim, and TFLOP/s beside D 128.
  {
    for d in 32 80 96 192 256; do
      for spec in causal mha swa streaming; do
        echo "kernels_spec/$spec.mlir|1,8,2,197,197,$d;2,4,4,300,129,$d|--dtype bf16 --mma-generation mma-sync"
      done
      echo "kernels_spec/gqa_causal.mlir|1,32,8,197,197,$d;2,32,8,300,129,$d|--dtype bf16 --mma-generation mma-sync"
      echo "kernels_spec/causal.mlir|1,8,2,1000,1000,$d|--dtype f16 --mma-generation mma-sync --mma-block-n 128 --mma-kv-stages 2 --mma-warps 8 --mma-shared-bytes 98304"
      echo "kernels_spec/mha.mlir|1,4,4,333,177,$d|--dtype f32"
    done
    echo "kernels_spec/gpt_oss.mlir|1,64,8,197,300,64|--dtype bf16 --mma-generation mma-sync"
  } | FA_CHECK_JOBS=8 check_jobs "$OUT_DIR/mma-sync-checks.log" || status=1
  {
    for d in 32 80 96; do
      echo "kernels_spec/causal.mlir|1,4,2,197,197,$d|--dtype bf16 --mma-generation mma-sync"
    done
    # The backward runs the scalar loops past D 128: a smaller shape.
    for d in 192 256; do
      echo "kernels_spec/causal.mlir|1,2,1,97,97,$d|--dtype bf16 --mma-generation mma-sync"
    done
  } > /tmp/fa-mma-sanitize.jobs
  for tool in memcheck racecheck; do
    FA_CHECK_PREFIX="compute-sanitizer --tool $tool --error-exitcode 1" \
      FA_CHECK_JOBS=5 check_jobs "$OUT_DIR/mma-sync-$tool.log" \
      < /tmp/fa-mma-sanitize.jobs || status=1
  done
  for d in 32 64 80 96 128 192 256; do
    speed mma-sync causal 2,16,16,8192,8192,$d
    speed mma-sync mha 4,16,16,4096,4096,$d
  done > "$OUT_DIR/mma-sync-speed.log" 2>&1
  for d in 64 80 128 256; do
    FA_AUTOTUNE=0 timeout 120 "$FA/bin/fa-run" kernels_spec/mha.mlir \
      --target gpu --dtype f32 --repeat 10 --shape 2,16,16,2048,2048,$d 2>&1 |
      grep -iE 'tflop|error' | sed "s/^/f32 mha 2x16x2k D $d: /"
  done >> "$OUT_DIR/mma-sync-speed.log" 2>&1
  { sass_report sm_80 _mma_ HMMA "$OUT_DIR/causal-sm80.ptx" || status=1
  } > "$OUT_DIR/mma-sync-sass.log" 2>&1
fi
if stage hopper-schedules; then
  # The wgmma forward's two consumer schedules, serial and pipelined
  # (ping-pong), at every head dim (ncu of both: the hopper-ncu stage).
  for d in 32 64 80 96 128 192 256; do
    for schedule in serial pipelined; do
      speed wgmma causal 2,16,16,8192,8192,$d "--wgmma-schedule $schedule"
    done
  done > "$OUT_DIR/hopper-schedules.log" 2>&1
fi

if stage speeds; then
  # FA_SPEEDS: "generation|spec|shape|fa-run flags" cases, ';' apart.
  IFS=';' read -ra cases <<< "${FA_SPEEDS:-wgmma|causal|2,16,16,8192,8192,128|}"
  for c in "${cases[@]}"; do
    IFS='|' read -r gen spec shape flags <<< "$c"
    speed "$gen" "$spec" "$shape" "$flags"
  done > "$OUT_DIR/speeds.log" 2>&1
fi

if stage checks; then
  printf '%s\n' "${FA_CHECKS:-}" | grep -v '^$' |
    check_jobs "$OUT_DIR/checks.log" || status=1
fi

if stage hopper-ncu; then
  # One wgmma forward under ncu's full set: the details page, and the SASS
  # with each instruction's issue and stall samples (source page, CSV). The
  # name is anchored: a persistent grid's one-block counter-zeroing kernel,
  # <forward>_schedule, launches first.
  for schedule in ${FA_NCU_SCHEDULES:-serial pipelined}; do
    rep=/tmp/fa-ncu-$schedule
    FA_AUTOTUNE=0 timeout 240 ncu --set full --import-source no \
      --kernel-name regex:'_forward_wgmma_d[0-9]+$' --launch-count 1 -f -o "$rep" \
      "$FA/bin/fa-run" kernels_spec/mha.mlir --target gpu --dtype bf16 \
      --shape 4,16,16,4096,4096,128 --wgmma-schedule $schedule \
      > "$OUT_DIR/ncu-$schedule.log" 2>&1
    ncu -i "$rep.ncu-rep" --page details --print-details all \
      >> "$OUT_DIR/ncu-$schedule.log" 2>&1
    ncu -i "$rep.ncu-rep" --page source --csv --print-source sass \
      > "$OUT_DIR/ncu-$schedule-sass.csv" 2>&1
  done
fi

# SASS of the tensor-core kernels: fa-compile's PTX through ptxas, then
# cuobjdump; each kernel's registers, spills and HMMA count.
stage sass && {
  sass_report sm_90 _mma_ HMMA "$OUT_DIR/causal-bf16.ptx" || status=1
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
  /tmp/fa-export/main && /tmp/fa-export/main --bad-shapes
} > "$OUT_DIR/export.log" 2>&1 || status=1; fi

# The Python package in $PY_DIR, built against this machine's Python and
# pybind11 and the bundle's runtime; the module is rebuilt only when its
# inputs changed (a stamp of their hash), so every stage that imports fa
# can call this. Appends to the log $1.
PY_DIR=/tmp/fa-python
build_fa_python() {
  local log=$1 suffix stamp
  # The package's sources, subpackages included, beside the module built
  # below (kept: $PY_DIR/stamp says when to rebuild it).
  mkdir -p "$PY_DIR/fa" &&
    find "$PY_DIR/fa" -mindepth 1 -not -name "_fa*" -delete &&
    (cd python && find fa -name '*.py' -exec cp --parents {} "$PY_DIR/" \;) &&
    echo "__version__ = \"$(cat VERSION)\"" > "$PY_DIR/fa/_version.py"
  suffix=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
  stamp=$(cat python/src/FaModule.cpp include/fa/Runtime.h "$FA/lib/libFARuntime.so.22.1" | sha256sum)
  if [ -f "$PY_DIR/fa/_fa$suffix" ] && [ "$(cat "$PY_DIR/stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  rm -f "$PY_DIR/stamp"
  g++ -O2 -shared -fPIC -std=c++17 python/src/FaModule.cpp -Iinclude \
    -I"$(python3 -c 'import pybind11; print(pybind11.get_include())')" \
    -I"$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")" \
    "$FA/lib/libFARuntime.so.22.1" -Wl,-rpath,"$FA/lib" \
    -o "$PY_DIR/fa/_fa$suffix" >> "$log" 2>&1 && echo "$stamp" > "$PY_DIR/stamp"
}

# Starts log $1 afresh and builds the Python package, saying there (and in
# the exit status) when that fails.
start_python_log() {
  : > "$1"
  build_fa_python "$1" && return 0
  echo "building the Python package failed" >> "$1"
  status=1
  return 1
}

# The Python package tested with torch (CPU and CUDA tensors) against
# PyTorch in float64.
stage pytest && {
if start_python_log "$OUT_DIR/pytest.log"; then
  # FA_AUTOTUNE unset: the shipped table's configs, as users get them (the
  # autotuning tests measure for themselves).
  PYTHONPATH="$PY_DIR" FA_CACHE_DIR=/tmp/fa-pycache timeout "${FA_PYTEST_TIMEOUT:-420}" \
    python3 -m pytest -q -p no:cacheprovider \
      ${FA_PYTEST_ARGS:-python/tests --ignore=python/tests/test_large.py} \
      >> "$OUT_DIR/pytest.log" 2>&1 || status=1
  for example in examples/*.py; do
    PYTHONPATH="$PY_DIR" FA_AUTOTUNE=0 timeout 120 python3 "$example" --device cuda \
      >> "$OUT_DIR/pytest.log" 2>&1 || status=1
  done
fi
tail -n 3 "$OUT_DIR/pytest.log"
}

# Sizes past 32-bit limits (python/tests/test_large.py): more than 2^31
# elements per tensor, B * H past grid y/z; 60 GB of GPU memory.
stage large && {
if start_python_log "$OUT_DIR/large.log"; then
  PYTHONPATH="$PY_DIR" FA_CACHE_DIR=/tmp/fa-pycache FA_AUTOTUNE=0 timeout 400 \
    python3 -m pytest -q -s -p no:cacheprovider python/tests/test_large.py \
    >> "$OUT_DIR/large.log" 2>&1 || status=1
fi
tail -n 3 "$OUT_DIR/large.log"
}

# Benchmarks (bench/README.md), one device call each: bench_stage NAME
# SCRIPT ARGS... runs bench/SCRIPT through the Python package (built if
# needed) with a fresh kernel cache, so that compiles and the autotuner's
# choices happen, and are logged, in this run; output in NAME.log.
bench_stage() {
  local name=$1 script=$2
  shift 2
  stage "$name" || return 0
  local log="$OUT_DIR/$name.log" limit=${FA_BENCH_TIME_LIMIT:-450}
  if start_python_log "$log"; then
    rm -rf "/tmp/fa-cache-$name"
    PYTHONPATH="$PY_DIR${FA_PYTHONPATH:+:$FA_PYTHONPATH}" FA_CACHE_DIR="/tmp/fa-cache-$name" \
      timeout "${FA_BENCH_TIMEOUT:-520}" python3 "bench/$script" \
      --time-limit "$limit" "$@" >> "$log" 2>&1 || status=1
  fi
  tail -n 3 "$log"
}
bench_stage host-overhead host_overhead.py ${FA_HOST_ARGS:-}
flex_seqs=${FA_FLEX_SEQS:-1024,4096,16384}
bench_stage homework bench_homework.py --out-dir "$OUT_DIR" ${FA_HOMEWORK_ARGS:-}
for d in 64 128; do
  bench_stage "variants-d$d" bench_gpu.py --csv "$OUT_DIR/variants-d$d.csv" \
    --head-dims "$d" --no-flex ${FA_VARIANTS_ARGS:-}
  bench_stage "flex-d$d" bench_gpu.py --csv "$OUT_DIR/flex-d$d.csv" \
    --head-dims "$d" --impls flex --seqs "$flex_seqs" ${FA_VARIANTS_ARGS:-}
done
bench_stage hf bench_hf.py --out "$OUT_DIR/hf.csv" ${FA_HF_ARGS:-}
bench_stage compile bench_compile.py --csv "$OUT_DIR/compile.csv" ${FA_COMPILE_ARGS:-}
bench_stage tuning-table make_tuning_table.py --out "$OUT_DIR/TunedConfigs.inc" ${FA_TUNING_ARGS:-}
bench_stage bench bench_gpu.py --csv "$OUT_DIR/bench.csv" ${FA_BENCH_ARGS:-}
bench_stage decode bench_decode.py --csv "$OUT_DIR/decode.csv" ${FA_DECODE_ARGS:-}
bench_stage varlen bench_varlen.py --csv "$OUT_DIR/varlen.csv"
if stage conformance; then
  timeout "${FA_CONFORMANCE_TIMEOUT:-420}" python3 test/conformance/run.py "$FA/bin/fa-run" kernels_spec /tmp/fa-conf \
    --target gpu > "$OUT_DIR/conformance.log" 2>&1 || status=1
  tail -n 8 "$OUT_DIR/conformance.log"
fi
grep -h "FAIL\|error" "$OUT_DIR"/*.log | head -20
exit $status
