#!/usr/bin/env bash
# Packs commit $1's runtime (mitigation removed) and Python package into scratch/bisect/<short>.
set -euo pipefail
c=$(git -C /work/old rev-parse --short "$1")
cd /work/old
git checkout -q -f "$c"
sed -i 's/(void)engine.release();/{}/' lib/Runtime/Program.cpp
ninja -C build FARuntime > /tmp/bisect-$c.log 2>&1 || cmake --build build --target FARuntime >> /tmp/bisect-$c.log 2>&1
d=/work/main/scratch/bisect/$c
rm -rf $d; mkdir -p $d/python
strip -o $d/libFARuntime.so.22.1 build/lib/libFARuntime.so.22.1
cp -r include $d/
cp VERSION $d/ 2>/dev/null || echo 0.0.0 > $d/VERSION
(cd python && cp -r fa src $d/python/)
find $d -name __pycache__ -prune -exec rm -rf {} \;
git checkout -q -f .
du -sh $d
