# The steps the per-session device scripts (bench/<session>/*.sh) share.
# Source it from the repository root on the GPU machine, in a device-tool
# call with carry ["bundle"]; $OUT is the folder whose files come back.
#
#   device_summary SUMMARY   starts SUMMARY with the GPU's name and driver
#   device_setup SUMMARY [NAME OVERLAY]...
#                            device_summary, then unpacks the bundle to
#                            /tmp/fa-bundle (FA, R = fa-run,
#                            LD_LIBRARY_PATH), defines gpu-run.sh's
#                            check_jobs, and makes device_overlay NAME
#                            OVERLAY of each pair given
#   device_checks LOG        runs check_jobs over the "spec|shapes|flags"
#                            lines on stdin (8 at once, 150 s each), adds
#                            its counts and failures to SUMMARY, and gzips
#                            LOG into $OUT
#   device_check_line N FA-RUN-ARGS...
#                            one fa-run --backward --check (bf16 unless
#                            told, FA_AUTOTUNE=0, 200 s) with R's build and
#                            a kernel cache of its own: its errors on one
#                            line in /tmp/chkN.txt (several at once:
#                            device_check_lines)
#   device_check_lines [FLAGS...]
#                            device_check_line of each line of fa-run
#                            arguments on stdin (with FLAGS after them;
#                            blank and "#" lines skipped),
#                            8 at once; their lines, then "checks done",
#                            in SUMMARY
#   device_torch_tests LIMIT EXPR
#                            python/tests/test_torch.py -k EXPR on
#                            device_python's package (stopped after LIMIT
#                            s): its last lines in SUMMARY
#   device_sanitize SPEC SHAPE [FLAGS...]
#                            memcheck and racecheck of one fa-run --check,
#                            a line each in SUMMARY
#   device_conformance D,D [D,D ...]
#                            run.py's tensor-core grid (every variant, bf16
#                            and f16, forward and backward, against float64)
#                            at each pair of head dims, the pairs at once;
#                            a line each in SUMMARY, the logs into $OUT
#   device_bars DENSE_LIMIT VARIANTS_LIMIT
#                            issue 13's and 14's bars: device_bench of the
#                            dense rows (causal, GQA causal, full; D 64 and
#                            128, S 4k; fa, cuDNN, flex) and of the windowed
#                            and gpt-oss rows (D 64, S 8k; fa, flex), each
#                            stopped after its LIMIT s, then bench/bars.py
#                            over their CSVs, all into SUMMARY
#   device_bench_rows CSV    prints bench_gpu.py's rows: impl, variant, d,
#                            s, forward and backward TFLOP/s, status
#   device_bench NAME LIMIT ARGS...
#                            bench_gpu.py ARGS through gpu-run.sh's bench
#                            stage (FA_AUTOTUNE=table, stops starting rows
#                            after LIMIT s): bench-NAME.csv and .log into
#                            $OUT, its rows in SUMMARY
#   device_overlay NAME [OVERLAY]
#                            a copy of the unpacked bundle at /tmp/fa-NAME,
#                            with OVERLAY (a .tar.xz of bin/fa-run and lib/
#                            of another build) unpacked over it when given
#   device_tflops SPEC SHAPE [FLAGS...]
#                            one fa-run --repeat 30 (bf16, FA_AUTOTUNE=0, a
#                            shared kernel cache): prints each entry's
#                            fwd_tflops=N (and bwd_tflops=N with
#                            --backward) on one line, or the error; R and
#                            LD_LIBRARY_PATH set on the call time another
#                            build (device_overlay's), DEVICE_CACHE_DIR its
#                            own kernel cache
#   device_fa_run LIMIT SPEC SHAPE [ARGS...]
#                            the fa-run of device_tflops and
#                            device_build_compile: bf16, FA_AUTOTUNE=0
#                            (DEVICE_AUTOTUNE's value where set: "table"
#                            for the shipped table's configs), R's build,
#                            DEVICE_CACHE_DIR's kernel cache, stopped after
#                            LIMIT s
#   device_on V COMMAND...   COMMAND (a device_* step) with build V's fa-run
#                            (R) and libraries (a: the bundle, else
#                            device_overlay's /tmp/fa-V)
#   device_build_tflops V SPEC SHAPE [FLAGS...]
#                            device_tflops on build V (device_on) with a
#                            kernel cache of its own, as a line
#                            "SPEC SHAPE V ..." in SUMMARY
#   device_build_compile V SPEC SHAPE [FLAGS...]
#                            one untimed fa-run on build V into the kernel
#                            cache device_build_tflops V uses: run several
#                            at once (&, wait) so that the timings after
#                            them do not compile
#   device_build_compare ROUNDS "V..." SPEC:SHAPE...
#                            each SPEC:SHAPE's kernels on each build V
#                            compiled at once (device_build_compile), then
#                            each timed alone (device_build_tflops), the
#                            builds alternated, ROUNDS times
#   device_ncu NAME KERNEL SPEC SHAPE [FLAGS...]
#                            ncu of one launch of the kernel matching KERNEL
#                            (a regex) in fa-run --backward of SPEC at SHAPE
#                            with R's build: speed of light, warp states,
#                            scheduler and the source counters; the details
#                            and the stall samples per SASS instruction
#                            (CSV) into $OUT/NAME.tar.gz, duration and
#                            tensor-pipe use in SUMMARY
#   device_ncu_forward NAME KERNEL SPEC SHAPE
#                            ncu of one launch of the kernel matching KERNEL
#                            in fa-run's forward of SPEC at SHAPE on the
#                            shipped table's configs (R's build, the kernel
#                            cache DEVICE_CACHE_DIR names where set):
#                            device_ncu's sections, the instruction
#                            statistics and compute
#                            workload, and the tensor, issue and XU (MUFU)
#                            pipes' use and the warp instructions in SUMMARY
#   device_knobs ROUNDS SHAPE "SPEC D [FLAGS...]"...
#                            device_tflops of each SPEC at SHAPE,D (SHAPE:
#                            B,Hq,Hkv,Sq,Sk) with its FLAGS, all compiled at
#                            once first, then timed one after another, ROUNDS
#                            times, a line each in SUMMARY
#   device_fwd_tflops SPEC SHAPE [FLAGS...]
#                            device_tflops's first fwd_tflops=N, or the error
#   device_forward_check V DTYPE FA-RUN-ARGS...
#                            one fa-run --check of the forward alone
#                            (FA_AUTOTUNE=0) on build V (a: the bundle,
#                            else device_overlay's /tmp/fa-V): its last line
#                            in SUMMARY
#   device_forward_checks V
#                            device_forward_check on build V of each line
#                            "DTYPE FA-RUN-ARGS..." on stdin (blank and "#"
#                            lines skipped), 8 at once
#   device_decode_parts V    decode_parts.py (the forty-second session's:
#                            each kernel's time and the gaps of graph-
#                            replayed decode steps) on build V, into SUMMARY
#                            under "== parts V"
#   device_clocks_start FILE / device_clocks_stop
#                            nvidia-smi's SM and memory clocks, power,
#                            temperature and throttle reasons every 20 ms
#                            into FILE, until stopped (then gzipped into
#                            $OUT)
#   device_decode_rows LABEL V CSV BENCH_DECODE-ARGS...
#                            bench_decode.py's rows (eager and graph
#                            replays) on build V through device_python's
#                            package, under "== LABEL" in SUMMARY; its CSV
#                            at CSV
#   device_python LOG        builds the Python package over $FA (gpu-run.sh's
#                            build_fa_python) in $PY_DIR, for scripts run
#                            with PYTHONPATH=$PY_DIR; its log in LOG
#   device_retune CASES [LIMIT]
#                            make_tuning_table.py --cases CASES --update
#                            lib/Runtime/TunedConfigs.inc through gpu-run.sh's
#                            tuning-table stage (LIMIT s, 300 unless given,
#                            before its last case starts): the new
#                            table and the tuner's log into $OUT/t, its
#                            choices and the table's diff in SUMMARY

# Starts the summary file $1 with the GPU's name and driver.
device_summary() {
  DEVICE_SUMMARY=$1
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > "$DEVICE_SUMMARY"
}

device_setup() {
  device_summary "$1"
  shift
  FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
  FA=/tmp/fa-bundle R=/tmp/fa-bundle/bin/fa-run
  export LD_LIBRARY_PATH=$FA/lib
  source /dev/stdin <<<"$(sed -n '/^check_jobs() {/,/^}/p' scripts/gpu-run.sh)"
  source /dev/stdin <<<"$(sed -n '/^build_fa_python() {/,/^}/p' scripts/gpu-run.sh)"
  PY_DIR=/tmp/fa-python
  while [ $# -ge 2 ]; do
    device_overlay "$1" "$2" || return 1
    shift 2
  done
}

device_python() {
  build_fa_python "$1" || { cat "$1"; return 1; }
}

# The bundle's directory (a) or device_overlay's copy of build $1.
device_build_dir() {
  if [ "$1" = a ]; then echo "$FA"; else echo "/tmp/fa-$1"; fi
}

device_forward_check() {
  local v=$1 dtype=$2 dir
  shift 2
  dir=$(device_build_dir "$v")
  echo "check $v $dtype $*: $(FA_CACHE_DIR=/tmp/c-fchk-$v FA_AUTOTUNE=0 LD_LIBRARY_PATH=$dir/lib \
    timeout 120 "$dir/bin/fa-run" "$@" --target gpu --dtype "$dtype" --check 2>&1 | tail -1)" >> "$DEVICE_SUMMARY"
}

device_forward_checks() {
  local v=$1 n=0 dtype args
  while read -r dtype args; do
    case $dtype in '' | '#'*) continue ;; esac
    n=$((n + 1))
    # shellcheck disable=SC2086 # the line's words are fa-run's arguments
    device_forward_check "$v" "$dtype" $args < /dev/null &
    [ $((n % 8)) -ne 0 ] || wait
  done
  wait
}

device_decode_parts() {
  local d
  d=$(device_build_dir "$1")
  echo "== parts $1" >> "$DEVICE_SUMMARY"
  PYTHONPATH=$PY_DIR LD_LIBRARY_PATH=$d/lib FA_CACHE_DIR=/tmp/cp-$1 timeout 100 \
    python3 bench/forty-second/decode_parts.py 2>&1 | grep -v -i warn >> "$DEVICE_SUMMARY"
}

device_clocks_start() {
  DEVICE_CLOCKS=$1
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 20 > "$DEVICE_CLOCKS" 2>&1 &
  DEVICE_CLOCKS_PID=$!
}

device_clocks_stop() {
  kill "$DEVICE_CLOCKS_PID"
  gzip -c "$DEVICE_CLOCKS" > "$OUT/$(basename "$DEVICE_CLOCKS").gz"
}

device_decode_rows() {
  local label=$1 dir csv=$3
  dir=$(device_build_dir "$2")
  shift 3
  echo "== $label (${SECONDS}s)" >> "$DEVICE_SUMMARY"
  (cd bench && PYTHONPATH=$PY_DIR LD_LIBRARY_PATH=$dir/lib FA_CACHE_DIR="/tmp/cd-${label// /-}" timeout 100 \
    python3 bench_decode.py --csv "$csv" "$@" 2>&1 | grep -v -i warn | grep -E "copy|graph" >> "$DEVICE_SUMMARY")
}

device_overlay() {
  rm -rf "/tmp/fa-$1" && cp -r "$FA" "/tmp/fa-$1" || return 1
  [ -z "${2:-}" ] || tar -xJf "$2" -C "/tmp/fa-$1"
}

# fa-run's TFLOP/s and errors, a line each, for the two below.
device_tflops_lines() {
  local spec=$1 shape=$2
  shift 2
  device_fa_run 100 "$spec" "$shape" --repeat 30 "$@" 2>&1 |
    grep -oE 'fwd_tflops=[0-9.]+|bwd_tflops=[0-9.]+|error.*'
}

# One fa-run of SPEC at SHAPE on the GPU (bf16, FA_AUTOTUNE=0 unless
# DEVICE_AUTOTUNE says otherwise, R's build, DEVICE_CACHE_DIR's kernel
# cache), stopped after LIMIT s.
device_fa_run() {
  local limit=$1 spec=$2 shape=$3
  shift 3
  FA_CACHE_DIR=${DEVICE_CACHE_DIR:-/tmp/c-time} FA_AUTOTUNE=${DEVICE_AUTOTUNE:-0} timeout "$limit" "$R" "kernels_spec/$spec.mlir" \
    --target gpu --dtype bf16 "$@" --shape "$shape"
}

device_tflops() {
  device_tflops_lines "$@" | tr '\n' ' '
}

device_on() {
  local d
  d=$(device_build_dir "$1")
  shift
  R=$d/bin/fa-run LD_LIBRARY_PATH=$d/lib "$@"
}

device_build_tflops() {
  local v=$1
  shift
  echo "$1 $2 $v $(DEVICE_CACHE_DIR=/tmp/c-$v device_on "$v" device_tflops "$@") (${SECONDS}s)" \
    >> "$DEVICE_SUMMARY"
}

device_build_compile() {
  local v=$1 spec=$2 shape=$3
  shift 3
  DEVICE_CACHE_DIR=/tmp/c-$v device_on "$v" device_fa_run 200 "$spec" "$shape" "$@" > /dev/null 2>&1
}

device_build_compare() {
  local rounds=$1 builds=$2 round c v
  shift 2
  for v in $builds; do
    for c in "$@"; do
      device_build_compile "$v" "${c%%:*}" "${c#*:}" &
    done
  done
  wait
  echo "compiled (${SECONDS}s)" >> "$DEVICE_SUMMARY"
  for round in $(seq "$rounds"); do
    for c in "$@"; do
      for v in $builds; do
        device_build_tflops "$v" "${c%%:*}" "${c#*:}"
      done
    done
  done
}

device_ncu() {
  local name=$1 kernel=$2 spec=$3 shape=$4
  shift 4
  # shellcheck disable=SC2086 # NCU_EXTRA: more ncu arguments, split
  FA_CACHE_DIR=${DEVICE_CACHE_DIR:-/tmp/c-ncu} FA_AUTOTUNE=0 timeout 150 ncu --section SpeedOfLight \
    --section WarpStateStats --section SourceCounters --section SchedulerStats ${NCU_EXTRA:-} \
    --metrics sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active \
    --kernel-name "regex:$kernel" --launch-count 1 -f -o "/tmp/$name" \
    "$R" "kernels_spec/$spec.mlir" --target gpu --dtype bf16 --backward "$@" --shape "$shape" > "/tmp/$name.log" 2>&1
  ncu -i "/tmp/$name.ncu-rep" --page details --print-details all >> "/tmp/$name.log" 2>&1
  ncu -i "/tmp/$name.ncu-rep" --page source --csv --print-source sass > "/tmp/$name-sass.csv" 2>&1
  echo "$name $(grep -E 'Pipe Tensor Cycles|Duration' "/tmp/$name.log" | head -2 | tr -s ' ' | tr '\n' ' ') (${SECONDS}s)" >> "$DEVICE_SUMMARY"
  tar -czf "$OUT/$name.tar.gz" -C /tmp "$name.log" "$name-sass.csv"
}

device_ncu_forward() {
  local name=$1 kernel=$2 spec=$3 shape=$4
  shift 4
  FA_CACHE_DIR=${DEVICE_CACHE_DIR:-/tmp/c-table} FA_AUTOTUNE=table timeout 150 ncu --section SpeedOfLight \
    --section WarpStateStats --section SourceCounters --section SchedulerStats \
    --section InstructionStats --section ComputeWorkloadAnalysis \
    --metrics sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
    --kernel-name "regex:$kernel" --launch-count 1 -f -o "/tmp/$name" \
    "$R" "kernels_spec/$spec.mlir" --target gpu --dtype bf16 "$@" --shape "$shape" > "/tmp/$name.log" 2>&1
  ncu -i "/tmp/$name.ncu-rep" --page details --print-details all >> "/tmp/$name.log" 2>&1
  ncu -i "/tmp/$name.ncu-rep" --page source --csv --print-source sass > "/tmp/$name-sass.csv" 2>&1
  echo "$name $(grep -E 'Pipe Tensor Cycles|Duration|Issue Slots Busy|inst_executed.sum|pipe_xu' "/tmp/$name.log" | head -6 | tr -s ' ' | tr '\n' ' ') (${SECONDS}s)" >> "$DEVICE_SUMMARY"
  tar -czf "$OUT/$name.tar.gz" -C /tmp "$name.log" "$name-sass.csv"
}

device_knobs() {
  local rounds=$1 shape=$2 round k knobs
  shift 2
  knobs=("$@") # `set --` below takes each knob line's words
  for k in "${knobs[@]}"; do
    # shellcheck disable=SC2086 # a knob line's words: spec, head dim, flags
    set -- $k
    DEVICE_CACHE_DIR=/tmp/c-k device_fa_run 200 "$1" "$shape,$2" "${@:3}" > /dev/null 2>&1 &
  done
  wait
  echo "knobs compiled (${SECONDS}s)" >> "$DEVICE_SUMMARY"
  for round in $(seq "$rounds"); do
    for k in "${knobs[@]}"; do
      # shellcheck disable=SC2086
      set -- $k
      echo "$1 D$2 ${*:3}: $(DEVICE_CACHE_DIR=/tmp/c-k device_tflops "$1" "$shape,$2" "${@:3}") (${SECONDS}s)" >> "$DEVICE_SUMMARY"
    done
  done
}

device_fwd_tflops() {
  device_tflops_lines "$@" | grep -E '^(fwd_tflops|error)' | head -1
}

device_checks() {
  local log=$1
  FA_CACHE_DIR=/tmp/c-check FA_CHECK_PREFIX="timeout 150" FA_CHECK_JOBS=8 \
    check_jobs "$log" > /dev/null 2>&1
  echo "checks: $(grep -c '^== ' "$log") runs, $(grep -c FAILED "$log") failed (${SECONDS}s)" >> "$DEVICE_SUMMARY"
  grep -E "FAILED|rror" "$log" | head -20 >> "$DEVICE_SUMMARY"
  gzip -c "$log" > "$OUT/$(basename "$log").gz"
}

device_check_line() {
  local n=$1
  shift
  echo "check $*: $(FA_CACHE_DIR=/tmp/c-chk$n FA_AUTOTUNE=0 timeout 200 "$R" "$@" --target gpu --backward --check 2>&1 | grep -E 'dq=|rror|FAIL|imeout' | sed 's/fwd=.*bwd=/bwd=/' | tr '\n' ' ' | cut -c1-500)" > "/tmp/chk$n.txt"
}

device_check_lines() {
  local n=0 line
  rm -f /tmp/chk*.txt
  while read -r line; do
    case $line in '' | '#'*) continue ;; esac
    n=$((n + 1))
    # shellcheck disable=SC2086 # the line's words are fa-run's arguments
    device_check_line $n $line "$@" < /dev/null &
    [ $((n % 8)) -ne 0 ] || wait
  done
  wait
  cat /tmp/chk*.txt >> "$DEVICE_SUMMARY"
  echo "checks done (${SECONDS}s)" >> "$DEVICE_SUMMARY"
}

device_torch_tests() {
  ( PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fa-pycache timeout "$1" python3 -m pytest -q -p no:cacheprovider \
      python/tests/test_torch.py -k "$2" 2>&1 | tail -4 ) >> "$DEVICE_SUMMARY"
}

device_sanitize() {
  local spec=$1 shape=$2 tool log
  shift 2
  for tool in memcheck racecheck; do
    log=/tmp/san-$tool-$spec-${shape//,/x}.log
    FA_CACHE_DIR=/tmp/c-check FA_AUTOTUNE=0 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 \
      "$R" "kernels_spec/$spec.mlir" --target gpu --dtype bf16 --check "$@" --shape "$shape" > "$log" 2>&1
    echo "$spec $shape $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tr '\n' ' ')" >> "$DEVICE_SUMMARY"
  done
}

device_conformance() {
  local all=full,causal,window1,window16,window_wide,window16_sink1,window16_sink4,window16_sink20,full_sinks,causal_sinks,gpt_oss_like,causal_scale
  local dims log
  for dims in "$@"; do
    log=$OUT/conformance-${dims//,/-}.log
    ( timeout 300 python3 test/conformance/run.py "$R" kernels_spec /tmp/conf-$dims --target gpu --jobs 5 \
        --variants $all --tensor-cores-only --gpu-head-dims $dims > "$log" 2>&1
      echo "conformance dims $dims rc=$? $(grep -E '^[0-9]+ cases|worst' "$log" | tr '\n' ' ') (${SECONDS}s)" >> "$DEVICE_SUMMARY" ) &
  done
  wait
  grep -h "FAILED" -A3 "$OUT"/conformance-*.log | head -20 >> "$DEVICE_SUMMARY"
}

device_bench() {
  local name=$1 limit=$2
  shift 2
  FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=$limit FA_BENCH_TIMEOUT=$((limit + 20)) \
    FA_BENCH_ARGS="$*" timeout $((limit + 30)) scripts/gpu-run.sh /tmp/$name > /tmp/$name.out 2>&1
  cp /tmp/$name/bench.csv "$OUT/bench-$name.csv" 2>/dev/null
  cp /tmp/$name/bench.log "$OUT/bench-$name.log" 2>/dev/null
  echo "== $name (${SECONDS}s)" >> "$DEVICE_SUMMARY"
  device_bench_rows "$OUT/bench-$name.csv" >> "$DEVICE_SUMMARY" 2>&1
}

device_bench_rows() {
  python3 - "$1" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r['impl'].ljust(12), r['variant'].ljust(7), r['d'], r['s'],
          r['fwd_tflops'], r['bwd_tflops'], r['status'])
PY
}

device_bars() {
  device_bench dense "$1" --variants causal,gqa-causal,full --seqs 4096 --head-dims 64,128 \
    --impls fa,sdpa-cudnn,flex --reps 20
  device_bench variants "$2" --variants window-4096,window-1024+4-sinks,gpt-oss-full,gpt-oss-window-128 \
    --seqs 8192 --head-dims 64 --impls fa,flex --reps 20
  python3 bench/bars.py "$OUT"/bench-*.csv >> "$DEVICE_SUMMARY" 2>&1
}

device_retune() {
  local limit=${2:-300}
  FA_GPU_STAGES=tuning-table FA_BENCH_TIME_LIMIT=$limit FA_BENCH_TIMEOUT=$((limit + 30)) \
    FA_TUNING_ARGS="--cases $1 --update lib/Runtime/TunedConfigs.inc" \
    timeout $((limit + 60)) scripts/gpu-run.sh "$OUT/t" > "$OUT/t.log" 2>&1
  echo "== tuning $1 (${SECONDS}s)" >> "$DEVICE_SUMMARY"
  grep -E "tuned|failed|stopped|rows:|autotuning" "$OUT/t/tuning-table.log" | tail -60 >> "$DEVICE_SUMMARY"
  diff lib/Runtime/TunedConfigs.inc "$OUT/t/TunedConfigs.inc" >> "$DEVICE_SUMMARY"
}
