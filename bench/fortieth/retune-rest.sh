#!/usr/bin/env bash
# The shipped table's rows for full and causal attention at D 64 and GQA
# 32/8 (and 64/16) with a window of 2048 at D 64 and 128 made again on
# main's build (carry ["bundle"]), after retune-d128.sh's rows went into
# lib/Runtime/TunedConfigs.inc (its --update base): the backward rows of
# these classes date from the H100 on 2026-11-26 too, and this session's
# fa-run timings (H200) put the dK/dV kernel that adds dQ 3% behind the
# dQ kernel on causal 4x32x4k D 64 and 3% ahead on full.
source bench/lib/device.sh
S=$OUT/summary.txt
device_summary $S
device_retune full:64,causal:64,gqa-window-2048:128,gqa-window-2048:64
echo "done ${SECONDS}s" >> $S
cat $S
