#!/usr/bin/env bash
# carry ["bundle"]: the shipped table's gpt-oss window-128 D 64 rows (made
# on an H100 on 2026-11-27) made again on this GPU (device_retune).
source bench/lib/device.sh
S=$OUT/summary.txt
device_summary $S
device_retune gpt-oss-window-128:64 ${1:-150}
cp "$OUT/t/TunedConfigs.inc" "$OUT/TunedConfigs.inc" 2>/dev/null
echo "done ${SECONDS}s" >> $S
cat $S
