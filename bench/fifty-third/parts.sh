#!/usr/bin/env bash
# Issue 18, fifth call: where gpt-oss's B 1, 32k decode step goes with
# skip.diff and key-split.diff (k-overlay: f152961's C++): the forty-second
# session's decode.sh on that build (decode_parts.py's kernels and gaps of
# graph replays, beside a read and a copy of the same bytes; ncu --set
# full of one step's split-KV and merge kernels). Carry ["bundle"]. (The
# call ran this script's first form, the same steps with 120 and 150 s
# limits.)
exec bash bench/forty-second/decode.sh k bundle/k-overlay.tar.xz
