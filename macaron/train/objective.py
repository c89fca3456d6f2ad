"""The criteria, each the loss of one task (task.py), holding the network it trains: masked-language modelling with an
optional move penalty (MaskedLM, the masked LM's) and label-smoothed cross-entropy on the next target word
(LabelSmoothedNMT, the translators'); AdamW without decay on norms, biases and embeddings (optimizer_for), and the
learning-rate schedule (Schedule: warm-up, then linear, cosine or inverse square root decay, in phases when a run goes
on past its budget).

The trainer (trainer.py) trains with them; benchmarks/bench_train.py and tools/diagnose_plateau.py use them too.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .data import IGNORE


class MaskedLM(nn.Module):
    """Model + tied MLM head; the head runs on the masked positions only (the loss ignores the rest).

    Their number changes from batch to batch, and oneDNN keeps a compiled kernel for every matrix shape it meets
    (up to 1,024): on an Intel Xeon with AMX (2026-11-26) a run's memory grew from 1.8 to 5.5 GB in its first
    1,400 steps while it slowed from 3,631 to 2,927 tokens/s (docs/training-notes.md). So the head's rows are
    padded to a multiple of ROWS with targets the loss ignores: a few shapes in all, the same loss and gradients."""

    ROWS = 64

    def __init__(self, encoder, move_penalty: float = 0.0):
        super().__init__()
        self.encoder, self.move_penalty = encoder, move_penalty

    def forward(self, ids, attention_mask, labels):
        sizes = [] if self.move_penalty else None  # plus λ·mean ‖Δx‖²/‖x‖²: steps kept small by the loss
        hidden = self.encoder(ids, attention_mask, sizes=sizes)
        chosen = (labels != IGNORE).flatten().nonzero().squeeze(1)
        pad = -len(chosen) % self.ROWS
        targets = F.pad(labels.flatten()[chosen], (0, pad), value=IGNORE)
        rows = F.pad(chosen, (0, pad))  # the padding rows repeat position 0; their targets are ignored
        logits = self.encoder.head(hidden.flatten(0, 1)[rows])
        loss = F.cross_entropy(logits.float(), targets, ignore_index=IGNORE)
        return loss + self.move_penalty * torch.stack(sizes).mean() if sizes else loss


class LabelSmoothedNMT(nn.Module):
    """An encoder–decoder (macaron.translation.model.EncoderDecoder) + label-smoothed cross-entropy on the next target
    word, as the paper's translation runs (fairseq's label_smoothed_cross_entropy, ε = 0.1; here PyTorch's
    label_smoothing, which spreads ε over the whole vocabulary: Szegedy et al. 2016). The source's padding is masked
    from both attentions; the target needs none (causal attention, padding after every real word, ignored by the
    loss). The head runs on the real target positions only, padded to a multiple of ROWS (MaskedLM says why; a
    batch of translations has thousands of them, so the multiple is larger). Under torchrun each process holds part
    of the batch: `share` = processes × its target words / the batch's, so that DDP's mean of the gradients is the
    gradient of the whole batch's mean loss, as one process would take it (fairseq normalises by the global sample
    size for the same reason); 1 on one process."""

    ROWS = 256

    def __init__(self, model, smoothing: float = 0.1):
        super().__init__()
        self.model, self.smoothing = model, smoothing

    def forward(self, source, source_mask, target_in, target_out, share: float = 1.0):
        m = self.model
        hidden = m(source, source_mask, target_in)
        chosen = (target_out != IGNORE).flatten().nonzero().squeeze(1)
        pad = -len(chosen) % self.ROWS
        targets = F.pad(target_out.flatten()[chosen], (0, pad), value=IGNORE)
        logits = m.decoder.head(hidden.flatten(0, 1)[F.pad(chosen, (0, pad))])
        loss = F.cross_entropy(logits.float(), targets, ignore_index=IGNORE, label_smoothing=self.smoothing)
        return loss if share == 1.0 else loss * share


def optimizer_for(model: nn.Module, args, device) -> torch.optim.AdamW:
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "norm" in name or "embedding" in name else decay).append(p)
    groups = [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    # fused: one kernel for every tensor, on CUDA and on the CPU (3-4 % faster steps on an AMX Xeon than the
    # foreach default, benchmarks/RESULTS.md); the same update, so a checkpoint resumes either way
    return torch.optim.AdamW(groups, lr=args.lr, betas=tuple(args.betas), eps=args.eps, fused=True)


class Schedule:
    """Linear warm-up, then linear or cosine decay to zero at `total` steps (None during the probe), or the inverse
    square root of the step (the translators', as the paper's fairseq runs: no end to reach). A run
    continued past its budget has `phases`, each from its own step: a warm-up to its own peak (a multiple of
    the optimizer's base rate), then the decay to its own end."""

    def __init__(self, kind: str, warmup: int | None, total: int | None):
        self.kind, self.warmup_arg, self.total = kind, warmup, total
        self.rewarm: tuple[int, int] | None = None  # (step, steps): a warm start's fresh optimizer ramps up again
        self.phases: list[dict] = []  # {"step", "warmup", "total_steps", "peak"}, the first phase included

    @property
    def warmup(self) -> int:
        return self.warmup_arg if self.warmup_arg is not None else max(1, round(0.06 * (self.total or 0)))

    def __call__(self, step: int) -> float:
        if self.total is None:  # the throughput probe: any rate, the weights are restored afterwards
            return 1.0
        start, warmup, end, peak = 0, self.warmup, self.total, 1.0
        for phase in self.phases:
            if step >= phase["step"]:
                start, warmup, end, peak = phase["step"], phase["warmup"], phase["total_steps"], phase["peak"]
        if step - start < warmup:
            factor = (step - start + 1) / warmup
        elif self.kind == "inverse-sqrt":  # fairseq's inverse_sqrt: the peak at the warm-up's end, then ∝ 1/√step
            factor = math.sqrt(warmup / (step - start + 1))
        else:
            p = min(max((step - start - warmup) / max(1, end - start - warmup), 0.0), 1.0)
            factor = 1.0 - p if self.kind == "linear" else 0.5 * (1.0 + math.cos(math.pi * p))
        factor *= peak
        if self.rewarm and 0 <= step - self.rewarm[0] < self.rewarm[1]:
            factor *= (step - self.rewarm[0] + 1) / self.rewarm[1]
        return factor
