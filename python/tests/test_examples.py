"""The examples run and check themselves (each exits non-zero when its
answer is wrong): on the CPU in CI, on the GPU where there is one."""

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import fa  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() and
                     fa.gpu_available()[0] else [])


@pytest.mark.parametrize("device", DEVICES)
def test_gpt_oss_decode_on_a_paged_cache_matches_eager(device):
    out = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, "gpt_oss_decode.py"),
         "--device", device, "--steps", "6"],
        capture_output=True, text=True, timeout=900)
    print(out.stdout)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "max relative error" in out.stdout
