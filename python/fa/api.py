"""fa's Python API: attention and softmax_matmul on numpy arrays and torch
tensors, compiled on first use per (variant, dtype, target) and cached."""

import atexit
import concurrent.futures
import logging
import math
import os
import sys
import threading
import time

from . import _fa
from .spec import (accumulator, attention_spec, decode_spec,
                   softmax_matmul_spec, varlen_spec)

log = logging.getLogger("fa")


def _log_line(line):
    """fa's notes and the autotuner's progress, from the runtime: through
    the "fa" logger (notes at WARNING, progress at INFO) once logging is
    set up anywhere, else on stderr as fa-run prints them."""
    if log.hasHandlers():
        log.log(logging.WARNING if line.startswith("fa: note") else
                logging.INFO, line)
    else:
        sys.stderr.write(line + "\n")


_fa.set_log_handler(_log_line)
# Back to stderr before the interpreter goes: a late line must not call in.
atexit.register(_fa.set_log_handler, None)

try:  # torch is optional: numpy arrays run on the CPU backend without it
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

import numpy as np

# fa's dtype names for numpy and torch element types, and back; built once
# (these are looked up on every call).
_NUMPY_DTYPES = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
                 np.dtype(np.float64): "f64"}
_NUMPY_BY_NAME = {v: k for k, v in _NUMPY_DTYPES.items()}
_TORCH_DTYPES = {} if torch is None else {
    torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32",
    torch.float64: "f64"}
_TORCH_BY_NAME = {v: k for k, v in _TORCH_DTYPES.items()}
# The runtime's names for every torch dtype it takes, lengths and tables too.
_TORCH_RUN_DTYPES = {} if torch is None else {**_TORCH_DTYPES,
                                              torch.int32: "i32"}
_programs = {}
# Programs being compiled (a backward started by its forward, or one whose
# first caller is waiting), by the key of _programs: a Future each.
_compiling = {}
_compiling_lock = threading.Lock()
_compiler = concurrent.futures.ThreadPoolExecutor(
    max_workers=2, thread_name_prefix="fa-compile")
# Attention calls whose arguments passed check_attention_args, by
# _call_signature: a repeat of one takes its _CheckedCall from here
# (20-25 us of host time per call on the H100 host, bench/NOTES.md).
_checked_calls = {}
_CHECKED_CALLS_MAX = 4096


def accumulator_torch_dtype(dtype):
    """The torch dtype of lse, sinks and dsinks for inputs of `dtype`
    (float32 for anything but float64)."""
    return _TORCH_BY_NAME[accumulator(_TORCH_DTYPES.get(dtype, "f32"))]


def _is_torch(x):
    return torch is not None and isinstance(x, torch.Tensor)


def _dtype_name(name, x):
    """fa's name for x's element type, or a TypeError naming the argument."""
    if _is_torch(x):
        table = _TORCH_DTYPES
        expected = "torch.float16, torch.bfloat16, torch.float32 or " \
                   "torch.float64"
    else:
        table = _NUMPY_DTYPES
        expected = "float16, float32 or float64 (numpy has no bfloat16)"
    if x.dtype not in table:
        raise TypeError(f"{name} has dtype {x.dtype}; fa needs {expected}")
    return table[x.dtype]


def _check_tensor(name, x, rank, layout):
    if not (_is_torch(x) or isinstance(x, np.ndarray)):
        raise TypeError(f"{name} must be a torch.Tensor or numpy.ndarray, "
                        f"got {type(x).__name__}")
    shape = x.shape
    if len(shape) != rank:
        raise ValueError(f"{name} must have {rank} dimensions {layout}, got "
                         f"shape {tuple(shape)}")
    if 0 in shape:
        raise ValueError(f"{name} is empty (shape {tuple(shape)}); fa "
                         "needs every dimension >= 1")
    strides = _strides(x)
    if strides[-1] != 1 and shape[-1] > 1:
        raise ValueError(f"{name} must have unit stride on its last "
                         f"dimension, got strides {strides}; pass "
                         f"{name}.contiguous() (torch) or "
                         f"np.ascontiguousarray({name})")


def _strides(x):
    if _is_torch(x):
        return tuple(x.stride())
    return tuple(s // x.itemsize for s in x.strides)


def _target(x):
    """The backend x's data lives on: "gpu" for CUDA tensors, else "cpu"."""
    return "gpu" if _is_torch(x) and x.is_cuda else "cpu"


def _check_same_place(named):
    kinds = {name: ("torch" if _is_torch(x) else "numpy") for name, x in named}
    if len(set(kinds.values())) > 1:
        raise TypeError("mixing torch tensors and numpy arrays: " +
                        ", ".join(f"{n} is {k}" for n, k in kinds.items()))
    if kinds[named[0][0]] == "numpy":
        return
    devices = {name: x.device for name, x in named}
    for name, device in devices.items():
        if not (device.type == "cpu" or
                (device.type == "cuda" and device.index in (None, 0))):
            raise ValueError(f"{name} is on {device}; fa runs on cpu "
                             "and cuda:0 tensors")
    if len(set(devices.values())) > 1:
        raise ValueError("all tensors must be on one device, got " +
                         ", ".join(f"{n} on {d}"
                                   for n, d in devices.items()))


def _descriptor(x):
    """(data pointer, dtype, sizes, strides) for the runtime."""
    # Every call passes through here: torch tensors, the common case, in
    # one dictionary lookup.
    name = _TORCH_RUN_DTYPES.get(x.dtype) if _is_torch(x) else None
    if name is not None:
        return (x.data_ptr(), name, x.shape, x.stride())
    ptr = x.data_ptr() if _is_torch(x) else x.__array_interface__["data"][0]
    dtype = "i32" if _is_int32(x) else _dtype_name("tensor", x)
    return (ptr, dtype, list(x.shape), list(_strides(x)))


def _is_int32(x):
    return x.dtype == (torch.int32 if _is_torch(x) else np.int32)


def _empty_like(x, shape, dtype_name):
    if _is_torch(x):
        return torch.empty(shape, dtype=_TORCH_BY_NAME[dtype_name],
                           device=x.device)
    return np.empty(shape, dtype=_NUMPY_BY_NAME[dtype_name])


def _allow_tf32(x, dtype):
    """Whether f32 CUDA tensors may run on tf32 (one MMA per product
    instead of three): PyTorch's own switch for matmuls decides, so fa
    rounds exactly when torch.matmul would."""
    return (dtype == "f32" and _is_torch(x) and x.is_cuda and
            torch.backends.cuda.matmul.allow_tf32)


def _program(key, make_text, dtype, target, allow_tf32=False,
             deterministic=False, entry=None, wait=True, prepare=None):
    """The compiled program of `key`; with `entry` ("forward" or
    "backward"), that entry's alone: a forward call compiles no backward,
    and the backward compiles when a backward is first asked for, or in
    the background once a forward that needs gradients ran (wait=False:
    start the compile and return None while it runs; a compile error is
    raised to the caller that waits for the program). `prepare`, given
    the new program, runs after a background compile: Program.prepare of
    the call to come (a failure there only skips it)."""
    # FA_AUTOTUNE (0: the compiler's default configs, 1: measure each new
    # shape class, unset: fa's shipped table) is read when a program
    # compiles: a program per setting, so that switching it in-process
    # takes effect.
    autotune = os.environ.get("FA_AUTOTUNE", "")
    program_key = (key, dtype, target, allow_tf32, autotune, deterministic,
                   entry)
    program = _programs.get(program_key)
    if program is not None:
        return program

    def compile_program():
        start = time.perf_counter()
        compiled = _fa.Program.compile(make_text(), f"<fa {key[0]}>",
                                       dtype=dtype,
                                       target=target, allow_tf32=allow_tf32,
                                       deterministic=deterministic,
                                       entry=entry)
        log.debug("fa: compiled %s (%s) for %s/%s (tf32: %s, deterministic: "
                  "%s) in %.2f s (disk cache: %s)", key, entry or "all",
                  dtype, target, allow_tf32, deterministic,
                  time.perf_counter() - start, compiled.cache_status)
        if prepare is not None:
            try:
                prepare(compiled)
            except (ValueError, TypeError) as e:  # run() will say it again
                log.debug("fa: could not prepare %s: %s", key, e)
        return compiled

    with _compiling_lock:
        future = _compiling.get(program_key)
        if future is None:
            if not wait:
                _compiling[program_key] = _compiler.submit(compile_program)
                return None
    if future is None:
        program = compile_program()
    else:
        # Not waiting, a finished compile's program is taken all the same
        # (so later calls find it without a lookup of their own); a failed
        # one is left to the caller that waits, which raises its error.
        if not wait and (not future.done() or future.exception() is not None):
            return None
        try:
            program = future.result()
        finally:
            with _compiling_lock:
                if _compiling.get(program_key) is future:
                    del _compiling[program_key]
    _programs[program_key] = program
    return program


def _variant_program(kind, make_spec, dtype, q, k, head_dim, sinks, causal,
                     window, sink_tokens, scale, flags=(), **options):
    """The program of one variant's kernel `kind`, whose spec is
    make_spec(kind, dtype, learnable sinks, head_dim, *flags, heads=...,
    **variant): one program per (kind, variant, head dim, flags) and
    _program's options (its GPU module holds that head dim's kernels only),
    and on the GPU per head counts too (q's and k's dim 1)."""
    learnable = sinks is not None
    variant = dict(causal=causal, window=window, sink_tokens=sink_tokens,
                   scale=scale)
    target = _target(q)
    # Fixed head counts let the GPU kernels map a block's rows to heads
    # and positions without dividing by a runtime group size, and fold the
    # head strides: the GQA-packed forward of gpt-oss's window 128 spent
    # 12% more time per block with them dynamic (bench/NOTES.md,
    # fifty-second session). On the CPU one program serves every count.
    heads = (int(q.shape[1]), int(k.shape[1])) if target == "gpu" else None
    key = (kind, learnable, *flags, head_dim, heads,
           tuple(sorted(variant.items())))
    return _program(key, lambda: make_spec(kind, dtype, learnable, head_dim,
                                           *flags, heads=heads, **variant),
                    dtype, target, _allow_tf32(q, dtype), **options)


def _current_stream(device):
    """The handle of torch's current stream on CUDA `device`. torch's raw
    query (the one Triton's launches make) where this torch has it: the
    public torch.cuda.current_stream builds a Stream object first, 8 us of
    a forward call's host time on the H100 host."""
    if _raw_current_stream is not None:
        return _raw_current_stream(device.index if device.index is not None
                                   else torch.cuda.current_device())
    return torch.cuda.current_stream(device).cuda_stream


_raw_current_stream = getattr(getattr(torch, "_C", None),
                              "_cuda_getCurrentRawStream", None)


def _stream_of(x):
    """The stream fa queues x's kernels on: torch's current one on x's
    device for CUDA tensors (ordered with the work around it like any torch
    op; the call returns without waiting), else None."""
    if _is_torch(x) and x.is_cuda:
        return _current_stream(x.device)
    return None


def _run(program, name, entry, tensors):
    stream = _stream_of(tensors[0])
    with _device_errors(stream):
        program.run(name, entry, [_descriptor(t) for t in tensors],
                    stream=stream)


class _device_errors:
    """Raises a run's failed device allocation (fa's workspace; the message
    names its bytes) as what callers catch for that, as torch's own
    allocations do."""

    __slots__ = ("stream",)

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        if kind is not RuntimeError or "out of memory" not in str(error):
            return False
        if self.stream is not None:
            raise torch.OutOfMemoryError(str(error)) from None
        raise MemoryError(str(error)) from None


class _CheckedCall:
    """What a call signature (_call_signature) resolved to once its
    arguments passed the checks: the dtype and Program, and, from its
    second launch on, the Program's entry bound to the signature's shapes
    (Program.bind), which takes data pointers alone: the runtime's checks
    and config choice are not made again (bench/NOTES.md, twenty-sixth
    session). `bindable`: remembered under a signature of plain torch
    tensors, whose shapes and strides the signature fixes."""

    __slots__ = ("dtype", "program", "bindable", "bound", "backwards_ready",
                 "backwards")

    def __init__(self, dtype, program, bindable):
        self.dtype = dtype
        self.program = program
        self.bindable = bindable
        self.bound = None
        # A forward's: the `deterministic` flags whose backward is compiled
        # (prepare_backward said so), and the backward's own _CheckedCall
        # per flag once one ran on the forward's o and lse and a dO laid
        # out as o (forward_backward_call).
        self.backwards_ready = set()
        self.backwards = {}

    def launch(self, name, entry, tensors):
        """Runs the entry on `tensors` (the spec's inputs then outputs)."""
        bound = self.bound
        if bound is None:
            _run(self.program, name, entry, tensors)
            # Bound once a run passed: the binding repeats its checks and
            # config choice (tuned by now), then launches nothing.
            if self.bindable:
                self.bound = self.program.bind(
                    name, entry, [_descriptor(t) for t in tensors],
                    stream=_stream_of(tensors[0]))
            return
        stream = _stream_of(tensors[0])
        with _device_errors(stream):
            bound.run([t.data_ptr() for t in tensors], stream)


def check_attention_args(q, k, v, causal, window, sink_tokens, sinks, scale,
                         paged=False):
    """Raises ValueError/TypeError naming the argument that is wrong.
    `paged`: k and v are [pages, Hkv, P, D], not q's batch."""
    kv_layout = "[pages, Hkv, P, D]" if paged else "[B, Hkv, Sk, D]"
    for name, x, layout in (("q", q, "[B, Hq, Sq, D]"),
                            ("k", k, kv_layout), ("v", v, kv_layout)):
        _check_tensor(name, x, 4, layout)
    named = [("q", q), ("k", k), ("v", v)]
    if sinks is not None:
        named.append(("sinks", sinks))
    _check_same_place(named)
    dtype = _dtype_name("q", q)
    for name, x in (("k", k), ("v", v)):
        if x.dtype != q.dtype:
            raise TypeError(f"{name} has dtype {x.dtype} but q has {q.dtype}")
    if (not paged and q.shape[0] != k.shape[0]) or k.shape != v.shape:
        raise ValueError(f"k and v must be {kv_layout}"
                         f"{'' if paged else ' with q' + chr(39) + 's B'}, "
                         f"got q {tuple(q.shape)}, k {tuple(k.shape)}, "
                         f"v {tuple(v.shape)}")
    if q.shape[3] != k.shape[3]:
        raise ValueError(f"head dims differ: q has D = {q.shape[3]}, k has "
                         f"D = {k.shape[3]}")
    if q.shape[1] % k.shape[1]:
        raise ValueError(f"query heads (Hq = {q.shape[1]}) must be a "
                         f"multiple of key/value heads (Hkv = {k.shape[1]})")
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {causal!r}")
    if window is not None:
        if not isinstance(window, int) or isinstance(window, bool) \
                or window < 1:
            raise ValueError(f"window must be an int >= 1 or None, got "
                             f"{window!r}")
        if not causal:
            raise ValueError("window needs causal=True (the window ends at "
                             "the diagonal)")
    if not isinstance(sink_tokens, int) or isinstance(sink_tokens, bool) \
            or sink_tokens < 0:
        raise ValueError(f"sink_tokens must be an int >= 0, got "
                         f"{sink_tokens!r}")
    if sink_tokens and window is None:
        raise ValueError("sink_tokens needs a window (without one every key "
                         "is already visible)")
    if scale is not None and not (isinstance(scale, (int, float)) and
                                  math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive finite number or None, "
                         f"got {scale!r}")
    if sinks is not None:
        _check_tensor("sinks", sinks, 1, "[Hq]")
        if sinks.shape[0] != q.shape[1]:
            raise ValueError(f"sinks must have shape [Hq] = [{q.shape[1]}], "
                             f"got {tuple(sinks.shape)}")
        acc = accumulator(dtype)
        if _dtype_name("sinks", sinks) != acc:
            raise TypeError(f"sinks must have dtype "
                            f"{'float64' if acc == 'f64' else 'float32'} "
                            f"for {dtype} inputs, got {sinks.dtype}")
    return dtype


def _call_signature(q, k, v, causal, window, sink_tokens, sinks, scale,
                    deterministic, entry):
    """Everything check_attention_args and the Program choice read, for
    plain torch tensors (None for anything else): calls with one signature
    pass or fail the checks alike and run the same Program."""
    tensor = torch.Tensor if torch is not None else None
    if tensor is None or not (type(q) is tensor and type(k) is tensor and
                              type(v) is tensor):
        return None
    if sinks is not None and type(sinks) is not tensor:
        return None
    return (q.shape, q.stride(), q.dtype, q.device,
            k.shape, k.stride(), k.dtype, k.device,
            v.shape, v.stride(), v.dtype, v.device,
            None if sinks is None else
            (sinks.shape, sinks.stride(), sinks.dtype, sinks.device),
            type(causal), causal, type(window), window, type(sink_tokens),
            sink_tokens, type(scale), scale, deterministic, entry,
            # Only float32 reads the switch (_allow_tf32), which costs 2 us
            # of a call's host time to look up.
            q.dtype is torch.float32 and torch.backends.cuda.matmul.allow_tf32,
            _autotune_setting())


# os.environ.get encodes the name and decodes the value: 1.5 us of every
# call's signature on a 2-core machine. Where os.environ keeps its bytes
# dictionary (POSIX CPython), the value's bytes are looked up there: the
# same setting, read live, for a key.
_ENVIRON_BYTES = getattr(os.environ, "_data", None) if os.name == "posix" \
    else None
if not isinstance(_ENVIRON_BYTES, dict):
    _ENVIRON_BYTES = None


def _autotune_setting():
    """FA_AUTOTUNE's value (str or bytes, None where unset), for keys."""
    if _ENVIRON_BYTES is not None:
        return _ENVIRON_BYTES.get(b"FA_AUTOTUNE")
    return os.environ.get("FA_AUTOTUNE")


def _attention_program(q, k, v, causal, window, sink_tokens, sinks, scale,
                       entry, deterministic=False, wait=True, prepare=None):
    """Checks the arguments; returns (dtype, the Program of the variant's
    `entry`, "forward" or "backward"): for the backward, the one that gives
    the same bits from run to run with `deterministic` (the forward is that
    already). With wait=False the Program is None while it compiles in
    the background (see _program)."""
    record = _attention_call(q, k, v, causal, window, sink_tokens, sinks,
                             scale, entry, deterministic, wait, prepare)
    return record.dtype, record.program


def _attention_call(q, k, v, causal, window, sink_tokens, sinks, scale,
                    entry, deterministic=False, wait=True, prepare=None,
                    layouts=()):
    """_attention_program's _CheckedCall (its program None while it
    compiles in the background, and then not remembered); `layouts`: the
    call's other tensors, whose layouts its signature then holds too."""
    signature = _call_signature(q, k, v, causal, window, sink_tokens, sinks,
                                scale, deterministic, entry)
    signature, known = _known_call(_with_layouts(signature, layouts))
    if known is not None:
        return known
    dtype = check_attention_args(q, k, v, causal, window, sink_tokens, sinks,
                                 scale)
    program = _variant_program(
        "attention", attention_spec, dtype, q, k, int(q.shape[3]), sinks,
        causal, window, sink_tokens, scale, deterministic=deterministic,
        entry=entry, wait=wait, prepare=prepare)
    record = _CheckedCall(dtype, program, signature is not None)
    if program is not None:
        _remember_call(signature, record)
    return record


def _with_layouts(signature, tensors):
    """`signature` extended by the shapes, strides, dtypes and devices of
    `tensors`, the call's tensors it does not hold yet (None where any is
    not a plain torch tensor): a bound call takes pointers alone, so every
    tensor it is bound to must have the layout it was bound with."""
    if signature is None or not all(type(x) is torch.Tensor
                                    for x in tensors):
        return None
    for x in tensors:
        signature += (x.shape, x.stride(), x.dtype, x.device)
    return signature


def _known_call(signature):
    """(signature, what _remember_call kept for it or None); the signature
    is None where it cannot be hashed (the checks will name the argument)."""
    if signature is None:
        return None, None
    try:
        return signature, _checked_calls.get(signature)
    except TypeError:
        return None, None


def _remember_call(signature, value):
    if signature is None:
        return
    if len(_checked_calls) >= _CHECKED_CALLS_MAX:
        _checked_calls.clear()
    _checked_calls[signature] = value


def prepare_backward(q, k, v, causal, window, sink_tokens, sinks, scale,
                     deterministic=False):
    """Starts compiling the variant's backward in the background when it is
    not compiled yet: a forward whose inputs need gradients calls it, so
    that the first backward finds its kernels compiled or nearly (its
    compile runs beside the forward's own and the caller's work until the
    backward), with the config of its shape class: the call's tensors
    described with the shapes and strides the backward will get (o, dO and
    the gradients dense; no data is read). Returns whether the backward is
    compiled; a forward calls it until it is (the forward's _CheckedCall
    keeps the answer)."""

    def prepare(program):  # on the compiling thread, not the caller's
        dtype = _dtype_name("q", q)
        acc = accumulator(dtype)

        def dense(shape, dtype_name):
            strides, step = [], 1
            for size in reversed(shape):
                strides.append(step)
                step *= size
            # Any aligned address: prepare never reads or writes the data.
            return (256, dtype_name, list(shape), strides[::-1])

        b, hq, sq, d = q.shape
        described = [_descriptor(q), _descriptor(k), _descriptor(v),
                     dense(q.shape, dtype), dense((b, hq, sq), acc),
                     dense(q.shape, dtype)]
        if sinks is not None:
            described.append(_descriptor(sinks))
        described += [dense(q.shape, dtype), dense(k.shape, dtype),
                      dense(v.shape, dtype)]
        if sinks is not None:
            described.append(dense(sinks.shape, acc))
        program.prepare("attention", "backward", described)

    _, program = _attention_program(q, k, v, causal, window, sink_tokens,
                                    sinks, scale, "backward", deterministic,
                                    wait=False, prepare=prepare)
    return program is not None


def known_forward_call(q, k, v, causal, window, sink_tokens, sinks, scale):
    """forward_call's _CheckedCall where a call of this signature ran
    before, else None (nothing is checked or compiled)."""
    return _known_call(_call_signature(q, k, v, causal, window, sink_tokens,
                                       sinks, scale, False, "forward"))[1]


def forward_call(q, k, v, causal, window, sink_tokens, sinks, scale):
    """The _CheckedCall of the op's forward on these arguments (checked and
    compiled at the first call of their signature)."""
    return _attention_call(q, k, v, causal, window, sink_tokens, sinks,
                           scale, "forward")


def attention_forward(q, k, v, causal, window, sink_tokens, sinks, scale,
                      record=None):
    """o, lse (no autograd): the op's forward on any supported tensors;
    `record`: forward_call's for these arguments, where the caller has it."""
    if record is None:
        record = forward_call(q, k, v, causal, window, sink_tokens, sinks,
                              scale)
    dtype = record.dtype
    b, hq, sq, d = q.shape
    o = _empty_like(q, (b, hq, sq, d), dtype)
    lse = _empty_like(q, (b, hq, sq), accumulator(dtype))
    ins = (q, k, v) if sinks is None else (q, k, v, sinks)
    record.launch("attention", "forward", (*ins, o, lse))
    return o, lse


def _check_int32(name, x, q, rank, layout, shape):
    _check_tensor(name, x, rank, layout)
    _check_same_place([("q", q), (name, x)])
    if not _is_int32(x):
        raise TypeError(f"{name} must have dtype int32, got {x.dtype}")
    if tuple(x.shape[:len(shape)]) != shape:
        raise ValueError(f"{name} must have shape {layout} with B = "
                         f"{q.shape[0]}, got {tuple(x.shape)}")


def check_cache_seqlens(cache_seqlens, block_table, q, k, check_values=True,
                        appended=0):
    """Raises TypeError/ValueError unless cache_seqlens is int32 [B] beside
    q (and block_table, where given, int32 [B, N]), and, with check_values,
    every length in [0, Sk] (Sk: the cache's length, or N pages of k's P
    keys) and every page a sequence's length reaches in [0, pages). The
    values are read (for CUDA tensors a synchronisation) except while a
    CUDA graph is being captured. Unchecked, the kernels clamp each length
    to [0, Sk] and each page to [0, pages): they never read outside the
    cache either way. With `appended` new keys per sequence, the lengths
    must leave them room (at most Sk - appended), and the pages checked are
    those the lengths plus the new keys reach."""
    _check_int32("cache_seqlens", cache_seqlens, q, 1, "[B]", (q.shape[0],))
    sk = k.shape[2]
    if block_table is not None:
        _check_int32("block_table", block_table, q, 2, "[B, N]",
                     (q.shape[0],))
        sk = block_table.shape[1] * k.shape[2]
    if appended > sk:
        raise ValueError(f"k_new's {appended} new keys do not fit a cache "
                         f"of {sk} keys per sequence")
    if not check_values:
        return
    if _is_torch(cache_seqlens):
        if cache_seqlens.is_cuda and torch.cuda.is_current_stream_capturing():
            return
        lengths = cache_seqlens.cpu().numpy()
        table = None if block_table is None else block_table.cpu().numpy()
    else:
        lengths, table = cache_seqlens, block_table
    lo, hi = int(lengths.min()), int(lengths.max())
    if lo < 0 or hi > sk - appended:
        bad = lo if lo < 0 else hi
        room = f" less the {appended} new keys" if appended else ""
        raise ValueError(f"cache_seqlens holds {bad}, outside [0, Sk"
                         f"{' - Snew' if appended else ''}] = "
                         f"[0, {sk - appended}] (the cache's length"
                         f"{'' if table is None else ': N pages of P keys'}"
                         f"{room})")
    if table is None:
        return
    pages, size = k.shape[0], k.shape[2]
    used = np.arange(table.shape[1])[None, :] < \
        ((lengths + appended + size - 1) // size)[:, None]
    bad = used & ((table < 0) | (table >= pages))
    if bad.any():
        b, slot = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"block_table[{b}, {slot}] = {int(table[b, slot])} "
                         f"is not a page of the cache [0, {pages}), and "
                         f"sequence {b}'s {int(lengths[b]) + appended} "
                         f"keys reach it")


def _check_new_rows(k_new, v_new, q, k):
    """Raises TypeError/ValueError unless k_new and v_new are both given
    (or neither) as [B, Hkv, Snew, D] beside q and the cache k; returns
    Snew (0 without them)."""
    if k_new is None and v_new is None:
        return 0
    if k_new is None or v_new is None:
        raise ValueError("k_new and v_new come together (the new keys and "
                         "their values)")
    layout = "[B, Hkv, Snew, D]"
    for name, x in (("k_new", k_new), ("v_new", v_new)):
        _check_tensor(name, x, 4, layout)
        _check_same_place([("q", q), (name, x)])
        if x.dtype != q.dtype:
            raise TypeError(f"{name} has dtype {x.dtype} but q has "
                            f"{q.dtype}")
    want = (q.shape[0], k.shape[1], k_new.shape[2], k.shape[3])
    for name, x in (("k_new", k_new), ("v_new", v_new)):
        if tuple(x.shape) != want:
            raise ValueError(f"{name} must be {layout} with q's B and the "
                             f"cache's Hkv and D: {want}, got "
                             f"{tuple(x.shape)}")
    return int(k_new.shape[2])


def decode_forward(q, k, v, cache_seqlens, block_table, causal, window,
                   sink_tokens, sinks, scale, check_lengths=True, k_new=None,
                   v_new=None):
    """o, lse of attention over caches filled to cache_seqlens[b] keys,
    after writing k_new and v_new into them there where given (no
    autograd: the kernels have no backward)."""
    # A repeat of a checked call (a serving loop's steps) skips the checks
    # of everything but the lengths' values, as attention's calls do.
    extra = [cache_seqlens] + ([] if block_table is None else [block_table])
    extra += [] if k_new is None else [k_new, v_new]
    signature, record = _known_call(_with_layouts(
        _call_signature(q, k, v, causal, window, sink_tokens, sinks, scale,
                        False, "decode"), extra))
    learnable = sinks is not None
    if record is not None:
        # The shapes were checked at the first call of this signature.
        dtype = record.dtype
        if check_lengths:
            check_cache_seqlens(
                cache_seqlens, block_table, q, k,
                appended=0 if k_new is None else int(k_new.shape[2]))
    else:
        paged = block_table is not None
        dtype = check_attention_args(q, k, v, causal, window, sink_tokens,
                                     sinks, scale, paged)
        appended = _check_new_rows(k_new, v_new, q, k)
        check_cache_seqlens(cache_seqlens, block_table, q, k, check_lengths,
                            appended)
        program = _variant_program(
            "decode", decode_spec, dtype, q, k, int(q.shape[3]), sinks, causal,
            window, sink_tokens, scale,
            (int(k.shape[2]) if paged else 0, k_new is not None),
            entry="forward")
        record = _CheckedCall(dtype, program, signature is not None)
        _remember_call(signature, record)
    b, hq, sq, d = q.shape
    o = _empty_like(q, (b, hq, sq, d), dtype)
    lse = _empty_like(q, (b, hq, sq), accumulator(dtype))
    ins = [q, k, v] + ([sinks] if learnable else []) + extra
    record.launch("decode", "forward", ins + [o, lse])
    return o, lse


def _packed(x):
    """[rows, H, D] as the [1, H, rows, D] view fa's kernels take."""
    return x.unsqueeze(0).transpose(1, 2) if _is_torch(x) else \
        x[None].transpose(0, 2, 1, 3)


def check_seq_starts(cu_seqlens_q, cu_seqlens_k, q, k, check_values=True,
                     host_offsets=None):
    """Raises TypeError/ValueError unless cu_seqlens_q and cu_seqlens_k are
    int32 [N + 1] beside q, N >= 1, and, with check_values, each rises from
    0 to its tensor's rows (q's, k's) without falling. The values are read
    (for CUDA tensors a synchronisation) except while a CUDA graph is being
    captured, or taken from `host_offsets` (both as lists) where the caller
    read them already. Unchecked, the kernels clamp every offset to the rows
    there are: they never read outside q, k and v either way."""
    for name, x in (("cu_seqlens_q", cu_seqlens_q),
                    ("cu_seqlens_k", cu_seqlens_k)):
        _check_int32(name, x, q, 1, "[N + 1]", ())
    if cu_seqlens_q.shape[0] < 2 or \
            cu_seqlens_q.shape[0] != cu_seqlens_k.shape[0]:
        raise ValueError(f"cu_seqlens_q and cu_seqlens_k must both be [N + 1] "
                         f"for N >= 1 sequences, got "
                         f"{tuple(cu_seqlens_q.shape)} and "
                         f"{tuple(cu_seqlens_k.shape)}")
    if not check_values:
        return
    offsets = host_offsets or (cu_seqlens_q, cu_seqlens_k)
    for name, x, rows in (("cu_seqlens_q", offsets[0], q.shape[0]),
                          ("cu_seqlens_k", offsets[1], k.shape[0])):
        if _is_torch(x):
            if x.is_cuda and torch.cuda.is_current_stream_capturing():
                return
            x = x.cpu().numpy()
        x = np.asarray(x)
        falls = np.flatnonzero(np.diff(x.astype(np.int64)) < 0)
        if int(x[0]) != 0:
            why = f"{name}[0] = {int(x[0])}"
        elif falls.size:
            i = int(falls[0])
            why = (f"{name}[{i + 1}] = {int(x[i + 1])} is below "
                   f"{name}[{i}] = {int(x[i])}")
        elif int(x[-1]) != rows:
            why = f"{name}[{len(x) - 1}] = {int(x[-1])}"
        else:
            continue
        raise ValueError(f"{name} must rise from 0 to {rows} (the rows of "
                         f"{name[-1]}) without falling; {why}")


def varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, causal, window,
                   sink_tokens, sinks, scale, check_lengths=True,
                   host_offsets=None):
    """o [rows of q, Hq, D] and lse [Hq, rows of q] of attention within
    each packed sequence (no autograd: the kernels have no backward);
    `host_offsets`: check_seq_starts'."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        _check_tensor(name, x, 3, "[rows, H, D]")
    q4, k4, v4 = _packed(q), _packed(k), _packed(v)
    dtype = check_attention_args(q4, k4, v4, causal, window, sink_tokens,
                                 sinks, scale)
    check_seq_starts(cu_seqlens_q, cu_seqlens_k, q, k, check_lengths,
                     host_offsets)
    program = _variant_program(
        "varlen", varlen_spec, dtype, q, k, int(q.shape[2]), sinks, causal,
        window, sink_tokens, scale, entry="forward")
    learnable = sinks is not None
    rows, hq, d = q.shape
    o = _empty_like(q, (rows, hq, d), dtype)
    lse = _empty_like(q, (1, hq, rows), accumulator(dtype))
    ins = [q4, k4, v4] + ([sinks] if learnable else []) + \
        [cu_seqlens_q, cu_seqlens_k]
    _run(program, "varlen", "forward", ins + [_packed(o), lse])
    return o, lse[0]


def attention_backward(q, k, v, o, lse, do, causal, window, sink_tokens,
                       sinks, scale, deterministic=False, out=None):
    """dq, dk, dv, dsinks (None without sinks); with `deterministic`, the
    same bits from run to run (fa.attention checks it is a bool). `out`:
    (dq, dk, dv) to write, views included, instead of new tensors."""
    # From a signature's second call on, the backward launches through a
    # bound call, as the forward does: Program.run's checks and config
    # choice took 0.13 ms of host time a call at gpt-oss's window-128
    # backward on the H200's host, and a single call went from 0.979 to
    # 0.936 ms (bench/NOTES.md, forty-third session). The gradients made
    # here are dense, so o, lse, dO and any `out` given complete the
    # signature.
    record = _backward_call(q, k, v, o, lse, do, causal, window,
                            sink_tokens, sinks, scale, deterministic, out)
    return _launch_backward(record, q, k, v, o, lse, do, sinks, out)


def _backward_call(q, k, v, o, lse, do, causal, window, sink_tokens, sinks,
                   scale, deterministic, out=None):
    """The backward's _CheckedCall, under a signature that holds o's,
    lse's, dO's and any `out`'s layouts as well (a bound call takes
    pointers alone)."""
    return _attention_call(q, k, v, causal, window, sink_tokens, sinks,
                           scale, "backward", deterministic,
                           layouts=(o, lse, do) + tuple(out or ()))


def forward_backward_call(forward, q, k, v, o, lse, do, causal, window,
                          sink_tokens, sinks, scale, deterministic):
    """attention_backward's _CheckedCall for the o and lse that the
    forward of _CheckedCall `forward` made on q, k, v (dense, so its
    signature fixes their layouts) and a dO of o's layout: looked up once
    per forward signature and flag, then kept on `forward`, so that a
    training step's backward skips the signature (bench/NOTES.md,
    fifty-fourth session)."""
    as_o = do.stride() == o.stride()
    record = forward.backwards.get(deterministic) if as_o else None
    if record is None:
        record = _backward_call(q, k, v, o, lse, do, causal, window,
                                sink_tokens, sinks, scale, deterministic)
        if as_o and record.bindable:
            forward.backwards[deterministic] = record
    return record


def _launch_backward(record, q, k, v, o, lse, do, sinks, out=None):
    """attention_backward's launch through its _CheckedCall `record`."""
    if out is not None:
        dq, dk, dv = out
    elif _is_torch(q):
        # torch.empty itself: _empty_like's lookups cost 1-2 us a tensor
        # of a call's host time, which the GPU waits for.
        dq = torch.empty(q.shape, dtype=q.dtype, device=q.device)
        dk = torch.empty(k.shape, dtype=q.dtype, device=q.device)
        dv = torch.empty(v.shape, dtype=q.dtype, device=q.device)
    else:
        dtype = record.dtype
        dq = _empty_like(q, tuple(q.shape), dtype)
        dk = _empty_like(q, tuple(k.shape), dtype)
        dv = _empty_like(q, tuple(v.shape), dtype)
    if sinks is None:
        record.launch("attention", "backward", (q, k, v, o, lse, do, dq, dk,
                                                dv))
        return dq, dk, dv, None
    dsinks = _empty_like(q, tuple(sinks.shape), accumulator(record.dtype))
    record.launch("attention", "backward", (q, k, v, o, lse, do, sinks, dq,
                                            dk, dv, dsinks))
    return dq, dk, dv, dsinks


def softmax_matmul(x, v):
    """softmax(x) @ v over the last axis of x [B, M, N], v [B, N, P]."""
    _check_tensor("x", x, 3, "[B, M, N]")
    _check_tensor("v", v, 3, "[B, N, P]")
    _check_same_place([("x", x), ("v", v)])
    dtype = _dtype_name("x", x)
    if v.dtype != x.dtype:
        raise TypeError(f"v has dtype {v.dtype} but x has {x.dtype}")
    if x.shape[0] != v.shape[0] or x.shape[2] != v.shape[1]:
        raise ValueError(f"x [B, M, N] and v [B, N, P] do not match: x "
                         f"{tuple(x.shape)}, v {tuple(v.shape)}")
    program = _program(("softmax_matmul",), lambda: softmax_matmul_spec(
        "softmax_matmul", dtype), dtype,
        _target(x))
    out = _empty_like(x, (x.shape[0], x.shape[1], v.shape[2]), dtype)
    _run(program, "softmax_matmul", "forward", [x, v, out])
    return out


def compile(path_or_text, kernel=None, dtype=None, target="auto",
            allow_tf32=False, deterministic=False):
    """Compiles a spec (a path or the text itself); returns a Program whose
    `run(kernel, entry, tensors)` takes (pointer, dtype, sizes, strides).
    allow_tf32: f32 on the GPU rounds the tensor cores' inputs to tf32
    (faster, 10-bit mantissa) instead of keeping f32 accuracy.
    deterministic: backwards give the same bits from run to run (no dQ by
    atomics, whatever else is asked).
    On the GPU with FA_AUTOTUNE unset, the spec is parsed and verified
    here, and each run compiles, once, the config the shipped table gives
    its shape class (README "Autotuning"): time runs after a first one."""
    if os.path.exists(path_or_text):
        with open(path_or_text) as f:
            text, name = f.read(), path_or_text
    else:
        text, name = path_or_text, "<string>"
    program = _fa.Program.compile(text, name, dtype=dtype, target=target,
                                  allow_tf32=allow_tf32,
                                  deterministic=deterministic)
    if kernel is not None and kernel not in [k["name"]
                                             for k in program.kernels]:
        raise ValueError(f"no kernel named {kernel!r} in {name}; it has " +
                         ", ".join(k["name"] for k in program.kernels))
    return program


def cache_info():
    """The in-memory programs (variant, dtype, target) and the disk cache."""
    disk = os.environ.get("FA_CACHE_DIR")
    if disk is None:
        base = os.environ.get("XDG_CACHE_HOME",
                              os.path.join(os.path.expanduser("~"), ".cache"))
        disk = os.path.join(base, "fa")
    return {"programs": len(_programs),
            "keys": [(k[0][0], k[1], k[2]) for k in _programs],
            "disk_dir": disk or None}


def wait_for_compiles():
    """Blocks until the compiles fa runs in the background (a forward's
    backward, started by a forward whose inputs need gradients) are done.
    A compile's error stays for the call that needs its program. For a
    warm-up that should leave nothing compiling beside the calls after it
    (benchmarks, a server's first requests)."""
    with _compiling_lock:
        futures = list(_compiling.values())
    concurrent.futures.wait(futures)


def clear_cache():
    """Forgets the compiled programs of this process (the disk cache stays;
    its entries are validated on every use) and gives the device memory
    kept for fa's workspaces back to the driver."""
    _programs.clear()
    _checked_calls.clear()
    _fa.release_workspace_memory()
    with _compiling_lock:
        _compiling.clear()
