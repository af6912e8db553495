"""Spec text for one attention variant, as fa's dialect writes it.

The Python API and the conformance suite describe variants with these
functions; every size is dynamic but the head dim, which the Python API
fixes per program, and on the GPU the head counts (`heads`, (Hq, Hkv)),
which it fixes there too: one spec serves every B and S.
"""


def _tensor(rank, dtype, last=None, fixed=None):
    """A tensor type with dynamic sizes, but for `last` (the head dim) when
    given and those `fixed` gives ({dimension: size})."""
    dims = ["?"] * rank
    if last is not None:
        dims[-1] = str(int(last))
    for dim, size in (fixed or {}).items():
        dims[dim] = str(int(size))
    return "tensor<" + "x".join(dims) + "x" + dtype + ">"


def _head_types(rank, dtype, head_dim, heads, fixed=None):
    """(q's type, k's and v's type): `rank` dims, the head dim `head_dim`,
    and with `heads` (Hq, Hkv) dim 1 fixed to each's head count; `fixed`
    as _tensor's, for both."""
    q, kv = dict(fixed or {}), dict(fixed or {})
    if heads is not None:
        q[1], kv[1] = heads
    return (_tensor(rank, dtype, head_dim, q),
            _tensor(rank, dtype, head_dim, kv))


def _accumulator_types(dtype, heads):
    """(lse's type [B, Hq, S], the sinks' type [Hq]), Hq fixed with
    `heads`."""
    acc = accumulator(dtype)
    if heads is None:
        return _tensor(3, acc), _tensor(1, acc)
    return _tensor(3, acc, fixed={1: heads[0]}), _tensor(1, acc,
                                                         fixed={0: heads[0]})


def accumulator(dtype):
    """The type of lse, sinks and dsinks for inputs of `dtype`."""
    return "f64" if dtype == "f64" else "f32"


def clauses(causal=False, window=None, sink_tokens=0, scale=None):
    """The variant clauses of fa.attention, e.g. 'mask causal window 128'."""
    parts = []
    if causal:
        parts.append("mask causal")
    if window is not None:
        parts.append(f"window {int(window)}")
    if sink_tokens:
        parts.append(f"sink_tokens {int(sink_tokens)}")
    if scale is not None:
        parts.append(f"scale {float(scale):.17e}")
    return " ".join(parts)


def attention_spec(name, dtype, learnable_sinks=False, head_dim=None,
                   heads=None, **variant):
    """An fa.kernel with the forward and backward of one variant; with
    `head_dim`, q, k, v and their gradients fix D, so that the GPU module
    holds that head dim's kernels only (a dynamic D compiles all seven:
    about 7x the driver's JIT time of one); with `heads` (Hq, Hkv), they
    fix the head counts too."""
    q, kv = _head_types(4, dtype, head_dim, heads)
    lse, s = _accumulator_types(dtype, heads)
    sinks = [s] if learnable_sinks else []
    use = " sinks %s" if learnable_sinks else ""
    c = clauses(**variant)
    c = " " + c if c else ""
    fwd_in = [q, kv, kv] + sinks
    fwd_args = ", ".join(f"%{n}: {t}" for n, t in zip("qkvs", fwd_in))
    bwd_names = ["q", "k", "v", "o", "lse", "dO"] + (["s"] if sinks else [])
    bwd_in = [q, kv, kv, q, lse, q] + sinks
    bwd_args = ", ".join(f"%{n}: {t}" for n, t in zip(bwd_names, bwd_in))
    outs = [q, kv, kv] + sinks
    res = ", ".join(f"%r{i}" for i in range(len(outs)))
    return f"""fa.kernel @{name} {{
  func.func @forward({fwd_args}) -> ({q}, {lse}) {{
    %o, %lse = fa.attention %q, %k, %v{use}{c} : ({", ".join(fwd_in)}) -> ({q}, {lse})
    return %o, %lse : {q}, {lse}
  }}
  func.func @backward({bwd_args}) -> ({", ".join(outs)}) {{
    {res} = fa.attention_grad %q, %k, %v, %o, %lse, %dO{use}{c} : ({", ".join(bwd_in)}) -> ({", ".join(outs)})
    return {res} : {", ".join(outs)}
  }}
}}
"""


def _forward_only_spec(name, dtype, learnable_sinks, head_dim, operands,
                       variant, heads=None, cache=None):
    """An fa.kernel with only a forward: fa.attention over q, k, v (of type
    `cache` where given, else that of _head_types), the sinks where
    learnable, then `operands`: (clause, types) pairs, e.g. ("key_lengths",
    ["tensor<?xi32>"]), a clause taking its tensors comma-separated."""
    q, kv = _head_types(4, dtype, head_dim, heads)
    lse, s = _accumulator_types(dtype, heads)
    names, types = ["q", "k", "v"], [q, cache or kv, cache or kv]
    use = ""
    if learnable_sinks:
        names.append("s")
        types.append(s)
        use += " sinks %s"
    for clause, clause_types in operands:
        first = len(names)
        for t in clause_types:
            names.append(f"i{len(names)}")
            types.append(t)
        use += f" {clause} " + ", ".join(f"%{n}" for n in names[first:])
    c = clauses(**variant)
    c = " " + c if c else ""
    args = ", ".join(f"%{n}: {t}" for n, t in zip(names, types))
    return f"""fa.kernel @{name} {{
  func.func @forward({args}) -> ({q}, {lse}) {{
    %o, %lse = fa.attention %q, %k, %v{use}{c} : ({", ".join(types)}) -> ({q}, {lse})
    return %o, %lse : {q}, {lse}
  }}
}}
"""


def decode_spec(name, dtype, learnable_sinks=False, head_dim=None,
                page_size=0, appends=False, heads=None, **variant):
    """An fa.kernel with the forward of one variant over a KV cache filled
    to a length per batch entry (fa.attention's key_lengths, i32 [B]), in
    pages of `page_size` keys where it is not 0 (its block_table, i32
    [B, N]; k and v [pages, Hkv, page_size, D], the page size fixed so that
    the kernels find a key's page and row without dividing by a runtime
    value), with `appends` taking new keys and values to write into the
    cache (its `append`, [B, Hkv, rows, D]); `heads` as attention_spec's;
    it has no backward."""
    operands = [("key_lengths", [_tensor(1, "i32")])]
    cache = None
    if page_size:
        operands.append(("block_table", [_tensor(2, "i32")]))
        cache = _head_types(4, dtype, head_dim, heads, {2: page_size})[1]
    if appends:
        operands.append(("append",
                         [_head_types(4, dtype, head_dim, heads)[1]] * 2))
    return _forward_only_spec(name, dtype, learnable_sinks, head_dim,
                              operands, variant, heads, cache)


def varlen_spec(name, dtype, learnable_sinks=False, head_dim=None,
                heads=None, **variant):
    """An fa.kernel with the forward of one variant over packed sequences
    (fa.attention's query_starts and key_starts, i32 [N + 1] each; q, k
    and v one batch entry of their rows); `heads` as attention_spec's; it
    has no backward."""
    starts = [_tensor(1, "i32")]
    return _forward_only_spec(name, dtype, learnable_sinks, head_dim,
                              [("query_starts", starts),
                               ("key_starts", starts)], variant, heads)


def softmax_matmul_spec(name, dtype):
    t = _tensor(3, dtype)
    return f"""fa.kernel @{name} {{
  func.func @forward(%x: {t}, %v: {t}) -> {t} {{
    %out = fa.softmax_matmul %x, %v : ({t}, {t}) -> {t}
    return %out : {t}
  }}
}}
"""
