"""Held-out evaluation of masked-language models, and what tells a model that reads context from
one that only learned word frequencies.

On one fixed validation set (the first N packed validation sequences, masked once with a fixed
seed, the same for every model):
- masked-token loss (nats), accuracy and perplexity;
- the unigram baseline: the loss of guessing every masked token from training-set word counts
  alone (add-one smoothed) on the same targets;
- the context effect: how much the loss rises when the unmasked tokens of every sequence are
  shuffled among themselves (targets, [CLS] and [SEP] stay in place): what the model owes to word
  order. A model that ignores the other words loses nothing, and so does one that reads them as a
  bag of words (measured: minis on the plateau lose 0.25–0.5 nats when the words are replaced by
  random ones, 0.00 when shuffled; docs/training-notes.md); one that reads word order loses over a nat;
- the context use: how much the loss rises when those tokens are replaced by random ordinary tokens:
  what the model owes to the other words at all, their order or not;
- two models compared: the difference of their losses with a bootstrap confidence interval,
  resampling validation sequences (both models scored on the same resampled sequences).

    python -m macaron.train.evaluate --data ~/.cache/macaron/packed pretrained/transformer-mini pretrained/macaron-mini
    python -m macaron.train.evaluate --data data/corpus --tokenizer data/tokenizer.json ... --write
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ..studies.paired import Scores, bootstrap_difference
from . import precision
from .data import IGNORE, Specials

EVAL_SEED = 1234       # the masking seed of the fixed validation set
SHUFFLE_SEED = 4321


def eval_dtype(device: torch.device) -> torch.dtype:
    """Held-out figures in float32 on a CPU, whatever a run trains in: the same numbers on every CPU."""
    return torch.bfloat16 if device.type == "cuda" else torch.float32


@torch.no_grad()
def score(encoder, batches) -> Scores:
    """Scores of an encoder with an MLM head on batches of (inputs, attention_mask, labels)."""
    was = encoder.training
    encoder.eval()
    device = encoder.device
    seq_loss, seq_targets, correct = [], [], 0
    for inputs, attention_mask, labels in batches:
        # always a mask: one graph for a compiled model
        attention_mask, labels = attention_mask.to(device), labels.to(device)
        with precision.autocast(device, eval_dtype(device)):
            hidden = encoder(inputs.to(device), attention_mask)
        chosen = labels != IGNORE
        logits = encoder.head(hidden[chosen]).float()
        target = labels[chosen]
        rows = chosen.nonzero()[:, 0]
        per = torch.zeros(len(labels), device=device, dtype=torch.float64)
        per.index_add_(0, rows, F.cross_entropy(logits, target, reduction="none").double())
        seq_loss += per.tolist()
        seq_targets += chosen.sum(1).tolist()
        correct += int((logits.argmax(-1) == target).sum())
    encoder.train(was)
    n = max(sum(seq_targets), 1)
    mean = sum(seq_loss) / n
    return Scores(mean, correct / n, math.exp(min(mean, 50.0)), sum(seq_targets), seq_loss, seq_targets)


def unigram_loss(train_ids: np.ndarray, vocab_size: int, batches) -> float:
    """Mean loss of predicting each masked target from its training-set frequency (add-one)."""
    counts = np.bincount(np.asarray(train_ids, dtype=np.int64), minlength=vocab_size).astype(np.float64) + 1.0
    logp = np.log(counts / counts.sum())
    targets = np.concatenate([lab[lab != IGNORE].numpy() for _, _, lab in batches])
    return float(-logp[targets].mean())


def context_positions(inputs, attention_mask, labels, sp: Specials):
    """Where a sequence's context is: the unmasked ordinary tokens (not targets, specials or padding)."""
    movable = attention_mask & (labels == IGNORE)
    for t in sp.never_masked:
        movable &= inputs != t
    return movable


def _changed_context(batches, sp: Specials, seed: int, change):
    """The same batches with `change(inputs, context, rng)` applied in place to a copy of each batch's inputs."""
    rng = np.random.default_rng(seed)
    out = []
    for inputs, attention_mask, labels in batches:
        changed = inputs.clone()
        change(changed, context_positions(inputs, attention_mask, labels, sp), rng)
        out.append((changed, attention_mask, labels))
    return out


def _permute_rows(x, movable, rng):
    for r in range(len(x)):
        where = movable[r].nonzero()[:, 0]
        x[r, where] = x[r, where[torch.from_numpy(rng.permutation(len(where)))]]


def shuffle_context(batches, sp: Specials, seed: int = SHUFFLE_SEED):
    """The same batches with every sequence's unmasked ordinary tokens permuted among themselves."""
    return _changed_context(batches, sp, seed, _permute_rows)


def replace_context(batches, sp: Specials, seed: int = SHUFFLE_SEED):
    """The same batches with every unmasked ordinary token replaced by a uniformly random ordinary token."""
    def draw(x, movable, rng):
        x[movable] = torch.from_numpy(rng.integers(sp.first_ordinary, sp.vocab_size, int(movable.sum())))
    return _changed_context(batches, sp, seed, draw)


def evaluate(encoder, batches, sp: Specials, train_ids: np.ndarray) -> dict:
    """Everything a model card reports about held-out language modelling."""
    plain = score(encoder, batches)
    shuffled = score(encoder, shuffle_context(batches, sp))
    replaced = score(encoder, replace_context(batches, sp))
    return {**plain.summary(), "unigram_loss": unigram_loss(train_ids, sp.vocab_size, batches),
            "shuffled_loss": shuffled.loss, "context_effect": shuffled.loss - plain.loss,
            "replaced_loss": replaced.loss, "context_use": replaced.loss - plain.loss,
            "seq_loss": plain.seq_loss, "seq_targets": plain.seq_targets}


def as_scores(result: dict) -> Scores:
    return Scores(result["loss"], result["accuracy"], result["perplexity"], result["targets"],
                  result["seq_loss"], result["seq_targets"])


def main(argv=None) -> int:
    from ..formats.folder import CheckpointError
    from ..sources.loading import load
    from ..sources.shipped import resolve
    from . import card as cardlib
    from .data import DataError, Packed, held_out_batches, specials
    from .pack import open_data

    p = argparse.ArgumentParser(prog="python -m macaron.train.evaluate", description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+", help="model folders (or shipped names)")
    p.add_argument("--data", default="data/corpus",
                   help="a packed folder (python -m macaron.train.pack) or a text corpus folder")
    p.add_argument("--tokenizer", default="data/tokenizer.json", help="with a text corpus")
    p.add_argument("--eval-seqs", type=int, default=512)
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--write", action="store_true", help="store the results in each folder's training.json and card")
    args = p.parse_args(argv)
    try:
        data = open_data(args.data, args.tokenizer, Path("runs") / "eval-cache")
        sp = specials(data.tok)
        batches = held_out_batches(Packed(data.valid, sp, args.seq_len), args.eval_seqs, args.batch, EVAL_SEED)
        results = {}
        for name in args.models:
            model = load(name, device="cuda" if torch.cuda.is_available() else "cpu")
            results[name] = evaluate(model, batches, sp, data.train.ids)
            r = results[name]
            print(f"{model.config.name}: loss {r['loss']:.4f}  accuracy {r['accuracy']:.1%}  perplexity "
                  f"{r['perplexity']:.1f}  unigram {r['unigram_loss']:.4f}  context effect "
                  f"{r['context_effect']:+.3f} nats  context use {r['context_use']:+.3f} nats  "
                  f"({r['targets']:,} targets)")
            if args.write:
                cardlib.update_evaluation(resolve(name), r)
        names = list(results)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                d = bootstrap_difference(as_scores(results[a]), as_scores(results[b]))
                print(f"loss({a}) − loss({b}) = {d['difference']:+.4f} nats, 95 % CI "
                      f"[{d['ci95'][0]:+.4f}, {d['ci95'][1]:+.4f}] ({d['sequences']} sequences bootstrapped)")
    except (CheckpointError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
