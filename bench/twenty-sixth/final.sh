#!/usr/bin/env bash
# The twenty-sixth session's last call (H200): the forward bars' rows
# (probe.py: single-call, queued and kernel times) with this tree beside
# cuDNN and flex, and HEAD's fa (scratch/head) on the same rows; then
# memcheck and racecheck on grids whose persistent blocks take several
# items at D 64 (two copies of Q).
S=$OUT/summary.txt; : > $S; W=/tmp/fin; rm -rf $W; mkdir -p $W
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
NEW=/tmp/fa-bundle OLD=/tmp/fa-old
rm -rf $OLD && mkdir -p $OLD && tar -xJf bundle/fa-bundle.tar.xz -C $OLD && tar -xJf scratch/old.tar.xz -C $OLD
export LD_LIBRARY_PATH=$NEW/lib PYTHONUNBUFFERED=1
source bench/twenty-sixth/build-py.sh
build_py scratch/head /tmp/py-old $OLD/lib || echo "old python build failed" >> $S
build_py . /tmp/py-new $NEW/lib || echo "new python build failed" >> $S
P=bench/twenty-sixth/probe.py
PYTHONPATH=/tmp/py-new FA_CACHE_DIR=/tmp/c-new timeout 130 python3 $P --variants causal,gqa-causal,full \
  --seqs 4096 --impls fa,sdpa-cudnn 2>/dev/null | grep -v Warn | sed "s/^/new /" >> $OUT/probe.log
PYTHONPATH=/tmp/py-new FA_CACHE_DIR=/tmp/c-new timeout 200 python3 $P \
  --variants gpt-oss-window-128,window-1024+4-sinks,window-4096,gpt-oss-full --seqs 8192 --impls fa,flex 2>/dev/null |
  grep -v Warn | sed "s/^/new /" >> $OUT/probe.log
PYTHONPATH=/tmp/py-old FA_CACHE_DIR=/tmp/c-old timeout 80 python3 $P --variants causal,gqa-causal,full \
  --seqs 4096 --impls fa 2>/dev/null | grep -v Warn | sed "s/^/old /" >> $OUT/probe.log
PYTHONPATH=/tmp/py-old FA_CACHE_DIR=/tmp/c-old timeout 80 python3 $P \
  --variants gpt-oss-window-128,window-1024+4-sinks,gpt-oss-full --seqs 8192 --impls fa 2>/dev/null |
  grep -v Warn | sed "s/^/old /" >> $OUT/probe.log
cut -c1-150 $OUT/probe.log >> $S
FA=$NEW
source /dev/stdin <<<"$(sed -n '/^check_jobs() {/,/^}/p' scripts/gpu-run.sh)"
san() {
  echo "kernels_spec/causal.mlir|1,140,140,200,200,64;2,32,8,700,700,64|--dtype bf16"
  echo "kernels_spec/streaming.mlir|1,160,160,300,300,64|--dtype bf16"
}
for tool in memcheck racecheck; do
  FA_CHECK_PREFIX="timeout 80 compute-sanitizer --tool $tool --error-exitcode 9" FA_CHECK_JOBS=2 \
    check_jobs $W/$tool.log < <(san) > /dev/null 2>&1
  echo "$tool: $(grep -c '^== ' $W/$tool.log) runs, $(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' $W/$tool.log) clean, $(grep -c FAILED $W/$tool.log) failed" >> $S
done
tar -czf $OUT/san.tgz -C $W memcheck.log racecheck.log
cat $S
