#!/usr/bin/env bash
# ncu --set full of the wgmma backward's dK/dV and dQ kernels, old (the
# bundle with scratch/old.tar.xz over it) and new (the bundle) builds.
for build in ${NCU_BUILDS:-old new}; do
  d=/tmp/fa-$build; rm -rf $d; mkdir -p $d; tar -xJf bundle/fa-bundle.tar.xz -C $d
  [ $build = old ] && tar -xJf scratch/old.tar.xz -C $d
  for c in ${NCU_CASES:-"causal|2,16,16,4096,4096,128" "gpt_oss|2,64,8,4096,4096,64"}; do
    spec=${c%%|*}; shape=${c#*|}
    rep=/tmp/ncu-$build-$spec
    LD_LIBRARY_PATH=$d/lib FA_AUTOTUNE=0 FA_CACHE_DIR=/tmp/c-$build timeout 200 \
      ncu --set full --import-source no --kernel-name regex:'(causal|full)_backward_wgmma_d[kq]' \
      --launch-count 2 -f -o $rep $d/bin/fa-run kernels_spec/$spec.mlir --target gpu \
      --dtype bf16 --backward --shape $shape > $OUT/ncu-$build-$spec.log 2>&1
    ncu -i $rep.ncu-rep --page details --print-details all >> $OUT/ncu-$build-$spec.log 2>&1
    ncu -i $rep.ncu-rep --page source --csv --print-source sass > /tmp/ncu-$build-$spec-sass.csv 2>&1
  done
done
tar czf $OUT/ncu-sass.tgz -C /tmp $(cd /tmp && ls ncu-*-sass.csv)
