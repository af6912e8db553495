#!/usr/bin/env bash
# carry ["bundle"] packed after retune.sh's table went into
# lib/Runtime/TunedConfigs.inc: issue 13's and 14's bars, fa (shipped
# table) beside cuDNN and flex in one run, then bench/bars.py.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S || exit 1
device_bars 120 150
echo "done ${SECONDS}s" >> $S
cat $S
