#!/usr/bin/env bash
# The twentieth session's GPU checks of fa.decode's append (k_new/v_new):
# the torch tests of decode, paged, append and varlen, the sanitizers on the
# append kernel, fa-run's checks of the caches it writes, and the decode
# benchmark's quick grid. Usage: bench/twentieth/gpu-append.sh OUT
set -uo pipefail
OUT=$1
FA=/tmp/fa-bundle PY=/tmp/fa-python
rm -rf "$FA" && mkdir -p "$FA" "$PY/fa" && tar -xJf bundle/fa-bundle.tar.xz -C "$FA"
(cd python && find fa -name '*.py' -exec cp --parents {} "$PY/" \;)
echo "__version__ = \"$(cat VERSION)\"" > "$PY/fa/_version.py"
suffix=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
g++ -O2 -shared -fPIC -std=c++17 python/src/FaModule.cpp -Iinclude \
  -I"$(python3 -c 'import pybind11; print(pybind11.get_include())')" \
  -I"$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")" \
  "$FA/lib/libFARuntime.so.22.1" -Wl,-rpath,"$FA/lib" -o "$PY/fa/_fa$suffix"
export LD_LIBRARY_PATH="$FA/lib" PYTHONPATH="$PY" FA_CACHE_DIR=/tmp/fa-pycache
timeout 300 python3 -m pytest -q -p no:cacheprovider python/tests/test_torch.py \
  -k "append or decode or paged or varlen" > "$OUT/pytest-append.log" 2>&1
tail -n 3 "$OUT/pytest-append.log"
for tool in memcheck racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 \
    "$FA/bin/fa-run" kernels_spec/gpt_oss_decode.mlir --kernel gpt_oss_decode_append \
    --target gpu --check --dtype bf16 --shape "3,64,8,1,3000,64;40,64,8,2,300,64" \
    >> "$OUT/sanitize-append.log" 2>&1
  echo "$tool rc=$?"
done
grep SUMMARY "$OUT/sanitize-append.log"
"$FA/bin/fa-run" kernels_spec/gpt_oss_decode.mlir --target gpu --check --dtype bf16 \
  --shape "3,64,8,1,3000,64;2,64,8,16,700,64;64,64,8,1,4096,64" 2>&1 | tee "$OUT/fa-run-decode.log"
timeout 200 python3 bench/bench_decode.py --quick --append --csv "$OUT/decode-append.csv" \
  2>&1 | tee "$OUT/decode-append.log"
