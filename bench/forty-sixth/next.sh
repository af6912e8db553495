#!/usr/bin/env bash
# carry ["bundle"] (not run: the forty-sixth session's device time was
# spent): the table's full D 64 rows made again, now that the dK/dV
# kernel that adds dQ beats the dQ kernel there (d64-atomics.sh: mha
# 4x32x4k D 64 backward 395.1 / 395.2 TFLOP/s against 381.8 / 386.4);
# the forty-fourth session's script does it.
exec bash bench/forty-fourth/retune-full64.sh "$@"
