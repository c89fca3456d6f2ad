"""The race (issue 47): is the Macaron layer better *because* Strang's splitting is of higher order?

In a stack of post-LN sub-layers, layer boundaries do not matter: six Strang layers are ½G (F ½G ½G)×5 F ½G, and
six layers of the control, Lie–Trotter with G in halves, are (F ½G ½G)×6, the same sub-layers and parameters with
one half-FFN moved from the first place to the last. Training Lie–Trotter (the Transformer), Strang (the Macaron) and
the control on the same batches, seed by seed, separates the order from the split FFN.

Each run's curve and card are stored in `pretrained/race/seed-<s>/<model>/` (metrics.jsonl, training.json with the
held-out loss of every validation sequence); this module reads them, never typed-in figures:

    python -m macaron zoo            the runs and the paired differences
    python -m macaron zoo --json     {"runs": [...], "differences": [...]}

A difference a − b is the held-out loss of scheme a minus that of b (nats per masked token; > 0: b is better),
paired within a seed (the same initial draw of the generator, batches, masks and order), as a mean over seeds with
a Student t-interval, and per seed with a bootstrap interval over validation sequences, which says nothing about
seed-to-seed spread.
"""
from __future__ import annotations

import functools
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats

from .checkpoint import FACTS, PRETRAINED, CheckpointError, read_json, read_metrics
from .milestones import stages
from .schemes import SCHEMES, get_scheme
from .train.evaluate import Scores, bootstrap_difference

RACE = PRETRAINED / "race"
BASELINE = "lie-trotter"  # the Transformer
REFERENCE = "strang"
CONTROL = "lie-trotter-halves"


@dataclass
class RaceRun:
    """One trained run of the race: what `zoo --json` prints, and the curve and per-sequence losses behind it."""

    scheme: str                 # registry name (macaron.schemes)
    seed: int
    tokens: int
    parameters: int
    loss: float                 # held-out, nats per masked token, at the end
    accuracy: float
    context_effect: float       # nats lost when the context's word order is shuffled
    plateau_step: int | None    # the last evaluation on the word-count plateau before the rise (milestones.stages)
    shared: bool
    tied_halves: bool
    name: str = ""
    recipe: str = ""            # its shape, for the conditions a finding holds under ("6 × 256, post-LN")
    curve: dict = field(default_factory=dict, repr=False)          # {"tokens": [...], "loss": [...], ...} of evals
    seq_loss: list = field(default_factory=list, repr=False)
    seq_targets: list = field(default_factory=list, repr=False)

    def summary(self) -> dict:
        kept_out = ("name", "recipe", "curve", "seq_loss", "seq_targets")
        return {k: v for k, v in asdict(self).items() if k not in kept_out}


def read_run(folder: Path) -> RaceRun:
    """A run's stored card and curve (a model folder, with or without its weights)."""
    facts = read_json(Path(folder) / FACTS)
    try:
        final, cfg = facts["final"], facts["config"]
        evals = list({r["step"]: r for r in read_metrics(Path(folder) / "metrics.jsonl")  # a resumed run's last
                      if r.get("type") == "eval" and "context_effect" in r}.values())       # evaluation, once
        curve = {k: [r[k] for r in evals] for k in ("step", "tokens", "loss", "accuracy", "context_effect")}
        return RaceRun(get_scheme(cfg["scheme"]).name, int(facts["seed"]), int(facts["tokens"]),
                       int(facts["parameters"]), float(final["loss"]), float(final["accuracy"]),
                       float(final["context_effect"]), stages(evals, final["context_effect"]).get("plateau"),
                       bool(cfg.get("shared", False)), bool(cfg.get("tied_halves", False)),
                       cfg.get("name", Path(folder).name), f"{cfg['n_layers']} × {cfg['d_model']}, {cfg['norm']}-LN",
                       curve,
                       list(final.get("seq_loss", [])), list(final.get("seq_targets", [])))
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{Path(folder) / FACTS}: not a finished run's facts ({type(e).__name__}: {e})") from None


def runs(root: Path | None = None) -> list[RaceRun]:
    """Every stored run under root/seed-<s>/<model>/ (default RACE), by scheme (registry order), then seed."""
    found = [read_run(f.parent) for f in Path(root or RACE).glob("seed-*/*/" + FACTS)]
    order = list(SCHEMES)
    return sorted(found, key=lambda r: (order.index(r.scheme) if r.scheme in order else len(order), r.seed))


def bootstrap(a: RaceRun, b: RaceRun) -> list[float]:
    """95 % interval of loss(a) − loss(b) over validation sequences resampled alike for both ([] without them)."""
    if not a.seq_loss or a.seq_targets != b.seq_targets:
        return []
    return list(_bootstrap(tuple(a.seq_loss), tuple(b.seq_loss), tuple(a.seq_targets)))


@functools.lru_cache(maxsize=256)  # 10,000 resamples a pair, asked again on every rerun of the lab and lesson step 5
def _bootstrap(a_loss: tuple, b_loss: tuple, targets: tuple) -> tuple:
    scores = [Scores(sum(x) / sum(targets), 0.0, 0.0, sum(targets), list(x), list(targets)) for x in (a_loss, b_loss)]
    return tuple(bootstrap_difference(*scores)["ci95"])


def difference(race: list[RaceRun], a: str, b: str) -> dict | None:
    """loss(a) − loss(b) paired by seed: the mean over seeds with its 95 % t-interval (two seeds or more), and each
    seed's own difference with its bootstrap interval. None when no seed ran both."""
    by = {(r.scheme, r.seed): r for r in race}
    seeds = sorted(s for (name, s) in by if name == a and (b, s) in by)
    if not seeds:
        return None
    per_seed = [{"seed": s, "difference": by[a, s].loss - by[b, s].loss, "bootstrap95": bootstrap(by[a, s], by[b, s])}
                for s in seeds]
    d = np.array([p["difference"] for p in per_seed])
    half = float(stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else None
    return {"a": a, "b": b, "seeds": len(d), "mean": float(d.mean()),
            "t95": [float(d.mean()) - half, float(d.mean()) + half] if half is not None else None,
            "per_seed": per_seed}


def comparisons(race: list[RaceRun]) -> list[tuple[str, str]]:
    """The race's questions: Lie–Trotter − Strang (the seed paper's claim), control − Strang (the order alone),
    Lie–Trotter − control (the split FFN alone), then every other scheme − Strang."""
    first = [(BASELINE, REFERENCE), (CONTROL, REFERENCE), (BASELINE, CONTROL)]
    present = list(dict.fromkeys(r.scheme for r in race))
    return first + [(s, REFERENCE) for s in present if s not in (BASELINE, CONTROL, REFERENCE)]


def differences(race: list[RaceRun]) -> list[dict]:
    return [d for a, b in comparisons(race) if (d := difference(race, a, b))]


def spread(race: list[RaceRun]) -> dict[str, dict]:
    """Each scheme's held-out loss over seeds: mean, standard deviation (two seeds or more) and count."""
    out = {}
    for s in dict.fromkeys(r.scheme for r in race):
        losses = np.array([r.loss for r in race if r.scheme == s])
        out[s] = {"mean": float(losses.mean()), "sd": float(losses.std(ddof=1)) if len(losses) > 1 else None,
                  "seeds": len(losses)}
    return out


def label(d: dict) -> str:
    """A paired difference as readers see it: the schemes' short names, "Lie–Trotter − Strang–Marchuk"."""
    return f"{get_scheme(d['a']).short} − {get_scheme(d['b']).short}"


def _each_seed(d: dict) -> str:
    return ", ".join(_signed(p["difference"]) for p in d["per_seed"])


def _signed(x: float, places: int = 3) -> str:
    return f"{x:+.{places}f}".replace("-", "−")  # the minus sign, not a hyphen


def _interval(x: list[float] | None) -> str:
    return f"[{_signed(x[0])}, {_signed(x[1])}]" if x else "–"


def report(race: list[RaceRun]) -> str:
    """The race as text: one line a run, each scheme's spread, then the paired differences."""
    if not race:
        return f"no race runs stored in {RACE} (docs/training-notes.md, 'The race', says how to train them)"
    lines = [f"{'scheme':<20} {'seed':>4} {'tokens':>11} {'parameters':>11} {'loss':>7} {'accuracy':>8} "
             f"{'context':>8} {'plateau':>8}"]
    for r in race:
        plateau = "–" if r.plateau_step is None else f"{r.plateau_step:,}"
        lines.append(f"{r.scheme:<20} {r.seed:>4} {r.tokens:>11,} {r.parameters:>11,} {r.loss:>7.4f} "
                     f"{r.accuracy:>8.4f} {r.context_effect:>+8.3f} {plateau:>8}")
    lines += ["", "held-out loss over seeds (nats): " + "; ".join(
        f"{s} {v['mean']:.4f}" + (f" ± {v['sd']:.4f} sd" if v["sd"] is not None else "") + f" ({v['seeds']})"
        for s, v in spread(race).items())]
    lines += ["", "paired differences, loss(a) − loss(b), nats (> 0: b is better)"]
    for d in differences(race):
        seeds = ", ".join(f"seed {p['seed']} {_signed(p['difference'], 4)} {_interval(p['bootstrap95'])}"
                          for p in d["per_seed"])
        lines.append(f"{d['a']} − {d['b']}: mean {_signed(d['mean'], 4)}, 95 % t-interval {_interval(d['t95'])} over "
                     f"{d['seeds']} seed(s); {seeds}")
    return "\n".join(lines)


def markdown(race: list[RaceRun]) -> str:
    """The README's race: a table with one row a run, one with a row a paired difference, then each difference's
    verdict (python -m macaron zoo --markdown)."""
    diffs = differences(race)
    lines = ["| scheme | model | seed | held-out loss | accuracy | context effect | left the plateau after step |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {SCHEMES[r.scheme].title} | {r.name} | {r.seed} | {r.loss:.4f} | {100 * r.accuracy:.2f} % | "
              f"{_signed(r.context_effect)} nats | {'–' if r.plateau_step is None else f'{r.plateau_step:,}'} |"
              for r in race]
    lines += ["", "| difference (nats) | seeds | mean | 95 % t-interval | each seed, 95 % bootstrap interval |",
              "|---|---|---|---|---|"]
    lines += [f"| {label(d)} | {d['seeds']} | {_signed(d['mean'])} | "
              f"{_interval(d['t95'])} | " + "; ".join(f"{p['seed']}: {_signed(p['difference'])} "
                                                      f"{_interval(p['bootstrap95'])}" for p in d["per_seed"]) + " |"
              for d in diffs]
    return "\n".join(lines) + "\n\n" + verdicts(diffs)


def as_json(race: list[RaceRun]) -> str:
    return json.dumps({"runs": [r.summary() for r in race], "differences": differences(race)}, indent=1)


def outcome(d: dict) -> str:
    """What a paired difference a − b allows over seeds: "one seed", "unknown" (a non-finite interval), "none" (its
    95 % t-interval holds 0), or the better scheme's side, "a" (the interval lies below 0) or "b" (above)."""
    if d["t95"] is None:
        return "one seed"
    lo, hi = d["t95"]
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "unknown"
    return "none" if lo <= 0 <= hi else ("b" if lo > 0 else "a")


def _measured(d: dict) -> str:
    return f"{_signed(d['mean'])} nats, 95 % interval {_interval(d['t95'])} over {d['seeds']} seeds"


def verdict(d: dict) -> str:
    """One sentence on a paired difference, no stronger than its interval over seeds allows."""
    said = outcome(d)
    if said == "one seed":
        return (f"{label(d)}: {_signed(d['mean'])} nats on one seed (bootstrap over validation sequences "
                f"{_interval(d['per_seed'][0]['bootstrap95'])}); that interval says nothing about another draw of the "
                f"weights and batches, so this is not yet a difference between the schemes.")
    if said == "unknown":
        return f"{label(d)}: no answer; its figures are not finite ({_measured(d)})."
    if said == "none":
        return (f"{label(d)}: no difference found over seeds ({_measured(d)}, which holds 0; "
                f"each seed: {_each_seed(d)}).")
    return f"{label(d)}: {_measured(d)}: {get_scheme(d[said]).short} is the better here."


def verdicts(diffs: list[dict]) -> str:
    """Every difference's verdict as a Markdown list: the lab's section 4 and the README under its tables."""
    return "\n".join(f"- {verdict(d)}" for d in diffs)


def finding(race: list[RaceRun]) -> str:
    """The order's answer for a class (lesson step 5): control − Strang as its interval allows, then the split FFN's
    (Transformer − control) where its interval over seeds says which way."""
    d = difference(race, BASELINE, CONTROL)
    said = outcome(d) if d else "no pair"
    split = "" if said not in ("a", "b") else (
        f" The Transformer {'trails' if said == 'b' else 'leads'} the control (Transformer − control {_measured(d)}): "
        f"splitting the FFN into two halves {'helps' if said == 'b' else 'hurts'}.")
    return _order_finding(race) + split


def _order_finding(race: list[RaceRun]) -> str:
    question = ("Does Macaron's order matter? The lab's race (section 4) ran its sub-layers in the Transformer's order "
                "(the control): ")
    d = difference(race, CONTROL, REFERENCE)
    said = outcome(d) if d else "no pair"
    if said == "no pair":
        return question + "no seed with both a finished control and Macaron is stored yet."
    if said == "unknown":
        return question + f"no answer, its figures are not finite ({_measured(d)})."
    if said == "one seed":
        return question + f"one seed so far (control − Macaron {_signed(d['mean'])} nats), not yet an answer."
    if said == "none":
        return question + f"no difference found (control − Macaron {_measured(d)})."
    return question + (f"trained {'worse' if said == 'b' else 'better'} than Macaron (control − Macaron "
                       f"{_measured(d)}), so here the order {'helps' if said == 'b' else 'hurts'}.")


def findings(race: list[RaceRun]) -> str:
    """The race's three questions in one short paragraph for the teacher (a printed page holds it): each paired
    difference with its interval, and the conditions; the lab's section 4 has every scheme."""
    said = []
    for d in differences(race)[:3]:
        said.append(f"{label(d)} {_signed(d['mean'])} nats" + (
            f" (one seed, bootstrap {_interval(d['per_seed'][0]['bootstrap95'])})" if d["t95"] is None else
            f" (seeds {_each_seed(d)}; t-interval {_interval(d['t95'])})"))
    if not said:
        return "No scheme of the race has a seed paired with another yet (pretrained/race/)."
    recipes = ", ".join(dict.fromkeys(r.recipe for r in race))
    budget = min(r.tokens for r in race) / 1e6
    return (f"The race, held-out loss ({recipes}, {budget:.0f} M tokens a run, the same batches within a seed): "
            + "; ".join(said) + ". An interval that holds 0 is no difference found; the lab's section 4 has the rest.")
