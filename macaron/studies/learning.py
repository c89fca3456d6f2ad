"""Learning, watched: one sentence through the stages of a model's training.

`macaron.sources.milestones` lists a model's stages (the random start, the plateau, the rise, the final
weights). `stages` measures one sentence at each of them with the measures the other views show,
one row a stage, to be read against training tokens beside the held-out curve (`curve`):

    rows = learning.stages("transformer-mini", "paris is the capital of [MASK] .",
                           uses=("the bank of the river", "the bank raised its rates", "bank"))

Per stage: the effective number of clusters, the distance from rank one and the mean pairwise cosine
of the particles at the last state, the token most attended to, the mean attention entropy (a share
of log T), the top guesses for the first [MASK] (the logit lens at the last state, i.e. the model's
own prediction), and how far apart two uses of one word are at every state. Particles are
measured as the next operator reads them (standardised per token).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..formats.folder import read_metrics
from ..network.reading import InputError
from ..sources.loading import load
from ..sources.locate import locate
from ..sources.milestones import Milestone, milestones
from .analysis import MASK_TOKEN, standardise, unit_rows
from .dynamics import measure


@dataclass(frozen=True)
class Stage:
    """One sentence measured at one stage of training."""

    milestone: Milestone
    clusters: float                          # effective clusters at the last state
    rank_one: float                          # distance of the last state from rank one (0: collapsed)
    mean_cosine: float                       # mean cosine over pairs of distinct particles, last state
    leader: tuple[str, float]                # the token most attended to, and its share of (sub-step, head) pairs
    entropy: float                           # attention entropy / log T, mean over sub-steps and heads
    guesses: tuple[tuple[str, float], ...]   # top-k for the first [MASK] (empty without one)
    distance: np.ndarray | None              # [S] cosine distance of the two uses of a word, every state


def _position(tokens: list[str], word: str, text: str) -> int:
    try:
        return tokens.index(word)
    except ValueError:
        raise InputError(f"{word!r} is not one token of {text!r} (its tokens: {' '.join(tokens)})") from None


def use_distance(model, text_a: str, text_b: str, word: str) -> np.ndarray:
    """[S] cosine distance (1 − cos) between the particle of `word` in text_a and in text_b at every recorded
    state (its first occurrence in each; the word must be one token). 0 at the embedding when both
    uses sit at the same position: only context can move them apart."""
    a, b = model.trace(text_a), model.trace(text_b)
    if len(a.labels) != len(b.labels):
        raise ValueError("the two sentences were traced with different programs")
    xa = unit_rows(standardise(a.states[:, _position(a.tokens, word, text_a)]))
    xb = unit_rows(standardise(b.states[:, _position(b.tokens, word, text_b)]))
    return 1.0 - (xa * xb).sum(-1)


def measure_stage(model, text: str, uses: tuple[str, str, str] | None = None, k: int = 5) -> Stage:
    """`text` measured on one loaded model (its `milestone`, where it has one, names the stage)."""
    traj = model.trace(text)
    m = measure(traj)
    guesses = ()
    if MASK_TOKEN in traj.tokens:
        guesses = tuple(model.logit_lens(traj, traj.tokens.index(MASK_TOKEN), k=k)[-1])
    stage = getattr(model, "milestone", None) or Milestone(model.config.name, None, None, None, None, None, None)
    top = int(np.argmax(m.leaders))
    return Stage(milestone=stage, clusters=float(m.clusters[-1]), rank_one=float(m.rank_one[-1]),
                 mean_cosine=float(m.mean_cosine[-1]), leader=(m.tokens[top], float(m.leaders[top])),
                 entropy=float(m.entropy.mean()) if m.entropy.size else float("nan"), guesses=guesses,
                 distance=use_distance(model, *uses) if uses else None)


def stages(name_or_folder, text: str, uses: tuple[str, str, str] | None = None, k: int = 5,
           device=None) -> list[Stage]:
    """`text` (and the two `uses` of a word) measured at every stage of a model's training, in order.
    A model without milestones (a user's folder, the 6 × 512 pair) gives one row, itself."""
    return [measure_stage(model, text, uses, k) for model in at_stages(name_or_folder, device)]


def at_stages(name_or_folder, device=None):
    """The model at every stage of its training, in order, each loaded as it is needed; `model.milestone`
    names the stage (even where two share a token count)."""
    for s in milestones(name_or_folder):
        model = load(name_or_folder, device=device, at=0) if s.folder is None else load(s.folder, device=device)
        model.milestone = s
        yield model


def curve(name_or_folder) -> dict[str, np.ndarray]:
    """The held-out evaluations of a model's training (metrics.jsonl): tokens, step, loss, accuracy and
    context effect (NaN where a run did not measure it), in training order."""
    rows = [r for r in read_metrics(Path(locate(name_or_folder)) / "metrics.jsonl") if r.get("type") == "eval"]
    keys = ("tokens", "step", "loss", "accuracy", "context_effect")
    return {key: np.array([r.get(key, np.nan) for r in rows], dtype=np.float64) for key in keys}
