#!/usr/bin/env bash
# The thirty-sixth session's first call: the wgmma forward with P through a
# shared tile per consumer (--wgmma-p shared, the SS form of P V) against
# P in registers (the RS form), one bundle (carry ["bundle"]).
# 1. checks against float64 with --wgmma-p shared at D 64/80/96/128/32
#    (every masked spec, odd shapes, multi-item grids, the sink tile);
# 2. forward TFLOP/s (fa-run --repeat 30, FA_AUTOTUNE=0), configs
#    alternated per case, two rounds (the second reversed, where time
#    is left);
# 3. memcheck and racecheck of the shared form at two odd shapes.
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S
SH="--wgmma-p shared"
{
  for d in 64 80 96 128; do
    for c in "causal|2,16,16,1000,1000,$d;1,8,8,197,197,$d" "mha|1,4,4,1000,777,$d;2,4,4,333,1000,$d" \
             "streaming|1,8,8,2100,2100,$d" "gqa_causal|1,32,8,333,333,$d" "swa|1,32,8,3000,3000,$d"; do
      echo "kernels_spec/${c%%|*}.mlir|${c#*|}|--dtype bf16 $SH"
    done
    echo "kernels_spec/causal.mlir|2,16,16,1000,1000,$d|--dtype bf16 $SH --wgmma-groups 3 --mma-block-n 128"
  done
  echo "kernels_spec/gpt_oss.mlir|1,64,8,1000,1000,64;2,64,8,300,300,64|--dtype bf16 $SH"
  echo "kernels_spec/mha.mlir|1,4,4,1000,777,80;1,4,4,1000,777,96|--dtype f16 $SH --wgmma-groups 3 --mma-block-n 144"
  echo "kernels_spec/causal.mlir|2,16,16,1000,1000,80|--dtype bf16 $SH --wgmma-schedule serial"
  echo "kernels_spec/causal.mlir|1,8,8,500,500,32;1,8,8,500,500,256|--dtype bf16 $SH"
} | device_checks /tmp/checks-sharedp.log
T=$OUT/timings.txt
for round in 1 2; do
  [ $round = 2 ] && [ $SECONDS -gt 330 ] && break
  for c in "mha 4,16,16,4096,4096,80" "causal 4,16,16,4096,4096,80" "mha 4,16,16,4096,4096,96" \
           "causal 4,16,16,4096,4096,96" "mha 4,32,32,4096,4096,64" "causal 4,32,32,4096,4096,64" \
           "mha 4,16,16,4096,4096,128" "causal 4,16,16,4096,4096,128"; do
    set -- $c; d=${2##*,}
    confs=(- "$SH")
    case $d in
      80|96) confs+=("$SH --wgmma-groups 3 --mma-block-n 128" "$SH --wgmma-groups 3 --mma-block-n 144" "--wgmma-groups 3 --mma-block-n 112");;
      64) confs+=("$SH --mma-block-n 160");;
      128) confs+=("$SH --mma-block-n 160");;
    esac
    [ $round = 2 ] && confs=($(printf '%s\n' "${confs[@]}" | tac | tr ' ' '@'))
    for f in "${confs[@]}"; do
      f=${f//@/ }; [ "$f" = - ] && f=
      echo "r$round $1 $2 [$f] $(device_fwd_tflops $1 $2 $f)" >> $T
    done
  done
  echo "round $round done (${SECONDS}s)" >> $S
done
cat $T >> $S
device_sanitize causal 1,4,4,1000,1000,80 $SH
device_sanitize streaming 1,8,8,1100,1100,64 $SH
echo "done ${SECONDS}s" >> $S
cat $S
