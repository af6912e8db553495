"""A small random-weight gpt-oss from Hugging Face transformers with
attn_implementation="fa": GQA 64/8 at head dim 64, sliding (128-key) and full
layers alternating, learnable sinks. One training step, checked against the
same weights under transformers' eager attention.

    PYTHONPATH=build/python python3 examples/hf_gpt_oss.py [--device cuda]
"""

import argparse
import copy

import torch
from transformers import AutoModelForCausalLM, GptOssConfig

import fa.integrations.transformers  # noqa: F401  registers "fa"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seq", type=int, default=512)
    args = parser.parse_args()
    config = GptOssConfig(
        vocab_size=1024, hidden_size=512, intermediate_size=512,
        num_hidden_layers=2, num_attention_heads=64, num_key_value_heads=8,
        head_dim=64, sliding_window=128, num_local_experts=4,
        num_experts_per_tok=2, max_position_embeddings=4096,
        layer_types=["sliding_attention", "full_attention"])
    torch.manual_seed(0)
    models = {}
    for name in ("eager", "fa"):
        models[name] = AutoModelForCausalLM.from_config(
            copy.deepcopy(config), attn_implementation=name).to(args.device)
    for layer in models["eager"].model.layers:  # sinks start at zero
        torch.nn.init.normal_(layer.self_attn.sinks)
    models["fa"].load_state_dict(models["eager"].state_dict())

    ids = torch.randint(0, config.vocab_size, (2, args.seq),
                        device=args.device)
    results = {}
    for name, model in models.items():
        out = model(ids, labels=ids)
        out.loss.backward()
        sinks = model.model.layers[0].self_attn.sinks.grad
        results[name] = (out.loss.item(), sinks.clone())
        print(f"{name:5s}: loss {out.loss.item():.6f}, sliding layer's "
              f"dsinks norm {sinks.norm().item():.6e}")
    (loss_e, dsinks_e), (loss_f, dsinks_f) = results["eager"], results["fa"]
    assert abs(loss_f - loss_e) < 1e-4 * abs(loss_e)
    assert (dsinks_f - dsinks_e).abs().max() < 1e-3 * dsinks_e.abs().max()
    print(f"gpt-oss through attn_implementation='fa' on {args.device}, "
          f"{args.seq} tokens: loss and dsinks match eager")


if __name__ == "__main__":
    main()
