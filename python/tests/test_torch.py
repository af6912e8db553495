"""fa with PyTorch: autograd, the custom op under torch.compile, GPU and CPU
tensors, checked against PyTorch in float64. Skipped where torch is absent
(CI); run on the GPU machine by scripts/gpu-run.sh."""

import math

import pytest

torch = pytest.importorskip("torch")

import fa  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() and
                     fa.gpu_available()[0] else [])
TOL = {torch.float64: 1e-9, torch.float32: 1e-4, torch.bfloat16: 3e-2,
       torch.float16: 5e-3}


def rel(got, ref):
    return ((got.double() - ref.double()).abs().max() /
            ref.double().abs().max().clamp_min(1e-30)).item()


def reference(q, k, v, causal=False, window=None, sink_tokens=0, sinks=None,
              scale=None):
    """PyTorch eager in float64, mask as a tensor (fine for a reference)."""
    q, k, v = q.double(), k.double(), v.double()
    hq, hkv, sq, sk = q.shape[1], k.shape[1], q.shape[2], k.shape[2]
    k = k.repeat_interleave(hq // hkv, 1)
    v = v.repeat_interleave(hq // hkv, 1)
    s = (q @ k.transpose(-1, -2)) * (scale or 1 / math.sqrt(q.shape[-1]))
    i = torch.arange(sq, device=q.device)[:, None] + (sk - sq)
    j = torch.arange(sk, device=q.device)[None, :]
    ok = torch.ones(sq, sk, dtype=torch.bool, device=q.device)
    if causal:
        ok &= j <= i
    if window is not None:
        ok &= (j > i - window) | (j < sink_tokens)
    s = s.masked_fill(~ok, float("-inf"))
    if sinks is not None:
        s = torch.cat([s, sinks.double()[None, :, None, None].expand(
            s.shape[0], -1, sq, 1)], dim=-1)
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return p[..., :sk] @ v


def check_against_float64(q, k, v, sinks, variant, tol):
    """fa.attention's o and the gradients of q, k, v (and sinks) under a
    random dO, each within `tol` of the float64 reference."""
    o = fa.attention(q, k, v, sinks=sinks, **variant)
    do = torch.randn_like(o)
    o.backward(do)
    leaves = [q, k, v] + ([sinks] if sinks is not None else [])
    refs = [x.detach().double().requires_grad_() for x in leaves]
    ref = reference(*refs[:3], sinks=refs[3] if sinks is not None else None,
                    **variant)
    ref.backward(do.double())
    assert rel(o, ref) < tol
    for x, r in zip(leaves, refs):
        # dsinks (kept in float32) inherits the inputs' rounding through
        # D = rowsum(dO * o): the inputs' tolerance applies to it too.
        assert rel(x.grad, r.grad) < tol


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs fa's GPU path")
def test_a_layout_the_tensor_cores_refuse_takes_a_program_with_the_fallback(
        caplog):
    """fa's GPU programs carry no scalar loops beside the tensor-core
    kernels of their head dim: a call whose operands start off a 16-byte
    boundary runs on a program compiled with them, and calls of either
    layout, in either order, give float64's answer forward and backward."""
    import logging
    torch.manual_seed(5)
    shape_q, shape_kv = (2, 8, 77, 64), (2, 2, 93, 64)

    def operand(shape, offset):
        base = torch.randn(math.prod(shape) + offset, device="cuda",
                           dtype=torch.bfloat16)
        return base[offset:].view(shape).detach().requires_grad_()

    sinks = torch.randn(8, device="cuda", requires_grad=True)
    variant = dict(causal=True, window=40)
    fa.clear_cache()
    with caplog.at_level(logging.INFO, logger="fa"):
        for offset in (1, 0, 3, 0):
            q, k, v = (operand(shape_q, offset), operand(shape_kv, offset),
                       operand(shape_kv, offset))
            assert (q.data_ptr() % 16 == 0) == (offset == 0)
            sinks.grad = None
            check_against_float64(q, k, v, sinks, variant,
                                  TOL[torch.bfloat16])
    notes = [r.getMessage() for r in caplog.records
             if "runs the scalar GPU loops" in r.getMessage()]
    assert notes and all("16-byte aligned" in n for n in notes)


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs fa's GPU path")
def test_a_backward_whose_o_the_row_dot_kernel_refuses_still_zeroes_dq():
    """On Hopper the D kernel also zeroes the f32 accumulator that dQ adds
    into; where o's rows are not whole 16-byte chunks apart, D comes from
    the scalar loop and a kernel of its own zeroes the accumulator. dq,
    dk and dv are float64's with o in either layout, each call after one
    that left the accumulator's workspace nonzero."""
    from fa import api
    torch.manual_seed(7)
    shape = (2, 4, 333, 64)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    o, lse = api.attention_forward(q, k, v, True, None, 0, None, None)
    do = torch.randn_like(o)
    # Rows 65 elements (130 bytes) apart: the D kernel refuses them.
    padded = torch.empty(shape[:3] + (65,), device="cuda",
                         dtype=torch.bfloat16)[..., :64]
    padded.copy_(o)
    refs = [x.double().requires_grad_() for x in (q, k, v)]
    reference(*refs, causal=True).backward(do.double())
    for o_given in (o, padded, o, padded):
        dq, dk, dv, _ = api.attention_backward(q, k, v, o_given, lse, do,
                                               True, None, 0, None, None)
        for got, ref in zip((dq, dk, dv), refs):
            assert rel(got, ref.grad) < TOL[torch.bfloat16]


VARIANTS = [dict(), dict(causal=True), dict(causal=True, window=9),
            dict(causal=True, window=16, sink_tokens=4)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16,
                                   torch.float64])
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("sinks", [False, True])
def test_forward_backward_against_float64(device, dtype, variant, sinks):
    torch.manual_seed(0)
    shape_q, shape_kv = (2, 8, 45, 64), (2, 2, 61, 64)
    q = torch.randn(shape_q, device=device, dtype=dtype, requires_grad=True)
    k = torch.randn(shape_kv, device=device, dtype=dtype, requires_grad=True)
    v = torch.randn(shape_kv, device=device, dtype=dtype, requires_grad=True)
    acc = torch.float64 if dtype == torch.float64 else torch.float32
    s = torch.randn(8, device=device, dtype=acc, requires_grad=True) \
        if sinks else None
    check_against_float64(q, k, v, s, variant, TOL[dtype])


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs fa's GPU path")
@pytest.mark.parametrize("head_dim", [32, 80, 96, 192, 256])
@pytest.mark.parametrize("sinks", [False, True])
def test_head_dims_on_the_gpu(head_dim, sinks):
    """Every tensor-core head dim, forward and backward (the wgmma backward
    splits dK/dV's columns past D 128), with learnable sinks, on odd
    lengths, against float64."""
    torch.manual_seed(head_dim)
    make = lambda h, s: torch.randn(1, h, s, head_dim, device="cuda",
                                    dtype=torch.bfloat16, requires_grad=True)
    q, k, v = make(8, 197), make(2, 301), make(2, 301)
    s = torch.randn(8, device="cuda", requires_grad=True) if sinks else None
    variant = dict(causal=True, window=100, sink_tokens=3)
    check_against_float64(q, k, v, s, variant, TOL[torch.bfloat16])


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs fa's GPU path")
@pytest.mark.parametrize("shape", [(1, 28, 4, 1, 3000, 128),
                                   (2, 32, 8, 4, 2049, 64),
                                   (1, 12, 4, 16, 1500, 80),
                                   (1, 4, 2, 3, 2500, 256)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("variant", [dict(causal=True),
                                     dict(causal=True, window=1024,
                                          sink_tokens=4)],
                         ids=["causal", "window+sink_tokens"])
@pytest.mark.parametrize("sinks", [False, True])
def test_decode_shapes_split_the_keys(shape, variant, sinks):
    """Few query rows against many keys (decode, speculative decoding),
    with too few query blocks to fill the GPU: the split-KV forward
    (several blocks per query block, a kv head's group of query heads in
    one block, partials merged by lse, a learnable sink joining once in the
    merge), and the backward on its lse, against float64."""
    b, hq, hkv, sq, sk, d = shape
    torch.manual_seed(sq * sk)
    make = lambda h, s: torch.randn(b, h, s, d, device="cuda",
                                    dtype=torch.bfloat16, requires_grad=True)
    q, k, v = make(hq, sq), make(hkv, sk), make(hkv, sk)
    s = torch.randn(hq, device="cuda", requires_grad=True) if sinks else None
    check_against_float64(q, k, v, s, variant, TOL[torch.bfloat16])


@pytest.mark.parametrize("device", DEVICES)
def test_nan_in_v_reaches_the_rows_that_see_it_and_no_far_tile(device):
    """As test_numpy's test of that name, on each device's kernels (the
    wgmma or mma.sync forward on the GPU): rows that see key 650 are NaN;
    rows below 512 share no query tile (at most 256 rows) with them."""
    torch.manual_seed(4)
    q, k, v = (torch.randn(1, 2, 700, 64, device=device,
                           dtype=torch.bfloat16) for _ in range(3))
    ref = reference(q, k, v, causal=True)
    v[0, 1, 650, 3] = float("nan")
    o = fa.attention(q, k, v, causal=True)
    assert torch.isnan(o[0, 1, 650:, 3]).all()
    assert rel(o[0, 1, :512], ref[0, 1, :512]) < TOL[torch.bfloat16]
    assert rel(o[0, 0], ref[0, 0]) < TOL[torch.bfloat16]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(1, 4, 2, 300, 300, 64),
                                   (1, 8, 2, 1, 3000, 128),
                                   (2, 8, 8, 3, 2100, 64)])
def test_keys_past_the_sequence_are_never_read(device, shape):
    """k and v are views of longer buffers (a cache's unwritten slots) whose
    rows past the sequence are NaN: no row reads them, not through the
    last partial tile, and not in the split-KV forward of decode shapes."""
    b, hq, hkv, sq, sk, d = shape
    torch.manual_seed(sk)
    q = torch.randn(b, hq, sq, d, device=device, dtype=torch.bfloat16)
    k, v = (torch.randn(b, hkv, sk + 77, d, device=device,
                        dtype=torch.bfloat16) for _ in range(2))
    k[:, :, sk:] = v[:, :, sk:] = float("nan")
    k, v = k[:, :, :sk], v[:, :, :sk]
    o = fa.attention(q, k, v, causal=True)
    assert rel(o, reference(q, k, v, causal=True)) < TOL[torch.bfloat16]


def reference_decode(q, k, v, lengths, **variant):
    """reference() of each batch entry over its first lengths[b] keys."""
    outs = []
    for e, n in enumerate(lengths.tolist()):
        if n == 0:
            outs.append(torch.zeros_like(q[e:e + 1], dtype=torch.float64))
            continue
        outs.append(reference(q[e:e + 1], k[e:e + 1, :, :n],
                              v[e:e + 1, :, :n], **variant))
    return torch.cat(outs)


DECODE_SHAPES = [
    # B, Hq, Hkv, Sq, cache slots, D: Llama-like GQA, gpt-oss-like, MHA
    # with a speculative block of 16 rows, and enough batch to fill the GPU
    # without splitting.
    (3, 32, 8, 1, 3000, 128), (2, 64, 8, 4, 2100, 64),
    (2, 8, 8, 16, 700, 128), (40, 16, 4, 1, 300, 64)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", DECODE_SHAPES)
@pytest.mark.parametrize("variant", [dict(causal=True),
                                     dict(causal=True, window=128),
                                     dict(causal=True, window=64,
                                          sink_tokens=4)])
def test_decode_over_caches_filled_to_ragged_lengths(device, shape, variant):
    """fa.decode on each device's kernels (on the GPU: the split-KV forward
    where the blocks leave SMs idle, else mma.sync's), the slots past each
    length NaN, against float64."""
    b, hq, hkv, sq, slots, d = shape
    torch.manual_seed(slots + sq)
    lengths = torch.randint(1, slots + 1, (b,), dtype=torch.int32)
    lengths[0], lengths[-1] = 1, slots
    q = torch.randn(b, hq, sq, d, device=device, dtype=torch.bfloat16)
    k, v = (torch.randn(b, hkv, slots, d, device=device, dtype=torch.bfloat16)
            for _ in range(2))
    unwritten = (torch.arange(slots)[None, None, :, None] >=
                 lengths[:, None, None, None]).to(device)
    k, v = k.masked_fill(unwritten, float("nan")), \
        v.masked_fill(unwritten, float("nan"))
    sinks = torch.randn(hq, device=device)
    o = fa.decode(q, k, v, cache_seqlens=lengths.to(device), sinks=sinks,
                  **variant)
    ref = reference_decode(q, k, v, lengths, sinks=sinks, **variant)
    assert rel(o, ref) < TOL[torch.bfloat16]


def _page_pool(b, hkv, slots, d, lengths, page, spare_pages=3):
    """Contiguous caches [B, Hkv, N * page, D] and the same keys in a
    shuffled pool of pages ([pages, P, Hkv, D]) with its block table: the
    pool's unowned pages (spare_pages of them, the last) and the rows past
    each length are NaN, the contiguous caches' rows past it 0."""
    n = -(-slots // page)
    k, v = (torch.randn(b, hkv, n * page, d, dtype=torch.bfloat16)
            for _ in range(2))
    pages = b * n + spare_pages
    table = torch.randperm(b * n).reshape(b, n).to(torch.int32)
    pool_k = torch.full((pages, page, hkv, d), float("nan"),
                        dtype=torch.bfloat16)
    pool_v = pool_k.clone()
    for e in range(b):
        for j in range(-(-int(lengths[e]) // page)):
            rows = slice(j * page, (j + 1) * page)
            pool_k[table[e, j]] = k[e, :, rows].transpose(0, 1)
            pool_v[table[e, j]] = v[e, :, rows].transpose(0, 1)
    past = torch.arange(n * page)[None, None, :, None] >= \
        lengths[:, None, None, None]
    k, v = k.masked_fill(past, 0), v.masked_fill(past, 0)
    for e in range(b):  # the rows of a last page past the length: NaN
        j = int(lengths[e]) // page
        if int(lengths[e]) % page:
            pool_k[table[e, j], int(lengths[e]) % page:] = float("nan")
            pool_v[table[e, j], int(lengths[e]) % page:] = float("nan")
    return k, v, pool_k, pool_v, table


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("page", [16, 64])
@pytest.mark.parametrize("shape", [(3, 32, 8, 1, 2000, 128),
                                   (40, 64, 8, 2, 300, 64),
                                   (2, 8, 8, 16, 700, 128)])
def test_paged_decode_reads_each_sequence_through_its_block_table(
        device, page, shape):
    """fa.decode over a shuffled pool of pages ([pages, P, Hkv, D], taken
    transposed) against the same keys in contiguous caches; the pool's
    unowned pages and the rows past each length are NaN (never read)."""
    b, hq, hkv, sq, slots, d = shape
    torch.manual_seed(page + slots)
    lengths = torch.randint(1, slots + 1, (b,), dtype=torch.int32)
    lengths[0], lengths[-1] = 1, slots
    k, v, pool_k, pool_v, table = _page_pool(b, hkv, slots, d, lengths, page)
    q = torch.randn(b, hq, sq, d, dtype=torch.bfloat16)
    sinks = torch.randn(hq)
    o = fa.decode(q.to(device), pool_k.to(device).transpose(1, 2),
                  pool_v.to(device).transpose(1, 2),
                  cache_seqlens=lengths.to(device),
                  block_table=table.to(device), sinks=sinks.to(device),
                  window=128)
    ref = reference_decode(q, k, v, lengths, causal=True, window=128,
                           sinks=sinks)
    assert rel(o.cpu(), ref) < TOL[torch.bfloat16]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("page", [16, 48])
@pytest.mark.parametrize("shape", [(3, 32, 8, 1, 6000, 128),
                                   (2, 64, 8, 4, 9000, 64)])
def test_paged_decode_of_long_caches_takes_a_strided_block_table(
        device, page, shape):
    """Without a window every key tile of a long cache is read through the
    block table (on the GPU the split-KV kernels, which copy each tile's
    entries ahead into shared memory), here a view whose rows are apart by
    twice their length: the first columns of a wider table whose others
    name a NaN page."""
    b, hq, hkv, sq, slots, d = shape
    torch.manual_seed(page + slots + 1)
    lengths = torch.randint(1, slots + 1, (b,), dtype=torch.int32)
    lengths[-1] = slots
    k, v, pool_k, pool_v, table = _page_pool(b, hkv, slots, d, lengths, page)
    wide = torch.full((b, 2 * table.shape[1]), pool_k.shape[0] - 1,
                      dtype=torch.int32)
    wide[:, :table.shape[1]] = table
    q = torch.randn(b, hq, sq, d, dtype=torch.bfloat16)
    sinks = torch.randn(hq)
    o = fa.decode(q.to(device), pool_k.to(device).transpose(1, 2),
                  pool_v.to(device).transpose(1, 2),
                  cache_seqlens=lengths.to(device),
                  block_table=wide.to(device)[:, :table.shape[1]],
                  sinks=sinks.to(device))
    ref = reference_decode(q, k, v, lengths, causal=True, sinks=sinks)
    assert rel(o.cpu(), ref) < TOL[torch.bfloat16]


@pytest.mark.parametrize("device", DEVICES)
def test_decode_with_a_nan_sink_logit_makes_its_head_nan(device):
    """On the GPU the split-KV merge adds the sink: a NaN logit there must
    give NaN, not o = 0 and lse = -inf (as test_numpy's test of the
    forward)."""
    torch.manual_seed(3)
    q = torch.randn(1, 32, 1, 128, device=device, dtype=torch.bfloat16)
    k, v = (torch.randn(1, 8, 3000, 128, device=device,
                        dtype=torch.bfloat16) for _ in range(2))
    sinks = torch.randn(32, device=device)
    sinks[5] = float("nan")
    n = torch.tensor([2500], dtype=torch.int32, device=device)
    o, lse = fa.decode(q, k, v, cache_seqlens=n, sinks=sinks,
                       return_lse=True)
    assert torch.isnan(o[0, 5]).all() and torch.isnan(lse[0, 5]).all()
    others = [h for h in range(32) if h != 5]
    assert torch.isfinite(o[0, others]).all()


def test_decode_checks_every_calls_lengths_not_only_the_first():
    # A repeat of a checked call skips the shape checks, never the values.
    q = torch.randn(2, 4, 1, 16)
    k = v = torch.randn(2, 2, 8, 16)
    n = torch.tensor([8, 3], dtype=torch.int32)
    fa.decode(q, k, v, cache_seqlens=n)
    n[1] = 9
    with pytest.raises(ValueError, match=r"cache_seqlens holds 9, outside"):
        fa.decode(q, k, v, cache_seqlens=n)


def test_decode_has_no_backward():
    q = torch.randn(1, 2, 1, 16, requires_grad=True)
    k = v = torch.randn(1, 2, 8, 16)
    n = torch.tensor([8], dtype=torch.int32)
    with pytest.raises(ValueError, match="fa.decode has no backward"):
        fa.decode(q, k, v, cache_seqlens=n)
    with torch.no_grad():
        assert fa.decode(q, k, v, cache_seqlens=n).shape == (1, 2, 1, 16)


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs a GPU")
@pytest.mark.parametrize("shape", [(2, 32, 8, 1, 4096, 128),
                                   (4, 64, 8, 1, 2048, 64)])
def test_decode_step_in_a_cuda_graph_replays_with_new_lengths(shape):
    """A decode step captured once in a torch.cuda.CUDAGraph (after one
    eager call compiled it), replayed with new lengths and new queries
    copied into the captured tensors: each replay matches float64."""
    b, hq, hkv, sq, slots, d = shape
    torch.manual_seed(7)
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, hkv, slots, d, device="cuda",
                        dtype=torch.bfloat16) for _ in range(2))
    sinks = torch.randn(hq, device="cuda")
    lengths = torch.full((b,), slots, dtype=torch.int32, device="cuda")
    fa.decode(q, k, v, cache_seqlens=lengths, sinks=sinks, window=128)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        o = fa.decode(q, k, v, cache_seqlens=lengths, sinks=sinks,
                      window=128)
    for step in range(3):
        new = torch.randint(1, slots + 1, (b,), dtype=torch.int32)
        lengths.copy_(new)
        q.copy_(torch.randn_like(q))
        graph.replay()
        torch.cuda.synchronize()
        ref = reference_decode(q, k, v, new, causal=True, window=128,
                               sinks=sinks)
        assert rel(o, ref) < TOL[torch.bfloat16], step


def test_gradcheck_float64():
    torch.manual_seed(1)
    q = torch.randn(1, 2, 7, 8, dtype=torch.float64, requires_grad=True)
    k = torch.randn(1, 1, 9, 8, dtype=torch.float64, requires_grad=True)
    v = torch.randn(1, 1, 9, 8, dtype=torch.float64, requires_grad=True)
    s = torch.randn(2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda q, k, v, s: fa.attention(q, k, v, causal=True, window=4,
                                        sinks=s), (q, k, v, s))


def test_saves_no_quadratic_tensor():
    q = torch.randn(1, 2, 256, 16, requires_grad=True)
    k = torch.randn(1, 2, 256, 16, requires_grad=True)
    v = torch.randn(1, 2, 256, 16, requires_grad=True)
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(
            lambda t: saved.append(t.numel()) or t, lambda t: t):
        fa.attention(q, k, v, causal=True)
    assert saved and max(saved) < 256 * 256


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_fullgraph(device):
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(64, 64)

        def forward(self, x):
            b, s, _ = x.shape
            h = self.proj(x).view(b, s, 4, 16).transpose(1, 2)
            return fa.attention(h, h, h, causal=True).transpose(1, 2) \
                .reshape(b, s, 64)

    model = Block().to(device)
    x = torch.randn(2, 33, 64, device=device)
    compiled = torch.compile(model, fullgraph=True)
    assert rel(compiled(x), model(x)) < 1e-5


class _OpRecorder(torch.utils._python_dispatch.TorchDispatchMode):
    """Records the ops dispatched under it (as FlopCounterMode sees them)."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("device", DEVICES)
def test_eager_path_and_custom_op_agree(device):
    """Plain eager calls skip torch.library's dispatch; under a dispatch
    mode fa's custom op is what the mode sees. Both give the same values
    and gradients, and both refuse a gradient of the backward."""
    torch.manual_seed(0)
    shape = (2, 4, 37, 64)
    inputs = [torch.randn(shape, device=device, dtype=torch.float64)
              for _ in range(3)]
    sinks = torch.randn(4, device=device, dtype=torch.float64)
    do = torch.randn(shape, device=device, dtype=torch.float64)

    def run(recorder=None):
        q, k, v, s = (t.clone().requires_grad_() for t in inputs + [sinks])
        if recorder is None:
            o = fa.attention(q, k, v, causal=True, window=9, sinks=s)
        else:
            with recorder:
                o = fa.attention(q, k, v, causal=True, window=9, sinks=s)
        grads = torch.autograd.grad(o, (q, k, v, s), do, create_graph=True)
        with pytest.raises(RuntimeError):
            torch.autograd.grad(grads[0].sum(), q)
        return [o.detach()] + [g.detach() for g in grads]

    recorder = _OpRecorder()
    watched = run(recorder)
    assert any("fa.attention_fwd" in op for op in recorder.ops)
    for got, ref in zip(run(), watched):
        assert rel(got, ref) < 1e-12


def test_eager_call_does_not_import_dynamo():
    """torch.library ops import torch._dynamo at their first call (seconds);
    fa's plain eager calls do not."""
    import subprocess
    import sys
    script = ("import sys, torch, fa\n"
              "before = 'torch._dynamo' in sys.modules\n"
              "q = torch.randn(1, 2, 8, 16, requires_grad=True)\n"
              "fa.attention(q, q, q, causal=True).sum().backward()\n"
              "print(before, 'torch._dynamo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    before, after = out.stdout.split()
    if before == "True":
        pytest.skip("this torch imports torch._dynamo with torch")
    assert after == "False"


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs a GPU")
def test_runs_in_order_on_the_callers_stream():
    """fa queues on torch's current stream without a device-wide wait: its
    inputs come from work still running on a side stream when it is
    called, and its output is read by work queued after it."""
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        busy = torch.randn(4096, 4096, device="cuda")
        for _ in range(8):  # keeps the stream busy for a while
            busy = torch.tanh(busy @ busy)
        q, k, v = (torch.randn(2, 4, 300, 64, device="cuda",
                               dtype=torch.bfloat16) + 0 * busy[0, 0]
                   for _ in range(3))
        q.requires_grad_()
        o = fa.attention(q, k, v, causal=True)
        o.backward(torch.ones_like(o))
        got = o.double().clone(), q.grad.double().clone()
    side.synchronize()
    qr = q.detach().double().requires_grad_()
    ref = reference(qr, k, v, causal=True)
    ref.backward(torch.ones_like(ref))
    assert rel(got[0], ref) < TOL[torch.bfloat16]
    assert rel(got[1], qr.grad) < TOL[torch.bfloat16]


_TUNE_SCRIPT = """
import torch, fa
q, k, v = (torch.randn(1, 8, 1000, 64, device="cuda", dtype=torch.bfloat16)
           for _ in range(3))
o = fa.attention(q, k, v, causal=True)
torch.cuda.synchronize()
print("ok", bool(torch.isfinite(o).all()))
"""


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs a GPU")
def test_float32_takes_tf32_only_when_torch_allows_it():
    # f32 runs on the tensor cores either way: three tf32 MMAs per product
    # (f32 accuracy) by default, one when torch allows tf32 for matmuls.
    torch.manual_seed(3)
    q = torch.randn(2, 4, 100, 128, device="cuda", requires_grad=True)
    k = torch.randn(2, 2, 150, 128, device="cuda", requires_grad=True)
    v = torch.randn(2, 2, 150, 128, device="cuda", requires_grad=True)
    do = torch.randn(2, 4, 100, 128, device="cuda")
    refs = [x.detach().double().requires_grad_() for x in (q, k, v)]
    ref = reference(*refs, causal=True)
    ref.backward(do.double())
    before = torch.backends.cuda.matmul.allow_tf32
    outputs = {}
    try:
        for allow, tol in ((False, 1e-4), (True, 5e-3)):
            torch.backends.cuda.matmul.allow_tf32 = allow
            for x in (q, k, v):
                x.grad = None
            o = fa.attention(q, k, v, causal=True)
            o.backward(do)
            assert rel(o, ref) < tol, allow
            for x, r in zip((q, k, v), refs):
                assert rel(x.grad, r.grad) < tol, allow
            outputs[allow] = o.detach()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before
    assert not torch.equal(outputs[False], outputs[True])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("sinks", [False, True])
def test_deterministic_backward_repeats_bit_for_bit(device, head_dim, sinks):
    # deterministic=True rules out dQ by f32 atomics (whose order varies;
    # the default on sm_90a up to D 128): five runs, the same bits, and
    # within bf16's tolerance of float64 too. dsinks sums per-block
    # partials of the D kernel in a fixed order, so it repeats as well.
    torch.manual_seed(2)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    q = torch.randn(2, 8, 333, head_dim, device=device, dtype=dtype)
    k = torch.randn(2, 2, 517, head_dim, device=device, dtype=dtype)
    v = torch.randn(2, 2, 517, head_dim, device=device, dtype=dtype)
    do = torch.randn(2, 8, 333, head_dim, device=device, dtype=dtype)
    s = torch.randn(8, device=device) if sinks else None
    inputs = [x for x in (q, k, v, s) if x is not None]
    refs = [x.double().requires_grad_() for x in inputs]
    reference(*refs[:3], causal=True,
              sinks=refs[3] if sinks else None).backward(do.double())

    def grads(deterministic):
        leaves = [x.clone().requires_grad_() for x in inputs]
        fa.attention(*leaves[:3], causal=True,
                     sinks=leaves[3] if sinks else None,
                     deterministic=deterministic).backward(do)
        return [x.grad for x in leaves]

    first = grads(True)
    for _ in range(4):
        for got, want in zip(grads(True), first):
            assert torch.equal(got, want)
    for got, r in zip(first, refs):
        assert rel(got, r.grad) < TOL[dtype]
    for got, r in zip(grads(False), refs):
        assert rel(got, r.grad) < TOL[dtype]


def test_deterministic_must_be_a_bool():
    q = torch.randn(1, 2, 8, 16)
    with pytest.raises(TypeError, match="deterministic must be a bool"):
        fa.attention(q, q, q, deterministic="yes")


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs a GPU")
def test_workspace_peak_counts_the_backwards_row_statistics():
    # D = rowsum(dO * o), [B, Hq, Sq] in f32, lives in fa's own workspace.
    q, k, v = (torch.randn(2, 4, 300, 64, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    fa.reset_workspace_peak()
    fa.attention(q, k, v, causal=True).sum().backward()
    torch.cuda.synchronize()
    assert fa.workspace_peak_bytes() >= 2 * 4 * 300 * 4
    fa.reset_workspace_peak()
    assert fa.workspace_peak_bytes() == 0


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs a GPU")
def test_two_processes_autotuning_one_shape_leave_a_valid_cache(tmp_path):
    """Both tune at once (each times every candidate and stores its pick);
    a third process then finds the choice in the cache and tunes nothing."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, FA_CACHE_DIR=str(tmp_path), FA_AUTOTUNE="1")
    run = [sys.executable, "-c", _TUNE_SCRIPT]
    procs = [subprocess.Popen(run, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        assert "ok True" in out
        assert "fa: autotuning" in err  # progress, one line per candidate
    third = subprocess.run(run, env=env, capture_output=True, text=True,
                           timeout=600)
    assert third.returncode == 0, third.stderr
    assert "ok True" in third.stdout
    assert "fa: autotuning" not in third.stderr


_FIRST_CALL_SCRIPT = """
import torch, fa
torch.manual_seed(0)
q = torch.randn(1, 8, 2048, 128, device="cuda", dtype=torch.bfloat16,
                requires_grad=True)
k, v = (torch.randn(1, 2, 2048, 128, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True) for _ in range(2))
fa.attention(q, k, v, causal=True).sum().backward()
torch.cuda.synchronize()
print("ok", bool(torch.isfinite(q.grad).all()))
"""


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs a GPU")
@pytest.mark.parametrize("autotune", [None, "0"])
def test_a_first_call_compiles_one_config_per_entry(tmp_path, autotune):
    """A fresh process's first forward and backward lower and assemble one
    program each (FA_COMPILE_TIMES prints a line per compile), whether the
    config comes from the shipped table (FA_AUTOTUNE unset) or is the
    compiler's (0): a program on the table compiles the config its call
    takes, not the default beside it."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, FA_CACHE_DIR=str(tmp_path), FA_COMPILE_TIMES="1")
    env.pop("FA_AUTOTUNE", None)
    if autotune is not None:
        env["FA_AUTOTUNE"] = autotune
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL_SCRIPT], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "ok True" in out.stdout
    compiles = [line for line in out.stderr.splitlines()
                if line.startswith("fa: compile times:")]
    assert len(compiles) == 2, out.stderr
    assert all("lowering" in line for line in compiles), compiles


@pytest.mark.parametrize("device", DEVICES)
def test_backward_compiles_beside_the_forward_only_when_gradients_are_needed(
        device):
    """A forward whose inputs need gradients starts compiling the backward
    in the background; under no_grad (inference) nothing but the forward
    is built."""
    fa.clear_cache()
    q, k, v = (torch.randn(1, 2, 33, 16, device=device, dtype=torch.float64)
               for _ in range(3))
    with torch.no_grad():
        fa.attention(q, k, v, causal=True, window=7)
    entries = lambda: {key[-1] for key in (list(fa.api._programs) +
                                           list(fa.api._compiling))}
    assert entries() == {"forward"}
    fa.clear_cache()
    q.requires_grad_()
    o = fa.attention(q, k, v, causal=True, window=7)
    assert entries() == {"forward", "backward"}
    o.sum().backward()
    assert {key[-1] for key in fa.api._programs} == {"forward", "backward"}
    assert not fa.api._compiling
    q_ref = q.detach().clone().requires_grad_()
    reference(q_ref, k, v, causal=True, window=7).sum().backward()
    assert rel(q.grad, q_ref.grad) < 1e-10
    fa.clear_cache()


def test_a_new_forward_needing_gradients_starts_the_backward_first():
    # The backward's compile is under way before the forward's own starts,
    # so that a cold forward and backward wait for the longer compile, not
    # for both one after the other.
    from fa import api
    fa.clear_cache()
    seen = []
    real_compile = api._fa.Program.compile

    def compile(*args, entry=None, **kwargs):
        if entry == "forward":
            seen.append(sorted(key[-1] for key in api._compiling))
        return real_compile(*args, entry=entry, **kwargs)

    api._fa.Program.compile = compile
    try:
        q = torch.randn(1, 2, 8, 16, requires_grad=True)
        fa.attention(q, q, q, causal=True)
    finally:
        api._fa.Program.compile = real_compile
    assert seen == [["backward"]]
    fa.wait_for_compiles()
    fa.clear_cache()


def test_lse_gradient_is_refused_not_wrong():
    q = torch.randn(1, 2, 8, 16, requires_grad=True)
    o, lse = fa.attention(q, q, q, return_lse=True)
    with pytest.raises(NotImplementedError, match="gradients through lse"):
        (o.sum() + lse.sum()).backward()


def test_gradients_of_gradients_are_refused_not_wrong():
    """Under create_graph the eager backward gives the same gradients, and
    differentiating them again is an error (fa has no double backward),
    not a silent zero."""
    q = torch.randn(1, 2, 8, 16, requires_grad=True)
    o = fa.attention(q, q, q, causal=True)
    (want,) = torch.autograd.grad(o.sum(), q, retain_graph=True)
    (g,) = torch.autograd.grad(o.sum(), q, create_graph=True)
    assert torch.equal(g, want) and g.abs().sum() > 0
    # Not differentiable: an error from torch's engine (the gradients carry
    # no graph, or once_differentiable's node where dO carries one).
    with pytest.raises(RuntimeError,
                       match="differentiate twice|does not require grad"):
        g.sum().backward()
    do = torch.randn_like(o, requires_grad=True)
    (g,) = torch.autograd.grad(o, q, do, create_graph=True)
    assert torch.equal(g, torch.autograd.grad(o, q, do.detach(),
                                              retain_graph=True)[0])
    with pytest.raises(RuntimeError, match="differentiate twice"):
        g.sum().backward()


def test_unused_outputs_need_no_gradient():
    """An unused lse reaches the backward as None (no zeros read back on
    the host); an lse whose gradient is zero, with o unused, gives zero
    gradients; both in eager autograd and through the custom op."""
    q = torch.randn(1, 2, 8, 16, requires_grad=True)
    o, lse = fa.attention(q, q, q, causal=True, return_lse=True)
    (g,) = torch.autograd.grad(o.sum(), q, retain_graph=True)
    o2 = fa.attention(q, q, q, causal=True)
    (want,) = torch.autograd.grad(o2.sum(), q)
    assert torch.equal(g, want) and g.abs().sum() > 0
    (zero,) = torch.autograd.grad((0 * lse).sum(), q)
    assert torch.equal(zero, torch.zeros_like(q))
    class Watching(torch.overrides.TorchFunctionMode):  # the op's path
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Watching():
        o3, lse3 = fa.attention(q, q, q, causal=True, return_lse=True)
        (g3,) = torch.autograd.grad(o3.sum(), q, retain_graph=True)
        (zero3,) = torch.autograd.grad((0 * lse3).sum(), q)
    assert torch.equal(g3, want)
    assert torch.equal(zero3, torch.zeros_like(q))


def test_bad_torch_input():
    q = torch.randn(1, 4, 8, 16)
    with pytest.raises(TypeError, match="mixing torch tensors and numpy"):
        fa.attention(q, q.numpy(), q)
    with pytest.raises(TypeError, match="q has dtype torch.int64"):
        fa.attention(q.long(), q, q)
    with pytest.raises(ValueError, match="q is on meta; fa runs on cpu "
                                         "and cuda:0 tensors"):
        fa.attention(q.to("meta"), q, q)
    if "cuda" in DEVICES:
        with pytest.raises(ValueError, match="all tensors must be on one "
                                             "device"):
            fa.attention(q.cuda(), q, q)


def test_repeated_calls_reuse_the_checks_but_not_past_a_change():
    # A call whose arguments passed the checks runs again from a memo of
    # its signature; any argument that differs is checked afresh.
    from fa import api
    q = torch.randn(1, 4, 8, 16)
    sinks = torch.randn(4)
    fa.clear_cache()
    first = fa.attention(q, q, q, causal=True, window=3, sinks=sinks)
    assert len(api._checked_calls) == 1
    again = fa.attention(q, q, q, causal=True, window=3, sinks=sinks)
    assert len(api._checked_calls) == 1
    torch.testing.assert_close(first, again)
    with pytest.raises(ValueError, match="window must be an int >= 1"):
        fa.attention(q, q, q, causal=True, window=0, sinks=sinks)
    with pytest.raises(ValueError, match="window must be an int >= 1"):
        fa.attention(q, q, q, causal=True, window=[3], sinks=sinks)
    with pytest.raises(TypeError, match="sinks must have dtype float32"):
        fa.attention(q, q, q, causal=True, window=3, sinks=sinks.double())
    with pytest.raises(ValueError, match="must have unit stride"):
        fa.attention(q.transpose(2, 3), q, q, causal=True, window=3,
                     sinks=sinks)
    # Same values, another layout: checked and run anew, same answer.
    strided = torch.randn(1, 8, 4, 16).transpose(1, 2)
    strided.copy_(q)
    torch.testing.assert_close(
        fa.attention(strided, q, q, causal=True, window=3, sinks=sinks),
        first)
    assert len(api._checked_calls) == 2
    fa.clear_cache()
    assert not api._checked_calls


@pytest.mark.parametrize("device", DEVICES)
def test_repeated_calls_launch_through_a_bound_call(device):
    # From a signature's second call on, its forward launches through the
    # program's bound call (data pointers alone, no checks in the
    # runtime); every call, on fresh data, gives float64's answer. On the
    # GPU, operands with the bound shapes and strides but a start off a
    # 16-byte boundary take the checked path (its program with the scalar
    # loops) and are right too.
    from fa import api
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    variant = dict(causal=True, window=5)
    fa.clear_cache()

    def operands(offset=0):
        def one(shape):
            base = torch.randn(math.prod(shape) + offset, device=device,
                               dtype=dtype)
            return base[offset:].view(shape)
        return one((2, 4, 37, 64)), one((2, 2, 37, 64)), one((2, 2, 37, 64))

    for _ in range(3):
        q, k, v = operands()
        o = fa.attention(q, k, v, **variant)
        assert rel(o, reference(q, k, v, **variant)) < TOL[dtype]
    records = list(api._checked_calls.values())
    assert len(records) == 1 and records[0].bound is not None
    if device == "cuda":
        q, k, v = operands(offset=1)
        assert q.data_ptr() % 16 != 0
        o = fa.attention(q, k, v, **variant)
        assert rel(o, reference(q, k, v, **variant)) < TOL[dtype]
        assert len(api._checked_calls) == 1
    fa.clear_cache()


@pytest.mark.parametrize("device", DEVICES)
def test_repeated_backwards_launch_through_a_bound_call(device):
    # The backward binds like the forward: from a signature's second call
    # on it launches with data pointers alone, and every call, on fresh
    # data with learnable sinks, gives float64's gradients. The signature
    # holds o's, lse's and dO's layouts and those of any `out` given: a dO
    # of another layout, or gradients written into views, are checked and
    # bound anew, never launched with the first call's strides.
    from fa import api
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    variant = dict(causal=True, window=5)
    fa.clear_cache()

    def leaves():
        make = lambda h: torch.randn(2, h, 37, 64, device=device,
                                     dtype=dtype, requires_grad=True)
        sinks = torch.randn(4, device=device, requires_grad=True)
        return make(4), make(2), make(2), sinks

    for _ in range(3):
        check_against_float64(*leaves(), variant, TOL[dtype])
    def bound_backwards():
        # (prepare_backward's record, under the forward's tensors alone,
        # never launches.)
        return [r for s, r in api._checked_calls.items()
                if "backward" in s and r.bound is not None]
    assert len(bound_backwards()) == 1

    q, k, v, sinks = (x.detach() for x in leaves())
    o, lse = api.attention_forward(q, k, v, True, 5, 0, sinks, None)
    do = torch.randn_like(o)
    want = api.attention_backward(q, k, v, o, lse, do, True, 5, 0, sinks,
                                  None)
    # dO as a [B, S, H, D] buffer viewed as [B, H, S, D], and gradients
    # into views of larger buffers: new layouts, new signatures.
    do_t = do.transpose(1, 2).contiguous().transpose(1, 2)
    outs = tuple(torch.full((2, x.shape[1], 37, 80), float("nan"),
                            device=device, dtype=dtype)[..., 8:72]
                 for x in (q, k, v))
    for dout, out in ((do_t, None), (do, outs), (do_t, outs)):
        for _ in range(2):
            got = api.attention_backward(q, k, v, o, lse, dout, True, 5, 0,
                                         sinks, None, out=out)
            for g, w in zip(got, want):
                torch.testing.assert_close(g, w, rtol=0, atol=0)
    assert len(bound_backwards()) == 4
    if device == "cuda":
        # The dense signature's bound call, given operands whose start is
        # off a 16-byte boundary (TMA refuses them), takes the checked path
        # (the scalar loops), right too.
        def shifted(x):
            base = torch.empty(x.numel() + 1, device=device, dtype=x.dtype)
            view = base[1:].view(x.shape)
            view.copy_(x)
            return view
        qs, ks, vs, os_, dos = (shifted(x) for x in (q, k, v, o, do))
        assert qs.data_ptr() % 16 != 0
        got = api.attention_backward(qs, ks, vs, os_, lse, dos, True, 5, 0,
                                     sinks, None)
        for g, w in zip(got, want):
            assert rel(g, w) < TOL[dtype]
        assert len(bound_backwards()) == 4
    fa.clear_cache()


@pytest.mark.parametrize("device", DEVICES)
def test_eager_backward_keeps_its_call_on_the_forward(device):
    # After a signature's first backward, the eager backward takes its
    # call from the forward's record instead of looking its signature up;
    # each deterministic flag has its own, a dO of another layout looks
    # its own up, and every one gives the same gradients.
    from fa import api
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    torch.manual_seed(11)
    make = lambda h: torch.randn(1, h, 70, 32, device=device, dtype=dtype,
                                 requires_grad=True)
    q, k, v = make(4), make(2), make(2)
    do = torch.randn(1, 4, 70, 32, device=device, dtype=dtype)
    do_bshd = do.transpose(1, 2).contiguous().transpose(1, 2)
    lookups = []
    real_call = api._attention_call

    def spy(*args, **kwargs):
        # The backward's lookups (the forward's prepare_backward makes
        # others until the backward is compiled) name o's, lse's and dO's
        # layouts.
        if "layouts" in kwargs:
            lookups.append(args[8])  # entry
        return real_call(*args, **kwargs)
    api._attention_call = spy
    grads = {}
    try:
        for deterministic, gradient, rounds in ((False, do, 3),
                                                (True, do, 2),
                                                (False, do_bshd, 2)):
            for r in range(rounds):
                lookups.clear()
                o = fa.attention(q, k, v, causal=True,
                                 deterministic=deterministic)
                got = torch.autograd.grad(o, (q, k, v), gradient)
                grads.setdefault(deterministic, got)
                for g, want in zip(got, grads[deterministic]):
                    torch.testing.assert_close(g, want, rtol=2e-2, atol=2e-2)
                looked_up = lookups.count("backward")
                if gradient is do and r > 0:
                    assert looked_up == 0, (deterministic, r)
                elif gradient is do_bshd:
                    assert looked_up == 1, (deterministic, r)
    finally:
        api._attention_call = real_call


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("expanded", [False, True])
def test_a_gradient_in_bshd_layout_is_read_in_place(device, expanded):
    # Behind flash_attn_func and the Hugging Face integration, o's
    # gradient reaches fa's backward as a [B, H, S, D] view of a
    # [B, S, H, D] buffer: the backward reads it there, not a dense copy.
    # An expanded gradient (zero strides, from o.sum()) is copied. Both
    # give float64's gradients.
    from fa import api
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    torch.manual_seed(5)
    make = lambda h: torch.randn(2, 45, h, 64, device=device, dtype=dtype,
                                 requires_grad=True)
    q, k, v = make(8), make(2), make(2)
    sinks = torch.randn(8, device=device, requires_grad=True)
    leaves = (q, k, v, sinks)
    variant = dict(causal=True, window=17)
    bshd = lambda x: x.transpose(1, 2)
    seen = []
    real_backward = api._launch_backward

    def spy(*args, **kwargs):
        seen.append(args[6])  # dO
        return real_backward(*args, **kwargs)
    api._launch_backward = spy
    try:
        o = bshd(fa.attention(*map(bshd, (q, k, v)), sinks=sinks, **variant))
        if expanded:
            g = torch.ones(o.shape, device=device, dtype=dtype)
            got = torch.autograd.grad(o.sum(), leaves)
        else:
            g = torch.randn(o.shape, device=device, dtype=dtype)
            got = torch.autograd.grad(o, leaves, g)
    finally:
        api._launch_backward = real_backward
    (do,) = seen
    if expanded:
        assert do.is_contiguous()
    else:
        assert do.data_ptr() == g.data_ptr() and do.stride() == bshd(g).stride()
    refs = [x.detach().double().requires_grad_() for x in leaves]
    ref = bshd(reference(*map(bshd, refs[:3]), sinks=refs[3], **variant))
    want = torch.autograd.grad(ref, refs, g.double())
    for x, w in zip(got, want):
        assert rel(x, w) < TOL[dtype]


def test_a_forward_needing_gradients_keeps_the_backward_compiled_beside_it():
    # The first forward whose inputs need gradients compiles the backward
    # in the background; once that is done, later forwards find it by
    # their call's signature like the forward's own, with no checks or
    # program lookup of their own (which every such forward paid until a
    # backward first waited for the program).
    from fa import api
    q = torch.randn(1, 2, 8, 16, requires_grad=True)
    fa.clear_cache()
    fa.attention(q, q, q, causal=True)
    # The backward, in the background (or already taken in, where its
    # compile finished before the forward's own and the forward asked).
    assert api._compiling or any(key[-1] == "backward"
                                 for key in api._programs)
    fa.wait_for_compiles()
    assert all(future.done() for future in api._compiling.values())
    fa.attention(q, q, q, causal=True)
    entries = sorted(signature[-3] for signature in api._checked_calls)
    assert entries == ["backward", "forward"]
    checks = []
    real_checks = api.check_attention_args
    api.check_attention_args = lambda *a: checks.append(a) or real_checks(*a)
    try:
        out = fa.attention(q, q, q, causal=True)
    finally:
        api.check_attention_args = real_checks
    assert checks == []
    out.sum().backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()
    fa.clear_cache()


# The drop-ins: flash-attn's flash_attn_func and SDPA's signature.

def _bshd(b, s, h, d, **kw):
    return torch.randn(b, s, h, d, **kw)


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs fa's GPU backend")
@pytest.mark.parametrize("d", [64, 96, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_bshd_views_on_tensor_cores(d, causal):
    # [B, S, H, D] inputs reach the tensor-core kernels (wgmma on Hopper:
    # their TMA maps take the views' strides) as [B, H, S, D] views, on an
    # odd length that leaves a ragged last block, against float64.
    torch.manual_seed(d)
    q, k, v = (_bshd(2, 333, h, d, device="cuda", dtype=torch.bfloat16)
               for h in (8, 2, 2))
    out = fa.flash_attn_func(q, k, v, causal=causal)
    assert out.shape == q.shape
    ref = reference(*(x.transpose(1, 2) for x in (q, k, v)), causal=causal)
    assert rel(out.transpose(1, 2), ref) < TOL[torch.bfloat16]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [
    dict(causal=False, window_size=(-1, -1), hq=4, hkv=4, sq=9, sk=9),
    dict(causal=True, window_size=(-1, -1), hq=4, hkv=2, sq=7, sk=12),
    dict(causal=True, window_size=(5, 0), hq=4, hkv=1, sq=13, sk=13),
    dict(causal=False, window_size=(3, 0), hq=2, hkv=2, sq=10, sk=10)])
def test_flash_attn_func_matches_fa_attention_and_float64(device, case):
    torch.manual_seed(1)
    q = _bshd(2, case["sq"], case["hq"], 32, device=device,
              requires_grad=True)
    k = _bshd(2, case["sk"], case["hkv"], 32, device=device,
              requires_grad=True)
    v = _bshd(2, case["sk"], case["hkv"], 32, device=device,
              requires_grad=True)
    out, lse, probs = fa.flash_attn_func(q, k, v, causal=case["causal"],
                                         window_size=case["window_size"],
                                         softmax_scale=0.2,
                                         return_attn_probs=True)
    assert out.shape == q.shape and probs is None
    left, right = case["window_size"]
    causal = case["causal"] or right == 0
    window = None if left == -1 else left + 1
    ref = reference(*(x.detach().transpose(1, 2) for x in (q, k, v)),
                    causal=causal, window=window, scale=0.2)
    assert rel(out.transpose(1, 2), ref) < 1e-4
    o2, lse2 = fa.attention(*(x.transpose(1, 2) for x in (q, k, v)),
                            causal=causal, window=window, scale=0.2,
                            return_lse=True)
    torch.testing.assert_close(lse, lse2)
    assert lse.shape == (2, case["hq"], case["sq"])
    # Gradients reach q, k, v in their own layout.
    out.sum().backward()
    assert q.grad.shape == q.shape and k.grad.shape == k.shape


def test_flash_attn_func_refuses_what_fa_lacks_by_name():
    q = _bshd(1, 4, 2, 16)
    for kwargs, name in ((dict(dropout_p=0.1), "dropout_p"),
                         (dict(softcap=30.0), "softcap"),
                         (dict(alibi_slopes=torch.ones(2)), "alibi_slopes"),
                         (dict(window_size=(4, 4)), r"window_size=\(4, 4\)")):
        with pytest.raises(NotImplementedError, match=name):
            fa.flash_attn_func(q, q, q, **kwargs)
    with pytest.raises(ValueError, match="causal window has right = 0"):
        fa.flash_attn_func(q, q, q, causal=True, window_size=(2, 3))
    with pytest.raises(ValueError, match=r"q must be \[B, S, H, D\]"):
        fa.flash_attn_func(q[0], q, q)


def test_flash_attn_func_against_flash_attn_where_installed():
    flash_attn = pytest.importorskip("flash_attn")
    if "cuda" not in DEVICES:
        pytest.skip("flash-attn runs on CUDA only")
    q, k, v = (_bshd(2, 300, 8, 64, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    for causal, window in ((False, (-1, -1)), (True, (-1, -1)),
                           (True, (63, 0))):
        ours = fa.flash_attn_func(q, k, v, causal=causal, window_size=window)
        theirs = flash_attn.flash_attn_func(q, k, v, causal=causal,
                                            window_size=window)
        assert rel(ours, theirs) < 2e-2


@pytest.mark.parametrize("device", DEVICES)
def test_sdpa_signature_matches_torch_sdpa(device):
    torch.manual_seed(2)
    F = torch.nn.functional
    q = torch.randn(2, 4, 11, 16, device=device, requires_grad=True)
    k = torch.randn(2, 2, 11, 16, device=device)
    v = torch.randn(2, 2, 11, 16, device=device)
    for kwargs in (dict(), dict(is_causal=True), dict(scale=0.3),
                   dict(is_causal=True, scale=0.5)):
        ours = fa.scaled_dot_product_attention(q, k, v, enable_gqa=True,
                                               **kwargs)
        theirs = F.scaled_dot_product_attention(
            q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1),
            **kwargs)
        assert rel(ours, theirs) < 1e-4
    fa.scaled_dot_product_attention(q, k, v, enable_gqa=True).sum() \
        .backward()
    assert q.grad is not None
    with pytest.raises(NotImplementedError, match="attn_mask"):
        fa.scaled_dot_product_attention(
            q, q, q, attn_mask=torch.ones(11, 11, dtype=torch.bool,
                                          device=device))
    with pytest.raises(NotImplementedError, match="dropout_p"):
        fa.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    with pytest.raises(ValueError, match="enable_gqa=True"):
        fa.scaled_dot_product_attention(q, k, v)
    with pytest.raises(NotImplementedError, match="top-left"):
        fa.scaled_dot_product_attention(q, q[:, :, :5], q[:, :, :5],
                                        is_causal=True)


@pytest.mark.parametrize("device", DEVICES)
def test_dropins_under_torch_compile_fullgraph(device):
    def both(x):
        a = fa.flash_attn_func(x, x, x, causal=True, window_size=(4, 0))
        b = fa.scaled_dot_product_attention(x.transpose(1, 2),
                                            x.transpose(1, 2),
                                            x.transpose(1, 2), is_causal=True)
        return a + b.transpose(1, 2)

    x = torch.randn(2, 9, 4, 16, device=device)
    compiled = torch.compile(both, fullgraph=True)
    assert rel(compiled(x), both(x)) < 1e-5


def reference_varlen(q, k, v, cu_q, cu_k, sinks=None, **variant):
    """reference() within each packed sequence ([rows, H, D] tensors)."""
    o = torch.zeros(q.shape, dtype=torch.float64)
    for s in range(len(cu_q) - 1):
        q0, q1, k0, k1 = (int(x) for x in (cu_q[s], cu_q[s + 1], cu_k[s],
                                           cu_k[s + 1]))
        if q1 > q0 and k1 > k0:
            o[q0:q1] = reference(
                *(x.cpu()[None].transpose(1, 2)
                  for x in (q[q0:q1], k[k0:k1], v[k0:k1])),
                sinks=None if sinks is None else sinks.cpu(),
                **variant)[0].transpose(0, 1)
    return o


def poisoned_allocator(device, elements):
    """Leaves a block of NaN in the caching allocator, so that fa's own
    outputs (torch.empty) start as NaN where a kernel leaves rows unwritten."""
    if device == "cuda":
        torch.full((elements,), float("nan"), device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("d", [64, 80, 128])
@pytest.mark.parametrize("variant", [dict(), dict(causal=True),
                                     dict(causal=True, window=100,
                                          sink_tokens=4)])
def test_varlen_attends_within_each_packed_sequence(device, d, variant):
    """fa.attention_varlen (on the GPU: mma.sync's blocks per sequence)
    against float64 per sequence: lengths from 0 and 1 to past several
    blocks, q and k lengths apart, GQA 16/4, learnable sinks."""
    torch.manual_seed(d)
    lq = [1, 0, 300, 64, 1000, 17]
    lk = [5, 9, 300, 200, 1000, 0]
    cu_q = torch.tensor([0] + lq, dtype=torch.int32).cumsum(0,
                                                           dtype=torch.int32)
    cu_k = torch.tensor([0] + lk, dtype=torch.int32).cumsum(0,
                                                           dtype=torch.int32)
    q = torch.randn(int(cu_q[-1]), 16, d, dtype=torch.bfloat16)
    k, v = (torch.randn(int(cu_k[-1]), 4, d, dtype=torch.bfloat16)
            for _ in range(2))
    sinks = torch.randn(16)
    poisoned_allocator(device, q.numel() * 4)
    o = fa.attention_varlen(q.to(device), k.to(device), v.to(device),
                            cu_q.to(device), cu_k.to(device),
                            sinks=sinks.to(device), **variant)
    assert o.shape == q.shape and torch.isfinite(o).all()
    ref = reference_varlen(q, k, v, cu_q, cu_k, sinks=sinks, **variant)
    assert rel(o.cpu(), ref) < TOL[torch.bfloat16]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("variant", [dict(), dict(causal=True),
                                     dict(causal=True, window=9,
                                          sink_tokens=2)])
def test_varlen_gradients_match_float64(device, variant):
    """The backward of fa.attention_varlen (fa.attention's backward per
    sequence on views of the packed tensors): dq, dk, dv and dsinks against
    float64 autograd per sequence, with an empty sequence, one without
    keys, and q and k lengths apart."""
    torch.manual_seed(5)
    lq, lk = [3, 0, 40, 5, 70], [6, 4, 40, 0, 90]
    cu_q = torch.tensor([0] + lq, dtype=torch.int32).cumsum(
        0, dtype=torch.int32)
    cu_k = torch.tensor([0] + lk, dtype=torch.int32).cumsum(
        0, dtype=torch.int32)
    leaves = [torch.randn(int(cu_q[-1]), 8, 32), torch.randn(
        int(cu_k[-1]), 2, 32), torch.randn(int(cu_k[-1]), 2, 32),
        torch.randn(8)]
    got = [x.to(device).requires_grad_() for x in leaves]
    o = fa.attention_varlen(*got[:3], cu_q.to(device), cu_k.to(device),
                            sinks=got[3], **variant)
    do = torch.randn(o.shape)
    o.backward(do.to(device))
    ref = [x.detach().double().requires_grad_() for x in leaves]
    outs = []
    for s in range(len(lq)):
        q0, q1, k0, k1 = (int(x) for x in (cu_q[s], cu_q[s + 1], cu_k[s],
                                           cu_k[s + 1]))
        if q1 == q0:
            continue
        if k1 == k0:
            outs.append(torch.zeros(q1 - q0, 8, 32, dtype=torch.float64))
            continue
        outs.append(reference(
            *(x[None].transpose(1, 2) for x in (ref[0][q0:q1],
                                                ref[1][k0:k1],
                                                ref[2][k0:k1])),
            sinks=ref[3], **variant)[0].transpose(0, 1))
    (torch.cat(outs) * do.double()).sum().backward()
    assert rel(o.detach().cpu(), torch.cat(outs).detach()) < 1e-4
    for g, r in zip(got, ref):
        assert rel(g.grad.cpu(), r.grad) < 1e-4


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("causal", [False, True])
def test_varlen_keeps_non_finite_values_in_their_sequence(device, causal):
    """Sequence 1's keys all NaN, its queries +inf, its values NaN from its
    row 128 on: sequences 0 and 2 stay exact. (A block's last key tile may
    run up to 127 rows into the next sequence, whose keys the mask drops;
    only non-finite values in those first rows' V would reach it, through
    P = 0, as within a sequence: test_nan_in_v_reaches_the_rows_that_see_it.)"""
    torch.manual_seed(11)
    lengths = [300, 400, 200]
    cu = torch.tensor([0] + lengths, dtype=torch.int32).cumsum(
        0, dtype=torch.int32)
    q = torch.randn(900, 8, 64, dtype=torch.bfloat16)
    k, v = (torch.randn(900, 2, 64, dtype=torch.bfloat16) for _ in range(2))
    ref = reference_varlen(q, k, v, cu, cu, causal=causal)
    q[300:700] = float("inf")
    k[300:700] = float("nan")
    v[428:700] = float("nan")
    o = fa.attention_varlen(q.to(device), k.to(device), v.to(device),
                            cu.to(device), cu.to(device), causal=causal).cpu()
    for rows in (slice(0, 300), slice(700, 900)):
        assert rel(o[rows], ref[rows]) < TOL[torch.bfloat16]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", DECODE_SHAPES)
@pytest.mark.parametrize("page", [None, 16])
def test_decode_appends_new_keys_into_the_cache(device, shape, page):
    """fa.decode with k_new and v_new (Sq rows per sequence, a decode step's
    own keys): the kernels write them into the cache at each length (through
    the block table where paged) and attend to them; o matches float64 over
    the cache after the step, and the cache holds the new rows bit for bit,
    the rows past them untouched."""
    b, hq, hkv, sq, slots, d = shape
    torch.manual_seed(slots + sq + (page or 0))
    slots = -(-slots // 16) * 16
    lengths = torch.randint(0, slots - sq + 1, (b,), dtype=torch.int32)
    lengths[0], lengths[-1] = 0, slots - sq
    k, v = (torch.randn(b, hkv, slots, d, dtype=torch.bfloat16)
            for _ in range(2))
    k_new, v_new = (torch.randn(b, hkv, sq, d, dtype=torch.bfloat16)
                    for _ in range(2))
    after_k, after_v = k.clone(), v.clone()
    for e, n in enumerate(lengths.tolist()):
        after_k[e, :, n:n + sq], after_v[e, :, n:n + sq] = k_new[e], v_new[e]
    q = torch.randn(b, hq, sq, d, dtype=torch.bfloat16)
    sinks = torch.randn(hq)
    extra = {}
    if page is None:
        k_cache, v_cache = k.to(device), v.to(device)
    else:
        n = slots // page
        table = torch.randperm(b * n + 2)[:b * n].reshape(b, n).to(
            torch.int32)
        pool = [torch.full((b * n + 2, hkv, page, d), float("nan"),
                           dtype=torch.bfloat16) for _ in range(2)]
        for e in range(b):
            for j in range(n):
                rows = slice(j * page, (j + 1) * page)
                pool[0][table[e, j]] = k[e, :, rows]
                pool[1][table[e, j]] = v[e, :, rows]
        k_cache, v_cache = pool[0].to(device), pool[1].to(device)
        extra["block_table"] = table.to(device)
    o = fa.decode(q.to(device), k_cache, v_cache,
                  cache_seqlens=lengths.to(device), k_new=k_new.to(device),
                  v_new=v_new.to(device), sinks=sinks.to(device), **extra)
    ref = reference_decode(q, after_k, after_v, lengths + sq, causal=True,
                           sinks=sinks)
    assert rel(o.cpu(), ref) < TOL[torch.bfloat16]
    if page is not None:
        table = extra["block_table"].cpu()
        k_cache = torch.stack([torch.cat([k_cache.cpu()[p] for p in row], 1)
                               for row in table])
        v_cache = torch.stack([torch.cat([v_cache.cpu()[p] for p in row], 1)
                               for row in table])
    assert torch.equal(k_cache.cpu(), after_k)
    assert torch.equal(v_cache.cpu(), after_v)


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs a GPU")
def test_decode_step_with_append_in_a_cuda_graph():
    """A step that appends its key captured once and replayed three times,
    the lengths advanced between replays as a serving loop does: each
    replay's key lands at the new length, and o matches float64."""
    b, hq, hkv, slots, d = 4, 32, 8, 2048, 128
    torch.manual_seed(9)
    q = torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, hkv, slots, d, device="cuda",
                        dtype=torch.bfloat16) for _ in range(2))
    k_new, v_new = (torch.randn(b, hkv, 1, d, device="cuda",
                                dtype=torch.bfloat16) for _ in range(2))
    lengths = torch.tensor([0, 100, 1000, 2000], dtype=torch.int32,
                           device="cuda")
    fa.decode(q, k, v, cache_seqlens=lengths, k_new=k_new, v_new=v_new)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        o = fa.decode(q, k, v, cache_seqlens=lengths, k_new=k_new,
                      v_new=v_new)
    for step in range(3):
        lengths += 1
        for x in (q, k_new, v_new):
            x.copy_(torch.randn_like(x))
        graph.replay()
        torch.cuda.synchronize()
        at = lengths.tolist()
        for e in range(b):
            assert torch.equal(k[e, :, at[e]], k_new[e, :, 0]), step
            assert torch.equal(v[e, :, at[e]], v_new[e, :, 0]), step
        ref = reference_decode(q, k, v, lengths.cpu() + 1, causal=True)
        assert rel(o, ref) < TOL[torch.bfloat16], step


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("window_size", [(-1, -1), (20, 0)])
def test_flash_attn_varlen_func_matches_float64(device, window_size):
    torch.manual_seed(2)
    lengths = [7, 1, 40]
    cu = torch.tensor([0] + lengths, dtype=torch.int32).cumsum(
        0, dtype=torch.int32)
    q = torch.randn(48, 4, 32)
    k, v = torch.randn(48, 2, 32), torch.randn(48, 2, 32)
    out, lse, probs = fa.flash_attn_varlen_func(
        q.to(device), k.to(device), v.to(device), cu.to(device),
        cu.to(device), max(lengths), max(lengths), causal=True,
        window_size=window_size, softmax_scale=0.3, return_attn_probs=True)
    window = None if window_size[0] == -1 else window_size[0] + 1
    ref = reference_varlen(q, k, v, cu, cu, causal=True, window=window,
                           scale=0.3)
    assert out.shape == q.shape and lse.shape == (4, 48) and probs is None
    assert rel(out.cpu(), ref) < 1e-4
    with pytest.raises(NotImplementedError, match="block_table"):
        fa.flash_attn_varlen_func(q, k, v, cu, cu, 40, 40,
                                  block_table=torch.zeros(3, 1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("paged", [False, True])
def test_flash_attn_with_kvcache_appends_and_attends(device, paged):
    """flash-attn's decode call: q [B, 1, Hq, D] against [B, S, Hkv, D]
    caches (or a [pages, P, Hkv, D] pool and a block table), the step's
    k and v written in at cache_seqlens; o against float64 over the caches
    after the write, and the caches hold the new rows."""
    torch.manual_seed(3)
    b, hq, hkv, s, d, page = 3, 8, 2, 64, 32, 16
    lengths = torch.tensor([0, 20, 63], dtype=torch.int32)
    k_cache, v_cache = torch.randn(b, s, hkv, d), torch.randn(b, s, hkv, d)
    k_new, v_new = torch.randn(b, 1, hkv, d), torch.randn(b, 1, hkv, d)
    q = torch.randn(b, 1, hq, d)
    after_k, after_v = k_cache.clone(), v_cache.clone()
    for e, n in enumerate(lengths.tolist()):
        after_k[e, n], after_v[e, n] = k_new[e, 0], v_new[e, 0]
    extra = {}
    if paged:
        table = torch.randperm(b * s // page).reshape(b, s // page).to(
            torch.int32)
        pools = []
        for cache in (k_cache, v_cache):
            pool = torch.empty(b * s // page, page, hkv, d)
            for e in range(b):
                for j in range(s // page):
                    pool[table[e, j]] = cache[e, j * page:(j + 1) * page]
            pools.append(pool.to(device))
        k_dev, v_dev = pools
        extra["block_table"] = table.to(device)
    else:
        k_dev, v_dev = k_cache.to(device), v_cache.to(device)
    out, lse = fa.flash_attn_with_kvcache(
        q.to(device), k_dev, v_dev, k=k_new.to(device), v=v_new.to(device),
        cache_seqlens=lengths.to(device), causal=True,
        return_softmax_lse=True, num_splits=4, **extra)
    ref = reference_decode(q.transpose(1, 2), after_k.transpose(1, 2),
                           after_v.transpose(1, 2), lengths + 1, causal=True)
    assert out.shape == q.shape and lse.shape == (b, hq, 1)
    assert rel(out.transpose(1, 2).cpu(), ref) < 1e-4
    if paged:
        k_dev = torch.stack([torch.cat([k_dev.cpu()[p] for p in row])
                             for row in table])
    assert torch.equal(k_dev.cpu(), after_k)
    for kwargs, name in ((dict(rotary_cos=q), "rotary_cos"),
                         (dict(cache_batch_idx=lengths), "cache_batch_idx"),
                         (dict(cache_leftpad=lengths), "cache_leftpad"),
                         (dict(softcap=5.0), "softcap")):
        with pytest.raises(NotImplementedError, match=name):
            fa.flash_attn_with_kvcache(q, k_cache, v_cache,
                                       cache_seqlens=lengths, **kwargs)
    with pytest.raises(ValueError, match="k and v come together"):
        fa.flash_attn_with_kvcache(q, k_cache, v_cache, k=k_new)
