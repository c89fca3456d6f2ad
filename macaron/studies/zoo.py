"""The race (issue 47): is the Macaron layer better *because* Strang's splitting is of higher order?

In a stack of post-LN sub-layers, layer boundaries do not matter: six Strang layers are ½G (F ½G ½G)×5 F ½G, and
six layers of the control, Lie–Trotter with G in halves, are (F ½G ½G)×6, the same sub-layers and parameters with
one half-FFN moved from the first place to the last. Training Lie–Trotter (the Transformer), Strang (the Macaron) and
the control on the same batches, seed by seed, separates the order from the split FFN.

Each run's curve and card are stored in `pretrained/race/seed-<s>/<model>/` (20 M tokens) or
`pretrained/race/<tokens>/seed-<s>/<model>/` (another budget: metrics.jsonl, training.json with the held-out loss
of every validation sequence); this module reads them, never typed-in figures:

    python -m macaron zoo            the runs and the paired differences, budget by budget
    python -m macaron zoo --json     {"runs": [...], "differences": [...], "translation": [...]}
    python -m macaron zoo --path     the gap between the Transformer and the control at every evaluation

A difference a − b is the held-out loss of scheme a minus that of b (nats per masked token; > 0: b is better),
paired within a seed (the same initial draw of the generator, batches, masks and order), as a mean over seeds with
a Student t-interval, and per seed with a bootstrap interval over validation sequences, which says nothing about
seed-to-seed spread. Runs are paired only at equal budgets: the learning rate decays to 0 at the end of the budget,
so a 60 M-token run at 20 M tokens is not a 20 M-token run.

The translators are raced the same way (`translation_race`): "runs" lists them too, with "task": "translation".
"""
from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats

from ..formats.folder import FACTS, CheckpointError, read_json, read_metrics
from ..schemes import SCHEMES, get_scheme
from ..sources.milestones import PLATEAU_NATS, stages
from ..sources.shipped import PRETRAINED
from .paired import Scores, bootstrap_difference

RACE = PRETRAINED / "race"
BASELINE = "lie-trotter"  # the Transformer
REFERENCE = "strang"
CONTROL = "lie-trotter-halves"


@dataclass
class RaceRun:
    """One trained run of the race: what `zoo --json` prints, and the curve and per-sequence losses behind it."""

    scheme: str                 # registry name (macaron.schemes)
    seed: int
    budget: int                 # the tokens it was planned for, to the million (its schedule's end)
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
    task: str = "mlm"           # "mlm" (loss: held-out masked LM) or "translation" (loss: dev, nats a target token)
    bleu: float | None = None   # a translator's test BLEU and chrF (sacreBLEU, beam 5)
    chrf: float | None = None
    hypotheses: list = field(default_factory=list, repr=False)     # a translator's test translations
    went_on: tuple | None = None  # (step, re-warm-up steps): it went on from that step's weights, fresh optimizers

    def summary(self) -> dict:
        kept_out = {"name", "recipe", "curve", "seq_loss", "seq_targets", "hypotheses"} | (
            {"bleu", "chrf", "went_on"} if self.task == "mlm" else
            {"context_effect", "plateau_step", "shared", "tied_halves"})
        return {k: v for k, v in asdict(self).items() if k not in kept_out}


def read_run(folder: Path) -> RaceRun:
    """A run's stored card and curve (a model folder, with or without its weights)."""
    facts = read_json(Path(folder) / FACTS)
    if facts.get("task") == "translation":
        return read_translator(Path(folder), facts)
    try:
        final, cfg = facts["final"], facts["config"]
        evals = list({r["step"]: r for r in read_metrics(Path(folder) / "metrics.jsonl")  # a resumed run's last
                      if r.get("type") == "eval" and "context_effect" in r}.values())       # evaluation, once
        curve = {k: [r[k] for r in evals] for k in ("step", "tokens", "loss", "accuracy", "context_effect")}
        budget = int(round(facts.get("budget_tokens", facts["tokens"]), -6))
        return RaceRun(get_scheme(cfg["scheme"]).name, int(facts["seed"]), budget, int(facts["tokens"]),
                       int(facts["parameters"]), float(final["loss"]), float(final["accuracy"]),
                       float(final["context_effect"]), stages(evals, final["context_effect"]).get("plateau"),
                       bool(cfg.get("shared", False)), bool(cfg.get("tied_halves", False)),
                       cfg.get("name", Path(folder).name), f"{cfg['n_layers']} × {cfg['d_model']}, {cfg['norm']}-LN",
                       curve,
                       list(final.get("seq_loss", [])), list(final.get("seq_targets", [])))
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{Path(folder) / FACTS}: not a finished run's facts ({type(e).__name__}: {e})") from None


def read_translator(folder: Path, facts: dict) -> RaceRun:
    """A translator's stored card, curve and test translations (macaron.train.translate)."""
    try:
        final, cfg = facts["final"], facts["config"]
        enc, dec = cfg["encoder"], cfg["decoder"]
        evals = list({r["step"]: r for r in read_metrics(folder / "metrics.jsonl") if r.get("type") == "eval"}.values())
        curve = {k: [r.get(k) for r in evals] for k in ("step", "tokens", "loss", "accuracy", "dev_bleu")}
        hypotheses = (folder / "test.hyp.en").read_text(encoding="utf-8").splitlines()
        return RaceRun(get_scheme(enc["scheme"]).name, int(facts["seed"]),
                       int(round(facts.get("budget_tokens") or facts["tokens"], -6)), int(facts["tokens"]),
                       int(facts["parameters"]), float(final["loss"]), float(final["accuracy"]), None, None, False,
                       False, cfg.get("name", folder.name),
                       f"{enc['n_layers']} + {dec['n_layers']} × {enc['d_model']}, {enc['norm']}-LN, Tatoeba es→en",
                       curve, task="translation", bleu=float(final["bleu"]), chrf=float(final["chrf"]),
                       hypotheses=hypotheses, went_on=next(((w["step"], w["rewarm"][1])
                                                                for w in facts.get("warm_starts", [])), None))
    except (KeyError, TypeError, ValueError, OSError) as e:
        raise CheckpointError(f"{folder / FACTS}: not a finished translator's facts ({type(e).__name__}: {e})"
                              ) from None


def runs(root: Path | None = None, task: str | None = "mlm") -> list[RaceRun]:
    """Every stored run of `task` under root (default RACE; task None: every one), by budget, then scheme (registry
    order), then seed."""
    found = [r for f in Path(root or RACE).rglob(FACTS) if task in (None, (r := read_run(f.parent)).task)]
    order = list(SCHEMES)
    return sorted(found, key=lambda r: (r.budget, order.index(r.scheme) if r.scheme in order else len(order), r.seed))


def budgets(race: list[RaceRun]) -> list[int]:
    return sorted({r.budget for r in race})


def at(race: list[RaceRun], budget: int) -> list[RaceRun]:
    return [r for r in race if r.budget == budget]


def principal(race: list[RaceRun]) -> list[RaceRun]:
    """The runs of the budget most runs share (the race proper, 20 M tokens): what the class is told first."""
    return at(race, max(budgets(race), key=lambda b: (len(at(race, b)), -b))) if race else []


PLATEAU_COLUMN = f"on the plateau to step (context < {PLATEAU_NATS:g} nats)"  # RaceRun.plateau_step, in every table
EXIT_NATS = 1.0  # a run has left the word-count plateau at its first evaluation with this context effect (issue 61)


def exit_step(r: RaceRun) -> int | None:
    """The step of the run's first evaluation with a context effect of EXIT_NATS or more (None: never)."""
    return next((s for s, c in zip(r.curve["step"], r.curve["context_effect"]) if c >= EXIT_NATS), None)


def paths(race: list[RaceRun], a: str = BASELINE, b: str = CONTROL) -> list[dict]:
    """loss(a) − loss(b) along training, for each budget and seed where both ran: at every evaluation both made (a
    seed's runs see the same batches, so a step is the same tokens for both), and aligned at each run's plateau exit
    (exit_step): the difference k steps after a's exit against k steps after b's."""
    by = {(r.scheme, r.seed, r.budget): r for r in race}
    out = []
    for (scheme, seed, budget), ra in by.items():
        rb = by.get((b, seed, budget))
        if scheme != a or rb is None:
            continue
        la = dict(zip(ra.curve["step"], ra.curve["loss"]))
        lb = dict(zip(rb.curve["step"], rb.curve["loss"]))
        steps = [s for s in ra.curve["step"] if s in lb]
        tokens = dict(zip(ra.curve["step"], ra.curve["tokens"]))
        exits = [exit_step(ra), exit_step(rb)]
        after = [] if None in exits else [s - exits[0] for s in ra.curve["step"]
                                          if s >= exits[0] and s - exits[0] + exits[1] in lb]
        out.append({"a": a, "b": b, "seed": seed, "budget": budget, "step": steps,
                    "tokens": [tokens[s] for s in steps], "difference": [la[s] - lb[s] for s in steps],
                    "exit": exits, "exit_tokens": [tokens.get(e) if e is not None else None for e in exits],
                    "after": after, "aligned": [la[exits[0] + k] - lb[exits[1] + k] for k in after]})
    return out


def path_report(found: list[dict]) -> str:
    """The gap's paths as text (python -m macaron zoo --path): each pair's difference at every evaluation, then
    aligned at the two runs' plateau exits."""
    if not found:
        return "no seed and budget where both schemes ran"
    lines = []
    for p in found:
        exits = " and ".join("never" if e is None else f"step {e:,}" for e in p["exit"])
        lines += [f"{p['a']} − {p['b']}, seed {p['seed']}, {millions(p['budget'])} tokens "
                  f"(plateau exits, context effect ≥ {EXIT_NATS:g} nat: {exits})",
                  f"{'step':>7} {'tokens':>11} {'a − b':>7}   {'after exit':>10} {'a − b':>7}"]
        rows = max(len(p["step"]), len(p["after"]))
        for i in range(rows):
            left = (f"{p['step'][i]:>7,} {p['tokens'][i]:>11,} {signed(p['difference'][i]):>7}"
                    if i < len(p["step"]) else " " * 27)
            right = f"   {p['after'][i]:>10,} {signed(p['aligned'][i]):>7}" if i < len(p["after"]) else ""
            lines.append((left + right).rstrip())
        lines.append("")
    return "\n".join(lines).rstrip()


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
    """loss(a) − loss(b) paired by seed among runs of one budget: the mean over seeds with its 95 % t-interval (two
    seeds or more), and each seed's own difference with its bootstrap interval. None when no seed ran both."""
    if len(budgets(race)) > 1:
        raise ValueError(f"runs of budgets {budgets(race)}: pair them one budget at a time (zoo.at)")
    pairs = paired(race, a, b)
    if not pairs:
        return None
    per_seed = [{"seed": s, "difference": ra.loss - rb.loss, "bootstrap95": bootstrap(ra, rb)} for s, ra, rb in pairs]
    return {"a": a, "b": b, "budget": race[0].budget, **over_seeds([p["difference"] for p in per_seed]),
            "per_seed": per_seed}


def paired(race: list[RaceRun], a: str, b: str) -> list[tuple[int, RaceRun, RaceRun]]:
    """(seed, a's run, b's run) for every seed that ran both schemes."""
    by = {(r.scheme, r.seed): r for r in race}
    return [(s, by[a, s], by[b, s]) for s in sorted(s for (name, s) in by if name == a and (b, s) in by)]


def over_seeds(values: list[float]) -> dict:
    """{"seeds", "mean", "t95"}: a paired difference's mean over seeds with its 95 % t-interval (None for one seed)."""
    d = np.array(values)
    half = float(stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else None
    return {"seeds": len(d), "mean": float(d.mean()),
            "t95": [float(d.mean()) - half, float(d.mean()) + half] if half is not None else None}


def comparisons(race: list[RaceRun]) -> list[tuple[str, str]]:
    """The race's questions: Lie–Trotter − Strang (the seed paper's claim), control − Strang (the order alone),
    Lie–Trotter − control (the split FFN alone), then every other scheme − Strang."""
    first = [(BASELINE, REFERENCE), (CONTROL, REFERENCE), (BASELINE, CONTROL)]
    present = list(dict.fromkeys(r.scheme for r in race))
    return first + [(s, REFERENCE) for s in present if s not in (BASELINE, CONTROL, REFERENCE)]


def differences(race: list[RaceRun]) -> list[dict]:
    """Every question's paired difference, budget by budget (shortest first)."""
    return [d for budget in budgets(race) for a, b in comparisons(at(race, budget))
            if (d := difference(at(race, budget), a, b))]


def spread(race: list[RaceRun]) -> dict[tuple[str, int], dict]:
    """Each scheme's held-out loss over seeds at each budget: mean, standard deviation (two seeds or more), count."""
    out = {}
    for key in dict.fromkeys((r.scheme, r.budget) for r in race):
        losses = np.array([r.loss for r in race if (r.scheme, r.budget) == key])
        out[key] = {"mean": float(losses.mean()), "sd": float(losses.std(ddof=1)) if len(losses) > 1 else None,
                    "seeds": len(losses)}
    return out


def millions(tokens: float) -> str:
    return f"{tokens / 1e6:.0f} M"


def label(d: dict, budget: bool = False) -> str:
    """A paired difference as readers see it: the schemes' short names, "Lie–Trotter − Strang–Marchuk" (", 60 M
    tokens" after it where several budgets are shown)."""
    return f"{get_scheme(d['a']).short} − {get_scheme(d['b']).short}" + (f", {millions(d['budget'])} tokens"
                                                                        if budget else "")


def _each_seed(d: dict) -> str:
    return ", ".join(signed(p["difference"]) for p in d["per_seed"])


def signed(x: float, places: int = 3) -> str:
    return f"{x:+.{places}f}".replace("-", "−")  # the minus sign, not a hyphen


def interval(x: list[float] | None, places: int = 3) -> str:
    return f"[{signed(x[0], places)}, {signed(x[1], places)}]" if x else "–"


def report(race: list[RaceRun]) -> str:
    """The race as text: one line a run, each scheme's spread, then the paired differences, budget by budget."""
    if not race:
        return f"no race runs stored in {RACE} (docs/training-notes.md, 'The race', says how to train them)"
    lines = [f"{'scheme':<20} {'seed':>4} {'budget':>6} {'tokens':>11} {'parameters':>11} {'loss':>7} {'accuracy':>8} "
             f"{'context':>8} {'plateau':>8}"]
    for r in race:
        plateau = "–" if r.plateau_step is None else f"{r.plateau_step:,}"
        lines.append(f"{r.scheme:<20} {r.seed:>4} {millions(r.budget):>6} {r.tokens:>11,} {r.parameters:>11,} "
                     f"{r.loss:>7.4f} {r.accuracy:>8.4f} {r.context_effect:>+8.3f} {plateau:>8}")
    lines += ["", "held-out loss over seeds (nats): " + "; ".join(
        f"{s} at {millions(b)} {v['mean']:.4f}" + (f" ± {v['sd']:.4f} sd" if v["sd"] is not None else "")
        + f" ({v['seeds']})" for (s, b), v in spread(race).items())]
    lines += ["", "paired differences at equal budgets, loss(a) − loss(b), nats (> 0: b is better)"]
    for d in differences(race):
        seeds = ", ".join(f"seed {p['seed']} {signed(p['difference'], 4)} {interval(p['bootstrap95'])}"
                          for p in d["per_seed"])
        lines.append(f"{millions(d['budget'])}: {d['a']} − {d['b']}: mean {signed(d['mean'], 4)}, 95 % t-interval "
                     f"{interval(d['t95'])} over {d['seeds']} seed(s); {seeds}")
    return "\n".join(lines)


def markdown(race: list[RaceRun]) -> str:
    """The races page's race: a table with one row a run, one with a row a paired difference (runs of equal budgets),
    then each difference's verdict (python -m macaron zoo --markdown)."""
    diffs = differences(race)
    lines = ["| scheme | model | seed | budget (tokens) | held-out loss | accuracy | context effect | "
             f"{PLATEAU_COLUMN} |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {SCHEMES[r.scheme].title} | {r.name} | {r.seed} | {millions(r.budget)} | {r.loss:.4f} | "
              f"{100 * r.accuracy:.2f} % | {signed(r.context_effect)} nats | "
              f"{'–' if r.plateau_step is None else f'{r.plateau_step:,}'} |" for r in race]
    lines += ["", "| difference (nats) | budget (tokens) | seeds | mean | 95 % t-interval | "
              "each seed, 95 % bootstrap interval |", "|---|---|---|---|---|---|"]
    lines += [f"| {label(d)} | {millions(d['budget'])} | {d['seeds']} | {signed(d['mean'])} | "
              f"{interval(d['t95'])} | " + "; ".join(f"{p['seed']}: {signed(p['difference'])} "
                                                      f"{interval(p['bootstrap95'])}" for p in d["per_seed"]) + " |"
              for d in diffs]
    return "\n".join(lines) + "\n\n" + verdicts(diffs)



def outcome(d: dict) -> str:
    """What a paired difference a − b allows over seeds: "one seed", "unknown" (a non-finite interval), "none" (its
    95 % t-interval holds 0), or the better scheme's side, "a" (the interval lies below 0) or "b" (above)."""
    if d["t95"] is None:
        return "one seed"
    lo, hi = d["t95"]
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "unknown"
    return "none" if lo <= 0 <= hi else ("b" if lo > 0 else "a")


def every_seed(d: dict) -> str | None:
    """Where the interval over seeds cannot say but every seed's own bootstrap interval lies on one side of 0: the
    better scheme's side, "a" or "b", as outcome() names it; else None."""
    sides = {(lo > 0) - (hi < 0) for lo, hi in (p["bootstrap95"] or (-1, 1) for p in d["per_seed"])}
    return None if len(sides) != 1 or 0 in sides else ("b" if sides == {1} else "a")


def _each_seed_interval(d: dict) -> str:
    return "; ".join(f"seed {p['seed']} {signed(p['difference'])}, bootstrap {interval(p['bootstrap95'])}"
                     for p in d["per_seed"])


def _too_few_seeds(d: dict, better: str, own: str = "own interval") -> str:
    """What an interval over seeds that holds 0 leaves unsaid where every seed agrees (every_seed)."""
    return (f", yet each seed's {own} lies on one side ({_each_seed_interval(d)}): every seed finds {better} the "
            f"better, and {d['seeds']} seeds are too few for the interval over seeds to say so.")


def _measured(d: dict) -> str:
    return f"{signed(d['mean'])} nats, 95 % interval {interval(d['t95'])} over {d['seeds']} seeds"


def verdict(d: dict, budget: bool = False) -> str:
    """One sentence on a paired difference, no stronger than its interval over seeds allows (its budget named where
    several are shown)."""
    said = outcome(d)
    if said == "one seed":
        return (f"{label(d, budget)}: {signed(d['mean'])} nats on one seed (bootstrap over validation sequences "
                f"{interval(d['per_seed'][0]['bootstrap95'])}); that interval says nothing about another draw of the "
                f"weights and batches, so this is not yet a difference between the schemes.")
    if said == "unknown":
        return f"{label(d, budget)}: no answer; its figures are not finite ({_measured(d)})."
    if said == "none" and (side := every_seed(d)):
        return f"{label(d, budget)}: {_measured(d)}, which holds 0" + _too_few_seeds(d, get_scheme(d[side]).short)
    if said == "none":
        return (f"{label(d, budget)}: no difference found over seeds ({_measured(d)}, which holds 0; "
                f"each seed: {_each_seed(d)}).")
    return f"{label(d, budget)}: {_measured(d)}: {get_scheme(d[said]).short} is the better here."


def verdicts(diffs: list[dict]) -> str:
    """Every difference's verdict as a Markdown list: the lab's section 4 and the races page under its tables."""
    several = len({d["budget"] for d in diffs}) > 1
    return "\n".join(f"- {verdict(d, several)}" for d in diffs)


def finding(race: list[RaceRun]) -> str:
    """The order's answer for a class (lesson step 5): control − Strang as its interval allows, then the split FFN's
    (Transformer − control) where its interval over seeds says which way; on the budget most runs share."""
    main = principal(race)
    d = difference(main, BASELINE, CONTROL)
    said = outcome(d) if d else "no pair"
    split = "" if said not in ("a", "b") else (
        f" The Transformer {'trails' if said == 'b' else 'leads'} the control (Transformer − control {_measured(d)}): "
        f"splitting the FFN into two halves {'helps' if said == 'b' else 'hurts'} — {conditions(main)}.")
    return _order_finding(main) + split + lasting(race)


def recipes(race: list[RaceRun], sep: str = ", ") -> str:
    """The runs' recipes, each once, in order ("6 × 256, post-LN")."""
    return sep.join(dict.fromkeys(r.recipe for r in race))


def gist(race: list[RaceRun]) -> str:
    """`finding` in one plain sentence with no figure, for a class (lesson step 5's text; its figures go behind an ⓘ):
    what the order did and what splitting the FFN did, as their intervals over seeds allow, on the race's own models
    (not the pair the step shows beside it)."""
    main = principal(race)
    order, split = difference(main, CONTROL, REFERENCE), difference(main, BASELINE, CONTROL)
    said = {k: outcome(d) if d else "no pair" for k, d in (("order", order), ("split", split))}
    if "no pair" in said.values() or "unknown" in said.values() or "one seed" in said.values():
        return "The lab's race has too few seeds to say yet what makes Macaron's layer better."
    did = {"none": "made no measurable difference", "b": "helped", "a": "hurt"}  # the loss: lower, higher
    return (f"A separate race ({recipes(main)} masked LMs, {millions(main[0].budget)} tokens): Macaron's order "
            f"{did[said['order']]}, its split FFN {did[said['split']]}.")


def conditions(race: list[RaceRun]) -> str:
    """Under what a finding on these runs holds, read from them: "on 6 × 256 post-LN models, one corpus, 20 M tokens a
    run"."""
    shapes = recipes(race, " and ")
    return (f"on {shapes} models with untied halves, one corpus, {' or '.join(millions(b) for b in budgets(race))} "
            f"tokens a run")


def lasting(race: list[RaceRun]) -> str:
    """Does the split FFN's lead last? The Transformer − control difference of the longest budget beyond the race's
    own, beside the same seeds' at the race's budget: how far a longer run says the lead is more than a later start
    (empty when no longer pair is stored)."""
    short = principal(race)
    longer = [d for b in budgets(race) if short and b > short[0].budget
              if (d := difference(at(race, b), BASELINE, CONTROL))]
    if not longer:
        return ""
    d = longer[-1]
    before = difference([r for r in short if r.seed in {p["seed"] for p in d["per_seed"]}], BASELINE, CONTROL)
    then = f"; the same seed{'s' if d['seeds'] > 1 else ''} at {millions(short[0].budget)}: {signed(before['mean'])}" \
        if before else ""
    sd = max((v["sd"] or 0.0) for (s, b), v in spread(short).items() if s in (BASELINE, CONTROL))
    head = f" Trained to {millions(d['budget'])} tokens ({d['seeds']} seed{'s' if d['seeds'] > 1 else ''}), "
    if d["t95"] is None:  # one seed: its bootstrap interval and the seed spread bound what it can say
        lo, hi = d["per_seed"][0]["bootstrap95"] or [d["mean"], d["mean"]]
        gap = f"Transformer − control is {signed(d['mean'])} nats (bootstrap {interval([lo, hi])}{then})"
        if lo <= 0 <= hi:
            return head + gap + ": no gap is left at that seed; the shorter runs' lead was the later start."
        if abs(d["mean"]) <= sd:
            return head + gap + f": no larger than the spread between seeds (sd {sd:.3f} nats), so one seed cannot " \
                                "say whether the lead lasts."
        return head + gap + f": larger than the spread between seeds (sd {sd:.3f} nats), so at that seed the lead " \
                            "is more than a later start."
    said = outcome(d)
    gap = f"Transformer − control is {_measured(d)}{then}"
    if said == "none":  # few seeds make a wide t-interval: say what each seed's own interval says
        if side := every_seed(d):
            return head + gap + ": that interval holds 0" + _too_few_seeds(
                d, f"the {'control' if side == 'b' else 'Transformer'}", own="own")
        return head + gap + f": no gap found over seeds ({_each_seed_interval(d)})."
    return head + gap + (f": the {'control' if said == 'b' else 'Transformer'} is still the better."
                         if said in ("a", "b") else ".")


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
        return question + f"one seed so far (control − Macaron {signed(d['mean'])} nats), not yet an answer."
    if said == "none":
        return question + f"no difference found (control − Macaron {_measured(d)})."
    return question + (f"trained {'worse' if said == 'b' else 'better'} than Macaron (control − Macaron "
                       f"{_measured(d)}), so here the order {'helps' if said == 'b' else 'hurts'}.")


def findings(race: list[RaceRun]) -> str:
    """The race's three questions in one short paragraph for the teacher (a printed page holds it): each paired
    difference with its interval, and the conditions, on the budget most runs share; the lab's section 4 has every
    scheme and budget."""
    race = principal(race)
    said = []
    for d in differences(race)[:3]:
        said.append(f"{label(d)} {signed(d['mean'])} nats" + (
            f" (one seed, bootstrap {interval(d['per_seed'][0]['bootstrap95'])})" if d["t95"] is None else
            f" (seeds {_each_seed(d)}; t-interval {interval(d['t95'])})"))
    if not said:
        return "No scheme of the race has a seed paired with another yet (pretrained/race/)."
    budget = min(r.tokens for r in race) / 1e6
    return (f"The race, held-out loss ({recipes(race)}, {budget:.0f} M tokens a run, the same batches within a seed): "
            + "; ".join(said) + ". An interval that holds 0 is no difference found; the lab's section 4 has the rest.")
