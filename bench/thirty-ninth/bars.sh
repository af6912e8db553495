#!/usr/bin/env bash
# The thirty-ninth session's third call, on main's build after the row
# statistics change (carry ["bundle"]): issue 13's and 14's bars beside
# the peers, as the thirty-sixth session measured them (bench_gpu.py with
# FA_AUTOTUNE=table, bf16, B*S 16k, 20 single calls a row), with limits
# that fit the session's device time left.
exec bash bench/thirty-sixth/bars.sh 210 170
