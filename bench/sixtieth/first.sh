#!/usr/bin/env bash
# First device call of the sixtieth session. carry ["bundle"]: the bundle is
# this session's build (a: the wgmma forward's window tiles in three loops,
# the leading and trailing tiles each masked against its own edge alone);
# o-overlay is 208bb14's fa-run and runtime (o). (1) float64 checks of a,
# forward and backward, where the window's edges part; (2) a
# against o, fa-run forwards, three rounds; (3) why causal D 80's forward
# is slower in bench_gpu.py's calls than in fa-run (forward_profile.py).
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S o bundle/o-overlay.tar.xz || exit 1
device_check_lines <<'LINES'
kernels_spec/swa.mlir --shape 1,4,4,5000,5000,64 --dtype bf16
kernels_spec/swa.mlir --shape 1,4,2,3001,5003,128 --dtype bf16
kernels_spec/swa.mlir --shape 1,4,4,4700,4300,96 --dtype f16
kernels_spec/streaming.mlir --shape 1,4,4,2000,2000,64 --dtype bf16
kernels_spec/streaming.mlir --shape 1,4,4,1500,2100,128 --dtype bf16
kernels_spec/streaming.mlir --shape 1,4,4,2000,2000,80 --dtype bf16
kernels_spec/causal.mlir --shape 1,8,8,1000,1000,64 --dtype bf16
kernels_spec/causal.mlir --shape 1,4,4,1200,700,128 --dtype bf16
kernels_spec/causal.mlir --shape 1,4,4,700,1531,96 --dtype f16
kernels_spec/gqa_causal.mlir --shape 1,32,8,333,1025,128 --dtype bf16
kernels_spec/gpt_oss.mlir --kernel gpt_oss_sliding --shape 1,64,8,1000,1000,64 --dtype bf16
kernels_spec/gpt_oss.mlir --kernel gpt_oss_full --shape 1,64,8,777,777,64 --dtype bf16
LINES
device_build_compare 3 "o a" swa:2,32,32,8192,8192,64 streaming:2,32,32,8192,8192,64 \
  causal:4,32,32,4096,4096,64 causal:4,16,16,4096,4096,128 gqa_causal:4,32,8,4096,4096,128 \
  swa:2,16,16,8192,8192,128
device_python $OUT/py.log || exit 1
P=bench/fifty-sixth/forward_profile.py
PYTHONPATH=$PY_DIR FA_CACHE_DIR=/tmp/fc FA_AUTOTUNE=table timeout 200 python3 $P --impls fa \
  --rows causal:80:4096,causal:96:4096,causal:128:4096,full:80:4096 2>&1 | grep -v -i warn > $OUT/fwd.txt
grep -h "^==" $OUT/fwd.txt >> $S
echo "done (${SECONDS}s)" >> $S
cat $S
