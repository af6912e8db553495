#!/usr/bin/env bash
# The thirtieth session's second call (H200): halves.sh on the build whose
# consumers take their column pieces widest first (D 192 no longer
# serialised by ptxas, C7511), causal and gqa_causal sanitized, the A/B on
# shapes of half the tokens (fa-run's host time at 2x16x8k D 256 is tens
# of seconds a run). (That call's gqa_causal sanitizer lines asked for 4/2
# heads, which the spec refuses: it fixes 32/8.)
SAN_SPECS="causal gqa_causal" AB_END=570 \
  AB_CASES="causal|1,16,16,8192,8192,192 causal|1,16,16,8192,8192,256 mha|2,16,16,4096,4096,192 mha|2,16,16,4096,4096,256 causal|1,16,16,8192,8192,128 mha|2,16,16,4096,4096,128" \
  exec bash bench/thirtieth/halves.sh
