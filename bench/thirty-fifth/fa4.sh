#!/usr/bin/env bash
# Issue 18: FlashAttention-4's decode beside fa's, on the GPU machine (no
# network there; 64 MiB a call). Three calls to one warm machine:
#   FA4_PART=a  carry [".whl/a"]: FA4's small wheels and the first half of
#               nvidia-cutlass-dsl-libs-cu13's wheel, kept in /tmp/fa4w;
#   FA4_PART=b  carry [".whl/b"]: the other half and cuda-bindings; the
#               wheels installed with --no-deps into /tmp/fa4site;
#   FA4_PART=run carry [".whl/c", "bundle"]: nvidia-cutlass-dsl-libs-core
#               and protobuf (cutlass.cute is in libs-core, which libs-base
#               requires), every wheel unzipped over /tmp/fa4site (pip's
#               --target does not merge the wheels' shared nvidia_cutlass_dsl
#               folder: the later ones were skipped), fa's bundle;
#               fa4_decode.py.
# Wheels: flash-attn-4 4.0.0b36, nvidia-cutlass-dsl 4.8.1 with libs-base
# and libs-cu13, cuda-bindings 13.5.0, cuda-pathfinder, apache-tvm-ffi,
# torch-c-dlpack-ext, quack-kernels, einops (pip download, PyPI).
set -e
case $FA4_PART in
  a|b) mkdir -p /tmp/fa4w && cp .whl/$FA4_PART/* /tmp/fa4w/ && ls -la /tmp/fa4w ;;
esac
if [ "$FA4_PART" = b ]; then
  cd /tmp/fa4w
  cat cu13.part.aa cu13.part.ab > nvidia_cutlass_dsl_libs_cu13-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl
  sha256sum nvidia_cutlass_dsl_libs_cu13-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl
  pip install -q --no-deps --target /tmp/fa4site ./*.whl 2>&1 | tail -3
  ls /tmp/fa4site | head -30
fi
if [ "$FA4_PART" = run ]; then
  cp .whl/c/* /tmp/fa4w/
  for w in /tmp/fa4w/*.whl; do python3 -m zipfile -e "$w" /tmp/fa4site; done
  export PYTHONPATH=/tmp/fa4site:/tmp/fa4site/nvidia_cutlass_dsl/python_packages:/tmp/fa4site/nvidia_cutlass_dsl/dsl_packages
  source bench/lib/device.sh
  device_setup "$OUT/summary.txt"
  device_python "$OUT/build.log"
  export PYTHONPATH=$PY_DIR:$PYTHONPATH FA_CACHE_DIR=/tmp/fa-cache-fa4
  timeout 480 python3 bench/thirty-fifth/fa4_decode.py 2>&1 | tee "$OUT/fa4-decode.log"
fi
