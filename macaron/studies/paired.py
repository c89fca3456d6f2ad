"""Two models scored on the same items: each one's per-item sums kept, so that the difference of their mean losses
gets a paired bootstrap interval (both resampled on the same items)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np


@dataclass
class Scores:
    """Masked-token scores on one validation set; per-sequence sums allow paired bootstraps."""

    loss: float                 # mean nats per masked token
    accuracy: float
    perplexity: float
    targets: int
    seq_loss: list[float]       # summed loss per validation sequence
    seq_targets: list[int]      # masked targets per validation sequence

    def summary(self) -> dict:
        return {k: v for k, v in asdict(self).items() if not k.startswith("seq_")}


def bootstrap_difference(a: Scores, b: Scores, n: int = 10_000, seed: int = 0) -> dict:
    """loss(a) − loss(b) per masked token, with a 95 % percentile interval over resampled sequences."""
    la, lb = np.asarray(a.seq_loss), np.asarray(b.seq_loss)
    na, nb = np.asarray(a.seq_targets), np.asarray(b.seq_targets)
    if not np.array_equal(na, nb):
        raise ValueError("the two models were scored on different validation sets")
    idx = np.random.default_rng(seed).integers(0, len(la), size=(n, len(la)))
    diffs = (la[idx].sum(1) - lb[idx].sum(1)) / na[idx].sum(1)
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    return {"difference": float((la.sum() - lb.sum()) / na.sum()), "ci95": [float(lo), float(hi)],
            "resamples": n, "sequences": int(len(la))}
