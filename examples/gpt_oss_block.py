"""gpt-oss attention layers (a sliding one and a full one) with fa's kernel:
GQA 64/8, head dim 64, a 128-key window, learnable sinks; one training step.

    PYTHONPATH=build/python python3 examples/gpt_oss_block.py [--device cuda]
"""

import argparse

import torch

import fa.nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seq", type=int, default=256)
    args = parser.parse_args()
    dtype = torch.bfloat16 if args.device == "cuda" else torch.float32
    torch.manual_seed(0)
    layers = torch.nn.ModuleList([
        fa.nn.GptOssAttention(sliding_window=128, device=args.device,
                              dtype=dtype),
        fa.nn.GptOssAttention(sliding_window=None, device=args.device,
                              dtype=dtype)])
    optimizer = torch.optim.SGD(layers.parameters(), lr=1e-3)
    x = torch.randn(1, args.seq, 2880, device=args.device, dtype=dtype)
    positions = torch.arange(args.seq, device=args.device)[None]
    rope = fa.nn.rotary_embeddings(positions, 64, dtype=dtype)
    h = x
    for layer in layers:
        h = h + layer(h, position_embeddings=rope)
    loss = h.float().square().mean()
    loss.backward()
    optimizer.step()
    print(f"gpt-oss sliding + full layers, {args.seq} tokens on "
          f"{args.device}: loss {loss.item():.4f}, sinks grad norm "
          f"{layers[0].sinks.grad.norm().item():.3e}")
    assert torch.isfinite(loss) and layers[0].sinks.grad.abs().sum() > 0


if __name__ == "__main__":
    main()
