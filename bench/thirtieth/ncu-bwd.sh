#!/usr/bin/env bash
# The thirtieth session's fourth call (H200): where the backward's time goes
# at D 256 against D 128 after the column halves: ncu of the row_dot,
# dK/dV and dQ kernels of causal 1x16x8k (one launch each; duration, tensor
# pipe, issue, stalls). Run from the device tool with carry ["bundle"].
FA_GPU_STAGES=none scripts/gpu-run.sh /tmp/g0 > /dev/null 2>&1
FA=/tmp/fa-bundle R=$FA/bin/fa-run
export LD_LIBRARY_PATH=$FA/lib FA_AUTOTUNE=0
for d in 256 192 128; do
  rep=/tmp/ncu-d$d
  FA_CACHE_DIR=/tmp/c-ncu timeout 200 ncu --section SpeedOfLight --section WarpStateStats \
    --metrics sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active \
    --kernel-name regex:'causal_backward' --launch-count 3 -f -o $rep \
    $R kernels_spec/causal.mlir --target gpu --dtype bf16 --backward --shape 1,16,16,8192,8192,$d > $OUT/ncu-d$d.log 2>&1
  ncu -i $rep.ncu-rep --page details --print-details all >> $OUT/ncu-d$d.log 2>&1
  ncu -i $rep.ncu-rep --page raw --csv --metrics 'gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active\.ratio$' > $OUT/ncu-d$d-raw.csv 2>&1
done
for d in 256 192 128; do
  echo "== D $d"
  python3 - $OUT/ncu-d$d-raw.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = rows[0]
for r in rows[2:]:
    get = dict(zip(head, r))
    stalls = sorted(((float(v), k.split('stalled_')[1].split('_per')[0]) for k, v in get.items()
                     if 'stalled_' in k and v.replace('.', '', 1).isdigit()), reverse=True)[:5]
    print(get.get('Kernel Name', '?')[:40], 'dur', get.get('gpu__time_duration.sum'),
          'tensor', get.get('sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active'),
          'xu', get.get('sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active'),
          'issue', get.get('sm__issue_active.avg.pct_of_peak_sustained_active'),
          'stalls', ' '.join(f'{n}={v:.2f}' for v, n in stalls))
PY
done
