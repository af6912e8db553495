"""The bound backward against Program.run, in one process, alternated:
CUDA-event ms of single calls (synchronised before each, as bench_gpu.py
times them) of torch.autograd.grad of fa.attention and of
fa.api.attention_backward, for gpt-oss window 128 (2x64/8x8k D 64, sinks)
and causal D 64 (4x32x4k); "run" replaces _CheckedCall.launch by
Program.run for the round. Then host us of 4 torch.empty against one and
3 views (the GPU kept busy).
PYTHONPATH=... python3 bench/forty-third/bound_ab.py"""
import statistics

import torch

from fa import api

import bwd_host

CASES = [("gpt-oss window 128", 2, 64, 8, 8192, 64, True, 128, True),
         ("causal D 64", 4, 32, 32, 4096, 64, True, None, False)]
BOUND_LAUNCH = api._CheckedCall.launch


def unbound_launch(self, name, entry, tensors):
    api._run(self.program, name, entry, tensors)


def main():
    print(torch.cuda.get_device_name())
    for name, b, hq, hkv, s, d, causal, window, learnable in CASES:
        q, k, v, sinks, do, grad = bwd_host.warm_case(
            b, hq, hkv, s, d, causal, window, learnable)
        qd, kd, vd = q.detach(), k.detach(), v.detach()
        sd = None if sinks is None else sinks.detach()
        o, lse = api.attention_forward(qd, kd, vd, causal, window, 0, sd, None)
        apicall = lambda: api.attention_backward(qd, kd, vd, o, lse, do,
                                                 causal, window, 0, sd, None)
        for _ in range(3):
            apicall()
        times = {}
        for _ in range(4):
            for how, launch in (("bound", BOUND_LAUNCH),
                                ("run", unbound_launch)):
                api._CheckedCall.launch = launch
                for fn_name, fn in (("grad", grad), ("api", apicall)):
                    fn()
                    times.setdefault((how, fn_name), []).append(
                        bwd_host.event_ms(fn, 10))
        api._CheckedCall.launch = BOUND_LAUNCH
        print(f"== {name}: kernels {bwd_host.kernel_ms(grad):.3f} ms")
        for (how, fn_name), ts in sorted(times.items()):
            print(f"  {fn_name:5} {how:6} single-call ms median "
                  f"{statistics.median(ts):.3f} rounds "
                  + " ".join(f"{t:.3f}" for t in ts))
    x = torch.empty(1, device="cuda")
    shapes = [(2, 64, 8192, 64), (2, 8, 8192, 64), (2, 8, 8192, 64)]
    four = lambda: [torch.empty(sh, device="cuda", dtype=torch.bfloat16)
                    for sh in shapes] + [torch.empty(64, device="cuda")]

    def one():
        n = [sh[0] * sh[1] * sh[2] * sh[3] for sh in shapes]
        buf = torch.empty(sum(n), device="cuda", dtype=torch.bfloat16)
        return [buf[:n[0]].view(shapes[0]),
                buf[n[0]:n[0] + n[1]].view(shapes[1]),
                buf[n[0] + n[1]:].view(shapes[2])]
    print(f"host us: 4 x torch.empty {bwd_host.host_us(four):.1f}, one and "
          f"3 views {bwd_host.host_us(one):.1f}")
    del x


if __name__ == "__main__":
    main()
