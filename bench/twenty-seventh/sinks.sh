#!/usr/bin/env bash
# The twenty-seventh session's first call (H200): the narrow sink-token
# tile of the wgmma forward (WgmmaForward.cpp, sinkTileWidth) against HEAD
# (fe1bc1e, scratch/head, made as bench/twenty-sixth/ab.sh says).
# 1. checks against float64: every head dim, bf16 and f16, odd shapes,
#    Sq != Sk, GQA, multi-item grids; memcheck and racecheck;
# 2. fa-run forward A/B, alternating processes, FA_AUTOTUNE=0;
# 3. probe.py's single / queued / kernel times beside flex, old and new.
S=$OUT/summary.txt; : > $S; W=/tmp/sk; rm -rf $W; mkdir -p $W
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
  # More query blocks than SMs: persistent blocks take several items.
  echo "kernels_spec/streaming.mlir|1,32,8,3000,3000,64;1,16,16,2100,2100,128|--dtype bf16"
  echo "kernels_spec/causal.mlir|2,32,8,1000,1000,64|--dtype bf16"
}
FA_CHECK_PREFIX="timeout 90" FA_CHECK_JOBS=8 check_jobs $W/checks.log < <(checks) > /dev/null 2>&1
echo "checks: $(grep -c '^== ' $W/checks.log) runs, $(grep -c FAILED $W/checks.log) failed" >> $S
grep -E "^==|max|rel" $W/checks.log | head -60 > $OUT/checks-excerpt.log
gzip -c $W/checks.log > $OUT/checks.log.gz
grep -q FAILED $W/checks.log && { cat $S; exit 1; }
san() {
  echo "kernels_spec/streaming.mlir|1,160,160,300,300,64;1,8,2,197,197,128|--dtype bf16"
}
for tool in memcheck racecheck; do
  FA_CHECK_PREFIX="timeout 80 compute-sanitizer --tool $tool --error-exitcode 9" FA_CHECK_JOBS=2 \
    check_jobs $W/$tool.log < <(san) > /dev/null 2>&1
  echo "$tool: $(grep -c '^== ' $W/$tool.log) runs, $(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' $W/$tool.log) clean, $(grep -c FAILED $W/$tool.log) failed" >> $S
done
export FA_AUTOTUNE=0
cases="streaming|2,32,32,8192,8192,64 streaming|4,32,32,4096,4096,64 streaming|2,16,16,8192,8192,128 streaming|2,8,8,8192,8192,256 causal|4,32,32,4096,4096,64"
for r in 1 2; do
  for c in $cases; do
    IFS='|' read -r spec shape flags <<< "$c"
    for m in old new; do
      d=$NEW; [ $m = old ] && d=$OLD
      out=$(LD_LIBRARY_PATH=$d/lib FA_CACHE_DIR=/tmp/ab-cache-$m timeout 120 \
        $d/bin/fa-run kernels_spec/$spec.mlir --target gpu --dtype bf16 --repeat 30 $flags --shape $shape 2>&1 |
        grep -oE 'fwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
      echo "r$r $spec $shape $m $out" >> $S
    done
  done
done
unset FA_AUTOTUNE
export LD_LIBRARY_PATH=$NEW/lib PYTHONUNBUFFERED=1
source bench/twenty-sixth/build-py.sh
build_py scratch/head /tmp/py-old $OLD/lib || echo "old python build failed" >> $S
build_py . /tmp/py-new $NEW/lib || echo "new python build failed" >> $S
P=bench/twenty-sixth/probe.py
for m in new old; do
  impls=fa; [ $m = new ] && impls=fa,flex
  PYTHONPATH=/tmp/py-$m FA_CACHE_DIR=/tmp/c-$m timeout 150 python3 $P --variants window-1024+4-sinks \
    --seqs 8192 --head-dims 64,128 --impls $impls --settle 2>/dev/null | grep -v Warn | sed "s/^/$m /" >> $OUT/probe.log
done
cut -c1-160 $OUT/probe.log >> $S
cat $S
