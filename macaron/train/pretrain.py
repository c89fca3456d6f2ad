"""Masked-language-model pre-training of one model, or of several in lockstep.

    python -m macaron.train.pretrain --size mini --scheme macaron --tokens 3e6          (one model)
    python -m macaron.train.pretrain --models transformer-mini,macaron-mini --data ~/.cache/macaron/packed \\
        --batch 16 --mask-rate 0.3 --tokens 40e6 --keep-every 250 --run-dir ~/.cache/macaron/runs/mini --detach
    torchrun --nproc_per_node 2 -m macaron.train.pretrain ...      (DDP: nccl on CUDA, gloo on CPU)

The masked LM's task (MaskedLMTask) with the one trainer (trainer.py: lockstep, budgets, checkpoints, resume,
warm starts and phases, precision, milestones, cards, torchrun, --detach). The data order (a seeded permutation of
packed sequences) and the masks (seeded by step) do not depend on the model, so models named together in `--models`
see the same batches with the same masks. Under torchrun each process takes its share of every batch
(`--batch` counts all processes together). The loss is objective.MaskedLM's; each evaluation scores the fixed
held-out set and its context effect (evaluate.py), and the finished model's card (card.py) the full evaluation.
"""
from __future__ import annotations

import collections
import hashlib
import json
import math
import sys
from pathlib import Path

import torch
from torch import nn

from ..network.model import build
from . import card as cardlib
from . import evaluate as ev
from . import trainer
from .data import Order, Packed, generator_for, held_out_batches, mask_tokens, padded, specials
from .objective import MaskedLM
from .options import model_configs, parse_args
from .pack import open_data
from .resume import TrainError
from .task import Task


def reuses_weights(encoder: nn.Module) -> bool:
    """Whether one forward calls a module that holds weights more than once (shared layers, tied halves, FLOATER's
    position ODE): the encoder run on a few tokens, its calls counted."""
    calls: collections.Counter = collections.Counter()
    holders = [m for m in encoder.modules() if next(m.parameters(recurse=False), None) is not None]
    hooks = [m.register_forward_hook(lambda m, *_: calls.update([id(m)])) for m in holders]
    try:
        with torch.no_grad():
            encoder(torch.zeros(1, 4, dtype=torch.long, device=next(encoder.parameters()).device), None)
    finally:
        for hook in hooks:
            hook.remove()
    return max(calls.values(), default=0) > 1


class MaskedLMTask(Task):
    """BERT's masked-word objective on packed sequences of a corpus: a packed folder (macaron.train.pack) or a text
    corpus and its tokenizer; batches of --batch sequences of --seq-len tokens, a share --mask-rate of them chosen as
    targets; a fixed held-out set of --eval-seqs sequences masked once."""

    kind = "mlm"
    published = ("seed", "batch", "seq_len", "accum", "mask_rate", "mask_only")

    def __init__(self, args, dist):
        super().__init__(args, dist)
        self.sp = self.held_out_data = self.shuffled = None
        self.unigram: float | None = None

    @property
    def longest(self) -> int:
        return self.args.seq_len

    @property
    def compiles(self) -> bool:
        return self.args.compile

    @property
    def penalty(self) -> float:
        return self.args.move_penalty

    # ---- data and models ----------------------------------------------------------------------------------------
    def prepare(self):
        a, dist = self.args, self.dist
        if a.batch % (dist.world * a.accum):
            raise TrainError(f"--batch {a.batch} does not split over {dist.world} processes × {a.accum} "
                             f"accumulation steps")
        self.data = open_data(a.data or a.corpus, a.tokenizer, a.run_dir / "cache", log=dist.log)
        self.sp = specials(self.data.tok, a.tokenizer)
        self.configs = model_configs(a, self.sp.vocab_size)
        for name, cfg in self.configs.items():
            if cfg.pad_id != self.sp.pad:
                raise TrainError(f"{a.tokenizer}: [PAD] has id {self.sp.pad}, the model expects {cfg.pad_id}")
            if a.seq_len > cfg.max_len:
                raise TrainError(f"--seq-len {a.seq_len} exceeds {name}'s max_len {cfg.max_len}")
        self.train_data = Packed(self.data.train, self.sp, a.seq_len, a.cross_documents)
        self.held_out_data = Packed(self.data.valid, self.sp, a.seq_len, a.cross_documents)
        self.order = Order(len(self.train_data), a.batch, a.seed)
        self.terms = {k: getattr(a, k) for k in ("seed", "batch", "seq_len", "cross_documents", "accum", "mask_rate",
                                                 "mask_only")}
        stats = json.dumps(self.data.stats, sort_keys=True).encode()
        self.terms["corpus_stats"] = hashlib.sha256(stats).hexdigest()[:16]

    def network(self, config) -> nn.Module:
        """An encoder with its masked-word head."""
        return build(config, self.data.tok)

    def criterion(self, network) -> nn.Module:
        return MaskedLM(network, self.args.move_penalty)

    def reuses_weights(self, network) -> bool:
        return reuses_weights(network)

    def closing_seconds(self, members: list, per_eval: float, per_ckpt: float) -> float:
        """The last evaluations (plain, shuffled, replaced) and the model folders."""
        return 3 * per_eval + 2 * per_ckpt + 15.0

    def describe(self) -> str:
        return f"{len(self.train_data):,} training sequences (mean {self.train_data.lengths.mean():.1f} tokens)"

    def evaluation_sets(self):
        a = self.args
        self.held_out = held_out_batches(self.held_out_data, a.eval_seqs, a.eval_batch, a.eval_seed,
                                         pad_to=a.seq_len if a.compile else None)
        self.shuffled = ev.shuffle_context(self.held_out, self.sp)  # the context effect at every evaluation
        self.unigram = ev.unigram_loss(self.data.train.ids, self.sp.vocab_size, self.held_out)

    def batch(self, step: int):
        """This rank's micro-batches of global batch `step`, on the device: (inputs, attention_mask, labels)."""
        a, dist = self.args, self.dist
        indices = self.order.indices(step)
        per_rank = a.batch // dist.world
        micro = per_rank // a.accum
        mine = indices[dist.rank * per_rank:(dist.rank + 1) * per_rank]
        out = []
        for m in range(a.accum):
            ids, attention_mask = self.train_data.batch(mine[m * micro:(m + 1) * micro])
            inputs, labels = mask_tokens(ids, self.sp, generator_for(a.seed, step, dist.rank * per_rank + m * micro),
                                         a.mask_rate, *((1.0, 0.0) if a.mask_only else (0.8, 0.1)))
            inputs, attention_mask, labels = padded(inputs, attention_mask, labels, self.sp,
                                                    a.seq_len if a.compile else None)
            # no mask lets SDPA take its fastest kernel; a compiled model always gets one (one graph)
            to = dict(device=dist.device, non_blocking=True)
            attention_mask = None if bool(attention_mask.all()) and not a.compile else attention_mask.to(**to)
            out.append((inputs.to(**to), attention_mask, labels.to(**to)))
        return out, int(self.train_data.lengths[indices].sum())

    # ---- evaluation and the model folders -----------------------------------------------------------------------
    def evaluate(self, m, step: int) -> dict:
        """Held-out loss, accuracy and context effect (the loss with each context's word order shuffled, minus
        the loss)."""
        d = self.dist
        s = ev.score(m.network, self.held_out[d.rank::d.world])
        shuffled = ev.score(m.network, self.shuffled[d.rank::d.world])
        loss, correct, count, loss_shuffled = d.sum([sum(s.seq_loss), s.accuracy * s.targets, s.targets,
                                                     sum(shuffled.seq_loss)])
        mean = loss / max(count, 1)
        return {"loss": mean, "accuracy": correct / max(count, 1), "perplexity": math.exp(min(mean, 50.0)),
                "targets": int(count), "context_effect": (loss_shuffled - loss) / max(count, 1)}

    def said(self, m, result: dict) -> str:
        return (f"loss {result['loss']:.4f} acc {result['accuracy']:.4f} ppl {result['perplexity']:.1f} "
                f"context effect {result['context_effect']:+.3f} nats")

    @property
    def baseline(self) -> dict:
        return {"unigram_loss": self.unigram}

    def model(self, out, m):
        """The finished model's folder, with the full held-out evaluation (per sequence, for bootstraps)."""
        p = out.place
        scores = ev.evaluate(m.network, self.held_out, self.sp, self.data.train.ids)
        out.write_model(m, m.out, scores, out.save_dtype)
        self.dist.log(f"saved {m.out} ({p.tokens:,} tokens, {p.step:,} steps, held-out loss {scores['loss']:.4f}, "
                      f"accuracy {scores['accuracy']:.4f}, context effect {scores['context_effect']:+.3f} nats)")

    def facts(self, m) -> dict:
        a = self.args
        return {"batch": a.batch, "seq_len": a.seq_len, "accum": a.accum, "mask_rate": a.mask_rate,
                "mask_only": a.mask_only, "compiled": bool(a.compile), "train_sequences": len(self.train_data),
                "eval_seqs": sum(len(b[0]) for b in self.held_out),
                "move_penalty": a.move_penalty}  # the λ it ends with (penalties: each λ from its step)

    def write_card(self, folder: Path, facts: dict):
        cardlib.write(folder, facts)


def main(argv=None) -> int:
    return trainer.main(parse_args(argv), MaskedLMTask)


if __name__ == "__main__":
    sys.exit(main())
