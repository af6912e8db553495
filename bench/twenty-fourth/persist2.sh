#!/usr/bin/env bash
# Persistent wgmma forward, second try (the last P V's stage now freed):
# checks whose grids have more query blocks than the GPU has SMs (blocks
# take several items), a forward A/B against $1 (the previous build's
# overlay; none: no A/B), the hopper stage, memcheck and racecheck. Every
# fa-run under `timeout`, each stage's logs packed into $OUT as it ends.
S=$OUT/summary.txt; W=/tmp/p2; rm -rf $W; mkdir -p $W
export FA_CHECK_PREFIX="timeout 75"
source bench/twenty-fifth/multi-item-checks.sh
FA_GPU_STAGES=checks FA_CHECK_JOBS=8 FA_CHECKS="$(lines)" timeout 170 scripts/gpu-run.sh $W/multi > /dev/null 2>&1
echo "multi checks: $(grep -c '^== ' $W/multi/checks.log) runs, $(grep -c FAILED $W/multi/checks.log) failed" >> $S
tar -czf $OUT/multi.tgz -C $W multi /tmp/fa-checks
# A hang (or any failure) stops the call here: later stages would hang too.
grep -q FAILED $W/multi/checks.log 2>/dev/null || [ ! -f $W/multi/checks.log ] && { cat $S; exit 1; }
# No overlay: the checks alone (bench/twenty-fifth/verify.sh).
[ -n "$1" ] && AB_FLAGS= timeout 170 bash bench/twenty-third/ab.sh 1 "$1" \
  "causal|2,16,16,4096,4096,128 mha|2,16,16,4096,4096,128 gqa_causal|2,32,8,4096,4096,128 causal|4,32,32,4096,4096,64 gpt_oss|2,64,8,4096,4096,64 mha|4,32,32,4096,4096,64" >> $S 2>&1
unset FA_CHECK_PREFIX
FA_CHECK_PREFIX="timeout 60" FA_GPU_STAGES=hopper timeout 160 scripts/gpu-run.sh $W/hopper > /dev/null 2>&1
echo "hopper: $(grep -c '^== ' $W/hopper/hopper-checks.log) runs, $(grep -c FAILED $W/hopper/hopper-checks.log) failed" >> $S
tar -czf $OUT/hopper.tgz -C $W hopper
san() {
  echo "kernels_spec/causal.mlir|1,140,140,200,200,64;1,70,35,300,300,128|--dtype bf16"
  echo "kernels_spec/gpt_oss.mlir|1,160,8,130,130,64|--dtype bf16"
}
for tool in memcheck racecheck; do
  FA_CHECK_PREFIX="timeout 80 compute-sanitizer --tool $tool --error-exitcode 9" FA_GPU_STAGES=checks \
    FA_CHECKS="$(san)" timeout 90 scripts/gpu-run.sh $W/$tool > /dev/null 2>&1
  echo "$tool: $(grep -c '^== ' $W/$tool/checks.log) runs, $(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' $W/$tool/checks.log) clean" >> $S
done
tar -czf $OUT/san.tgz -C $W memcheck racecheck
cat $S
