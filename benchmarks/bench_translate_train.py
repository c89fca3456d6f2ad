"""Training a translator on the CPU: ours (macaron.train.translate's Lie–Trotter, 3 + 3 layers × 256, 4 heads, FFN
1024, sinusoidal positions, one token table) against a peer of the same shape in the same run, transformers'
MarianMTModel (post-LN, as Marian is; ReLU FFN; its SDPA attention), on the same Tatoeba batches (the trainer's own,
≤ 6,144 padded tokens), the same label-smoothed loss on the logits, fused AdamW, dropout 0.1, bf16 autocast where the
CPU does bf16 natively (else float32), steps interleaved ours/peer, medians reported. Each as it is used: ours with
the trainer's attention kernel and its head on the real target rows only (LabelSmoothedNMT), Marian's head on every
padded row (its forward returns all logits).

  ours / MarianMTModel, target tokens per second     target ≥ 1.0

Needs the data (make data-translation). Writes the "Training a translator" section of benchmarks/RESULTS.md (not with
--no-write). Usage: python benchmarks/bench_translate_train.py [--steps 30] [--warm 8]
"""
from __future__ import annotations

import argparse
import statistics
import time
from datetime import date
from pathlib import Path

import torch
import torch.nn.functional as F

from macaron.network.operators import use_attention
from macaron.train import precision, tatoeba
from macaron.train import translate as tr
from macaron.train.card import hardware
from macaron.train.objective import LabelSmoothedNMT
from macaron.translation.model import JointReading, build
from results import write_section

DATA = Path.home() / ".cache" / "macaron" / "tatoeba-es-en"


def marian(vocab: int):
    """transformers' Marian of our translators' shape, trained as ours: the same loss on its logits."""
    import transformers

    torch.manual_seed(0)
    cfg = transformers.MarianConfig(vocab_size=vocab, d_model=256, encoder_layers=3, decoder_layers=3,
                                    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=1024,
                                    decoder_ffn_dim=1024, activation_function="relu", dropout=0.1,
                                    attention_dropout=0.0, activation_dropout=0.0, max_position_embeddings=128,
                                    pad_token_id=1, eos_token_id=2, decoder_start_token_id=2, scale_embedding=True,
                                    share_encoder_decoder_embeddings=True, tie_word_embeddings=True)
    model = transformers.MarianMTModel(cfg).train()

    def loss(source, mask, target_in, target_out):
        logits = model(input_ids=source, attention_mask=mask, decoder_input_ids=target_in).logits
        real = target_out != -100
        return F.cross_entropy(logits[real].float(), target_out[real], label_smoothing=0.1)
    return model, loss


def ours(tok):
    args = tr.parse_args(["--models", "transformer-es-en", "--steps", "1"])
    torch.manual_seed(0)
    model = build(tr.translator_configs(args, tok.get_vocab_size(), ("es", "en"))["transformer-es-en"],
                  JointReading(tok)).train()
    device = torch.device("cpu")  # the attention kernel the trainer takes on this CPU, in this precision
    use_attention(model, precision.attention(device, precision.choose(device), tr.SIZE["max_len"]))
    return model, LabelSmoothedNMT(model, 0.1)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=30, help="timed steps of each, after --warm untimed ones")
    p.add_argument("--warm", type=int, default=8)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-write", action="store_true")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    corpus, _, _ = tr.open_corpus(DATA)
    data = corpus.train
    order = tr.Buckets(data.widths, 6144, seed=0)
    device = torch.device("cpu")
    dtype = precision.choose(device)
    models = {"ours": ours(corpus.tok), "MarianMTModel": marian(corpus.tok.get_vocab_size())}
    optims = {k: torch.optim.AdamW(m.parameters(), lr=1e-4, betas=(0.9, 0.98), fused=True)
              for k, (m, _) in models.items()}
    rates: dict[str, list[float]] = {k: [] for k in models}
    for step in range(a.warm + a.steps):
        batch = data.batch(order.indices(step), tatoeba.PAD, tatoeba.EOS, order.width(step))
        tokens = int(data.lengths[order.indices(step)].sum())
        for name in (list(models) if step % 2 else list(models)[::-1]):  # each goes first half the time
            _, loss_of = models[name]
            t = time.perf_counter()
            with precision.autocast(device, dtype):
                loss = loss_of(*batch)
            loss.backward()
            optims[name].step()
            optims[name].zero_grad(set_to_none=True)
            if step >= a.warm:
                rates[name].append(tokens / (time.perf_counter() - t))
    med = {k: statistics.median(v) for k, v in rates.items()}
    params = {k: sum(p.numel() for p in m.parameters()) for k, (m, _) in models.items()}
    ratio = med["ours"] / med["MarianMTModel"]
    rows = "\n".join(f"| {k} | {params[k]:,} | {med[k]:,.0f} |" for k in models)
    body = (f"{hardware(device)}, {a.threads} threads, {precision.name(dtype)}, {date.today()}; {a.steps} steps each "
            f"after {a.warm} untimed, interleaved, on the trainer's Tatoeba batches (≤ 6,144 padded tokens).\n\n"
            f"| model | parameters | target tokens/s (median) |\n|---|---|---|\n{rows}\n\n"
            f"**ours / MarianMTModel: {ratio:.2f}** (target ≥ 1.0).")
    print(body)
    if not a.no_write:
        write_section("Training a translator", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
