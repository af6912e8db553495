#!/usr/bin/env bash
# Forty-first session, first call (carry ["bundle"]): the fortieth's
# bwd-host.sh (where fa's fused backward call idles the GPU), then fa-run
# --check of the dK/dV kernel that adds dQ (--dq-atomics) at odd shapes
# for each spec, D 64 and 128.
# bwd-host.sh sets the bundle up and writes $OUT/summary.txt.
bash bench/fortieth/bwd-host.sh > /dev/null
R=/tmp/fa-bundle/bin/fa-run
export LD_LIBRARY_PATH=/tmp/fa-bundle/lib
S=$OUT/summary.txt
for spec in mha causal gqa_causal streaming gpt_oss; do
  for d in 64 128; do
    shape=2,8,8,1531,1531,$d
    case $spec in gqa_causal) shape=1,32,8,1531,1531,$d;; gpt_oss) shape=1,64,8,1531,1531,64; [ $d = 64 ] || continue;; esac
    echo "check $spec $shape: $(FA_CACHE_DIR=/tmp/c-chk FA_AUTOTUNE=0 timeout 100 $R kernels_spec/$spec.mlir --target gpu --dtype bf16 --backward --dq-atomics --check --shape $shape 2>&1 | grep -E 'shape=|rror|FAIL' | tr '\n' ' ' | cut -c1-400)" >> $S
  done
done
cat $S
