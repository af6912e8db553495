"""fa's Python API on numpy arrays (the CPU backend): numbers and errors."""

import gc
import os

import numpy as np
import pytest

import fa
from reference import attention as ref_attention, decode as ref_decode, \
    relative_error, varlen as ref_varlen

SPECS = os.path.join(os.path.dirname(__file__), "..", "..", "kernels_spec")
TOL = {np.float64: 1e-10, np.float32: 1e-4, np.float16: 5e-3}


def rand(rng, shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


VARIANTS = [
    dict(),
    dict(causal=True),
    dict(causal=True, window=7),
    dict(causal=True, window=1),
    dict(causal=True, window=16, sink_tokens=4),
    dict(causal=True, scale=0.3),
]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("heads", [(4, 4), (4, 1), (8, 2)])
@pytest.mark.parametrize("seq", [(33, 33), (7, 40), (40, 7), (1, 1)])
def test_attention_matches_reference(variant, dtype, heads, seq):
    rng = np.random.default_rng(hash((str(variant), heads, seq)) % 2**32)
    (hq, hkv), (sq, sk) = heads, seq
    q = rand(rng, (2, hq, sq, 16), dtype)
    k = rand(rng, (2, hkv, sk, 16), dtype)
    v = rand(rng, (2, hkv, sk, 16), dtype)
    o, lse = fa.attention(q, k, v, return_lse=True, **variant)
    ref_o, ref_lse = ref_attention(q, k, v, **variant)
    assert o.dtype == dtype and o.shape == q.shape
    assert not np.isnan(o).any()
    assert relative_error(o, ref_o) < TOL[dtype]
    assert relative_error(lse, ref_lse) < 1e-5


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_learnable_sinks(dtype):
    rng = np.random.default_rng(1)
    q, k, v = rand(rng, (1, 8, 20, 32), dtype), rand(rng, (1, 2, 20, 32), dtype), \
        rand(rng, (1, 2, 20, 32), dtype)
    sinks = rand(rng, (8,), dtype)
    o = fa.attention(q, k, v, causal=True, window=5, sinks=sinks)
    assert relative_error(o, ref_attention(q, k, v, causal=True, window=5,
                                           sinks=sinks)[0]) < TOL[dtype]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sink_logit_of_minus_inf_is_no_sink(dtype):
    rng = np.random.default_rng(3)
    q, k, v = rand(rng, (1, 4, 12, 16), dtype), rand(rng, (1, 2, 12, 16), dtype), \
        rand(rng, (1, 2, 12, 16), dtype)
    sinks = np.array([-np.inf, 0.5, -np.inf, -1.0], dtype=dtype)
    o, lse = fa.attention(q, k, v, causal=True, sinks=sinks, return_lse=True)
    plain_o, plain_lse = fa.attention(q, k, v, causal=True, return_lse=True)
    assert np.isfinite(o).all() and np.isfinite(lse).all()
    # Heads 0 and 2 (sink -inf) are plain attention; 1 and 3 are not.
    for h in (0, 2):
        assert relative_error(o[:, h], plain_o[:, h]) < TOL[dtype]
        assert relative_error(lse[:, h], plain_lse[:, h]) < 1e-5
    for h in (1, 3):
        assert relative_error(o[:, h], plain_o[:, h]) > 1e-3
    assert relative_error(o, ref_attention(q, k, v, causal=True,
                                           sinks=sinks)[0]) < TOL[dtype]


@pytest.mark.parametrize("where", ["q", "k"])
def test_nan_propagates_where_the_math_takes_it(where):
    # One NaN in q's row 5, or in k's key 5 (causal): the rows that read it
    # are NaN, every other row is the reference's, and nothing hangs.
    rng = np.random.default_rng(4)
    q, k, v = rand(rng, (1, 2, 10, 8)), rand(rng, (1, 2, 10, 8)), \
        rand(rng, (1, 2, 10, 8))
    ref_o, _ = ref_attention(q, k, v, causal=True)
    {"q": q, "k": k}[where][0, 1, 5, 3] = np.nan
    o = fa.attention(q, k, v, causal=True)
    poisoned = np.zeros((10,), bool)
    poisoned[5:] = where != "q"
    poisoned[5] = True
    assert np.isnan(o[0, 1, poisoned]).any(axis=-1).all()
    assert not np.isnan(o[0, 1, ~poisoned]).any()
    assert relative_error(o[0, 1, ~poisoned], ref_o[0, 1, ~poisoned]) < 1e-10
    assert relative_error(o[0, 0], ref_o[0, 0]) < 1e-10  # the other head


@pytest.mark.parametrize("where", ["q", "k", "v"])
@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinities_in_q_k_v_stay_in_the_rows_that_read_them(where, value):
    # +-Inf in q's row 5, or in k's or v's key 5 (causal, 10 rows): nothing
    # hangs; the rows that cannot read it are the reference's, and the
    # other head is untouched. Rows that read it follow IEEE: an infinite
    # score of +Inf makes its row NaN (inf - inf), one of -Inf gives its
    # key a weight of 0; an infinite value row makes the rows that weigh
    # it infinite or NaN (and, as for NaN, their query tile's other rows).
    rng = np.random.default_rng(5)
    q, k, v = (rand(rng, (1, 2, 10, 8)) for _ in range(3))
    ref_o, _ = ref_attention(q, k, v, causal=True)
    {"q": q, "k": k, "v": v}[where][0, 1, 5, 3] = value
    o = fa.attention(q, k, v, causal=True)
    assert relative_error(o[0, 0], ref_o[0, 0]) < 1e-10
    if where in ("q", "k"):  # rows 0-4 read neither q's row 5 nor key 5
        rows = [0, 1, 2, 3, 4] + ([6, 7, 8, 9] if where == "q" else [])
        assert relative_error(o[0, 1, rows], ref_o[0, 1, rows]) < 1e-10
    if where in ("q", "v"):
        first = 5
        assert not np.isfinite(o[0, 1, first:first + 1 if where == "q"
                                 else 10]).all(axis=-1).any()


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_nan_or_infinite_sink_logit_makes_its_head_nan_not_empty(value):
    # A NaN sink logit, or +Inf (inf - inf in the softmax), makes its head's
    # o and lse NaN: never o = 0 with lse = -inf, which would claim the
    # rows saw no key. Other heads are the reference's.
    rng = np.random.default_rng(6)
    q, k, v = (rand(rng, (1, 2, 10, 8)) for _ in range(3))
    sinks = rand(rng, (2,))
    ref_o, ref_lse = ref_attention(q, k, v, causal=True, sinks=sinks)
    sinks[1] = value
    o, lse = fa.attention(q, k, v, causal=True, sinks=sinks, return_lse=True)
    assert np.isnan(o[0, 1]).all() and np.isnan(lse[0, 1]).all()
    assert relative_error(o[0, 0], ref_o[0, 0]) < 1e-10
    assert relative_error(lse[0, 0], ref_lse[0, 0]) < 1e-10


def test_nan_in_v_reaches_the_rows_that_see_it_and_no_far_tile():
    # A NaN in v's key 650 (causal, 700 rows): every row that sees the key
    # is NaN. A row that does not may be NaN only where it shares a query
    # tile with one that does: the tile product multiplies the key's V row
    # by that row's P of 0 (0 * NaN), as SDPA and FlashAttention do (SDPA's
    # math backend makes every row NaN). Query tiles are at most 256 rows
    # on every path, so rows below 512 are exact.
    rng = np.random.default_rng(4)
    q, k, v = (rand(rng, (1, 2, 700, 8)) for _ in range(3))
    ref_o, _ = ref_attention(q, k, v, causal=True)
    v[0, 1, 650, 3] = np.nan
    o = fa.attention(q, k, v, causal=True)
    assert np.isnan(o[0, 1, 650:, 3]).all()
    assert relative_error(o[0, 1, :512], ref_o[0, 1, :512]) < 1e-10
    assert relative_error(o[0, 0], ref_o[0, 0]) < 1e-10  # the other head


@pytest.mark.parametrize("causal", [False, True])
def test_keys_past_the_sequence_are_never_read(causal):
    # k and v are views of longer buffers whose rows past the sequence are
    # NaN (a cache's unwritten slots): no row reads them, not even through
    # the last partial tile's P of 0.
    rng = np.random.default_rng(6)
    q = rand(rng, (1, 2, 300, 16))
    k, v = (rand(rng, (1, 2, 337, 16)) for _ in range(2))
    k[:, :, 300:] = v[:, :, 300:] = np.nan
    o = fa.attention(q, k[:, :, :300], v[:, :, :300], causal=causal)
    ref_o, _ = ref_attention(q, k[:, :, :300], v[:, :, :300], causal=causal)
    assert relative_error(o, ref_o) < 1e-10


def test_fully_masked_rows_are_zero_not_nan():
    rng = np.random.default_rng(2)
    q, k, v = rand(rng, (1, 1, 9, 8)), rand(rng, (1, 1, 3, 8)), \
        rand(rng, (1, 1, 3, 8))
    o, lse = fa.attention(q, k, v, causal=True, return_lse=True)
    assert (o[0, 0, :6] == 0).all() and np.isneginf(lse[0, 0, :6]).all()


def test_strided_inputs_are_taken_as_they_are():
    rng = np.random.default_rng(3)
    qkv = rand(rng, (2, 3, 4, 17, 16))  # a packed projection, sliced
    q, k, v = qkv[:, 0], qkv[:, 1], qkv[:, 2]
    assert not q.flags.c_contiguous
    o = fa.attention(q, k, v)
    assert relative_error(o, ref_attention(q, k, v)[0]) < 1e-10


def test_softmax_matmul():
    rng = np.random.default_rng(4)
    x, v = rand(rng, (3, 17, 100), np.float32), rand(rng, (3, 100, 5),
                                                      np.float32)
    e = np.exp(x - x.max(-1, keepdims=True))
    ref = (e / e.sum(-1, keepdims=True)) @ v
    assert relative_error(fa.softmax_matmul(x, v), ref) < 1e-4


def test_compile_spec_file_and_cache():
    program = fa.compile(os.path.join(SPECS, "gpt_oss.mlir"),
                         kernel="gpt_oss_sliding", dtype="f32", target="cpu")
    names = [k["name"] for k in program.kernels]
    assert names == ["gpt_oss_sliding", "gpt_oss_full"]
    assert program.kernels[0]["window"] == 128
    assert program.kernels[0]["learnable_sinks"]
    fa.clear_cache()
    rng = np.random.default_rng(5)
    fa.attention(rand(rng, (1, 2, 4, 8)), rand(rng, (1, 2, 4, 8)),
                 rand(rng, (1, 2, 4, 8)))
    assert fa.cache_info()["programs"] == 1
    fa.clear_cache()
    assert fa.cache_info()["programs"] == 0


def test_a_forward_compiles_no_backward():
    """fa.attention builds a variant's forward alone; its backward compiles
    when one is asked for (fa.attention_backward here), as its own program,
    and a program built for one entry refuses the other by name."""
    fa.clear_cache()
    rng = np.random.default_rng(6)
    q, k, v = (rand(rng, (1, 2, 20, 8)) for _ in range(3))
    o, lse = fa.attention(q, k, v, causal=True, return_lse=True)
    assert fa.cache_info()["programs"] == 1
    assert {key[-1] for key in fa.api._programs} == {"forward"}
    fa.api.attention_backward(q, k, v, o, lse, rand(rng, q.shape), True,
                              None, 0, None, None)
    assert fa.cache_info()["programs"] == 2
    assert {key[-1] for key in fa.api._programs} == {"forward", "backward"}
    text = fa.spec.attention_spec("attention", "f64", causal=True)
    program = fa._fa.Program.compile(text, "<entries>", target="cpu",
                                     entry="forward")
    descriptors = [fa.api._descriptor(t) for t in
                   (q, k, v, o, lse, q, q.copy(), k.copy(), v.copy())]
    with pytest.raises(ValueError, match="compiled for its forward only, "
                       "not its backward"):
        program.run("attention", "backward", descriptors)
    # prepare checks what run() would, and reads no data.
    forward_args = [fa.api._descriptor(t) for t in (q, k, v, o, lse)]
    program.prepare("attention", "forward", forward_args)
    with pytest.raises(ValueError, match="has no backward here"):
        program.prepare("attention", "backward", descriptors)
    bad = list(forward_args)
    bad[1] = (bad[1][0], bad[1][1], [1, 2, 21, 8], bad[1][3])
    with pytest.raises(ValueError, match="k"):
        program.prepare("attention", "forward", bad)
    with pytest.raises(ValueError, match="entry must be 'forward' or "
                       "'backward', got 'both'"):
        fa._fa.Program.compile(text, "<entries>", target="cpu", entry="both")
    fa.clear_cache()


@pytest.mark.parametrize("heads", [(4, 2), (3, 3), (2, 1)])
def test_specs_with_fixed_head_counts(heads):
    """The specs the Python API compiles for the GPU fix Hq and Hkv (and
    the sinks' length): the program computes what the dynamic one does,
    and refuses another head count by name. Here on the CPU, which takes
    any spec."""
    rng = np.random.default_rng(11)
    hq, hkv = heads
    variant = dict(causal=True, window=6)
    text = fa.spec.attention_spec("attention", "f64", True, 8, heads=heads,
                                  **variant)
    assert f"tensor<?x{hq}x?x8xf64>" in text
    assert f"tensor<?x{hkv}x?x8xf64>" in text
    assert f"tensor<{hq}xf64>" in text
    program = fa._fa.Program.compile(text, "<heads>", target="cpu",
                                     entry="forward")
    q, k, v = (rand(rng, (2, h, 13, 8)) for h in (hq, hkv, hkv))
    sinks = rand(rng, (hq,))
    o, lse = np.full(q.shape, np.nan), np.full(q.shape[:3], np.nan)
    program.run("attention", "forward",
                [fa.api._descriptor(t) for t in (q, k, v, sinks, o, lse)])
    want_o, want_lse = ref_attention(q, k, v, sinks=sinks, **variant)
    assert relative_error(o, want_o) < TOL[np.float64]
    assert relative_error(lse, want_lse) < TOL[np.float64]
    wrong = rand(rng, (2, hq + 1, 13, 8))
    with pytest.raises(ValueError, match=f"'q'.*size {hq + 1} in dim 1"):
        program.run("attention", "forward",
                    [fa.api._descriptor(t) for t in
                     (wrong, k, v, sinks, np.empty_like(wrong),
                      np.empty(wrong.shape[:3]))])


def test_cpu_programs_serve_every_head_count():
    """On the CPU one program serves every head count (the GPU's fix them,
    test_specs_with_fixed_head_counts)."""
    fa.clear_cache()
    rng = np.random.default_rng(12)
    for hq, hkv in ((4, 4), (8, 2), (3, 1)):
        q = rand(rng, (1, hq, 9, 16))
        k, v = (rand(rng, (1, hkv, 9, 16)) for _ in range(2))
        o = fa.attention(q, k, v, causal=True)
        assert relative_error(o, ref_attention(q, k, v, causal=True)[0]) \
            < TOL[np.float64]
    assert fa.cache_info()["programs"] == 1
    fa.clear_cache()


def test_a_bound_call_runs_new_data_as_run_does():
    """Program.bind checks arguments once; its call takes data pointers
    alone and computes what run() computes on them. A bind refuses what
    run() refuses, and its call refuses a wrong count of pointers or a
    null one by name."""
    rng = np.random.default_rng(8)
    text = fa.spec.attention_spec("attention", "f64", causal=True)
    program = fa._fa.Program.compile(text, "<bind>", target="cpu",
                                     entry="forward")

    def tensors():
        q, k, v = (rand(rng, (2, 3, 19, 8)) for _ in range(3))
        return [q, k, v, np.full(q.shape, np.nan), np.full(q.shape[:3], np.nan)]

    first = tensors()
    bound = program.bind("attention", "forward",
                         [fa.api._descriptor(t) for t in first])
    assert bound.arity == 5
    for _ in range(2):  # fresh data each call, outputs poisoned
        args = tensors()
        bound.run([fa.api._descriptor(t)[0] for t in args])
        want_o, want_lse = ref_attention(*args[:3], causal=True)
        assert relative_error(args[3], want_o) < TOL[np.float64]
        assert relative_error(args[4], want_lse) < TOL[np.float64]
    pointers = [fa.api._descriptor(t)[0] for t in first]
    with pytest.raises(ValueError, match="bound to 5 tensors, got 4"):
        bound.run(pointers[:4])
    with pytest.raises(ValueError, match="argument #2 has no data"):
        bound.run(pointers[:2] + [0] + pointers[3:])
    bad = [fa.api._descriptor(t) for t in first]
    bad[1] = (bad[1][0], bad[1][1], [2, 3, 20, 8], bad[1][3])
    with pytest.raises(ValueError, match="k"):
        program.bind("attention", "forward", bad)


def _rss_mib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    pytest.skip("no /proc/self/status")


def test_destroyed_programs_free_their_host_code(tmp_path, monkeypatch):
    """200 programs (10 specs compiled, the rest linked from the disk
    cache's objects), each run and dropped: every one answers as the first
    of its spec did, and resident memory stays flat once all are cached (a
    program's JIT and object are freed with it; issue 15)."""
    monkeypatch.setenv("FA_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(8)
    q, k = (rand(rng, shape, np.float32)
            for shape in ((1, 2, 40, 32), (1, 1, 40, 32)))
    sinks = rand(rng, (2,), np.float32)
    texts = [fa.spec.attention_spec("attention", "f32", True, 32,
                                    causal=True, window=8 + i)
             for i in range(10)]
    first = {}
    for i in range(200):
        program = fa._fa.Program.compile(texts[i % 10], "<teardown>",
                                         target="cpu", entry="forward")
        o = np.full(q.shape, np.nan, np.float32)
        lse = np.full(q.shape[:3], np.nan, np.float32)
        program.run("attention", "forward",
                    [fa.api._descriptor(t) for t in (q, k, k, sinks, o, lse)])
        del program
        gc.collect()
        if i < 10:
            first[i] = o
        else:
            assert np.array_equal(o, first[i % 10]), i
        if i == 49:
            settled = _rss_mib()
    # 150 programs: 8 MiB is 55 KiB each, below one program's JIT.
    assert _rss_mib() - settled < 8


def test_runtime_lines_go_to_logging_once_it_is_set_up():
    """The runtime's notes and tuning progress reach the "fa" logger when
    logging is configured (notes at WARNING, progress at INFO), and stderr
    as they always did when it is not."""
    import subprocess
    import sys
    script = (
        "import logging, sys, fa\n"
        "fa._fa.log_line('fa: autotuning plain')\n"
        "logging.basicConfig(level=logging.INFO, stream=sys.stdout,\n"
        "                    format='%(name)s %(levelname)s %(message)s')\n"
        "fa._fa.log_line('fa: autotuning k forward D 64: [1/2] x: 1 ms')\n"
        "fa._fa.log_line('fa: note: kernel k runs the scalar GPU loops')\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True,
                         text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == ["fa: autotuning plain"]
    assert out.stdout.splitlines() == [
        "fa INFO fa: autotuning k forward D 64: [1/2] x: 1 ms",
        "fa WARNING fa: note: kernel k runs the scalar GPU loops"]


def test_compile_errors_name_the_place():
    with pytest.raises(ValueError, match=r"<string>:1:\d+: error"):
        fa.compile("fa.kernel @k { garbage }")
    with pytest.raises(ValueError, match="no kernel named 'nope'"):
        fa.compile(os.path.join(SPECS, "mha.mlir"), kernel="nope")


# One test per kind of bad input: the error names the argument.
def good(rng=np.random.default_rng(6)):
    return dict(q=rand(rng, (1, 4, 8, 16)), k=rand(rng, (1, 2, 8, 16)),
                v=rand(rng, (1, 2, 8, 16)))


def call(**overrides):
    args = good()
    args.update(overrides)
    q, k, v = args.pop("q"), args.pop("k"), args.pop("v")
    return fa.attention(q, k, v, **args)


@pytest.mark.parametrize("overrides, error, message", [
    (dict(q=np.zeros((4, 8, 16))), ValueError,
     r"q must have 4 dimensions \[B, Hq, Sq, D\], got shape \(4, 8, 16\)"),
    (dict(k=np.ones((1, 2, 8, 8)), v=np.ones((1, 2, 8, 8))), ValueError,
     "head dims differ: q has D = 16, k has D = 8"),
    (dict(v=np.ones((1, 2, 9, 16))), ValueError, "k and v must be"),
    (dict(q=np.ones((2, 4, 8, 16))), ValueError, "k and v must be"),
    (dict(q=np.ones((1, 3, 8, 16))), ValueError,
     r"query heads \(Hq = 3\) must be a multiple of key/value heads "
     r"\(Hkv = 2\)"),
    (dict(q=np.ones((1, 4, 8, 16), np.int32)), TypeError,
     "q has dtype int32; fa needs float16, float32 or float64"),
    (dict(k=np.ones((1, 2, 8, 16), np.float32)), TypeError,
     "k has dtype float32 but q has float64"),
    (dict(q=[[1.0]]), TypeError,
     "q must be a torch.Tensor or numpy.ndarray, got list"),
    (dict(q=np.ones((1, 4, 0, 16))), ValueError, "q is empty"),
    (dict(q=np.ones((1, 4, 16, 8)).transpose(0, 1, 3, 2)), ValueError,
     "q must have unit stride on its last dimension"),
    (dict(causal=True, window=0), ValueError, "window must be an int >= 1"),
    (dict(window=4), ValueError, "window needs causal=True"),
    (dict(causal=True, window=4, sink_tokens=-1), ValueError,
     "sink_tokens must be an int >= 0"),
    (dict(causal=True, sink_tokens=2), ValueError,
     "sink_tokens needs a window"),
    (dict(causal=1), TypeError, "causal must be a bool"),
    (dict(scale=-1.0), ValueError, "scale must be a positive finite number"),
    (dict(scale=float("nan")), ValueError,
     "scale must be a positive finite number"),
    (dict(sinks=np.ones(3)), ValueError,
     r"sinks must have shape \[Hq\] = \[4\], got \(3,\)"),
    (dict(sinks=np.ones(4, np.float32)), TypeError,
     "sinks must have dtype float64 for f64 inputs"),
    (dict(sinks=np.ones((4, 1))), ValueError, "sinks must have 1 dimensions"),
])
def test_bad_input(overrides, error, message):
    with pytest.raises(error, match=message):
        call(**overrides)


def test_softmax_matmul_bad_input():
    with pytest.raises(ValueError, match=r"x \[B, M, N\] and v \[B, N, P\] "
                                         "do not match"):
        fa.softmax_matmul(np.ones((2, 3, 4)), np.ones((2, 5, 6)))
    with pytest.raises(TypeError, match="v has dtype float32 but x has "
                                        "float64"):
        fa.softmax_matmul(np.ones((2, 3, 4)), np.ones((2, 4, 6), np.float32))


DECODE_VARIANTS = [dict(causal=False), dict(), dict(window=7),
                   dict(window=7, sink_tokens=2)]


@pytest.mark.parametrize("variant", DECODE_VARIANTS)
@pytest.mark.parametrize("sq", [1, 4, 16])
@pytest.mark.parametrize("sinks", [False, True])
def test_decode_over_caches_filled_to_ragged_lengths(variant, sq, sinks):
    # GQA 8/2 over caches of 40 slots filled to 0, 1, 17 and 40 keys; the
    # slots past each length hold NaN (never read).
    rng = np.random.default_rng(sq)
    lengths = np.array([0, 1, 17, 40], np.int32)
    q = rand(rng, (4, 8, sq, 16))
    k, v = rand(rng, (4, 2, 40, 16)), rand(rng, (4, 2, 40, 16))
    unwritten = np.arange(40)[None, None, :, None] >= lengths[:, None, None,
                                                               None]
    k, v = np.where(unwritten, np.nan, k), np.where(unwritten, np.nan, v)
    s = rand(rng, (8,)) if sinks else None
    o, lse = fa.decode(q, k, v, cache_seqlens=lengths, sinks=s,
                       return_lse=True, **variant)
    ref_o, ref_lse = ref_decode(q, k, v, lengths, sinks=s, **variant)
    assert relative_error(o, ref_o) < 1e-10
    assert relative_error(lse, ref_lse) < 1e-10


def test_decode_takes_caches_as_views_of_larger_buffers():
    # [B, S, Hkv, D] caches (the layout serving stacks keep) transposed.
    rng = np.random.default_rng(9)
    lengths = np.array([33, 5], np.int32)
    q = rand(rng, (2, 4, 1, 32))
    k, v = (rand(rng, (2, 64, 2, 32)).transpose(0, 2, 1, 3)
            for _ in range(2))
    o = fa.decode(q, k, v, cache_seqlens=lengths, window=9)
    assert relative_error(o, ref_decode(q, k, v, lengths, window=9)[0]) < 1e-10


def test_decode_refuses_bad_lengths():
    rng = np.random.default_rng(1)
    q = rand(rng, (2, 4, 1, 16))
    k = v = rand(rng, (2, 2, 10, 16))
    with pytest.raises(TypeError, match="cache_seqlens must have dtype int32"):
        fa.decode(q, k, v, cache_seqlens=np.array([1, 2], np.int64))
    with pytest.raises(ValueError, match=r"cache_seqlens must have shape "
                       r"\[B\] with B = 2, got \(3,\)"):
        fa.decode(q, k, v, cache_seqlens=np.array([1, 2, 3], np.int32))
    with pytest.raises(ValueError, match=r"cache_seqlens holds 11, outside "
                       r"\[0, Sk\] = \[0, 10\]"):
        fa.decode(q, k, v, cache_seqlens=np.array([1, 11], np.int32))
    with pytest.raises(ValueError, match="cache_seqlens holds -1"):
        fa.decode(q, k, v, cache_seqlens=np.array([-1, 3], np.int32))
    with pytest.raises(ValueError, match="cache_seqlens must have 1 "
                       "dimensions"):
        fa.decode(q, k, v, cache_seqlens=np.array([[1, 2]], np.int32))


def test_decode_unchecked_lengths_are_clamped_to_the_cache():
    # check_lengths=False (a serving loop's choice: no synchronisation):
    # a length past the cache reads the whole cache, a negative one none;
    # nothing outside the cache is read.
    rng = np.random.default_rng(2)
    q = rand(rng, (2, 4, 1, 16))
    k, v = rand(rng, (2, 2, 10, 16)), rand(rng, (2, 2, 10, 16))
    o, lse = fa.decode(q, k, v, cache_seqlens=np.array([99, -5], np.int32),
                       check_lengths=False, return_lse=True)
    ref_o, ref_lse = ref_decode(q, k, v, np.array([10, 0]))
    assert relative_error(o, ref_o) < 1e-10
    assert relative_error(lse, ref_lse) < 1e-10


@pytest.mark.parametrize("page", [16, 64])
@pytest.mark.parametrize("variant", DECODE_VARIANTS)
@pytest.mark.parametrize("sq", [1, 4, 16])
def test_paged_decode_reads_each_sequence_through_its_block_table(page,
                                                                  variant,
                                                                  sq):
    # A pool of pages, [pages, P, Hkv, D] as serving stacks keep it (taken
    # transposed), shared by three sequences in shuffled pages; the pages
    # no sequence owns, and the rows past each length, hold NaN; the table
    # entries past a sequence's pages are -1.
    rng = np.random.default_rng(page + sq)
    lengths = np.array([1, 3 * page + 5, 0], np.int32)
    owned = -(-lengths // page)
    pages = 12
    order = rng.permutation(pages)
    table = np.full((3, 5), -1, np.int32)
    at = 0
    for b, n in enumerate(owned):
        table[b, :n] = order[at:at + n]
        at += n
    pool_k = np.full((pages, page, 2, 16), np.nan)
    pool_v = np.full((pages, page, 2, 16), np.nan)
    contiguous_k = rand(rng, (3, 2, 5 * page, 16))
    contiguous_v = rand(rng, (3, 2, 5 * page, 16))
    for b in range(3):
        for j in range(lengths[b]):
            p, r = table[b, j // page], j % page
            pool_k[p, r] = contiguous_k[b, :, j]
            pool_v[p, r] = contiguous_v[b, :, j]
    q = rand(rng, (3, 8, sq, 16))
    s = rand(rng, (8,))
    o, lse = fa.decode(q, pool_k.transpose(0, 2, 1, 3),
                       pool_v.transpose(0, 2, 1, 3), cache_seqlens=lengths,
                       block_table=table, sinks=s, return_lse=True, **variant)
    ref_o, ref_lse = ref_decode(q, contiguous_k, contiguous_v, lengths,
                                sinks=s, **variant)
    assert relative_error(o, ref_o) < 1e-10
    assert relative_error(lse, ref_lse) < 1e-10


def test_paged_decode_refuses_bad_tables():
    rng = np.random.default_rng(3)
    q = rand(rng, (2, 4, 1, 16))
    k = v = rand(rng, (6, 2, 16, 16))  # 6 pages of 16 keys
    n = np.array([20, 3], np.int32)
    table = np.array([[0, 5], [2, -1]], np.int32)
    fa.decode(q, k, v, cache_seqlens=n, block_table=table)
    with pytest.raises(ValueError, match=r"block_table\[0, 1\] = 6 is not a "
                       r"page of the cache \[0, 6\), and sequence 0's 20 "
                       r"keys reach it"):
        fa.decode(q, k, v, cache_seqlens=n,
                  block_table=np.array([[0, 6], [2, -1]], np.int32))
    with pytest.raises(ValueError, match=r"cache_seqlens holds 33, outside "
                       r"\[0, Sk\] = \[0, 32\] \(the cache's length: N "
                       r"pages of P keys\)"):
        fa.decode(q, k, v, cache_seqlens=np.array([33, 3], np.int32),
                  block_table=table)
    with pytest.raises(TypeError, match="block_table must have dtype int32"):
        fa.decode(q, k, v, cache_seqlens=n, block_table=table.astype(np.int64))
    with pytest.raises(ValueError, match=r"block_table must have shape "
                       r"\[B, N\] with B = 2, got \(1, 2\)"):
        fa.decode(q, k, v, cache_seqlens=n, block_table=table[:1])
    # Unchecked, a bad page is clamped to the cache: no read outside it.
    o = fa.decode(q, k, v, cache_seqlens=n, check_lengths=False,
                  block_table=np.array([[0, 99], [2, -1]], np.int32))
    assert np.isfinite(o).all()


def packed(lengths):
    """cu_seqlens of sequences of `lengths` packed end to end."""
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)


# Query and key lengths per sequence: one row, an empty sequence, a
# sequence with no keys, sequences past a block of rows (64 on the CPU),
# fewer keys than queries (causal rows that see none) and more.
VARLEN_Q = [1, 0, 5, 150, 7, 70]
VARLEN_K = [9, 3, 0, 150, 4, 200]
VARLEN_VARIANTS = [dict(), dict(causal=True), dict(causal=True, window=7),
                   dict(causal=True, window=7, sink_tokens=2)]


@pytest.mark.parametrize("variant", VARLEN_VARIANTS)
@pytest.mark.parametrize("sinks", [False, True])
def test_varlen_attends_within_each_packed_sequence(variant, sinks):
    rng = np.random.default_rng(len(variant) + sinks)
    cq, ck = packed(VARLEN_Q), packed(VARLEN_K)
    q = rand(rng, (cq[-1], 8, 16))
    k, v = rand(rng, (ck[-1], 2, 16)), rand(rng, (ck[-1], 2, 16))
    s = rand(rng, (8,)) if sinks else None
    o, lse = fa.attention_varlen(q, k, v, cq, ck, sinks=s, return_lse=True,
                                 **variant)
    ref_o, ref_lse = ref_varlen(q, k, v, cq, ck, sinks=s, **variant)
    assert o.shape == q.shape and lse.shape == (8, cq[-1])
    assert relative_error(o, ref_o) < 1e-10
    assert relative_error(lse, ref_lse) < 1e-10


@pytest.mark.parametrize("sq", [1, 4, 16])
def test_varlen_prefill_beside_a_cache(sq):
    # Speculative blocks of sq rows per sequence against their keys, which
    # end with them (causal, bottom-right aligned); f32 and a window.
    rng = np.random.default_rng(sq)
    lk = [sq, 3 * sq + 1, 100]
    cq, ck = packed([sq] * 3), packed(lk)
    q = rand(rng, (cq[-1], 4, 32), np.float32)
    k, v = (rand(rng, (ck[-1], 4, 32), np.float32) for _ in range(2))
    o = fa.attention_varlen(q, k, v, cq, ck, causal=True, window=33)
    ref_o = ref_varlen(q, k, v, cq, ck, causal=True, window=33)[0]
    assert relative_error(o, ref_o) < 1e-5


def test_varlen_takes_views_with_a_unit_stride_on_d():
    # q, k and v as slices of one packed qkv buffer [rows, 3, H, D].
    rng = np.random.default_rng(5)
    cq = packed([3, 40])
    qkv = rand(rng, (cq[-1], 3, 4, 16))
    q, k, v = qkv[:, 0], qkv[:, 1], qkv[:, 2]
    o = fa.attention_varlen(q, k, v, cq, cq, causal=True)
    assert relative_error(o, ref_varlen(q, k, v, cq, cq, causal=True)[0]) \
        < 1e-10


def test_varlen_refuses_bad_starts():
    rng = np.random.default_rng(6)
    q, k = rand(rng, (10, 4, 16)), rand(rng, (12, 2, 16))
    cq, ck = packed([4, 6]), packed([5, 7])
    fa.attention_varlen(q, k, k, cq, ck)
    with pytest.raises(TypeError, match="cu_seqlens_q must have dtype int32"):
        fa.attention_varlen(q, k, k, cq.astype(np.int64), ck)
    with pytest.raises(ValueError, match=r"cu_seqlens_q and cu_seqlens_k must "
                       r"both be \[N \+ 1\] for N >= 1 sequences, got \(3,\) "
                       r"and \(2,\)"):
        fa.attention_varlen(q, k, k, cq, ck[:2])
    with pytest.raises(ValueError, match=r"cu_seqlens_q must rise from 0 to "
                       r"10 \(the rows of q\) without falling; "
                       r"cu_seqlens_q\[2\] = 9"):
        fa.attention_varlen(q, k, k, packed([4, 5]), ck)
    with pytest.raises(ValueError, match=r"cu_seqlens_k\[2\] = 12 is below "
                       r"cu_seqlens_k\[1\] = 13"):
        fa.attention_varlen(q, k, k, cq, np.array([0, 13, 12], np.int32))
    with pytest.raises(ValueError, match=r"cu_seqlens_k\[0\] = 1"):
        fa.attention_varlen(q, k, k, cq, np.array([1, 5, 12], np.int32))
    with pytest.raises(ValueError, match=r"q must have 3 dimensions "
                       r"\[rows, H, D\]"):
        fa.attention_varlen(q[None], k, k, cq, ck)
    with pytest.raises(ValueError, match=r"query heads \(Hq = 4\) must be a "
                       r"multiple of key/value heads \(Hkv = 3\)"):
        kk = rand(rng, (12, 3, 16))
        fa.attention_varlen(q, kk, kk, cq, ck)


def test_varlen_unchecked_starts_are_clamped_to_the_rows():
    # check_lengths=False: offsets past the rows are taken as the last row,
    # and nothing outside q, k and v is read (a falling offset empties its
    # sequence).
    rng = np.random.default_rng(7)
    q, k, v = (rand(rng, (10, 2, 16)) for _ in range(3))
    cq = np.array([0, 4, 99], np.int32)
    ck = np.array([0, 50, 3], np.int32)
    o, lse = fa.attention_varlen(q, k, v, cq, ck, check_lengths=False,
                                 return_lse=True)
    ref_o, ref_lse = ref_varlen(q, k, v, [0, 4, 10], [0, 10, 10])
    assert relative_error(o, ref_o) < 1e-10
    assert relative_error(lse, ref_lse) < 1e-10


@pytest.mark.parametrize("variant", DECODE_VARIANTS)
@pytest.mark.parametrize("sq", [1, 4, 16])
@pytest.mark.parametrize("page", [None, 16])
def test_decode_appends_new_keys_into_the_cache(variant, sq, page):
    # k_new and v_new (sq rows per sequence) go into the caches at each
    # sequence's length, in place, and the step attends to them with the
    # cache's keys; rows past length + sq stay as they were (NaN: never
    # written, never read). Paged: the rows go through the block table.
    rng = np.random.default_rng(sq + (page or 0))
    lengths = np.array([0, 5, 40 - sq], np.int32)
    slots = 48 if page else 40
    k, v = rand(rng, (3, 2, slots, 16)), rand(rng, (3, 2, slots, 16))
    unwritten = np.arange(slots)[None, None, :, None] >= \
        lengths[:, None, None, None]
    k[np.broadcast_to(unwritten, k.shape)] = np.nan
    v[np.broadcast_to(unwritten, v.shape)] = np.nan
    k_new, v_new = rand(rng, (3, 2, sq, 16)), rand(rng, (3, 2, sq, 16))
    q, s = rand(rng, (3, 8, sq, 16)), rand(rng, (8,))
    ref_k, ref_v = k.copy(), v.copy()
    for b, n in enumerate(lengths):
        ref_k[b, :, n:n + sq], ref_v[b, :, n:n + sq] = k_new[b], v_new[b]
    ref_o, ref_lse = ref_decode(q, ref_k, ref_v, lengths + sq, sinks=s,
                                **variant)
    if page is None:
        o, lse = fa.decode(q, k, v, cache_seqlens=lengths, k_new=k_new,
                           v_new=v_new, sinks=s, return_lse=True, **variant)
        got_k, got_v = k, v
    else:
        # Each sequence's pages in a shuffled pool with one page to spare.
        n = slots // page
        table = rng.permutation(3 * n + 1)[:3 * n].reshape(3, n) \
            .astype(np.int32)
        pool_k = np.full((3 * n + 1, 2, page, 16), np.nan)
        pool_v = pool_k.copy()
        for b in range(3):
            for j in range(n):
                rows = slice(j * page, (j + 1) * page)
                pool_k[table[b, j]], pool_v[table[b, j]] = k[b, :, rows], \
                    v[b, :, rows]
        o, lse = fa.decode(q, pool_k, pool_v, cache_seqlens=lengths,
                           block_table=table, k_new=k_new, v_new=v_new,
                           sinks=s, return_lse=True, **variant)
        got_k = np.stack([np.concatenate([pool_k[p] for p in table[b]], 1)
                          for b in range(3)])
        got_v = np.stack([np.concatenate([pool_v[p] for p in table[b]], 1)
                          for b in range(3)])
    assert relative_error(o, ref_o) < 1e-10
    assert relative_error(lse, ref_lse) < 1e-10
    np.testing.assert_array_equal(got_k, ref_k)
    np.testing.assert_array_equal(got_v, ref_v)


def test_decode_append_refuses_bad_new_rows():
    rng = np.random.default_rng(8)
    q = rand(rng, (2, 4, 1, 16))
    k = v = rand(rng, (2, 2, 10, 16))
    n = np.array([3, 9], np.int32)
    kn = rand(rng, (2, 2, 1, 16))
    fa.decode(q, k.copy(), v.copy(), cache_seqlens=n, k_new=kn, v_new=kn)
    with pytest.raises(ValueError, match="k_new and v_new come together"):
        fa.decode(q, k, v, cache_seqlens=n, k_new=kn)
    with pytest.raises(ValueError, match=r"cache_seqlens holds 10, outside "
                       r"\[0, Sk - Snew\] = \[0, 9\] \(the cache's length "
                       r"less the 1 new keys\)"):
        fa.decode(q, k, v, cache_seqlens=np.array([3, 10], np.int32),
                  k_new=kn, v_new=kn)
    with pytest.raises(ValueError, match=r"k_new must be \[B, Hkv, Snew, D\] "
                       r"with q's B and the cache's Hkv and D: "
                       r"\(2, 2, 1, 16\), got \(2, 1, 1, 16\)"):
        fa.decode(q, k, v, cache_seqlens=n, k_new=kn[:, :1], v_new=kn)
    with pytest.raises(TypeError, match="v_new has dtype float32 but q has "
                       "float64"):
        fa.decode(q, k, v, cache_seqlens=n, k_new=kn,
                  v_new=kn.astype(np.float32))
    with pytest.raises(ValueError, match="k_new's 11 new keys do not fit a "
                       "cache of 10 keys per sequence"):
        big = rand(rng, (2, 2, 11, 16))
        fa.decode(rand(rng, (2, 4, 11, 16)), k, v, cache_seqlens=n,
                  k_new=big, v_new=big, check_lengths=False)
    # Unchecked, a length past the room left is taken as S - Snew: the new
    # rows land at the cache's end, inside it.
    kc, vc = k.copy(), v.copy()
    fa.decode(q, kc, vc, cache_seqlens=np.array([3, 99], np.int32), k_new=kn,
              v_new=kn, check_lengths=False)
    np.testing.assert_array_equal(kc[1, :, 9], kn[1, :, 0])


def test_autotune_setting_reads_the_environment_live(monkeypatch):
    # Call signatures key on FA_AUTOTUNE through api._autotune_setting
    # (os.environ's bytes where it keeps them): a change in-process shows
    # at once, and each setting keys apart.
    from fa import api
    monkeypatch.delenv("FA_AUTOTUNE", raising=False)
    assert api._autotune_setting() is None
    seen = set()
    for value in ("0", "1", "table"):
        monkeypatch.setenv("FA_AUTOTUNE", value)
        setting = api._autotune_setting()
        assert setting in (value, value.encode())
        seen.add(setting)
    assert len(seen) == 3
    monkeypatch.delenv("FA_AUTOTUNE")
    assert api._autotune_setting() is None
