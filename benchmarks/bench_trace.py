"""Tracing cost on CPU, 6 × 512 models, 32 and 128 tokens, measured in one run.

  trace / plain forward of the same model             target ≤ 1.15
  trace / HF BertModel + hooks on the residual stream  target ≤ 1.0 (the peer a user would write)

Runs interleaved, medians reported. Appends its figures to benchmarks/RESULTS.md.
Usage: python benchmarks/bench_trace.py [--repeats 30]
"""
from __future__ import annotations

import argparse
import platform
from datetime import date

import torch
from transformers import BertConfig, BertModel

import macaron
from results import median_ms, write_section


def peer_with_hooks(cfg: macaron.ModelConfig):
    peer = BertModel(BertConfig(hidden_size=cfg.d_model, num_hidden_layers=cfg.n_layers,
                                num_attention_heads=cfg.n_heads, intermediate_size=cfg.ffn_total,
                                vocab_size=cfg.vocab_size, max_position_embeddings=cfg.max_len,
                                attn_implementation="sdpa")).eval()
    captured = []

    def grab(_m, _i, out):
        captured.append((out[0] if isinstance(out, tuple) else out)[0].numpy().copy())

    for layer in peer.encoder.layer:
        layer.attention.register_forward_hook(grab)  # residual stream after attention (+ LN)
        layer.output.register_forward_hook(grab)     # residual stream after the FFN (+ LN)

    def run(ids):
        captured.clear()
        with torch.no_grad():
            peer(ids)
        return list(captured)
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args()
    torch.manual_seed(0)
    cfg = macaron.ModelConfig.named("small", scheme="transformer", vocab_size=8192)
    model = macaron.build(cfg)
    peer = peer_with_hooks(cfg)
    rows = []
    for T in (32, 128):
        ids = torch.randint(5, cfg.vocab_size, (T,)).tolist()
        t = torch.tensor([ids])

        def forward():
            with torch.no_grad():
                model(t)
        ms = median_ms({"forward": forward, "trace": lambda: model.trace(ids), "peer": lambda: peer(t)},
                       args.repeats)
        rows.append((T, ms["forward"], ms["trace"], ms["peer"], ms["trace"] / ms["forward"], ms["trace"] / ms["peer"]))
    lines = ["| tokens | forward ms | trace ms | HF BertModel + hooks ms | trace/forward (≤ 1.15) "
             "| trace/peer (≤ 1.0) |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {T} | {f:.2f} | {tr:.2f} | {p:.2f} | {r1:.2f} | {r2:.2f} |" for T, f, tr, p, r1, r2 in rows]
    body = (f"{date.today()}, {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads, "
            f"torch {torch.__version__}, median of {args.repeats}; 6 × 512 Transformer, random weights.\n\n"
            + "\n".join(lines))
    print(body)
    write_section("Tracing cost", body)


if __name__ == "__main__":
    main()
