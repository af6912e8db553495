#!/usr/bin/env bash
# Issue 18: the split-KV forward's warps without rows skip the math
# (skip.diff); with FA_MINCTAS_SPLIT=4 also four D 64 blocks an SM (the
# fifty-first session's knob: .minnctapersm 4 and 4 blocks an SM in the
# split count). Carry ["bundle"]: the fiftieth session's bundle,
# bundle/n-overlay.tar.xz (fa-run and libFARuntime of main, 66d5744's C++)
# and bundle/s-overlay.tar.xz (built from skip.diff and minctas-knob.diff;
# bundle/ is not kept in git, the diffs are). test_torch's decode tests,
# then bench_decode.py's gpt-oss and Llama rows at B 1 and 8, caches 32k
# and 128k, on main, s, and s with four blocks, alternated.
# (Main's build is n here; the logs, from the first form of this script,
# call it a.)
source bench/lib/device.sh
S=$OUT/summary.txt
device_setup $S n bundle/n-overlay.tar.xz s bundle/s-overlay.tar.xz || exit 1
device_python $OUT/py.log || exit 1
# Its fa-run checks, as first written, handed fa-run's arguments to env and
# ran nothing (logs/skip/); stages.sh ran them. Its pytest stopped at 150 s.
PYTHONPATH=$PY_DIR LD_LIBRARY_PATH=/tmp/fa-s/lib FA_CACHE_DIR=/tmp/pc-s timeout 150 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_torch.py -k "decode or paged or kvcache or append or varlen" > $OUT/pytest.log 2>&1
echo "pytest s: $(tail -1 $OUT/pytest.log) (${SECONDS}s)" >> $S
PYTHONPATH=$PY_DIR LD_LIBRARY_PATH=/tmp/fa-s/lib python3 -c "import fa, torch; fa.attention; print([l.split()[-1] for l in open('/proc/self/maps') if 'libFARuntime' in l][0])" >> $S 2>&1
for r in 1 2; do
  for v in n s s4; do
    knob=X=0; [ $v = s4 ] && knob=FA_MINCTAS_SPLIT=4
    # shellcheck disable=SC2163 # the assignment in $knob
    (export "$knob"; device_decode_rows "r$r $v" "${v%4}" "$OUT/decode-r$r-$v.csv" \
      --models gpt-oss_full,Llama_32/8 --batches 1,8 --caches 32768,131072)
  done
done
echo "done (${SECONDS}s)" >> $S
cat $S
