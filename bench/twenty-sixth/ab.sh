#!/usr/bin/env bash
# The twenty-sixth session's A/B call (H200): HEAD (scratch/head: its
# fa-run, libFARuntime, Python package) against this tree (two copies of Q
# in the persistent wgmma forward, the producer at 32 registers, bound
# calls in the Python launch path). scratch/ is git-ignored: made here from
# a worktree of d86b21b built with scripts/build.sh (targets FARuntime and
# fa-run), its stripped lib/libFARuntime.so.22.1 and bin/fa-run, python/
# and include/ copied into scratch/head, and scratch/old.tar.xz packing
# head's bin and lib; carry `bundle` and `scratch`.
# 1. multi-item checks of the new build (stop on a failure or a hang);
# 2. fa-run forward A/B, alternating processes, FA_AUTOTUNE=0;
# 3. probe.py single / queued / kernel times, old and new Python;
# 4. host_overhead.py's breakdown, old and new; 5. the torch tests of the
#    bound path on the GPU.
S=$OUT/summary.txt; : > $S; W=/tmp/ab; rm -rf $W; mkdir -p $W
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
NEW=/tmp/fa-bundle OLD=/tmp/fa-old
rm -rf $OLD && mkdir -p $OLD && tar -xJf bundle/fa-bundle.tar.xz -C $OLD && tar -xJf scratch/old.tar.xz -C $OLD
export FA_CHECK_PREFIX="timeout 75"
source bench/twenty-fifth/multi-item-checks.sh
FA_GPU_STAGES=checks FA_CHECK_JOBS=8 FA_CHECKS="$(lines)" timeout 200 scripts/gpu-run.sh $W/multi > /dev/null 2>&1
echo "multi checks: $(grep -c '^== ' $W/multi/checks.log) runs, $(grep -c FAILED $W/multi/checks.log) failed" >> $S
tar -czf $OUT/multi.tgz -C $W multi
grep -q FAILED $W/multi/checks.log 2>/dev/null || [ ! -f $W/multi/checks.log ] && { cat $S; exit 1; }
unset FA_CHECK_PREFIX
export FA_AUTOTUNE=0
cases="causal|4,32,32,4096,4096,64 mha|4,32,32,4096,4096,64 causal|4,64,16,4096,4096,64 gpt_oss|2,64,8,8192,8192,64|--kernel=gpt_oss_full streaming|2,32,32,8192,8192,64 causal|2,16,16,8192,8192,128 mha|2,16,16,4096,4096,128 gqa_causal|2,32,8,8192,8192,128 causal|2,8,8,8192,8192,256"
for r in 1; do
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
  for w in w512 w1024s4 w4096; do
    for m in old new; do
      d=$NEW; [ $m = old ] && d=$OLD
      out=$(LD_LIBRARY_PATH=$d/lib FA_CACHE_DIR=/tmp/ab-cache-$m timeout 60 \
        $d/bin/fa-run bench/twenty-sixth/windows_wgmma.mlir --kernel $w --target gpu --repeat 30 --shape 2,32,32,8192,8192,64 2>&1 |
        grep -oE 'fwd_tflops=[0-9.]+|error.*' | tr '\n' ' ')
      echo "r$r $w 2,32,32,8192,8192,64 $m $out" >> $S
    done
  done
done
unset FA_AUTOTUNE
export LD_LIBRARY_PATH=$NEW/lib PYTHONUNBUFFERED=1
source bench/twenty-sixth/build-py.sh
build_py scratch/head /tmp/py-old $OLD/lib || echo "old python build failed" >> $S
build_py . /tmp/py-new $NEW/lib || echo "new python build failed" >> $S
for b in old new; do
  PYTHONPATH=/tmp/py-$b python3 -c "import fa; print('$b', fa._fa.__file__, hasattr(fa.api, 'forward_call'))" >> $S 2>&1
done
PYTHONPATH=/tmp/py-new FA_CACHE_DIR=/tmp/c-pytest timeout 150 python3 -m pytest -q -x -p no:cacheprovider \
  python/tests/test_torch.py -k "bound or repeated or keeps_the_backward or layout or graph or stream or eager" > $OUT/pytest.log 2>&1
echo "pytest: $(tail -n 1 $OUT/pytest.log)" >> $S
for r in 1; do
  for b in old new; do
    PYTHONPATH=/tmp/py-$b FA_CACHE_DIR=/tmp/c-$b timeout 100 python3 bench/twenty-sixth/probe.py \
      --variants causal,gqa-causal,full --seqs 4096 --impls fa 2>/dev/null | grep -v Warn | sed "s/^/$b r$r /" >> $OUT/probe.log
    PYTHONPATH=/tmp/py-$b FA_CACHE_DIR=/tmp/c-$b timeout 100 python3 bench/twenty-sixth/probe.py \
      --variants gpt-oss-window-128,window-1024+4-sinks,gpt-oss-full --seqs 8192 --impls fa 2>/dev/null | grep -v Warn | sed "s/^/$b r$r /" >> $OUT/probe.log
  done
done
cut -c1-135 $OUT/probe.log >> $S
for b in old new; do
  echo "breakdown $b" >> $S
  PYTHONPATH=/tmp/py-$b FA_CACHE_DIR=/tmp/c-$b timeout 100 python3 bench/host_overhead.py \
    --shapes 1,16,1024,64 --grad --breakdown 2>&1 | grep -E "^fa |^  " >> $S
done
cat $S
