#!/usr/bin/env bash
# carry ["bundle"]: where the D 128 backward's time goes on main (76990c3).
# 1. each kernel of fa's forward + backward through autograd (bwd_parts.py,
#    shipped table: the dK/dV kernel that adds dQ) at causal, full and GQA
#    D 128, B·S 16k: the share of dq_zero, row_dot and dq_copy;
# 2. ncu of one launch of that kernel (causal and mha 1x16x8k), with the
#    memory workload sections: is the shared-memory pipe the limit?
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
device_python /tmp/py.log || exit 1
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/c-py FA_AUTOTUNE=table timeout 240 \
  python3 bench/forty-second/bwd_parts.py "D 128" > $OUT/bwd-parts-d128.log 2>&1
grep -v -i warn $OUT/bwd-parts-d128.log >> $S
echo "parts ${SECONDS}s" >> $S
NCU_EXTRA="--section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis" \
  device_ncu ncu-causal-128 '_backward_wgmma_dk_dv_d128$' causal 1,16,16,8192,8192,128 --dq-atomics
NCU_EXTRA="--section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis" \
  device_ncu ncu-mha-128 '_backward_wgmma_dk_dv_d128$' mha 1,16,16,8192,8192,128 --dq-atomics
for n in ncu-causal-128 ncu-mha-128; do
  grep -E "Shared|shared|Bank|L1/TEX Hit|Mem Pipes|Pipe .* Util|Issue Slots|Warp Cycles Per Issued|Tensor" /tmp/$n.log | head -40 >> $S
done
echo "done ${SECONDS}s" >> $S
cat $S
