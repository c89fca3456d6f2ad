"""Tracing cost, 6 × 512 models at 32, 128 and 384 tokens, on every device present (the CPU, and a GPU where there is
one), measured in one run.

  trace / plain forward of the same model             target ≤ 1.2 at 384 tokens on a CPU, ≤ 3 on a GPU
  trace / HF BertModel + hooks on the residual stream  (the peer a user would write; reported)

The trace computes every attention matrix (the forward takes SDPA's fused kernel) and brings every state and matrix to
the host once. Runs interleaved, medians reported (a GPU's work waited for: torch.cuda.synchronize). Writes the
"Tracing cost" section of benchmarks/RESULTS.md (not with --no-write).
Usage: python benchmarks/bench_trace.py [--repeats 30] [--no-write]
"""
from __future__ import annotations

import argparse
from datetime import date

import torch
from transformers import BertConfig, BertModel

import macaron
from macaron.train.card import hardware
from results import median_ms, write_section


def peer_with_hooks(cfg: macaron.ModelConfig, device: str):
    peer = BertModel(BertConfig(hidden_size=cfg.d_model, num_hidden_layers=cfg.n_layers,
                                num_attention_heads=cfg.n_heads, intermediate_size=cfg.ffn_total,
                                vocab_size=cfg.vocab_size, max_position_embeddings=cfg.max_len,
                                attn_implementation="sdpa")).eval().to(device)
    captured = []

    def grab(_m, _i, out):  # to the host, as a trace's states are
        captured.append((out[0] if isinstance(out, tuple) else out)[0].float().cpu().numpy().copy())

    for layer in peer.encoder.layer:
        layer.attention.register_forward_hook(grab)  # residual stream after attention (+ LN)
        layer.output.register_forward_hook(grab)     # residual stream after the FFN (+ LN)

    def run(ids):
        captured.clear()
        with torch.no_grad():
            peer(ids)
        return list(captured)
    return run


TOKENS = (32, 128, 384)
TARGET = {"cpu": 1.2, "cuda": 3.0}  # trace/forward at 384 tokens


def devices() -> list[str]:
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def timed(fn, device: str):
    """fn, with the device's work waited for (a GPU runs asynchronously)."""
    if device == "cpu":
        return fn
    return lambda: (fn(), torch.cuda.synchronize())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    lines = ["| device | tokens | forward ms | trace ms | HF BertModel + hooks ms | trace/forward | target | "
             "trace/peer |", "|---|---|---|---|---|---|---|---|"]
    for device in devices():
        torch.manual_seed(0)
        cfg = macaron.ModelConfig.named("small", scheme="transformer", vocab_size=8192, max_len=512)
        model = macaron.build(cfg).to(device).eval()
        peer = peer_with_hooks(cfg, device)
        name = hardware(torch.device(device))
        for T in TOKENS:
            ids = torch.randint(5, cfg.vocab_size, (T,)).tolist()
            t = torch.tensor([ids], device=device)

            def forward():
                with torch.no_grad():
                    model(t)
            ms = median_ms({k: timed(f, device) for k, f in
                            {"forward": forward, "trace": lambda: model.trace(ids), "peer": lambda: peer(t)}.items()},
                           args.repeats)
            ratio = ms["trace"] / ms["forward"]
            target = f"≤ {TARGET[device]}" if T == TOKENS[-1] else ""
            lines.append(f"| {name} | {T} | {ms['forward']:.2f} | {ms['trace']:.2f} | {ms['peer']:.2f} | "
                         f"{ratio:.2f} | {target} | {ms['trace'] / ms['peer']:.2f} |")
            print(lines[-1], flush=True)
    body = (f"{date.today()}, {torch.get_num_threads()} threads, torch {torch.__version__}, median of {args.repeats}; "
            f"6 × 512 Transformer, random weights, one sentence. Target: trace/forward at {TOKENS[-1]} tokens "
            f"≤ {TARGET['cpu']} on a CPU, ≤ {TARGET['cuda']} on a GPU.\n\n" + "\n".join(lines))
    print(body)
    if not args.no_write:
        write_section("Tracing cost", body)


if __name__ == "__main__":
    main()
