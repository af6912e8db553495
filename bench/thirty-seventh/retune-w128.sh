#!/usr/bin/env bash
# The shipped table's rows for gpt-oss's sliding layer (window 128) at D
# 64 made again on 2e38f41's build (carry ["bundle"] packed there): its
# backward rows chose dQ by TMA reduce-adds (64-row dK/dV tiles) before
# the dK/dV kernel took 128-row tiles with dQ's own kernel, which fa-run
# then timed 7.6% faster on that layer. make_tuning_table.py --cases
# gpt-oss-window-128:64 --update lib/Runtime/TunedConfigs.inc: the other
# rows kept; the new table and the tuner's log come back.
S=$OUT/summary.txt
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $S
FA_GPU_STAGES=tuning-table FA_BENCH_TIME_LIMIT=240 FA_BENCH_TIMEOUT=270 \
  FA_TUNING_ARGS="--cases gpt-oss-window-128:64 --update lib/Runtime/TunedConfigs.inc" \
  timeout 300 scripts/gpu-run.sh $OUT/t > $OUT/t.log 2>&1
echo "== tuning (${SECONDS}s)" >> $S
grep -E "tuned|failed|stopped|rows:|autotuning" $OUT/t/tuning-table.log | tail -40 >> $S
diff lib/Runtime/TunedConfigs.inc $OUT/t/TunedConfigs.inc >> $S
echo "done ${SECONDS}s" >> $S
cat $S
