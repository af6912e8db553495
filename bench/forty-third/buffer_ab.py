"""The eager backward's gradients from one allocation against three, in one
process, alternated over 6 rounds: CUDA-event ms of single
torch.autograd.grad calls of fa.attention (synchronised before each, as
bench_gpu.py times them), gpt-oss window 128 (2x64/8x8k D 64, sinks) and
causal D 64 (4x32x4k); "three" replaces torch_ops._eager_backward's
allocation by one tensor each for the round.
PYTHONPATH=... python3 bench/forty-third/buffer_ab.py"""
import statistics

import torch

from fa import api, torch_ops

import bwd_host

ONE = torch_ops._eager_backward


def three(q, k, v, o, lse, do, dlse, sinks, causal, window, sink_tokens,
          scale, deterministic):
    torch_ops._refuse_lse_gradients(dlse)
    return api.attention_backward(q, k, v, o, lse, do, causal, window,
                                  sink_tokens, sinks, scale, deterministic)


def main():
    print(torch.cuda.get_device_name())
    for name, b, hq, hkv, s, d, causal, window, learnable in bound_cases():
        grad = bwd_host.warm_case(b, hq, hkv, s, d, causal, window,
                                  learnable)[-1]
        times = {}
        for _ in range(6):
            for how, fn in (("one", ONE), ("three", three)):
                torch_ops._eager_backward = fn
                grad()
                times.setdefault(how, []).append(bwd_host.event_ms(grad, 20))
        torch_ops._eager_backward = ONE
        print(f"== {name}")
        for how, ts in times.items():
            print(f"  {how:6} single-call ms median {statistics.median(ts):.3f}"
                  " rounds " + " ".join(f"{t:.3f}" for t in ts))


def bound_cases():
    return [("gpt-oss window 128", 2, 64, 8, 8192, 64, True, 128, True),
            ("causal D 64", 4, 32, 32, 4096, 64, True, None, False)]


if __name__ == "__main__":
    main()
