"""Faults that only a GPU can raise (issue 15's table): Ctrl-C in the
middle of autotuning. Skipped where torch or a GPU is absent (CI); run by
scripts/gpu-run.sh's pytest stage."""

import os
import signal
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")

import fa  # noqa: E402

GPU = torch.cuda.is_available() and fa.gpu_available()[0]

_TUNING_SCRIPT = """
import sys, torch, fa
q, k, v = (torch.randn(2, 16, 4096, 64, device="cuda", dtype=torch.bfloat16)
           for _ in range(3))
print("start", flush=True)
o = fa.attention(q, k, v, causal=True)
torch.cuda.synchronize()
print("ok", bool(torch.isfinite(o).all()), flush=True)
"""


@pytest.mark.skipif(not GPU, reason="needs a GPU")
@pytest.mark.parametrize("delay", [0.5, 3.0])
def test_ctrl_c_during_autotuning_leaves_a_valid_cache(tmp_path, delay):
    # SIGINT while the first call compiles or times its candidates: the
    # process stops, and the next one finds a cache it can use (it tunes
    # again or reads a complete choice, never a torn one).
    env = dict(os.environ, FA_CACHE_DIR=str(tmp_path), FA_AUTOTUNE="1")
    run = [sys.executable, "-c", _TUNING_SCRIPT]
    first = subprocess.Popen(run, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert first.stdout.readline().strip() == "start"
    time.sleep(delay)
    first.send_signal(signal.SIGINT)
    out, err = first.communicate(timeout=600)
    print(f"interrupted after {delay} s: exit {first.returncode}, "
          f"{err.count('fa: autotuning')} tuning lines")
    assert "Traceback" not in err or "KeyboardInterrupt" in err, err
    second = subprocess.run(run, env=env, capture_output=True, text=True,
                            timeout=600)
    assert second.returncode == 0, second.stderr
    assert "ok True" in second.stdout
    third = subprocess.run(run, env=env, capture_output=True, text=True,
                           timeout=600)
    assert third.returncode == 0, third.stderr
    assert "fa: autotuning" not in third.stderr  # the choice was stored
