#!/usr/bin/env bash
# carry ["bundle"]: the shipped table's rows for full D 80 and D 96 made
# again (tuned on the H100 on 2026-11-26, before the persistent dQ kernel;
# their backward took dQ's own kernel where D 128 full takes the dK/dV
# kernel that adds dQ).
source bench/lib/device.sh
S=$OUT/summary.txt
device_summary $S
device_retune ${CASES:-full:80,full:96} ${1:-220}
cp "$OUT/t/TunedConfigs.inc" "$OUT/TunedConfigs.inc" 2>/dev/null
echo "done ${SECONDS}s" >> $S
cat $S
