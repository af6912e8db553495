#!/bin/bash
# Make the PTX first (forward-only specs, as in bench/NOTES.md, eighteenth
# session): fa-compile --arch sm_90a --dtype bf16 SPEC -o bench/eighteenth/NAME.ptx
# ptxas -v of each module of fa-compile's PTX outputs: registers, spills.
for f in bench/eighteenth/*.ptx; do
  d=$(mktemp -d)
  awk -v d="$d" '/^\/\/ fa-compile: /{n=$3; next} {print > (d "/" n ".ptx")}' "$f"
  for m in "$d"/*split*.ptx; do
    echo "== $(basename $m)"
    ptxas -arch=sm_90a -v "$m" -o /dev/null 2>&1 | grep -E 'registers|spill|error' | head -6
  done
done
