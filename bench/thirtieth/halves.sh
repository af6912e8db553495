#!/usr/bin/env bash
# The thirtieth session's first two calls (H200): the wgmma dK/dV kernel
# past D 128 with the two consumers sharing 64 keys and halving dK's and
# dV's columns (P^T and dS^T through shared memory), against the build
# before it (parts of 64 columns, S^T and dP^T recomputed per part).
# 1. checks against float64, forward and backward, every masked spec at
#    D 192 and 256 on odd shapes, bf16 and f16;
# 2. memcheck and racecheck of the backward of each of $SAN_SPECS (default
#    causal) at D 192 and 256;
# 3. A/B of the backward (bench/twenty-third/ab.sh), FA_AUTOTUNE=0: the
#    bundle (new) against the overlay bundle/old-overlay.tar.xz (old, its
#    bin/fa-run and lib/libFARuntime.so.22.1) over it, on $AB_CASES.
# The first call ran it as it is; the second (halves2.sh) with the pieces
# taken widest first, other cases and gqa_causal sanitized too.
# Run from the device tool with carry ["bundle"].
source bench/lib/device.sh
device_setup $OUT/summary.txt
checks() {
  for d in 192 256; do
    for dt in bf16 f16; do
      echo "kernels_spec/causal.mlir|1,4,4,197,197,$d;2,4,2,300,700,$d;1,2,2,1000,1000,$d|--backward --dtype $dt"
      echo "kernels_spec/mha.mlir|2,4,4,1000,777,$d;1,4,4,63,1025,$d|--backward --dtype $dt"
    done
    echo "kernels_spec/gqa_causal.mlir|1,32,8,700,1100,$d|--backward --dtype bf16"
    echo "kernels_spec/swa.mlir|1,32,8,1500,1500,$d|--backward --dtype bf16"
    echo "kernels_spec/streaming.mlir|1,8,8,2100,2100,$d|--backward --dtype bf16"
  done
}
device_checks /tmp/checks.log < <(checks)
for d in 192 256; do
  for spec in ${SAN_SPECS:-causal}; do
    device_sanitize $spec 1,2,1,197,300,$d --backward
  done
done
echo "before A/B: ${SECONDS}s" >> $OUT/summary.txt
AB_OVERLAY_A=bundle/old-overlay.tar.xz timeout $((${AB_END:-560} - SECONDS)) bash bench/twenty-third/ab.sh 2 - \
  "${AB_CASES:-causal|2,16,16,8192,8192,256 causal|2,16,16,8192,8192,192 mha|4,16,16,4096,4096,256 gqa_causal|2,32,8,8192,8192,256 causal|2,16,16,8192,8192,128}" \
  >> $OUT/summary.txt 2>&1
echo "end: ${SECONDS}s" >> $OUT/summary.txt
cat $OUT/summary.txt
