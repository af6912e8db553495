#!/usr/bin/env bash
# carry ["bundle"] with bundle/n-overlay.tar.xz (the experiment build, main
# at 76fa208 with occupancy.diff applied:
# FA_MINCTAS_MMA=N gives the mma.sync forward kernels .minnctapersm N,
# FA_MINCTAS_SPLIT=N the D 64 split-KV kernels, and N blocks an SM to the
# split count's rule). Their forwards at 3 blocks an SM (168 registers,
# unasked) against 4 (128 registers, 20-68 bytes of spills):
# 1. checks against float64 at 4;
# 2. gpt_oss 2x64/8x8k forward (the sliding layer on mma.sync), FA_AUTOTUNE=0;
# 3. gpt_oss_decode B 1, 32k keys (split-KV), fa-run's ms.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/n-overlay.tar.xz || exit 1
# run TAG ENV SPEC SHAPE [FLAGS]: fa-run --repeat 30 on build n with ENV
# (VAR=N words, or -), a kernel cache per TAG; its ms and TFLOP/s.
run() {
  local tag=$1 envs=$2
  shift 2
  [ "$envs" = - ] && envs=
  echo "$1 $2 $tag $(env $envs FA_CACHE_DIR=/tmp/c-$tag FA_AUTOTUNE=0 LD_LIBRARY_PATH=/tmp/fa-n/lib \
    timeout 150 /tmp/fa-n/bin/fa-run kernels_spec/$1.mlir --target gpu --dtype bf16 --repeat 30 "${@:3}" --shape $2 2>&1 |
    grep -oE '^[a-z_]+ |fwd=[0-9.]+ms|fwd_tflops=[0-9.]+|error.*' | tr '\n' ' ') (${SECONDS}s)" >> $S
}
FWD=2,64,8,8192,8192,64
DEC=1,64,8,1,32768,64
ON="FA_MINCTAS_MMA=4 FA_MINCTAS_SPLIT=4"
for t in off on; do
  e=-; [ $t = on ] && e=$ON
  run w$t "$e" gpt_oss $FWD > /dev/null &
  run d$t "$e" gpt_oss_decode $DEC > /dev/null &
done
( export FA_MINCTAS_MMA=4 FA_MINCTAS_SPLIT=4; R=/tmp/fa-n/bin/fa-run LD_LIBRARY_PATH=/tmp/fa-n/lib device_check_lines ) <<LINES
kernels_spec/gpt_oss.mlir --dtype bf16 --shape 2,64,8,1000,1000,64
kernels_spec/gpt_oss.mlir --dtype f16 --shape 3,64,8,777,777,64
kernels_spec/swa.mlir --dtype bf16 --shape 1,8,2,777,5000,64 --mma-generation mma-sync
kernels_spec/streaming.mlir --dtype bf16 --shape 2,8,8,1000,1000,64 --mma-generation mma-sync
kernels_spec/gpt_oss_decode.mlir --dtype bf16 --shape 2,64,8,1,9000,64
kernels_spec/causal.mlir --dtype bf16 --shape 1,32,4,1,6000,64
kernels_spec/gpt_oss_decode.mlir --dtype f16 --shape 1,64,8,4,20000,64
LINES
wait
echo "warm (${SECONDS}s)" >> $S
for round in 1 2 3; do
  for t in off on; do
    e=-; [ $t = on ] && e=$ON
    run w$t "$e" gpt_oss $FWD
    run d$t "$e" gpt_oss_decode $DEC
  done
done
cat $S
