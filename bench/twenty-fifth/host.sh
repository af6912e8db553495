#!/usr/bin/env bash
# Where a forward call under autograd spends its time besides its kernels
# (bench_gpu.py times single calls after a sync): host_overhead.py with
# inputs that need gradients, full attention, D 128 at B*S 16k; each GPU
# activity of one forward; cProfile of fa's calls; the host steps.
FA_GPU_STAGES=host-overhead FA_HOST_ARGS="--shapes 4,16,4096,128 --grad --full --forward-kernels --profile --breakdown" \
  timeout 240 scripts/gpu-run.sh /tmp/h1 > /dev/null 2>&1
cp /tmp/h1/host-overhead.log $OUT/host-full-grad.log
tail -n 80 $OUT/host-full-grad.log
