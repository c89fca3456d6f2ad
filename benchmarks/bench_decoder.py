"""Tracing a decoder on the CPU: a 12-layer, 768-wide GPT-2 (random weights, GPT-2 small's shape), a 32-token
sentence, measured in one run against the same model's plain `transformers` forward.

  our trace (every sub-step recorded, mixing matrices included) / GPT2Model forward   target ≤ 1.1

Both models are the same weights (the folder is saved by transformers and loaded by macaron.load). Runs interleaved,
medians reported, the CPU kind named. Appends its figures to benchmarks/RESULTS.md.
Usage: python benchmarks/bench_decoder.py [--repeats 30] [--tokens 32]
"""
from __future__ import annotations

import argparse
import platform
import tempfile
from datetime import date
from pathlib import Path

import torch
from transformers import GPT2Config, GPT2LMHeadModel

import macaron
from bench_trace import median_ms
from macaron.train.precision import cpu_kind
from results import write_section


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--tokens", type=int, default=32)
    args = ap.parse_args()
    torch.manual_seed(0)
    theirs = GPT2LMHeadModel(GPT2Config(n_embd=768, n_layer=12, n_head=12, vocab_size=8192, n_positions=1024,
                                        attn_implementation="sdpa")).eval()
    with tempfile.TemporaryDirectory() as tmp:
        theirs.save_pretrained(Path(tmp), safe_serialization=True)
        ours = macaron.load(tmp, device="cpu")
    ids = torch.randint(0, 8192, (args.tokens,)).tolist()
    t = torch.tensor([ids])

    def forward():
        with torch.no_grad():
            theirs.transformer(t)

    ms = median_ms({"transformers": forward, "trace": lambda: ours.trace(ids)}, args.repeats)
    ratio = ms["trace"] / ms["transformers"]
    body = (f"{date.today()}, {cpu_kind()} ({platform.processor() or platform.machine()}), "
            f"{torch.get_num_threads()} threads, torch {torch.__version__}, median of {args.repeats}; GPT-2 small's "
            f"shape (12 × 768), random weights, {args.tokens} tokens.\n\n"
            "| GPT2Model forward ms | our trace ms | trace / forward (≤ 1.1) |\n|---|---|---|\n"
            f"| {ms['transformers']:.2f} | {ms['trace']:.2f} | {ratio:.2f} |")
    print(body)
    write_section("Tracing a decoder", body)


if __name__ == "__main__":
    main()
