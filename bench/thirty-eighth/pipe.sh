#!/usr/bin/env bash
# The pipelined wgmma dK/dV tiles (issue 14), P^T and dS^T through shared
# memory: bundle/pipe-overlay.tar.xz (bin/fa-run and
# lib/libFARuntime.so.22.1 of that build: pipelined at D 80, 96 and 128)
# and bundle/pipe64-overlay.tar.xz (the same with 64-row query tiles at D 32
# and 64, so pipelined there too) over the bundle of 5d20aa7 (A). Carry
# ["bundle"]. (Its first version ran the register-A form of the same
# schedule: logs/pipe-rs-h100.txt.)
# 1. checks against float64, backward, FA_AUTOTUNE=0: every masked spec at
#    D 80, 96 and 128 and gpt-oss, f16, --dq-atomics (serial) with the
#    first overlay; every masked spec and gpt-oss at D 64 with the second;
# 2. memcheck and racecheck of pipelined backwards at odd shapes;
# 3. backward TFLOP/s, A against the overlay named per case, alternating
#    processes (FA_AUTOTUNE=0, a kernel cache each), as long as time lasts.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_overlay a && device_overlay c bundle/pipe64-overlay.tar.xz || exit 1
tar -xJf bundle/pipe-overlay.tar.xz -C $FA || exit 1
export FA_AUTOTUNE=0
{
  for d in 80 96 128; do
    for c in "causal|2,8,8,1000,1000,$d;1,4,4,197,197,$d" "mha|1,4,4,1000,777,$d;2,4,4,333,1000,$d" \
             "gqa_causal|1,32,8,333,333,$d" "streaming|1,8,8,1100,1100,$d" "swa|1,8,2,5000,5000,$d"; do
      echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16"
    done
  done
  echo "kernels_spec/gpt_oss.mlir|1,64,8,1000,1000,64|--dtype bf16"
  echo "kernels_spec/mha.mlir|1,4,4,1000,777,128|--dtype f16"
  echo "kernels_spec/causal.mlir|2,8,8,1000,1000,128|--dtype bf16 --dq-atomics"
  echo "kernels_spec/causal.mlir|2,8,8,1000,1000,64|--dtype bf16"
} | device_checks /tmp/checks-pipe.log
{
  for c in "causal|2,8,8,1000,1000,64;1,4,4,197,197,64" "mha|1,4,4,1000,777,64" "gqa_causal|1,32,8,333,333,64" \
           "streaming|1,8,8,1100,1100,64" "swa|1,8,2,5000,5000,64" "gpt_oss|1,64,8,1000,1000,64" "causal|1,4,4,1000,1000,32"; do
    echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16"
  done
} | FA=/tmp/fa-c FA_CACHE_DIR=/tmp/c-check64 FA_CHECK_PREFIX="timeout 150" FA_CHECK_JOBS=8 check_jobs /tmp/checks-pipe64.log > /dev/null 2>&1
echo "checks (64-row overlay): $(grep -c '^== ' /tmp/checks-pipe64.log) runs, $(grep -c FAILED /tmp/checks-pipe64.log) failed (${SECONDS}s)" >> $S
grep -E "FAILED|rror" /tmp/checks-pipe64.log | head >> $S
gzip -c /tmp/checks-pipe64.log > $OUT/checks-pipe64.log.gz
device_sanitize causal 1,4,4,1000,1000,128 --backward
R=/tmp/fa-c/bin/fa-run LD_LIBRARY_PATH=/tmp/fa-c/lib device_sanitize swa 1,8,2,3000,3000,64 --backward
echo "== A/B: A 5d20aa7, B pipelined (D 80-128), C pipelined 64-row tiles (D 64); bwd TFLOP/s (${SECONDS}s)" >> $S
ab() {  # ab VARIANT SPEC SHAPE
  local d=/tmp/fa-$1 out
  [ $1 = b ] && d=$FA
  out=$(R=$d/bin/fa-run LD_LIBRARY_PATH=$d/lib DEVICE_CACHE_DIR=/tmp/ab-cache-$1 device_tflops $2 $3 --backward)
  echo "$2 $3 $1 $out (${SECONDS}s)" >> $S
}
for c in "b causal 4,16,16,4096,4096,128" "c causal 4,32,32,4096,4096,64" "b mha 4,16,16,4096,4096,128" \
         "c gqa_causal 4,32,8,4096,4096,64" "b causal 4,16,16,4096,4096,96" "b causal 4,16,16,4096,4096,80" \
         "c mha 4,32,32,4096,4096,64" "b gqa_causal 4,32,8,4096,4096,128"; do
  set -- $c
  [ $SECONDS -gt 450 ] && break
  ab a $2 $3; ab $1 $2 $3
done
echo "done ${SECONDS}s" >> $S
cat $S
