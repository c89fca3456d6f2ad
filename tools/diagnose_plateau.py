"""What a model on the unigram plateau owes to the other words, and how much gradient its layers get
(docs/training-notes.md, "The plateau is about word order").

    .venv/bin/python tools/diagnose_plateau.py ~/.cache/macaron/runs/mini/transformer-mini/milestones/step-004500 \\
        ~/.cache/macaron/runs/mini/macaron-mini/milestones/step-004500 [--data ~/.cache/macaron/packed]

Per model folder, on the first 256 held-out sequences (15 % masks, evaluate.py's seed): the loss, its rise
when the unmasked words are shuffled (word order: the context effect) and when they are replaced by random
tokens (seed 0: every use of the other words); then, on one batch of 32 of them, the gradient norm reaching
each group of parameters, and the mean norm of the residual stream at every recorded state of one sentence.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import macaron
from macaron.train import data as D
from macaron.train import evaluate as ev
from macaron.train.objective import MaskedLM
from macaron.train.pack import open_data

SENTENCE = "the bank of the river was full of water after the rain ."


def loss(model, batches) -> float:
    s = ev.score(model, batches)
    return sum(s.seq_loss) / s.targets


def gradient_norms(model, batch) -> dict[str, float]:
    """Gradient norm per group: embeddings, each kind of layer operator (ops.k), norms, head."""
    model.train()
    MaskedLM(model)(*batch).backward()
    groups: dict[str, float] = {}
    for name, p in model.named_parameters():
        if p.grad is not None:
            parts = name.split(".")
            key = ".".join(parts[2:4]) if parts[0] == "layers" and parts[2] == "ops" else (
                "layer norms" if parts[0] == "layers" else parts[0])
            groups[key] = groups.get(key, 0.0) + float(p.grad.norm()) ** 2
    model.zero_grad(set_to_none=True)
    model.eval()
    return {k: v ** 0.5 for k, v in groups.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+", type=Path)
    p.add_argument("--data", type=Path, default=Path.home() / ".cache/macaron/packed")
    args = p.parse_args()
    data = open_data(str(args.data), None, str(args.data.parent / "diagnose-cache"), log=lambda m: None)
    sp = D.specials(data.tok, None)
    held_out = D.held_out_batches(D.Packed(data.valid, sp, 128, True), 256, 64, ev.EVAL_SEED)
    shuffled, random_words = ev.shuffle_context(held_out, sp), ev.replace_context(held_out, sp, seed=0)
    for folder in args.models:
        model = macaron.load(folder, device="cpu")
        base = loss(model, held_out)
        print(f"{folder}\n  held-out loss {base:.3f}; words shuffled {loss(model, shuffled) - base:+.3f} nats; "
              f"words replaced by random tokens {loss(model, random_words) - base:+.3f} nats")
        first = tuple(t[:32] for t in held_out[0])
        print("  gradient norms: " + ", ".join(f"{k} {v:.3f}" for k, v in gradient_norms(model, first).items()))
        states = model.trace(SENTENCE).states
        print("  stream norm per state: " + " ".join(f"{n:.1f}" for n in np.linalg.norm(states, axis=-1).mean(-1)))


if __name__ == "__main__":
    main()
