"""Token generation with a small random gpt-oss-style model on a paged KV
cache: fa.attention for each prompt, then fa.decode for every step of all
sequences at once, through a block table over a shared pool of pages, each
step's key and value written into the pages by fa.decode itself. Each
step's logits are checked against an eager float64 recomputation of the
whole sequence (mask, sinks and window written out).

    PYTHONPATH=build/python python3 examples/gpt_oss_decode.py [--device cuda]

The model keeps gpt-oss's shape of attention (GQA, alternating sliding
window and full layers, a learnable sink logit per head, rotary embeddings)
at a small size: 2 layers, 8 query heads over 2 kv heads, head dim 64.
"""

import argparse
import math

import torch

import fa
import fa.nn


class Layer(torch.nn.Module):
    def __init__(self, hidden, window, factory):
        super().__init__()
        self.norm = torch.nn.RMSNorm(hidden, **factory)
        self.attn = fa.nn.GptOssAttention(hidden, num_heads=8, num_kv_heads=2,
                                          head_dim=64, sliding_window=window,
                                          **factory)
        torch.nn.init.normal_(self.attn.sinks)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(hidden, 4 * hidden,
                                                       **factory),
                                       torch.nn.SiLU(),
                                       torch.nn.Linear(4 * hidden, hidden,
                                                       **factory))

    def qkv(self, h, positions):
        """q [B, 8, S, 64], k and v [B, 2, S, 64] of h [B, S, hidden] at
        integer positions [B, S], rotated."""
        a, (b, s, _) = self.attn, h.shape
        x = self.norm(h)
        q, k, v = (proj(x).view(b, s, n, a.head_dim).transpose(1, 2)
                   for proj, n in ((a.q_proj, a.num_heads),
                                   (a.k_proj, a.num_kv_heads),
                                   (a.v_proj, a.num_kv_heads)))
        cos, sin = (t.unsqueeze(1) for t in fa.nn.rotary_embeddings(
            positions, a.head_dim, dtype=h.dtype))
        return fa.nn.apply_rotary(q, cos, sin), \
            fa.nn.apply_rotary(k, cos, sin), v

    def finish(self, h, o):
        b, _, s, _ = o.shape
        h = h + self.attn.o_proj(o.transpose(1, 2).reshape(b, s, -1))
        return h + self.mlp(h)


class Model(torch.nn.Module):
    def __init__(self, vocab=101, hidden=128, window=16, device="cpu",
                 dtype=torch.float32):
        super().__init__()
        factory = dict(device=device, dtype=dtype)
        self.embed = torch.nn.Embedding(vocab, hidden, **factory)
        self.layers = torch.nn.ModuleList([Layer(hidden, window, factory),
                                           Layer(hidden, None, factory)])
        self.norm = torch.nn.RMSNorm(hidden, **factory)
        self.head = torch.nn.Linear(hidden, vocab, bias=False, **factory)

    def logits(self, h):
        return self.head(self.norm(h))


class PagedCache:
    """One layer's K/V in a pool of pages of `page` keys, [pages, Hkv, page,
    D], handed to sequences in shuffled order through `table` [B, N]."""

    def __init__(self, batch, per_sequence, page, like):
        pages = batch * per_sequence + 1  # one page nobody owns
        self.page = page
        self.k = torch.full((pages, 2, page, 64), float("nan"),
                            dtype=like.dtype, device=like.device)
        self.v = torch.full_like(self.k, float("nan"))
        order = torch.randperm(pages)[:batch * per_sequence]
        self.table = order.reshape(batch, per_sequence).to(
            torch.int32).to(like.device)

    def write(self, b, start, k, v):
        """Keys [start, start + S) of sequence b: k, v [Hkv, S, D]."""
        for j in range(k.shape[1]):
            page = self.table[b, (start + j) // self.page]
            self.k[page, :, (start + j) % self.page] = k[:, j]
            self.v[page, :, (start + j) % self.page] = v[:, j]


def eager_logits(model, tokens):
    """The last position's logits of one sequence, recomputed in float64
    from scratch with the mask, window and sinks written out."""
    model64 = model.double()
    try:
        s = len(tokens)
        h = model64.embed(torch.tensor([tokens], device=model.embed.weight
                                       .device))
        positions = torch.arange(s, device=h.device)[None]
        for layer in model64.layers:
            q, k, v = layer.qkv(h, positions)
            k = k.repeat_interleave(4, 1)
            v = v.repeat_interleave(4, 1)
            scores = q @ k.transpose(-1, -2) / math.sqrt(64)
            i = torch.arange(s, device=h.device)[:, None]
            j = torch.arange(s, device=h.device)[None, :]
            visible = j <= i
            if layer.attn.sliding_window:
                visible &= j > i - layer.attn.sliding_window
            scores = scores.masked_fill(~visible, float("-inf"))
            sink = layer.attn.sinks.double()[None, :, None, None].expand(
                1, -1, s, 1)
            p = torch.softmax(torch.cat([scores, sink], -1), -1)[..., :s]
            h = layer.finish(h, p @ v)
        return model64.logits(h)[0, -1]
    finally:
        model.float()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--page", type=int, default=16)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = Model(device=args.device).eval()
    prompts = [[3, 14, 15, 92, 65], list(range(17)),
               [int(t) for t in torch.randint(0, 101, (40,))]]
    batch = len(prompts)
    longest = max(len(p) for p in prompts) + args.steps
    per_sequence = -(-longest // args.page)
    like = model.embed.weight
    caches = [PagedCache(batch, per_sequence, args.page, like)
              for _ in model.layers]
    tokens = [list(p) for p in prompts]
    worst = 0.0
    with torch.no_grad():
        # Prefill, one prompt at a time (fa.attention over its keys).
        for b, prompt in enumerate(prompts):
            h = model.embed(torch.tensor([prompt], device=args.device))
            positions = torch.arange(len(prompt), device=args.device)[None]
            for layer, cache in zip(model.layers, caches):
                q, k, v = layer.qkv(h, positions)
                cache.write(b, 0, k[0], v[0])
                o = fa.attention(q.contiguous(), k.contiguous(),
                                 v.contiguous(), causal=True,
                                 window=layer.attn.sliding_window,
                                 sinks=layer.attn.sinks)
                h = layer.finish(h, o)
            tokens[b].append(int(model.logits(h)[0, -1].argmax()))
        # Decode: every sequence's next token in one fa.decode per layer.
        for step in range(args.steps):
            lengths = torch.tensor([len(t) - 1 for t in tokens],
                                   dtype=torch.int32)
            h = model.embed(torch.tensor([[t[-1]] for t in tokens],
                                         device=args.device))
            positions = lengths[:, None].to(args.device)
            for layer, cache in zip(model.layers, caches):
                q, k, v = layer.qkv(h, positions)
                # The step's key and value go into the pages by fa.decode
                # itself (k_new, v_new), at each sequence's length.
                o = fa.decode(q.contiguous(), cache.k, cache.v,
                              cache_seqlens=lengths.to(args.device),
                              block_table=cache.table, k_new=k, v_new=v,
                              window=layer.attn.sliding_window,
                              sinks=layer.attn.sinks)
                h = layer.finish(h, o)
            logits = model.logits(h)[:, 0]
            for b in range(batch):
                ref = eager_logits(model, tokens[b])
                worst = max(worst, ((logits[b].double() - ref).abs().max() /
                                    ref.abs().max()).item())
                tokens[b].append(int(logits[b].argmax()))
    print(f"gpt-oss-style decode on {args.device}: {batch} sequences "
          f"(prompts of {[len(p) for p in prompts]} tokens), {args.steps} "
          f"steps on pages of {args.page} keys; logits against eager "
          f"float64: max relative error {worst:.2e}")
    for b in range(batch):
        print(f"  sequence {b}: ... {tokens[b][-12:]}")
    tolerance = 1e-4 if like.dtype == torch.float32 else 3e-2
    if not worst < tolerance:
        raise SystemExit(f"logits differ from eager by {worst:.2e} "
                         f"(tolerance {tolerance})")


if __name__ == "__main__":
    main()
