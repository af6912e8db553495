#!/usr/bin/env bash
# Third device call of the sixtieth session. carry ["bundle"] (b412972's
# build, a) and o-overlay (208bb14's, o): ncu of the swa and streaming
# forwards at bench_gpu.py's window shapes, before and after (duration,
# instructions, issue and tensor pipes); then the windowed and gpt-oss bars
# against flex again (bench_gpu.py --alternate), a second run.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S o bundle/o-overlay.tar.xz || exit 1
for v in o a; do
  DEVICE_CACHE_DIR=/tmp/c-ncu-$v device_on $v device_ncu_forward ncu-swa-$v '_forward_wgmma_d64$' swa 2,32,32,8192,8192,64
  DEVICE_CACHE_DIR=/tmp/c-ncu-$v device_on $v device_ncu_forward ncu-streaming-$v '_forward_wgmma_d64$' streaming 2,32,32,8192,8192,64
done
A="--alternate --rounds 4 --reps 10"
device_bench variants 150 --variants window-4096,window-1024+4-sinks,gpt-oss-full,gpt-oss-window-128 \
  --seqs 8192 --head-dims 64 --impls fa,flex $A
python3 bench/bars.py "$OUT"/bench-variants.csv >> "$S" 2>&1
echo "done (${SECONDS}s)" >> $S
cat $S
