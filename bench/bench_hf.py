"""A Hugging Face model's training step with attn_implementation="fa" beside
transformers' "eager" and "sdpa" (where the model takes it): tokens/s and
peak memory of forward + backward + AdamW on random-weight bf16 models.

    PYTHONPATH=build/python python3 bench/bench_hf.py --out hf.csv

Models (--models): gpt_oss, a small gpt-oss (GQA 64/8 at D 64, 128-key
sliding and full layers alternating, learnable sinks; transformers refuses
sdpa for it, since SDPA has no sinks) and llama (GQA 32/8 at D 128). Both
have four layers and a small MLP, so that attention is a visible part of
the step. Peak memory is torch's peak allocation during a step plus fa's
workspace peak.
"""

import argparse
import copy
import time

import torch

from common import (CsvOut, Deadline, failure, free_cuda, import_fa, median,
                    print_table)

fa = import_fa()
import fa.integrations.transformers  # noqa: E402,F401  registers "fa"
from transformers import (AutoModelForCausalLM, GptOssConfig,  # noqa: E402
                          LlamaConfig)

CONFIGS = {
    "gpt_oss": lambda layers: GptOssConfig(
        vocab_size=32000, hidden_size=2880, intermediate_size=1024,
        num_hidden_layers=layers, num_attention_heads=64,
        num_key_value_heads=8, head_dim=64, sliding_window=128,
        num_local_experts=4, num_experts_per_tok=2,
        max_position_embeddings=131072,
        layer_types=["sliding_attention", "full_attention"] * (layers // 2)),
    "llama": lambda layers: LlamaConfig(
        vocab_size=32000, hidden_size=4096, intermediate_size=2048,
        num_hidden_layers=layers, num_attention_heads=32,
        num_key_value_heads=8, head_dim=128,
        max_position_embeddings=131072),
}


def train_step_ms(model, ids, steps, warmup):
    """Median ms of a training step (forward, backward, AdamW), and the
    peak MiB of a step."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)

    def step():
        loss = model(ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    fa.reset_workspace_peak()
    times = []
    for _ in range(steps):
        start, end = (torch.cuda.Event(enable_timing=True) for _ in "se")
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    peak = torch.cuda.max_memory_allocated() + fa.workspace_peak_bytes()
    return median(times), peak / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="gpt_oss,llama")
    parser.add_argument("--impls", default="eager,sdpa,fa")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seqs", default="4096")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--out", default="hf.csv")
    args = parser.parse_args()
    deadline = Deadline(args.time_limit)
    fields = ["model", "impl", "batch", "seq", "layers", "step_ms",
              "tokens_per_s", "peak_mib", "status", "wall_s"]
    out = CsvOut(args.out, fields)
    rows = []
    for name in args.models.split(","):
        config = CONFIGS[name](args.layers)
        for seq in (int(s) for s in args.seqs.split(",")):
            for impl in args.impls.split(","):
                row = dict(model=name, impl=impl, batch=args.batch, seq=seq,
                           layers=args.layers)
                rows.append(row)
                if deadline.left() <= 0:
                    row["status"] = "skipped: time limit"
                    out.write(row)
                    continue
                started = time.time()
                model = None
                try:
                    torch.manual_seed(0)
                    model = AutoModelForCausalLM.from_config(
                        copy.deepcopy(config), attn_implementation=impl,
                        dtype=torch.bfloat16).cuda()
                    model.train()
                    ids = torch.randint(0, config.vocab_size,
                                        (args.batch, seq), device="cuda")
                    ms, peak = train_step_ms(model, ids, args.steps,
                                             args.warmup)
                    row.update(step_ms=round(ms, 2),
                               tokens_per_s=round(args.batch * seq / ms * 1e3),
                               peak_mib=round(peak), status="ok")
                except Exception as e:  # recorded, never a crash
                    row["status"] = failure(e)
                finally:
                    model = None
                    free_cuda()
                row["wall_s"] = round(time.time() - started, 1)
                out.write(row)
                print(row, flush=True)
    out.close()
    print_table(rows, fields)


if __name__ == "__main__":
    main()
