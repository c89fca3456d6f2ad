"""The activation-patching map against TransformerLens, on one GPT-2-shaped model, measured in one run.

  ours: macaron.interventions.patching_map (the corrupted run patched in batches, `--batch` runs a batch)
  TransformerLens: transformer_lens.patching.get_act_patch_resid_pre (one patched run a cell), after the clean
  run_with_cache and the corrupted baseline run it needs                             target: ours / TL ≤ 1

One GPT2LMHeadModel with a seeded random config is saved to a temporary folder, opened by macaron.load and by
TransformerLens's TransformerBridge.boot_transformers (offline: the folder and the loaded model are given, no
weight processing). Both maps are first checked to agree: the logit difference of every patched run, and the share
of the clean answer it restores, layer boundary by particle (TransformerLens patches the state entering each block;
ours also patches the last state, one row more, and that row is timed as part of ours). Runs interleaved, medians
reported, the CPU named. Writes the "Patching map" section of benchmarks/RESULTS.md (not with --no-write).
Usage: python benchmarks/bench_patching.py [--layers 4] [--width 256] [--tokens 12] [--repeats 5] [--no-write]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import tempfile
from datetime import date
from importlib.metadata import version
from pathlib import Path

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

import macaron
from macaron import interventions as iv
from macaron.train.card import hardware
from results import median_ms, write_section

TOLERANCE = 1e-4  # the largest difference of a patched run's logit difference allowed between the two maps
GOOD, BAD = 7, 11  # the two words of the metric, logit(GOOD) − logit(BAD) at the sentence's last token


def gpt2(layers: int, width: int, vocab: int, seed: int) -> GPT2LMHeadModel:
    torch.manual_seed(seed)
    config = GPT2Config(n_embd=width, n_layer=layers, n_head=max(1, width // 64), vocab_size=vocab, n_positions=256,
                        bos_token_id=0, eos_token_id=0, attn_implementation="eager")
    return GPT2LMHeadModel(config).eval()


def transformer_lens_map(bridge, clean: torch.Tensor, corrupted: torch.Tensor):
    """(the patched logit differences [layers, T], clean's, corrupted's) by get_act_patch_resid_pre."""
    from transformer_lens.patching import get_act_patch_resid_pre

    def metric(logits):
        return logits[0, -1, GOOD] - logits[0, -1, BAD]

    with torch.no_grad(), contextlib.redirect_stderr(io.StringIO()):  # its progress bar, redrawn every patch
        clean_logits, cache = bridge.run_with_cache(clean)
        corrupted_logits = bridge(corrupted)
        patched = get_act_patch_resid_pre(bridge, corrupted, cache, metric)
    return patched.numpy(), float(metric(clean_logits)), float(metric(corrupted_logits))


def agreement(ours: iv.PatchingMap, theirs) -> tuple[float, float]:
    """(the largest difference of a patched run's logit difference, of the share restored) over TL's cells."""
    patched, clean, corrupted = theirs
    layers = patched.shape[0]
    mine = ours.corrupted + ours.restored[:layers] * (ours.clean - ours.corrupted)
    restored = (patched - corrupted) / (clean - corrupted)
    return float(np.abs(mine - patched).max()), float(np.abs(ours.restored[:layers] - restored).max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--tokens", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything it reads is on this machine
    from transformer_lens.model_bridge import TransformerBridge

    hf = gpt2(args.layers, args.width, args.vocab, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        hf.save_pretrained(Path(tmp), safe_serialization=True)
        ours = macaron.load(tmp, device="cpu")
        bridge = TransformerBridge.boot_transformers(tmp, hf_model=hf, device="cpu")
    generator = torch.Generator().manual_seed(1)
    clean = torch.randint(0, args.vocab, (1, args.tokens), generator=generator)
    corrupted = clean.clone()
    corrupted[0, : args.tokens // 2] = torch.randint(0, args.vocab, (args.tokens // 2,), generator=generator)

    def run_ours():
        return iv.patching_map(ours, clean[0].tolist(), corrupted[0].tolist(), (GOOD, BAD), batch_size=args.batch)

    found, theirs = run_ours(), transformer_lens_map(bridge, clean, corrupted)
    logit_gap, restored_gap = agreement(found, theirs)
    assert logit_gap <= TOLERANCE, f"the two maps differ by {logit_gap:.2e} in a patched logit difference"
    ms = median_ms({"ours": run_ours, "TransformerLens": lambda: transformer_lens_map(bridge, clean, corrupted)},
                   args.repeats)
    ratio = ms["ours"] / ms["TransformerLens"]
    rows = f"{args.layers} × {args.tokens}"
    body = (f"{date.today()}, {hardware()}, {torch.get_num_threads()} threads, torch {torch.__version__}, "
            f"transformer-lens {version('transformer-lens')}, median of {args.repeats}, interleaved. One GPT-2-shaped "
            f"model ({args.layers} layers × {args.width}, {max(1, args.width // 64)} heads, vocabulary {args.vocab}, "
            f"random weights, seed 0), a {args.tokens}-token sentence and a corrupted copy (its first "
            f"{args.tokens // 2} tokens drawn again), metric logit({GOOD}) − logit({BAD}) at the last token. "
            f"TransformerLens: run_with_cache on the clean run, the corrupted run, get_act_patch_resid_pre "
            f"({rows} patched runs, one at a time); ours: patching_map (both runs traced, {args.layers + 1} × "
            f"{args.tokens} patched runs, the last state's row included, {args.batch} a batch). The maps agree: "
            f"patched logit differences within {logit_gap:.1e} (allowed {TOLERANCE:g}), shares restored within "
            f"{restored_gap:.1e}. Load average at the end {os.getloadavg()[0]:.1f} (other work on the machine slows "
            f"every run; interleaved, it falls on both). Target: ours / TransformerLens ≤ 1.\n\n"
            "| TransformerLens ms | ours ms | ours / TransformerLens |\n|---|---|---|\n"
            f"| {ms['TransformerLens']:.1f} | {ms['ours']:.1f} | {ratio:.2f} |")
    print(body)
    if not args.no_write:
        write_section("Patching map", body)


if __name__ == "__main__":
    main()
