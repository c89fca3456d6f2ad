"""The race on translation (issue 68): the translators (macaron.train.translate) raced as the masked LM is in
`zoo`, on Tatoeba es→en, stored under `pretrained/race/translation/seed-<s>/<model>/` with their test translations
and the test set's English once beside them. A difference is b's gain over a in test BLEU (chrF and dev loss beside
it; > 0: b is better, as in `zoo`), paired by seed, with sacreBLEU's paired bootstrap per seed.

    python -m macaron zoo            prints `markdown` after the masked LM's race
    python -m macaron zoo --json     its "translation": `differences`
"""
from __future__ import annotations

import functools
from pathlib import Path

from ..schemes import SCHEMES, get_scheme
from . import zoo

REFERENCES = Path("translation") / "test.en"


def references(root: Path | None = None) -> list[str]:
    """The test set's English (the references of every stored translator's test.hyp.en), from the race's folder."""
    return (Path(root or zoo.RACE) / REFERENCES).read_text(encoding="utf-8").splitlines()


@functools.lru_cache(maxsize=64)
def paired_bootstrap(a: tuple, b: tuple, refs: tuple) -> dict:
    """sacreBLEU's paired bootstrap (Koehn 2004; 1,000 resamples, its seed): p of b's BLEU against a's (BLEU alone:
    the race's differences are in BLEU, and chrF's resampling would more than double the time, 1.3 s a pair)."""
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    _, res = PairedTest([("a", list(a)), ("b", list(b))], {"BLEU": BLEU()}, [list(refs)], test_type="bs",
                        n_samples=1000)()
    return {"p_bleu": res["BLEU"][1].p_value}


def difference(race: list[zoo.RaceRun], a: str, b: str, refs: list[str] | None = None) -> dict | None:
    """b's gain over a, paired by seed among translators of one budget: BLEU(b) − BLEU(a) and chrF's, and the dev loss
    as the masked LM's, loss(a) − loss(b): > 0 says b is the better in all three, as in `zoo.difference`. The mean
    gain in BLEU over seeds with its 95 % t-interval (two seeds or more), and where the references are given each
    seed's own with the p of sacreBLEU's paired bootstrap on the test set. None when no seed trained both."""
    pairs = zoo.paired(race, a, b)
    if not pairs:
        return None
    per_seed = [{"seed": s, "bleu": rb.bleu - ra.bleu, "chrf": rb.chrf - ra.chrf, "loss": ra.loss - rb.loss,
                 **(paired_bootstrap(tuple(ra.hypotheses), tuple(rb.hypotheses), tuple(refs)) if refs else {})}
                for s, ra, rb in pairs]
    return {"a": a, "b": b, "budget": race[0].budget, "metric": "bleu",
            **zoo.over_seeds([p["bleu"] for p in per_seed]), "per_seed": per_seed}


def differences(race: list[zoo.RaceRun], root: Path | None = None) -> list[dict]:
    """The race's three questions asked of the translators, budget by budget (root: the race's folder)."""
    refs = references(root) if race else []
    return [d for budget in zoo.budgets(race) for a, b in zoo.comparisons(zoo.at(race, budget))
            if (d := difference(zoo.at(race, budget), a, b, refs))]


def markdown(race: list[zoo.RaceRun], root: Path | None = None) -> str:
    """The races page's translation race: a row a run, a row a paired difference of test BLEU."""
    lines = ["| scheme | model | seed | budget (target tokens) | parameters | test BLEU | chrF | dev loss |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {SCHEMES[r.scheme].title} | {r.name} | {r.seed} | {zoo.millions(r.budget)} | {r.parameters:,} | "
              f"{r.bleu:.2f} | {r.chrf:.2f} | {r.loss:.4f} |" for r in race]
    lines += ["", "| gain in test BLEU | budget | seeds | mean | 95 % t-interval | each seed (paired bootstrap p) |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {get_scheme(d['b']).short} over {get_scheme(d['a']).short} | {zoo.millions(d['budget'])} | "
              f"{d['seeds']} | {zoo.signed(d['mean'], 2)} | {zoo.interval(d['t95'], 2)} | "
              + "; ".join(f"{p['seed']}: {zoo.signed(p['bleu'], 2)} (p {p['p_bleu']:.3f})" for p in d["per_seed"])
              + " |"
              for d in differences(race, root)]
    return "\n".join(lines)


# The paper's claim the translators are raced against (its Table 1, IWSLT14 De→En small: 34.4 → 35.4 BLEU).
PAPER_GAIN = ("+1.0 BLEU on IWSLT14 De→En (34.4 → 35.4; post-LN, 6 + 6 layers × 512, about 153 K training pairs, "
              "beam 5, length penalty 1.0)")


def _first_budget(race: list[zoo.RaceRun]) -> tuple[str, list[dict], list[dict]] | None:
    """The translation race at the first budget where a seed trained both Transformer and Macaron: its recipe, the
    three questions' paired gains in test BLEU (Macaron's over the Transformer first), and the same in dev loss
    (a − b, nats a target token)."""
    budget = next((b for b in zoo.budgets(race) if zoo.paired(zoo.at(race, b), zoo.BASELINE, zoo.REFERENCE)), None)
    if budget is None:
        return None
    runs_ = zoo.at(race, budget)
    gains = [t for a, b in zoo.comparisons(runs_)[:3] if (t := difference(runs_, a, b))]  # BASELINE's first
    losses = [{**t, **zoo.over_seeds([p["loss"] for p in t["per_seed"]])} for t in gains]
    return zoo.recipes(runs_), gains, losses


def _loss_said(t: dict) -> str:
    side = zoo.outcome(t)
    better = ("one seed" if side == "one seed" else "no difference found" if side in ("none", "unknown") else
              f"{get_scheme(t[side]).short} the better")
    return f"{zoo.label(t)} {zoo.signed(t['mean'])} {zoo.interval(t['t95'])} ({better})"


def _went_on(race: list[zoo.RaceRun]) -> str:
    """The seeds that went on from a step's weights with fresh optimizers (a new machine), as a condition of the
    finding; a pair stays paired when every scheme of the seed did alike."""
    said = []
    for seed in sorted({r.seed for r in race if r.went_on}):
        ways = {r.went_on for r in race if r.seed == seed}
        (step, rewarm), alike = sorted(w for w in ways if w)[0], len(ways) == 1
        said.append(f"; seed {seed} went on from its step-{step:,} weights with fresh optimizers and {rewarm} steps "
                    f"of re-warm-up" + (", every scheme alike" if alike else ", not every scheme alike"))
    return "".join(said)


def finding(race: list[zoo.RaceRun]) -> str:
    """What the translation race found (the lab's section 4, races page): Macaron's gain over the Transformer in test
    BLEU, then the race's three questions in dev loss, each no stronger than its interval over seeds allows, with the
    conditions and beside the paper's claim; "" when no seed of the race trained both."""
    if (found := _first_budget(race)) is None:
        return ""
    recipe, (d, *_), losses = found
    said = zoo.outcome(d)
    seeds = ", ".join(f"{zoo.signed(p['bleu'], 2)} at seed {p['seed']}" for p in d["per_seed"])
    gain = (f"{zoo.signed(d['mean'], 2)} test BLEU on one seed" if said == "one seed" else
            f"{zoo.signed(d['mean'], 2)} test BLEU over {d['seeds']} seeds ({seeds}; 95 % t-interval "
            f"{zoo.interval(d['t95'], 2)})")
    meaning = {"one seed": "one seed is not yet an answer", "unknown": "its figures are not finite",
               "none": "the interval holds 0, so the race has not shown a gain in BLEU",
               "b": "Macaron is the better translator here", "a": "the Transformer is the better translator here"}[said]
    return (f"As translators ({recipe}, {zoo.millions(d['budget'])} target tokens a run, beam 5{_went_on(race)}), "
            f"Macaron − Transformer is {gain}: {meaning}. In dev loss (nats a target token, 95 % t-intervals over "
            f"seeds): {'; '.join(map(_loss_said, losses))}. The paper reports {PAPER_GAIN}.")


def _asked(diffs: list[dict], a: str, b: str) -> dict | None:
    return next((t for t in diffs if (t["a"], t["b"]) == (a, b)), None)


def gist(race: list[zoo.RaceRun]) -> str:
    """finding in one sentence for the teacher's note (lesson steps 5 and 7): Macaron's BLEU gain with its interval
    and the paper's, then what test BLEU says of the split FFN and of the order (dev loss: `finding`); "" as
    finding."""
    if (found := _first_budget(race)) is None:
        return ""
    recipe, gains, _ = found
    d = gains[0]
    shown = {"none": "not shown", "b": "Macaron the better", "a": "the Transformer the better"}.get(zoo.outcome(d), "")
    split, order = _asked(gains, zoo.BASELINE, zoo.CONTROL), _asked(gains, zoo.CONTROL, zoo.REFERENCE)
    bleu = "; ".join(f"{get_scheme(t['b']).short} over {get_scheme(t['a']).short} {zoo.signed(t['mean'], 2)} "
                     f"{zoo.interval(t['t95'], 2)}" for t in (split, order) if t)
    again = (": the split FFN, not the order, as in the masked-LM race" if split and order and zoo.outcome(split) == "b"
             and zoo.outcome(order) == "none" else "")
    return (f"As translators ({recipe}, {zoo.millions(d['budget'])} target tokens, {d['seeds']} seed"
            f"{'s' if d['seeds'] > 1 else ''}): Macaron − Transformer {zoo.signed(d['mean'], 2)} test BLEU "
            f"{zoo.interval(d['t95'], 2)}{', ' + shown if shown else ''} (the paper: +1.0 on IWSLT14); of it, "
            f"{bleu}{again}.")
