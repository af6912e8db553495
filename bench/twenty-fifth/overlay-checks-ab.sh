#!/usr/bin/env bash
# A forward change against the bundle (the twenty-fifth session's row sums
# on the tensor cores, rowsum.tar.xz, and lazy rescale, lazy.tar.xz, each
# built from its patch under patches/): the overlay $1's
# checks (multi-item grids, every masked spec, D 32-256; the hopper stage),
# then its forward A/B against the bundle. Stops at the first failure.
S=$OUT/summary.txt; W=/tmp/rs; rm -rf $W; mkdir -p $W
export FA_BUNDLE_OVERLAY=$1 FA_CHECK_PREFIX="timeout 75"
source bench/twenty-fifth/multi-item-checks.sh
FA_GPU_STAGES=checks FA_CHECK_JOBS=8 FA_CHECKS="$(lines)" timeout 170 scripts/gpu-run.sh $W/multi > /dev/null 2>&1
echo "multi checks: $(grep -c '^== ' $W/multi/checks.log) runs, $(grep -c FAILED $W/multi/checks.log) failed" >> $S
tar -czf $OUT/multi.tgz -C $W multi
if grep -q FAILED $W/multi/checks.log 2>/dev/null || [ ! -f $W/multi/checks.log ]; then cat $S; exit 1; fi
FA_CHECK_PREFIX="timeout 60" FA_GPU_STAGES=hopper timeout 160 scripts/gpu-run.sh $W/hopper > /dev/null 2>&1
echo "hopper: $(grep -c '^== ' $W/hopper/hopper-checks.log) runs, $(grep -c FAILED $W/hopper/hopper-checks.log) failed" >> $S
tar -czf $OUT/hopper.tgz -C $W hopper
unset FA_BUNDLE_OVERLAY FA_CHECK_PREFIX
AB_FLAGS= timeout 200 bash bench/twenty-third/ab.sh 1 "$1" \
  "causal|4,32,32,4096,4096,64 mha|4,32,32,4096,4096,64 gpt_oss|2,64,8,4096,4096,64 causal|2,16,16,4096,4096,128 mha|2,16,16,4096,4096,128 gqa_causal|2,32,8,4096,4096,128 causal|2,16,16,4096,4096,256" >> $S 2>&1
cat $S
