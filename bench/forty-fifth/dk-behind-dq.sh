#!/usr/bin/env bash
# carry ["bundle"]: in the dK/dV kernel that adds dQ (--dq-atomics, the
# table's pick at D 128), dK's product issued behind dQ's, so that the f32
# dQ tile's stores and reduction run under it. Checks against float64 of
# that kernel (D 32, 64, 96, 128; every mask), sanitizers, fa-run backward
# TFLOP/s against main's fa-run and runtime (bundle/main-overlay.tar.xz),
# alternated. Run twice: logs/dk-behind-dq-rs.txt with dK's A from
# registers (the form kept; that run's list also had causal D 64 without
# --dq-atomics, gqa_causal 32/8 D 64 racecheck and a third A/B case,
# gqa_causal D 128), logs/dk-behind-dq-ss.txt with A from the shared dS^T
# (dropped).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S m bundle/main-overlay.tar.xz || exit 1
A=--dq-atomics
device_check_lines $A < bench/lib/checks-dq-atomics.txt
device_sanitize causal 1,4,4,1000,1000,128 --backward $A
echo "sanitizers done (${SECONDS}s)" >> $S
for v in m a; do
  device_build_tflops $v causal 4,16,16,4096,4096,128 --backward $A
  device_build_tflops $v mha 4,16,16,4096,4096,128 --backward $A
  device_build_tflops $v swa 2,16,16,8192,8192,128 --backward $A
done
for v in m a; do
  device_build_tflops $v causal 4,16,16,4096,4096,128 --backward $A
  device_build_tflops $v mha 4,16,16,4096,4096,128 --backward $A
done
echo "done ${SECONDS}s" >> $S
cat $S
