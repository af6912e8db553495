"""What a memset node costs a graph-replayed decode step (issue 18): the
split-KV merge fused into the split kernel needs a counter per row group
zeroed before each step. fa.decode's graph, then the same with a
cuMemsetD32Async of 64 words (driver API, through ctypes) captured ahead
of it, and the memset alone; then eight steps in one graph (as a model's
graph holds every layer, so a graph's launch is paid once a token, not
once a layer) with and without a memset a step. Replay periods by CUDA
events, and the kernels and gaps of the memset + decode graph under
torch.profiler.

PYTHONPATH=... python3 bench/fifty-ninth/memset_probe.py
"""
import ctypes
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..",
                                "forty-second"))
from decode_parts import graph_of, replay_ms, summarise  # noqa: E402

import fa  # noqa: E402

cuda = ctypes.CDLL("libcuda.so.1")
cuda.cuMemsetD32Async.argtypes = [ctypes.c_uint64, ctypes.c_uint,
                                  ctypes.c_size_t, ctypes.c_void_p]


def memset(buf):
    stream = torch.cuda.current_stream().cuda_stream
    r = cuda.cuMemsetD32Async(buf.data_ptr(), 0, buf.numel(), stream)
    assert r == 0, r


def main():
    print(torch.cuda.get_device_name())
    torch.manual_seed(0)
    counters = torch.ones(64, dtype=torch.int32, device="cuda")
    for hq, hkv, d, learnable, cache in [(64, 8, 64, True, 32768),
                                         (32, 8, 128, False, 32768)]:
        q = torch.randn(1, hq, 1, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(1, hkv, cache, d, device="cuda",
                            dtype=torch.bfloat16) for _ in range(2))
        sinks = torch.randn(hq, device="cuda") if learnable else None
        lengths = torch.full((1,), cache, dtype=torch.int32, device="cuda")
        step = lambda: fa.decode(q, k, v, cache_seqlens=lengths, sinks=sinks,
                                 check_lengths=False)
        print(f"== {hq}/{hkv} D {d}, B 1, cache {cache}")
        plain = graph_of(step)
        both = graph_of(lambda: (memset(counters), step()))
        alone = graph_of(lambda: memset(counters))
        for r in range(3):
            print(f"  round {r}: decode {replay_ms(plain) * 1e3:.2f} us, "
                  f"memset + decode {replay_ms(both) * 1e3:.2f} us, "
                  f"memset alone {replay_ms(alone) * 1e3:.2f} us")
        eight = graph_of(lambda: [step() for _ in range(8)])
        eight_m = graph_of(lambda: [(memset(counters), step())
                                    for _ in range(8)])
        for r in range(3):
            print(f"  round {r}: eight steps a graph "
                  f"{replay_ms(eight) * 1e3 / 8:.2f} us a step, with a "
                  f"memset each {replay_ms(eight_m) * 1e3 / 8:.2f} us")
        summarise("memset + decode", both)
    assert counters.sum().item() == 0


if __name__ == "__main__":
    main()
