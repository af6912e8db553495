#!/usr/bin/env bash
# The thirty-first session's second call: the wgmma forward's O through a
# shared staging tile and TMA stores (the bundle) against the build before
# (bundle/old-overlay.tar.xz: HEAD's fa-run and libFARuntime). (1) A/B of
# forward TFLOP/s (bench/twenty-third/ab.sh, one round; A = new, B = old);
# (2) checks against float64 over every spec, odd shapes, multi-item
# grids, D 32-256; (3) the [B, S, H, D] and drop-in pytest cases;
# (4) memcheck and racecheck. carry ["bundle"].
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
AB_FLAGS= timeout 200 bash bench/twenty-third/ab.sh 1 bundle/old-overlay.tar.xz \
  "causal|16,16,16,1024,1024,128 causal|4,16,16,4096,4096,128 mha|16,16,16,1024,1024,128 mha|4,16,16,4096,4096,128 causal|4,32,32,4096,4096,64 mha|4,32,32,4096,4096,64 gqa_causal|2,32,8,4096,4096,128 swa|2,32,8,8192,8192,64 streaming|2,32,32,8192,8192,64 gpt_oss|2,64,8,8192,8192,64 causal|2,16,16,4096,4096,96 causal|2,8,8,8192,8192,256" \
  > $OUT/ab.log 2>&1
echo "ab ${SECONDS}s" >> $S; cat $OUT/ab.log >> $S
{
  for dtype in bf16 f16; do
    for c in "causal|1,8,8,197,197,64;2,8,2,300,700,128;1,4,4,1000,1000,128" \
             "gqa_causal|1,32,8,333,333,128;1,32,8,129,257,64" \
             "gpt_oss|1,64,8,197,197,64;1,64,8,700,300,64" \
             "mha|2,4,4,1000,777,128;1,8,8,63,1025,64" "swa|1,8,2,5000,5000,64" \
             "streaming|1,8,8,2100,2100,128" "vit|2,12,12,197,197,64"; do
      echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype $dtype"
    done
  done
  for c in "causal|2,16,4,1000,1000,128;2,32,8,1000,1000,64" "gpt_oss|1,64,8,1000,1000,64" \
           "swa|1,32,8,3000,3000,64" "causal|2,16,4,1000,1000,256" "gpt_oss_packed|3,64,8,197,300,64" \
           "causal|2,16,4,1000,1000,80|--wgmma-groups 2" "mha|1,8,8,1000,1000,64|--wgmma-persistent=false"; do
    IFS='|' read -r sp sh fl <<< "$c"; echo "kernels_spec/$sp.mlir|$sh|--dtype bf16 $fl"
  done
  for d in 32 80 96 192 256; do
    echo "kernels_spec/causal.mlir|1,8,8,197,197,$d;2,8,2,300,700,$d|--dtype bf16"
    echo "kernels_spec/mha.mlir|1,4,4,1000,777,$d|--dtype f16"
    echo "kernels_spec/streaming.mlir|1,4,2,1500,1500,$d|--dtype bf16"
  done
} | device_checks /tmp/checks.log
echo "checks done ${SECONDS}s" >> $S
FA_GPU_STAGES=pytest FA_PYTEST_TIMEOUT=150 FA_PYTEST_ARGS="python/tests/test_torch.py -k bshd_views" \
  timeout 170 scripts/gpu-run.sh /tmp/py > /dev/null 2>&1
tail -5 /tmp/py/pytest.log >> $S; cp /tmp/py/pytest.log $OUT/ 2>/dev/null
device_sanitize causal 2,16,4,1000,1000,128
device_sanitize causal 2,32,8,1000,1000,64
device_sanitize streaming 1,8,8,1000,1000,80
device_sanitize gpt_oss 1,64,8,197,197,64
echo "sanitize done ${SECONDS}s" >> $S
echo "end ${SECONDS}s" >> $S
cat $S
