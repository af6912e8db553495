#!/usr/bin/env bash
# carry ["bundle"]: the table's full D 64 rows made again now that the dQ
# kernel computes D (bars.sh: fa-run mha 4x32x4k backward 386.7 TFLOP/s
# with dQ's kernel against 371.8 with the reduce-adds the table picks).
source bench/lib/device.sh
S=$OUT/summary.txt
device_summary $S
device_retune full:64 ${1:-180}
cp "$OUT/t/TunedConfigs.inc" "$OUT/TunedConfigs.inc" 2>/dev/null
echo "done ${SECONDS}s" >> $S
cat $S
