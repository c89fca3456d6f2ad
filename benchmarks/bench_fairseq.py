"""The paper's own models on the CPU: a random BERT-base-shaped Macaron (12 × 768, 12 heads, two half-FFNs of
1536, the release's vocabulary of 32,768 + 6) written as a fairseq 0.6 checkpoint, imported, loaded, traced.

  trace of a 32-token sentence / plain forward of the same model   target ≤ 1.1
  loading the converted folder (macaron.load), and the import itself (once)

Runs interleaved, medians reported. Appends its figures to benchmarks/RESULTS.md (not with --no-write).
Usage: python benchmarks/bench_fairseq.py [--repeats 20] [--layers 12 --width 768 --heads 12 --vocab 32768]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from collections import OrderedDict
from datetime import date
from pathlib import Path

import torch

import macaron
from macaron.formats.fairseq_import import import_fairseq
from macaron.train.card import hardware
from results import median_ms, write_section


def write_release(folder: Path, layers: int, d: int, heads: int, words: int) -> tuple[Path, Path]:
    """A transformer_bert_base_macaron checkpoint with random weights, as fairseq 0.6's save_state writes one (args,
    model, optimizer history, extra state), and its dict.txt."""
    ffn, V = 2 * d, words + 6
    g = torch.Generator().manual_seed(0)

    def w(*shape):
        return torch.randn(*shape, generator=g) * d ** -0.5

    s = OrderedDict({"encoder.embed_tokens.weight": w(V, d), "encoder.embed_positions._float_tensor": torch.zeros(1),
                     "encoder.embed_segment.weight": w(2, d)})
    for i in range(layers):
        p = f"encoder.layers.{i}."
        s.update({p + "self_attn.in_proj_weight": w(3 * d, d), p + "self_attn.in_proj_bias": w(3 * d),
                  p + "self_attn.out_proj.weight": w(d, d), p + "self_attn.out_proj.bias": w(d)})
        for m in ("fc", "macaron_fc"):
            s.update({p + f"{m}1.weight": w(ffn, d), p + f"{m}1.bias": w(ffn), p + f"{m}2.weight": w(d, ffn),
                      p + f"{m}2.bias": w(d)})
    s.update({"encoder.version": torch.Tensor([2]), "embed_out": s["encoder.embed_tokens.weight"],
              "mid_layer.0.weight": w(d, d), "mid_layer.0.bias": w(d), "mid_layer.2.weight": 1 + w(d),
              "mid_layer.2.bias": w(d), "classifier.weight": w(1, d), "classifier.bias": w(1)})
    args = argparse.Namespace(arch="transformer_bert_base_macaron", task="bert", encoder_embed_dim=d,
                              encoder_ffn_embed_dim=ffn, encoder_layers=layers, encoder_attention_heads=heads,
                              encoder_normalize_before=True, encoder_learned_pos=False, act_fn="gelu",
                              no_normalize_affine=True, macaron=True, share_all_embeddings=True,
                              no_token_positional_embeddings=False, max_positions=384, max_source_positions=384)
    ckpt = folder / "checkpoint_pretrained.pt"
    torch.save({"args": args, "model": s, "optimizer_history": [{"num_updates": 0}], "last_optimizer_state": {},
                "extra_state": {}}, ckpt, _use_new_zipfile_serialization=False)
    vocab = folder / "dict.txt"
    vocab.write_text("".join(f"w{i} {words - i}\n" for i in range(words)))
    return ckpt, vocab


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=32768, help="dict.txt's lines (the release's: 32,768)")
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--no-write", action="store_true", help="print only (a check at a small size)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ckpt, vocab = write_release(Path(tmp), args.layers, args.width, args.heads, args.vocab)
        t = time.perf_counter()
        folder = import_fairseq(ckpt, vocab, None, Path(tmp) / "macaron-bert-base")
        import_s = time.perf_counter() - t
        size = sum(f.stat().st_size for f in folder.iterdir()) / 2**20
        model = macaron.load(folder, device="cpu")
        ids = [5] + torch.randint(6, model.config.vocab_size, (args.tokens - 2,)).tolist() + [2]
        batch = torch.tensor([ids])

        def forward():
            with torch.no_grad():
                model(batch)
        ms = median_ms({"forward": forward, "trace": lambda: model.trace(ids)}, args.repeats)
        load = median_ms({"load": lambda: macaron.load(folder, device="cpu")}, max(3, args.repeats // 4))["load"]
    ratio = ms["trace"] / ms["forward"]
    c = model.config
    body = (f"{date.today()}, {hardware()}, {torch.get_num_threads()} threads, "
            f"torch {torch.__version__}, median of {args.repeats}; a random {c.n_layers} × {c.d_model} Macaron "
            f"({c.n_heads} heads, half-FFNs of {c.ffn_inner}, {c.vocab_size:,} tokens, {model.num_parameters():,} "
            f"parameters) written as fairseq 0.6 writes the paper's checkpoints, imported by `import-fairseq`.\n\n"
            f"| tokens | forward ms | trace ms | trace/forward (≤ 1.1) | load folder ms | folder MiB | import s |\n"
            f"|---|---|---|---|---|---|---|\n"
            f"| {args.tokens} | {ms['forward']:.2f} | {ms['trace']:.2f} | {ratio:.2f} | {load:.0f} | {size:.0f} "
            f"| {import_s:.1f} |")
    print(body)
    if not args.no_write:
        write_section("The paper's models (fairseq import)", body)


if __name__ == "__main__":
    main()
