#!/usr/bin/env bash
# carry ["bundle"] as d32.sh, whose call ran out of time before these: the
# specs with a fixed head dim (gpt_oss, vit) rewritten to D 32 and checked
# on the overlay; gqa_causal (32/8 heads) and gpt_oss D 32 forwards timed,
# base "a" against overlay "n".
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/d32-overlay.tar.xz || exit 1
for spec in gpt_oss vit; do
  python3 -c "import sys; sys.path.insert(0, 'test/fa-compile/Inputs'); import ptxas_spills as p
open('kernels_spec/${spec}_d32.mlir', 'w').write(p.fixed_head_dim(open('kernels_spec/$spec.mlir').read(), 32))"
done
device_on n device_check_lines <<'LINES'
kernels_spec/gpt_oss_d32.mlir --dtype bf16 --shape 2,64,8,1000,1000,32
kernels_spec/vit_d32.mlir --dtype bf16 --shape 2,8,8,197,197,32
LINES
CASES="gqa_causal:4,32,8,4096,4096,32 gpt_oss_d32:2,64,8,8192,8192,32"
device_build_compare 1 "a n" $CASES
echo "done ${SECONDS}s" >> $S
cat $S
