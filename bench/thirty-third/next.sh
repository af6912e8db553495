#!/usr/bin/env bash
# For the next session's first device call (carry ["bundle"], a bundle of
# this build): what this session could not run for want of device time.
# 1. FA_AUTOTUNE=1 after the context fix (the two-process tuning test
#    crashed with the first form of the deferred build) and the first-call
#    test (one compile per entry, table or not);
# 2. issue 16's compile stage beside cuDNN and flex, on whichever card
#    comes (an H100 host took 1.62 s for causal's cold pair before).
T=python/tests/test_torch.py
FA_GPU_STAGES=pytest FA_PYTEST_TIMEOUT=240 \
  FA_PYTEST_ARGS="-rf $T::test_two_processes_autotuning_one_shape_leave_a_valid_cache $T::test_a_first_call_compiles_one_config_per_entry" \
  timeout 270 scripts/gpu-run.sh "$OUT/tests" > "$OUT/tests.log" 2>&1
grep -E "passed|failed|^E " "$OUT/tests/pytest.log" | head -20
FA_GPU_STAGES=compile timeout $((590 - SECONDS)) scripts/gpu-run.sh "$OUT/compile" > "$OUT/compile.log" 2>&1
grep -E "^(fa|sdpa|flex) " "$OUT/compile/compile.log"
