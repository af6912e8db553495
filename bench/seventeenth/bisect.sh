#!/usr/bin/env bash
# For each packed commit in scratch/bisect/*/: build its _fa, run each repro N times (commits in parallel).
set -u
OUT=$1; export N=${N:-5}; rm -f /tmp/fails.log
export BASE=/tmp/fa-bundle; rm -rf $BASE; mkdir -p $BASE; tar -xJf bundle/fa-bundle.tar.xz -C $BASE lib
export suffix=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
export PB=$(python3 -c 'import pybind11; print(pybind11.get_include())')
export PI=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
one() {
  d=$1; c=$(basename $d)
  L=/tmp/bis-$c; rm -rf $L; mkdir -p $L/py; cp $d/libFARuntime.so.22.1 $L/
  (cd $d/python && cp -r fa $L/py/); echo "__version__ = \"0\"" > $L/py/fa/_version.py
  g++ -O2 -shared -fPIC -std=c++17 $d/python/src/FaModule.cpp -I$d/include -I$PB -I$PI \
    $L/libFARuntime.so.22.1 -Wl,-rpath,$L -o $L/py/fa/_fa$suffix > /tmp/build-$c.log 2>&1 || { echo "$c: build failed"; return; }
  extra=; case $c in *-noptxas) extra=FA_PTXAS=/nonexistent;; esac
  for repro in "r.py 32" "r2.py 40"; do
    set -- $repro
    crashes=0; ok=0
    for i in $(seq $N); do
      log=/tmp/run-$c-$1-$i.log
      LD_LIBRARY_PATH=$L:$BASE/lib PYTHONPATH=$L/py FA_CACHE_DIR=/tmp/cache-$c FA_AUTOTUNE=0 FA_EXPERIMENT_TEARDOWN=1 MALLOC_CHECK_=3 \
        REPRO_D=$2 env $extra timeout 120 python3 scratch/heap/$1 > $log 2>&1
      rc=$?
      if [ $rc = 0 ] && grep -q "repro survived" $log; then ok=$((ok+1)); else crashes=$((crashes+1)); echo "$c $1 run $i rc=$rc: $(tail -c 300 $log | tr '\n' ' ')" >> /tmp/fails.log; fi
    done
    echo "RESULT $c $1 D$2: ok=$ok crashed=$crashes"
  done
}
export -f one
ls -d scratch/bisect/*/ | xargs -P 8 -I{} bash -c 'one {}' 2>&1 | tee $OUT/bisect.log
grep RESULT $OUT/bisect.log | sort
cat /tmp/fails.log 2>/dev/null | cut -c1-200 | head -20
