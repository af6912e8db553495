"""fa as a Hugging Face transformers attention implementation
(attn_implementation="fa"): small random-weight models of the four families
the integration covers (Llama/Qwen-style GQA, Mistral's sliding window,
gpt-oss's sinks with alternating sliding and full layers, a ViT classifier),
their logits and a training step's gradients against transformers' eager
attention, padded batches and generation, and the masks fa refuses by name.
Skipped where torch or transformers is absent."""

import copy

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import fa  # noqa: E402
import fa.integrations.transformers as fa_hf  # noqa: E402
from transformers import (AutoModelForCausalLM,  # noqa: E402
                          AutoModelForImageClassification, GptOssConfig,
                          LlamaConfig, MistralConfig, Qwen2Config, ViTConfig)

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() and
                     fa.gpu_available()[0] else [])
VOCAB, SEQ, WINDOW = 128, 40, 16


def tiny(config_class, **overrides):
    """A two-layer model, GQA 4/2 at D 32 (a tensor-core head dim)."""
    fields = dict(vocab_size=VOCAB, hidden_size=128, intermediate_size=256,
                  num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=32,
                  max_position_embeddings=256)
    fields.update(overrides)
    return config_class(**fields)


FAMILIES = {
    "llama": lambda: tiny(LlamaConfig),
    "qwen2": lambda: tiny(Qwen2Config),
    "mistral": lambda: tiny(MistralConfig, sliding_window=WINDOW),
    "gpt_oss": lambda: tiny(GptOssConfig, sliding_window=WINDOW,
                            num_local_experts=4, num_experts_per_tok=2,
                            layer_types=["sliding_attention",
                                         "full_attention"]),
}


def rel(got, ref):
    return ((got.double() - ref.double()).abs().max() /
            ref.double().abs().max().clamp_min(1e-30)).item()


def assert_close_grads(got, ref, tol):
    """Each gradient within `tol` of eager's, relative to its own size or,
    for the ones that are zero but for rounding (a key bias under softmax),
    to a thousandth of the largest."""
    assert got.keys() == ref.keys()
    floor = 1e-3 * max(g.abs().max().item() for g in ref.values())
    for name, grad in ref.items():
        scale = max(grad.abs().max().item(), floor)
        assert (got[name].double() - grad.double()).abs().max().item() < \
            tol * scale, name


def twins(config, device, dtype=torch.float32, model_class=None):
    """The same random weights under eager attention and under fa."""
    make = model_class or AutoModelForCausalLM
    torch.manual_seed(0)
    eager = make.from_config(copy.deepcopy(config),
                             attn_implementation="eager")
    ours = make.from_config(copy.deepcopy(config), attn_implementation="fa")
    if getattr(config, "model_type", "") == "gpt_oss":
        # transformers initialises sinks to zeros; random ones test them.
        for layer in eager.model.layers:
            torch.nn.init.normal_(layer.self_attn.sinks, std=1.0)
    ours.load_state_dict(eager.state_dict())
    assert ours.config._attn_implementation == "fa"
    return eager.to(device, dtype), ours.to(device, dtype)


def lm_step(model, ids, mask=None):
    """Logits and every parameter's gradient of a next-token loss over the
    kept tokens, predicted from kept tokens: a padded position's output is
    zeros under fa, as under transformers' flash-attention backends, and
    something else under eager; no kept token reads it."""
    model.zero_grad()
    logits = model(ids, attention_mask=mask).logits
    labels = ids.clone()
    if mask is not None:
        labels[mask == 0] = -100
        labels[:, 1:][mask[:, :-1] == 0] = -100
    loss = torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, VOCAB).float(), labels[:, 1:].reshape(-1),
        ignore_index=-100)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()
             if p.grad is not None}
    return logits.detach(), grads


def assert_same_step(eager, ours, ids, mask=None, tol=1e-4):
    logits_e, grads_e = lm_step(eager, ids, mask)
    logits_f, grads_f = lm_step(ours, ids, mask)
    kept = slice(None) if mask is None else mask.bool()
    assert rel(logits_f[kept], logits_e[kept]) < tol
    assert_close_grads(grads_f, grads_e, tol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_training_step_matches_eager(device, family):
    eager, ours = twins(FAMILIES[family](), device)
    ids = torch.randint(0, VOCAB, (2, SEQ), device=device)
    assert_same_step(eager, ours, ids)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("family", ["llama", "gpt_oss"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_padded_batch_matches_eager_on_kept_tokens(device, family, side):
    eager, ours = twins(FAMILIES[family](), device)
    ids = torch.randint(0, VOCAB, (3, SEQ), device=device)
    mask = torch.ones_like(ids)
    pad = [7, 0, 25]  # past the window on one row
    for row, n in enumerate(pad):
        if side == "left":
            mask[row, :n] = 0
        else:
            mask[row, SEQ - n:] = 0
    assert_same_step(eager, ours, ids, mask)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("family", ["llama", "gpt_oss"])
def test_generation_with_left_padding_matches_eager(device, family):
    """Greedy decoding through the KV cache (gpt-oss's sliding layers keep a
    window-sized one), prompts left-padded past the window."""
    eager, ours = twins(FAMILIES[family](), device)
    eager.eval()
    ours.eval()
    ids = torch.randint(1, VOCAB, (2, 12), device=device)
    mask = torch.ones_like(ids)
    mask[0, :5] = 0
    ids[0, :5] = 0
    kwargs = dict(attention_mask=mask, max_new_tokens=2 * WINDOW,
                  do_sample=False, pad_token_id=0)
    assert torch.equal(ours.generate(ids, **kwargs),
                       eager.generate(ids, **kwargs))


@pytest.mark.parametrize("device", DEVICES)
def test_vit_classifier_matches_eager(device):
    config = ViTConfig(image_size=32, patch_size=8, hidden_size=128,
                       num_hidden_layers=2, num_attention_heads=4,
                       intermediate_size=256, num_labels=10)
    eager, ours = twins(config, device, model_class=AutoModelForImageClassification)
    pixels = torch.randn(3, 3, 32, 32, device=device)
    labels = torch.tensor([1, 4, 9], device=device)
    results = []
    for model in (eager, ours):
        out = model(pixel_values=pixels, labels=labels)
        out.loss.backward()
        results.append((out.logits.detach(),
                        {n: p.grad for n, p in model.named_parameters()}))
    (logits_e, grads_e), (logits_f, grads_f) = results
    assert rel(logits_f, logits_e) < 1e-4
    assert_close_grads(grads_f, grads_e, 1e-4)


@pytest.mark.skipif("cuda" not in DEVICES, reason="needs a GPU")
@pytest.mark.parametrize("family", ["llama", "gpt_oss"])
def test_bf16_on_the_gpu_tracks_eager_in_float32(family):
    """bf16 runs fa's tensor-core kernels (wgmma on Hopper); the float32
    eager model is the reference."""
    config = FAMILIES[family]()
    if family == "gpt_oss":
        # Every expert on every token: bf16 rounding must not flip the
        # router's discrete top-k choice, which moves logits by O(1).
        config.num_experts_per_tok = config.num_local_experts
    eager, _ = twins(config, "cuda")
    _, ours = twins(config, "cuda", torch.bfloat16)
    ids = torch.randint(0, VOCAB, (2, 256), device="cuda")
    with torch.no_grad():
        assert rel(ours(ids).logits, eager(ids).logits) < 3e-2


def test_registered_and_aliasable():
    from transformers import AttentionInterface
    assert "fa" in AttentionInterface().valid_keys()
    fa_hf.register("fa_alias")
    model = AutoModelForCausalLM.from_config(FAMILIES["llama"](),
                                             attn_implementation="fa_alias")
    ids = torch.randint(0, VOCAB, (1, 8))
    assert torch.isfinite(model(ids).logits).all()


def test_mask_variants_are_read_from_the_factory():
    from transformers import masking_utils as mu
    assert fa_hf.mask_variant(mu.causal_mask_function) == (True, None)
    assert fa_hf.mask_variant(mu.bidirectional_mask_function) == (False,
                                                                  None)
    assert fa_hf.mask_variant(
        mu.sliding_window_causal_mask_function(128)) == (True, 128)
    assert fa_hf.mask_variant(
        mu.sliding_window_bidirectional_mask_function(128)) is None
    assert fa_hf.mask_variant(mu.chunked_causal_mask_function(
        8, torch.zeros(1, dtype=torch.long))) is None


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("family", ["llama", "mistral"])
def test_packed_sequences_match_eager(device, family, monkeypatch):
    """transformers' packing format (position_ids restarting inside a row,
    no attention mask; DataCollatorWithFlattening's): fa runs each layer as
    one fa.attention_varlen call over the rows, its backward per sequence;
    the training step's logits and gradients match eager's, whose mask
    keeps the sequences apart. Two rows, one sequence past Mistral's
    window. (transformers' gpt-oss does not read packing from its
    position_ids: it attends across the row, eager and fa alike.)"""
    starts = []
    varlen = fa_hf.attention_varlen
    monkeypatch.setattr(fa_hf, "attention_varlen", lambda *a, **k: (
        starts.append(a[3].tolist()), varlen(*a, **k))[1])
    eager, ours = twins(FAMILIES[family](), device)
    lengths = [[5, 30, 5], [12, 28]]
    positions = torch.stack([torch.cat([torch.arange(n) for n in row])
                             for row in lengths]).to(device)
    ids = torch.randint(0, VOCAB, (2, SEQ), device=device)
    steps = []
    for model in (eager, ours):
        model.zero_grad()
        logits = model(ids, position_ids=positions, use_cache=False).logits
        logits.float().square().mean().backward()
        steps.append((logits.detach(), {
            n: p.grad.detach().clone() for n, p in model.named_parameters()
            if p.grad is not None}))
    assert rel(steps[1][0], steps[0][0]) < 1e-4
    assert_close_grads(steps[1][1], steps[0][1], 1e-4)
    assert starts == [[0, 5, 35, 40, 52, 80]] * 2  # one call per layer


def test_packed_sequences_from_flash_attention_kwargs(monkeypatch):
    """cu_seq_lens_q/k passed down as flash-attention kwargs (one row) are
    the packing fa runs: the same result as the positions that restart."""
    starts = []
    varlen = fa_hf.attention_varlen
    monkeypatch.setattr(fa_hf, "attention_varlen", lambda *a, **k: (
        starts.append(a[3]), varlen(*a, **k))[1])
    _, model = twins(FAMILIES["llama"](), "cpu")
    ids = torch.randint(0, VOCAB, (1, 20))
    positions = torch.cat([torch.arange(8), torch.arange(12)])[None]
    cu = torch.tensor([0, 8, 20], dtype=torch.int32)
    with torch.no_grad():
        by_positions = model(ids, position_ids=positions,
                             use_cache=False).logits
        by_kwargs = model(ids, position_ids=positions, use_cache=False,
                          cu_seq_lens_q=cu, cu_seq_lens_k=cu,
                          max_length_q=12, max_length_k=12).logits
    torch.testing.assert_close(by_kwargs, by_positions)
    assert starts[-1] is cu


def test_masks_fa_cannot_express_are_refused_by_name():
    _, model = twins(FAMILIES["llama"](), "cpu")
    ids = torch.randint(0, VOCAB, (2, 12))
    with pytest.raises(NotImplementedError, match="dense mask of shape"):
        model(ids, attention_mask=torch.zeros(2, 1, 12, 12))
    gaps = torch.ones_like(ids)
    gaps[0, 4] = 0
    with pytest.raises(NotImplementedError, match="one run of kept keys"):
        model(ids, attention_mask=gaps)


def test_dropout_in_training_is_refused():
    config = FAMILIES["llama"]()
    config.attention_dropout = 0.1
    _, model = twins(config, "cpu")
    model.train()
    with pytest.raises(NotImplementedError,
                       match="model 'llama' asks for attention dropout"):
        model(torch.randint(0, VOCAB, (1, 8)))
    model.eval()  # dropout is off in eval: fa runs
    assert torch.isfinite(model(torch.randint(0, VOCAB, (1, 8))).logits).all()
