"""fa.nn against the modules it replaces, in float64 with shared weights.
Needs torch (and transformers for gpt-oss); skipped where absent."""

import pytest

torch = pytest.importorskip("torch")

import fa  # noqa: E402
import fa.nn  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() and
                     fa.gpu_available()[0] else [])


def rel(got, ref):
    return ((got.double() - ref.double()).abs().max() /
            ref.double().abs().max()).item()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("causal", [False, True])
def test_multihead_attention_matches_torch(device, causal):
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(64, 4, batch_first=True,
                                      dtype=torch.float64, device=device)
    ours = fa.nn.MultiheadAttention(64, 4, dtype=torch.float64, device=device)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(2, 197, 64, dtype=torch.float64, device=device,
                    requires_grad=True)
    mask = torch.ones(197, 197, dtype=torch.bool, device=device).triu(1) \
        if causal else None
    expected, _ = ref(x, x, x, attn_mask=mask, need_weights=False,
                      is_causal=causal)
    got, _ = ours(x, x, x, is_causal=causal)
    assert rel(got, expected) < 1e-10
    (g_ref,) = torch.autograd.grad(expected.sum(), x)
    (g_ours,) = torch.autograd.grad(got.sum(), x)
    assert rel(g_ours, g_ref) < 1e-10


def test_multihead_attention_refuses_mask_tensors():
    m = fa.nn.MultiheadAttention(16, 2)
    x = torch.randn(1, 4, 16)
    with pytest.raises(NotImplementedError, match="not mask tensors"):
        m(x, x, x, attn_mask=torch.zeros(4, 4))
    with pytest.raises(NotImplementedError, match="need_weights=False"):
        m(x, x, x, need_weights=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layer", ["sliding_attention", "full_attention"])
def test_gpt_oss_attention_matches_hugging_face(device, layer):
    hf = pytest.importorskip("transformers.models.gpt_oss.modeling_gpt_oss")
    from transformers import GptOssConfig
    torch.manual_seed(1)
    config = GptOssConfig(hidden_size=128, num_attention_heads=8,
                          num_key_value_heads=2, head_dim=32,
                          sliding_window=16, num_hidden_layers=1,
                          layer_types=[layer], attention_bias=True)
    config._attn_implementation = "eager"
    ref = hf.GptOssAttention(config, layer_idx=0).to(device, torch.float64)
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_(0, 0.2)
    ours = fa.nn.GptOssAttention(
        128, 8, 2, 32, sliding_window=16 if layer == "sliding_attention"
        else None, dtype=torch.float64, device=device)
    ours.load_state_dict(ref.state_dict())
    b, s = 2, 45
    x = torch.randn(b, s, 128, dtype=torch.float64, device=device)
    positions = torch.arange(s, device=device)[None].expand(b, -1)
    # transformers 5.24 dropped the device argument: move the module.
    cos, sin = hf.GptOssRotaryEmbedding(config).to(device)(x, positions)
    i = torch.arange(s, device=device)[:, None]
    j = torch.arange(s, device=device)[None, :]
    allowed = j <= i
    if layer == "sliding_attention":
        allowed &= j > i - 16
    mask = torch.zeros(s, s, dtype=torch.float64, device=device) \
        .masked_fill(~allowed, float("-inf"))[None, None].expand(b, 1, s, s)
    expected, _ = ref(hidden_states=x, position_embeddings=(cos, sin),
                      attention_mask=mask)
    got = ours(x, position_embeddings=(cos.double(), sin.double()))
    assert rel(got, expected) < 1e-10
