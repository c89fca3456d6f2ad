"""A model at stages of its training: the random start, milestones kept on the way, the weights shipped.

A model folder trained by `macaron.train` holds `training.json` (its facts) and may hold
`milestones/<label>/`, each a model folder of its own with the weights at that step (the shipped minis:
`plateau`, the last evaluation before the model reads word order, and `rise`, the first with half of its
final context effect). The random start is not stored: it is rebuilt from the run's seed and checked
against the SHA-256 of its weights recorded in `training.json`.

    macaron.milestones("transformer-mini")          # [Milestone('random start', 0 tokens, ...), ...]
    macaron.load("transformer-mini", at=2_000_000)  # the milestone nearest 2 M tokens; .milestone says which
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import torch

from ..formats.folder import FACTS, CheckpointError, read_facts, read_metrics
from ..formats.ours import NETWORK, model_config
from ..formats.registry import fields_of
from ..network.model import build
from .locate import locate

RANDOM_START = "random start"
PLATEAU_NATS = 0.05  # below this context effect a model has not yet started to read word order


def stages(evals: list[dict], final_effect: float) -> dict[str, int]:
    """{'plateau': step, 'rise': step} on a curve of evaluations (a label is left out when the curve has no such
    evaluation): the rise is the first with at least half the final context effect, the plateau the last with one
    below PLATEAU_NATS before it. `macaron.train.publish` ships these two; the race (macaron.studies.zoo) reports the
    plateau's step."""
    rise = next((r["step"] for r in evals if r["context_effect"] >= final_effect / 2), None) \
        if final_effect > PLATEAU_NATS else None
    before = [r["step"] for r in evals if r["context_effect"] < PLATEAU_NATS and (rise is None or r["step"] < rise)]
    out = {"plateau": before[-1]} if before and rise is not None else {}
    return {**out, "rise": rise} if rise is not None else out


@dataclass(frozen=True)
class Milestone:
    """One stage of a model's training, with its held-out figures (None where not measured)."""

    name: str
    tokens: int | None  # None (and step None): a folder whose training is not recorded, e.g. a Hub model's
    step: int | None
    loss: float | None
    accuracy: float | None
    context_effect: float | None
    folder: Path | None  # None: the random start, rebuilt from the seed

    def __str__(self) -> str:
        figures = "" if self.loss is None else (
            f", held-out loss {self.loss:.3f}, accuracy {self.accuracy:.1%}"
            + ("" if self.context_effect is None else f", context effect {self.context_effect:+.2f} nats"))
        if self.tokens is None:
            return f"{self.name} (its training not recorded{figures})"
        return f"{self.name} (step {self.step:,}, {self.tokens:,} tokens{figures})"

    def label(self) -> str:
        """How a stage picker names it: 'rise · 5.8 M tokens · context effect +2.16 nats' (its name alone when its
        training is not recorded)."""
        if self.tokens is None:
            return self.name
        size = f"{self.tokens / 1e6:.1f} M tokens" if self.tokens >= 100_000 else f"{self.tokens:,} tokens"
        effect = "" if self.context_effect is None else f" · context effect {self.context_effect:+.2f} nats"
        return f"{self.name} · {size}{effect}"


def param_checksum(model: torch.nn.Module) -> str:
    """SHA-256 of a model's weights as float32, in name order: the same bytes give the same value anywhere."""
    h = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(p.detach().float().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def _from_facts(name: str, facts: dict, folder: Path) -> Milestone:
    final = facts.get("final") or {}
    return Milestone(name, int(facts["tokens"]), int(facts["steps"]), final.get("loss"), final.get("accuracy"),
                     final.get("context_effect"), folder)


def _first_evaluation(folder: Path) -> dict:
    """The held-out figures of the untrained model: the step-0 row of the folder's metrics, if any."""
    return next((r for r in read_metrics(folder / "metrics.jsonl") if r.get("type") == "eval" and r.get("step") == 0),
                {})


def milestones(path_or_name) -> list[Milestone]:
    """A model's stages in training order: the random start (where its checksum was recorded), the
    milestones kept in its folder, and the folder's own weights. A folder without training facts (a
    model of your own) lists only itself, its tokens and step None (not known, not 0)."""
    folder = locate(path_or_name)
    facts = read_facts(folder)
    if facts is None:
        return [Milestone(folder.name, None, None, None, None, None, folder)]
    out = []
    if facts.get("init_sha256"):
        first = _first_evaluation(folder)
        out.append(Milestone(RANDOM_START, 0, 0, first.get("loss"), first.get("accuracy"), first.get("context_effect"),
                             None))
    for sub in sorted((folder / "milestones").glob("*")):
        kept = read_facts(sub) if sub.is_dir() else None
        if kept is not None:
            out.append(_from_facts(sub.name, kept, sub))
    budget = facts.get("budget_steps")
    out.append(_from_facts("final" if not budget or facts["steps"] >= budget else "latest", facts, folder))
    return sorted(out, key=lambda m: m.tokens)


def random_start(folder: Path, facts: dict, device=None):
    """The untrained model of a run, rebuilt from its seed and checked against the recorded checksum."""
    config = model_config(fields_of(folder), folder)
    with torch.random.fork_rng(devices=[]):  # the caller's random state is left as it was
        torch.manual_seed(int(facts.get("seed", 0)))
        model = build(config, NETWORK.reading(folder, config))
    if param_checksum(model) != facts["init_sha256"]:
        raise CheckpointError(f"{folder / FACTS}: the random start rebuilt from seed {facts.get('seed', 0)} does not "
                              f"match the recorded checksum (another torch version may initialise differently)")
    return model.to(device or ("cuda" if torch.cuda.is_available() else "cpu")).eval()
