#!/bin/bash
# sass.sh PTXFILE KERNEL OUT: extract kernel, ptxas, cuobjdump; print DEPBAR context summary
python3 - "$1" "$2" "$3" <<'PY'
import re,sys
ptx=open(sys.argv[1]).read()
for m in re.split(r"^// fa-compile: ", ptx, flags=re.M)[1:]:
    k,body=m.split("\n",1)
    if k==sys.argv[2]:
        open(sys.argv[3]+".ptx","w").write(body)
PY
/usr/local/cuda/bin/ptxas -arch=sm_90a -v $3.ptx -o $3.cubin 2>&1 | grep -E "C75|spill|Used" | cut -c1-140
/work/main/build/venv/lib/python3.11/site-packages/triton/backends/nvidia/bin/cuobjdump -sass $3.cubin | grep -E "^\s+/\*[0-9a-f]{4}\*/" > $3.sass
# per DEPBAR.LE 0x1: count instructions until next DEPBAR, and MUFU in between
awk '/DEPBAR.LE gsb0, 0x1/{on=1;n=0;mu=0;next} on&&/DEPBAR.LE gsb0, 0x0/{print "after wait1: " n " instrs (" mu " MUFU) before wait0"; on=0} on{n++; if(/MUFU/)mu++}' $3.sass
grep -c MUFU.EX2 $3.sass
