#!/usr/bin/env bash
# carry ["bundle"] with bundle/n-overlay.tar.xz (fa-run and libFARuntime
# of 66d5744). 1. The fifty-first session's forward-check (its lines: every
# spec's forward through streamKeyTiles's per-item count and sink branch,
# two streaming backwards) and the conformance grid at D 256 and 64 on that
# build. 2. Where gpt-oss window 128's single forward call spends the 0.14
# ms that fa-run's kernel time does not hold: host_overhead.py at bench_gpu's
# shape (2x64/8x8k, D 64, window 128, sinks), with and without autograd,
# each GPU activity of a forward and a backward, and the host steps, on the
# bundle's build (a29e172, that of the last bench_gpu rows).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/n-overlay.tar.xz || exit 1
( R=/tmp/fa-n/bin/fa-run LD_LIBRARY_PATH=/tmp/fa-n/lib device_conformance 256,64 ) &
sed -n '/^n=0/,/^cat \/tmp\/f/p' bench/fifty-first/forward-check.sh > /tmp/forward-check-lines.sh
source /tmp/forward-check-lines.sh   # waits for the conformance grid too
echo "checks done (${SECONDS}s)" >> $S
device_python $OUT/py.log || exit 1
probe() {
  PYTHONPATH=$PY_DIR FA_AUTOTUNE=table FA_CACHE_DIR=/tmp/c-probe timeout 150 python3 bench/host_overhead.py \
    --shapes 2,64,8192,64 --kv-group 8 --window 128 --learnable-sinks --time-limit 60 "$@" 2>&1 | grep -v Warn
}
probe --forward-kernels > $OUT/probe-nograd.log
probe --grad --forward-kernels --backward-kernels --breakdown > $OUT/probe-grad.log
cat $OUT/probe-*.log >> $S
echo "done (${SECONDS}s)" >> $S
cat $S
