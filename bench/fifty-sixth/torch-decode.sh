#!/usr/bin/env bash
# carry ["bundle"]: test_torch.py's decode, paged, kvcache and append tests
# (CUDA-graph capture and replay with changed lengths among them) on this
# tree's C++ (m-overlay: the new split-KV merge).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S m bundle/m-overlay.tar.xz || exit 1
device_python $OUT/py.log || exit 1
LD_LIBRARY_PATH=/tmp/fa-m/lib device_torch_tests 170 "decode or paged or kvcache or append"
echo "done (${SECONDS}s)" >> $S
cat $S
