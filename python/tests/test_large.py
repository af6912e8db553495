"""Sizes past 32-bit limits on the GPU (issue 15): tensors of more than 2^31
elements, and B * H past grid y/z's 65535 with short sequences. Forward and
backward, rows checked against PyTorch in float64 on slices the window keeps
small. Needs a GPU with about 60 GB free; skipped elsewhere (CI). Run on the
GPU machine by scripts/gpu-run.sh's `large` stage."""

import math

import pytest

torch = pytest.importorskip("torch")

import fa  # noqa: E402

GPU = torch.cuda.is_available() and fa.gpu_available()[0]
BIG_BYTES = 60 << 30


def free_bytes():
    return torch.cuda.mem_get_info()[0] if GPU else 0


def rel(got, ref):
    return ((got.double() - ref.double()).norm() /
            ref.double().norm().clamp_min(1e-30)).item()


def local_reference(q, k, v, do, rows, window):
    """o, dq of query rows `rows` and dk, dv of the keys whose every query
    lies in them (the others also see rows outside): causal attention with a
    window of `window` keys, in float64, over the keys rows can see."""
    r0, r1 = rows
    lo = max(0, r0 - window + 1)
    qs = q[:, :, r0:r1].double().requires_grad_()
    ks = k[:, :, lo:r1].double().requires_grad_()
    vs = v[:, :, lo:r1].double().requires_grad_()
    i = torch.arange(r0, r1, device=q.device)[:, None]
    j = torch.arange(lo, r1, device=q.device)[None, :]
    ok = (j <= i) & (j > i - window)
    s = (qs @ ks.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    o = torch.softmax(s.masked_fill(~ok, float("-inf")), -1) @ vs
    o.backward(do[:, :, r0:r1].double())
    exact_hi = q.shape[2] if r1 == q.shape[2] else r1 - window + 1
    keys = slice(r0 - lo, exact_hi - lo)
    return o, qs.grad, ks.grad[:, :, keys], vs.grad[:, :, keys], (r0, exact_hi)


@pytest.mark.skipif(free_bytes() < BIG_BYTES,
                    reason="needs a GPU with 60 GB free")
@pytest.mark.parametrize("s,d", [(500_000, 128), (1_000_000, 64)])
def test_past_2_31_elements_forward_backward(s, d):
    # 36 * 500000 * 128 = 2.3e9 elements per tensor: element offsets of the
    # last heads pass 2^31 (and 2^32 bytes). The window keeps it cheap; at
    # D 64 it is short enough that the forward runs on mma.sync, at D 128
    # on wgmma (on Hopper).
    torch.manual_seed(0)
    b, h, window = 1, 36, 128
    assert b * h * s * d > 2**31
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    o = fa.attention(q, k, v, causal=True, window=window)
    do = torch.randn_like(o)
    o.backward(do)
    # Rows before 2^31, across it, and the last.
    boundary = (2**31 // d) % s
    cases = [(0, (0, 512)), (2**31 // d // s,
                            (boundary - 256, boundary + 256)),
             (h - 1, (s - 512, s))]
    for head, rows in cases:
        sl = slice(head, head + 1)
        ref_o, ref_dq, ref_dk, ref_dv, keys = local_reference(
            q[:, sl].detach(), k[:, sl].detach(), v[:, sl].detach(),
            do[:, sl], rows, window)
        errors = {
            "o": rel(o[:, sl, rows[0]:rows[1]], ref_o),
            "dq": rel(q.grad[:, sl, rows[0]:rows[1]], ref_dq),
            "dk": rel(k.grad[:, sl, keys[0]:keys[1]], ref_dk),
            "dv": rel(v.grad[:, sl, keys[0]:keys[1]], ref_dv),
        }
        print(f"head {head} rows {rows}: " +
              ", ".join(f"{n} {e:.2e}" for n, e in errors.items()))
        for name, err in errors.items():
            assert err < 1e-2, f"{name} of head {head} rows {rows}: {err}"


@pytest.mark.skipif(not GPU, reason="needs a GPU")
@pytest.mark.parametrize("head_dim", [64, 128])
def test_batch_times_heads_past_grid_y_z(head_dim):
    # B = 70000 alone passes grid z's 65535; B * H = 280000 blocks' worth.
    torch.manual_seed(0)
    b, hq, hkv, s = 70_000, 4, 2, 16
    q = torch.randn(b, hq, s, head_dim, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    k, v = (torch.randn(b, hkv, s, head_dim, device="cuda",
                        dtype=torch.bfloat16, requires_grad=True)
            for _ in range(2))
    o = fa.attention(q, k, v, causal=True)
    do = torch.randn_like(o)
    o.backward(do)
    qd, kd, vd = (t.detach().double().requires_grad_() for t in (q, k, v))
    ref = torch.nn.functional.scaled_dot_product_attention(
        qd, kd.repeat_interleave(2, 1), vd.repeat_interleave(2, 1),
        is_causal=True)
    ref.backward(do.double())
    for name, got, want in [("o", o, ref), ("dq", q.grad, qd.grad),
                            ("dk", k.grad, kd.grad), ("dv", v.grad, vd.grad)]:
        err = rel(got, want)
        print(f"D {head_dim} {name}: {err:.2e}")
        assert err < 1e-2, f"{name}: {err}"
