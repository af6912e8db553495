#!/usr/bin/env bash
# The twenty-seventh session's dQ call (H200): the wgmma dQ kernel's
# narrow sink-token tile (WgmmaBackward.cpp, sinkTileWidth) on top of the
# forward's. 1. checks against float64 (forward and backward: o, lse, dq,
# dk, dv) at every head dim, bf16 and f16, odd shapes, Sq != Sk, GQA,
# multi-item grids; memcheck and racecheck; 2. fa-run --backward A/B
# against HEAD of the session's start (fe1bc1e, scratch/head), FA_AUTOTUNE=0;
# 3. bench_gpu.py's window-1024+4-sinks rows beside flex, D 64 and 128.
S=$OUT/summary.txt; : > $S; W=/tmp/sb; rm -rf $W; mkdir -p $W
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
NEW=/tmp/fa-bundle OLD=/tmp/fa-old
rm -rf $OLD && mkdir -p $OLD && tar -xJf bundle/fa-bundle.tar.xz -C $OLD && tar -xJf scratch/old.tar.xz -C $OLD
FA=$NEW
source /dev/stdin <<<"$(sed -n '/^check_jobs() {/,/^}/p' scripts/gpu-run.sh)"
checks() {
  for dt in bf16 f16; do
    echo "kernels_spec/streaming.mlir|1,8,8,2100,2100,128;1,8,2,197,197,64;2,4,4,300,1300,64|--dtype $dt"
  done
  for d in 32 80 96 192 256; do
    echo "kernels_spec/streaming.mlir|1,4,2,1500,1500,$d;1,4,4,700,1100,$d|--dtype bf16"
  done
  echo "kernels_spec/streaming.mlir|1,32,8,3000,3000,64;1,16,16,2100,2100,128|--dtype bf16"
  echo "kernels_spec/streaming.mlir|1,8,2,197,197,64;1,4,4,700,1100,128|--dtype bf16 --deterministic"
}
FA_CHECK_PREFIX="timeout 90" FA_CHECK_JOBS=8 check_jobs $W/checks.log < <(checks) > /dev/null 2>&1
echo "checks: $(grep -c '^== ' $W/checks.log) runs, $(grep -c FAILED $W/checks.log) failed" >> $S
gzip -c $W/checks.log > $OUT/checks.log.gz
grep -q FAILED $W/checks.log && { cat $S; exit 1; }
san() { echo "kernels_spec/streaming.mlir|1,8,2,197,197,128;1,16,16,300,300,64|--dtype bf16"; }
for tool in memcheck racecheck; do
  FA_CHECK_PREFIX="timeout 80 compute-sanitizer --tool $tool --error-exitcode 9" FA_CHECK_JOBS=2 \
    check_jobs $W/$tool.log < <(san) > /dev/null 2>&1
  echo "$tool: $(grep -c '^== ' $W/$tool.log) runs, $(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' $W/$tool.log) clean, $(grep -c FAILED $W/$tool.log) failed" >> $S
done
export FA_AUTOTUNE=0
for r in 1 2; do
  for shape in 2,32,32,8192,8192,64 2,16,16,8192,8192,128; do
    for m in old new; do
      d=$NEW; [ $m = old ] && d=$OLD
      out=$(LD_LIBRARY_PATH=$d/lib FA_CACHE_DIR=/tmp/ab-cache-$m timeout 120 \
        $d/bin/fa-run kernels_spec/streaming.mlir --target gpu --dtype bf16 --repeat 20 --backward --shape $shape 2>&1 |
        grep -oE '(fwd|bwd)_tflops=[0-9.]+|error.*' | tr '\n' ' ')
      echo "r$r streaming $shape $m $out" >> $S
    done
  done
done
unset FA_AUTOTUNE
FA_AUTOTUNE=table FA_GPU_STAGES=bench FA_BENCH_TIME_LIMIT=150 FA_BENCH_TIMEOUT=170 \
  FA_BENCH_ARGS="--variants window-1024+4-sinks --seqs 8192 --head-dims 64,128 --impls fa,flex" \
  timeout 180 scripts/gpu-run.sh $W/bench > /dev/null 2>&1
cp $W/bench/bench.csv $OUT/bench-sinks.csv; cut -d, -f1,2,5,9,10,11,12,13 $OUT/bench-sinks.csv >> $S
cat $S
