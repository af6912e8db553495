#!/usr/bin/env bash
# ncu --set full of the wgmma forward (the table's config, as bench_gpu runs
# it): causal D 64 and D 128 at B*S 16k, S 4k.
d=/tmp/fa-f; rm -rf $d; mkdir -p $d; tar -xJf bundle/fa-bundle.tar.xz -C $d || exit 1
for c in "causal|4,32,32,4096,4096,64" "causal|4,16,16,4096,4096,128"; do
  spec=${c%%|*}; shape=${c#*|}; tag=$spec-d${shape##*,}
  LD_LIBRARY_PATH=$d/lib FA_AUTOTUNE=table FA_CACHE_DIR=/tmp/cf timeout 150 \
    ncu --set full --import-source no --kernel-name regex:'forward_wgmma' --launch-count 1 \
    -f -o /tmp/ncu-$tag $d/bin/fa-run kernels_spec/$spec.mlir --target gpu --dtype bf16 \
    --shape $shape > $OUT/ncu-fwd-$tag.log 2>&1
  ncu -i /tmp/ncu-$tag.ncu-rep --page details --print-details all >> $OUT/ncu-fwd-$tag.log 2>&1
  ncu -i /tmp/ncu-$tag.ncu-rep --page source --csv --print-source sass > /tmp/ncu-fwd-$tag-sass.csv 2>&1
done
tar czf $OUT/ncu-fwd-sass.tgz -C /tmp $(cd /tmp && ls ncu-fwd-*-sass.csv)
