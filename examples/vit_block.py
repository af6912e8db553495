"""A ViT-B/16 encoder block (197 tokens: 14x14 patches + class token) with
fa's attention, forward and backward; checked against torch's module.

    PYTHONPATH=build/python python3 examples/vit_block.py [--device cuda]
"""

import argparse

import torch
from torch import nn

import fa.nn


class Block(nn.Module):
    def __init__(self, dim=768, heads=12, attention_cls=fa.nn.MultiheadAttention,
                 **factory):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, **factory)
        self.attn = attention_cls(dim, heads, batch_first=True, **factory)
        self.norm2 = nn.LayerNorm(dim, **factory)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim, **factory), nn.GELU(),
                                 nn.Linear(4 * dim, dim, **factory))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    factory = dict(device=args.device, dtype=torch.float32)
    torch.manual_seed(0)
    ours = Block(**factory)
    ref = Block(attention_cls=nn.MultiheadAttention, **factory)
    ref.load_state_dict(ours.state_dict())
    x = torch.randn(4, 197, 768, **factory)
    y, y_ref = ours(x), ref(x)
    y.square().mean().backward()
    y_ref.square().mean().backward()
    err = ((y - y_ref).abs().max() / y_ref.abs().max()).item()
    grad = ours.attn.in_proj_weight.grad
    grad_ref = ref.attn.in_proj_weight.grad
    gerr = ((grad - grad_ref).abs().max() / grad_ref.abs().max()).item()
    print(f"ViT block, 4 x 197 tokens on {args.device}: output rel. error "
          f"{err:.2e}, in_proj gradient rel. error {gerr:.2e}")
    assert err < 1e-4 and gerr < 1e-3


if __name__ == "__main__":
    main()
