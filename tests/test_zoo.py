"""The race's command (`python -m macaron zoo`): every figure it prints is recomputed here from the stored fixture's
numbers with independent code (Student's t from its table; the bootstrap against the delta method's normal
interval)."""
from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np
import pytest

from macaron.__main__ import main
from macaron.schemes import get_scheme

T975 = {1: 12.7062, 2: 4.3027, 3: 3.1824}  # Student's t, 97.5 % quantile, by degrees of freedom (a printed table)
SCHEME_OF = {"transformer-mini": "transformer", "macaron-mini": "macaron", "transformer-halves-mini":
             "transformer-halves", "parallel-mini": "unsplit"}


def _minus(x):
    return f"{x:+.3f}".replace("-", "−")


def write_run(root, seed, name, seq_loss, targets, effects, parameters=5_000_000, budget=None, curve=None):
    """A race run as pretrain writes it: training.json (final figures with per-sequence losses) and metrics.jsonl;
    a 20 M run in root/seed-<s>/<name>, another budget's in root/<budget>/seed-<s>/<name>. curve: its held-out losses
    at the evaluations (every 250 steps, 500,000 tokens apart), one a context effect."""
    folder = (root if budget is None else root / str(budget)) / f"seed-{seed}" / name
    folder.mkdir(parents=True)
    loss = float(np.sum(seq_loss) / np.sum(targets))
    final = {"loss": loss, "accuracy": 0.4 + seed / 100, "context_effect": effects[-1],
             "seq_loss": [float(x) for x in seq_loss], "seq_targets": [int(x) for x in targets]}
    facts = {"config": {"scheme": SCHEME_OF[name], "name": name, "shared": False, "tied_halves": False,
                         "n_layers": 6, "d_model": 64, "norm": "post"},
             "seed": seed, "tokens": (budget or 20_000_000) + seed, "parameters": parameters, "final": final}
    if budget is not None:
        facts["budget_tokens"] = budget + 3 * seed
    (folder / "training.json").write_text(json.dumps(facts))
    curve = [7 - i / 4 for i in range(len(effects))] if curve is None else curve
    rows = [{"type": "eval", "step": 250 * i, "tokens": 500_000 * i, "loss": x, "accuracy": 0.1,
             "context_effect": e} for i, (x, e) in enumerate(zip(curve, effects))]
    rows.insert(1, {"type": "train", "step": 10, "tokens": 20_000, "loss": 9.0})
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"type": "ev')  # half a line
    return loss


@pytest.fixture
def race(tmp_path):
    rng = np.random.default_rng(7)
    targets = rng.integers(10, 30, size=40)
    losses = {}
    for seed in (0, 1, 2):
        base = rng.uniform(2.0, 3.0, size=40) * targets
        for name, shift, effects in (("macaron-mini", 0.0, [0, 0.01, 0.02, 1.5, 2.6]),
                                     ("transformer-mini", 0.10 + 0.02 * seed, [0, 0.01, 0.03, 0.2, 1.4, 2.4]),
                                     ("transformer-halves-mini", 0.03 * seed, [0, 0.04, 1.9, 2.5])):
            seq = base + shift * targets + rng.normal(0, 0.5, size=40)
            loss = write_run(tmp_path, seed, name, seq, targets, effects)
            losses[get_scheme(SCHEME_OF[name]).name, seed] = (loss, seq)
    seq = base + 0.2 * targets
    losses["unsplit", 2] = (write_run(tmp_path, 2, "parallel-mini", seq, targets, [0, 2.2]), seq)
    return tmp_path, losses, targets


def test_zoo_json_lists_each_run_from_its_stored_files(race, capsys):
    root, losses, _ = race
    assert main(["zoo", "--json", "--root", str(root)]) == 0
    out = json.loads(capsys.readouterr().out)
    runs = {(r["scheme"], r["seed"]): r for r in out["runs"]}
    assert set(runs) == {("lie-trotter", s) for s in range(3)} | {("strang", s) for s in range(3)} | \
        {("lie-trotter-halves", s) for s in range(3)} | {("unsplit", 2)}
    keys = {"scheme", "seed", "budget", "tokens", "parameters", "loss", "accuracy", "context_effect", "plateau_step",
            "shared", "tied_halves", "task"}
    for (scheme, seed), r in runs.items():
        assert set(r) == keys and r["task"] == "mlm"
        assert r["loss"] == pytest.approx(losses[scheme, seed][0]) and r["tokens"] == 20_000_000 + seed
        assert r["budget"] == 20_000_000
    # the last evaluation below 0.05 nats before the first at half the final effect
    assert runs["strang", 0]["plateau_step"] == 500 and runs["lie-trotter", 1]["plateau_step"] == 500
    assert runs["lie-trotter-halves", 0]["plateau_step"] == 250 and runs["unsplit", 2]["plateau_step"] == 0


def test_zoo_differences_are_paired_by_seed_with_t_and_bootstrap_intervals(race, capsys):
    root, losses, targets = race
    assert main(["zoo", "--json", "--root", str(root)]) == 0
    out = {(d["a"], d["b"]): d for d in json.loads(capsys.readouterr().out)["differences"]}
    assert list(out) == [("lie-trotter", "strang"), ("lie-trotter-halves", "strang"),
                         ("lie-trotter", "lie-trotter-halves"), ("unsplit", "strang")]
    for (a, b), d in out.items():
        seeds = [s for s in range(3) if (a, s) in losses and (b, s) in losses]
        diffs = [losses[a, s][0] - losses[b, s][0] for s in seeds]
        mean = sum(diffs) / len(diffs)
        assert d["seeds"] == len(seeds) and d["mean"] == pytest.approx(mean)
        if len(diffs) > 1:
            sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / (len(diffs) - 1))
            half = T975[len(diffs) - 1] * sd / math.sqrt(len(diffs))
            assert d["t95"] == pytest.approx([mean - half, mean + half], abs=1e-4)
        else:
            assert d["t95"] is None
        for p, s in zip(d["per_seed"], seeds):
            # the bootstrap's interval against the normal one of the ratio estimator's delta-method error
            diff = losses[a, s][1] - losses[b, s][1]
            point = diff.sum() / targets.sum()
            se = math.sqrt(len(diff) * np.var(diff - point * targets, ddof=1)) / targets.sum()
            assert p["difference"] == pytest.approx(point)
            assert p["bootstrap95"] == pytest.approx([point - 1.96 * se, point + 1.96 * se], abs=0.25 * se)
    assert out["lie-trotter", "strang"]["t95"][0] > 0  # the fixture's Transformer is worse by 0.10–0.14 nats


def test_zoo_text_names_every_run_and_difference_and_says_when_there_is_none(race, tmp_path, capsys):
    root, losses, _ = race
    assert main(["zoo", "--root", str(root)]) == 0
    text = capsys.readouterr().out
    assert text.count("\nstrang ") == 3 and "lie-trotter − strang: mean +" in text and "unsplit − strang" in text
    assert main(["zoo", "--markdown", "--root", str(root)]) == 0
    tables = capsys.readouterr().out.split("\n\n")
    runs = [row.split(" | ") for row in tables[0].splitlines()[2:]]
    strang = [row for row in runs if row[:2] == ["| Strang–Marchuk: ½G, F, ½G", "macaron-mini"]]
    assert len(runs) == 10 and len(strang) == 3
    for row in runs:  # each run's loss as the fixture wrote it
        scheme = get_scheme(SCHEME_OF[row[1]]).name
        assert row[3] == "20 M" and row[4] == f"{losses[scheme, int(row[2])][0]:.4f}"
    differences = tables[1].splitlines()[2:]
    assert differences[0].startswith("| Lie–Trotter − Strang–Marchuk | 20 M | 3 | +")
    said = tables[2].splitlines()  # a verdict a difference, in the differences' order, as strong as its interval
    assert len(said) == len(differences) and all(s.startswith("- ") for s in said)
    assert said[0].startswith("- Lie–Trotter − Strang–Marchuk: +")
    assert said[0].endswith("Strang–Marchuk is the better here.")
    assert said[1].startswith("- Control − Strang–Marchuk: no difference found over seeds")
    assert "on one seed" in said[-1] and "not yet a difference" in said[-1]
    assert main(["zoo", "--root", str(tmp_path / "empty")]) == 0
    assert "no race runs stored" in capsys.readouterr().out
    (root / "seed-0" / "macaron-mini" / "training.json").write_text('{"config": {}}')
    assert main(["zoo", "--root", str(root)]) == 2
    assert "not a finished run's facts" in capsys.readouterr().err


def test_race_figures_draw_each_scheme_as_a_seed_band_and_each_difference_against_zero(race):
    """Valid Plotly (validation on); per scheme of several seeds a band from the lowest to the highest seed and the
    mean line, in the scheme's lab colour; the differences' axis holds 0 and every interval."""
    import plotly.graph_objects as go

    from macaron import plot
    from macaron.plot import style
    from macaron.studies import zoo
    from test_plot import decoded

    runs = zoo.runs(race[0])
    drawn = plot.race_curves(runs)
    curves = go.Figure(drawn.to_dict())  # raises on an invalid property
    lines = {d["name"]: d for d in drawn.to_plotly_json()["data"] if d.get("mode") == "lines"}
    assert set(lines) == {"Lie–Trotter, 3 seeds", "Strang–Marchuk, 3 seeds", "Control, 3 seeds",
                          "unsplit Euler, 1 seed"}  # the short names, as in the differences' rows
    strang = [r for r in runs if r.scheme == "strang"]
    mean = np.mean([r.curve["loss"] for r in strang], axis=0)
    line = lines["Strang–Marchuk, 3 seeds"]
    np.testing.assert_allclose(decoded(line["y"]), mean)
    assert line["line"]["color"] == style.scheme_style("strang").color
    bands = [d for d in curves.data if d.fill == "toself"]
    assert len(bands) == 3  # the parallel block has one seed: no band
    assert curves.layout.xaxis.title.text == "tokens seen (millions)"
    diffs = zoo.differences(runs)
    fig = go.Figure(plot.race_differences(diffs).to_dict())
    lo, hi = fig.layout.xaxis.range
    assert lo < 0 < hi and all(lo <= x <= hi for d in diffs for x in d["t95"] or [d["mean"]])
    dots = [d for d in fig.data if d.marker.symbol == "circle-open"]
    assert [d.y[0] for d in dots] == [
        "Lie–Trotter − Strang–Marchuk", "Control − Strang–Marchuk", "Lie–Trotter − Control",
        "unsplit Euler − Strang–Marchuk"] and [len(d.x) for d in dots] == [3, 3, 3, 1]
    diamonds = [d for d in fig.data if d.marker.symbol == "diamond"]  # a mean only where there are seeds to average
    assert [d.y[0] for d in diamonds] == [d.y[0] for d in dots[:3]]


def test_the_lessons_sentence_says_no_more_than_the_control_interval_over_seeds(race):
    """finding(): "no difference" exactly when the t-interval of control − Strang (recomputed here) holds 0, which
    way only when it does not, no answer from one seed, none from figures that are not finite, and its figures with
    the minus sign."""
    from macaron.studies import zoo

    root, losses, _ = race
    runs = zoo.runs(root)

    def t95(d):  # mean and 95 % t-interval over the three seeds
        half = T975[2] * np.std(d, ddof=1) / math.sqrt(3)
        return np.mean(d), np.mean(d) - half, np.mean(d) + half

    def interval(shift):  # control − Strang, with Strang's losses moved by `shift`
        return t95([losses["lie-trotter-halves", s][0] - losses["strang", s][0] - shift for s in range(3)])

    def moved(shift):
        return [dataclasses.replace(r, loss=r.loss + shift) if r.scheme == "strang" else r for r in runs]

    for shift in (0.0, 0.5, -0.5):  # the fixture's own (its interval holds 0), Strang far behind, far ahead
        mean, lo, hi = interval(shift)
        said = zoo.finding(moved(shift))
        assert all(_minus(x) in said for x in (mean, lo, hi)) and "3 seeds" in said
        assert "-" not in said.replace("sub-layers", "").replace("post-LN", "")  # the minus sign, not a hyphen
        assert ("no difference found" in said) == (lo <= 0 <= hi)
        assert ("trained worse than Macaron" in said and "the order helps" in said) == (lo > 0)
        assert ("trained better than Macaron" in said and "the order hurts" in said) == (hi < 0)
    assert interval(0.0)[1] < 0 < interval(0.0)[2] and interval(-0.5)[1] > 0 and interval(0.5)[2] < 0
    for shift in (0.0, 0.5, -0.5):  # the split FFN (Transformer − control), recomputed, said only where it has a side
        moved_lt = [dataclasses.replace(r, loss=r.loss + shift) if r.scheme == "lie-trotter" else r for r in runs]
        mean, lo, hi = t95([losses["lie-trotter", s][0] + shift - losses["lie-trotter-halves", s][0] for s in range(3)])
        said = zoo.finding(moved_lt)
        assert ("trails the control" in said and "halves helps" in said) == (lo > 0)
        assert ("leads the control" in said and "halves hurts" in said) == (hi < 0)
        assert ("Transformer − control" in said) == (not lo <= 0 <= hi)
        gist = zoo.gist(moved_lt)  # the class's sentence: the same sides, no figure but the conditions'
        side = "helped." if lo > 0 else "hurt." if hi < 0 else "made no measurable difference."
        assert gist.endswith("its split FFN " + side)
        assert "Macaron's order made no measurable difference," in gist and not re.search(r"\d\.\d|[+−]\d", gist)
        if not lo <= 0 <= hi:
            assert all(_minus(x) in said for x in (mean, lo, hi))
    assert "not yet an answer" in zoo.finding([r for r in runs if r.seed == 0])
    assert "too few seeds to say yet" in zoo.gist([r for r in runs if r.seed == 0])
    assert "no seed with both" in zoo.finding([r for r in runs if r.scheme != "lie-trotter-halves"])
    assert "no answer, its figures are not finite" in zoo.finding(moved(float("nan")))
    assert "no answer" in zoo.verdict(zoo.difference(moved(float("nan")), "lie-trotter-halves", "strang"))
    teacher = zoo.findings(runs)
    assert "6 × 64, post-LN" in teacher and "20 M tokens a run" in teacher
    for d in zoo.differences(runs)[:3]:  # the three questions, each with the interval it has
        seeds = ", ".join(_minus(p["difference"]) for p in d["per_seed"])
        assert f"{_minus(d['mean'])} nats (seeds {seeds}; t-interval [{_minus(d['t95'][0])}, {_minus(d['t95'][1])}])" \
            in teacher


@pytest.fixture
def longer(race):
    """The race fixture plus seed 0 of the Transformer and the control at 60 M tokens, with curves of their own: the
    control leaves the plateau (context effect ≥ 1 nat) at step 500, the Transformer at step 1,000."""
    root, losses, targets = race
    rng = np.random.default_rng(11)
    curves = {"transformer-mini": ([7.0, 6.6, 6.1, 5.5, 4.2, 3.9, 3.8, 3.75], [0, 0.02, 0.4, 0.9, 1.3, 2.1, 2.6, 2.9]),
              "transformer-halves-mini": ([7.0, 6.5, 5.2, 4.1, 3.95, 3.85, 3.78, 3.7],
                                          [0, 0.3, 1.1, 1.8, 2.4, 2.8, 3.0, 3.1])}
    base = rng.uniform(2.0, 3.0, size=40) * targets
    for name, shift in (("transformer-mini", 0.05), ("transformer-halves-mini", 0.0)):
        seq = base + shift * targets + (rng.normal(0, 0.2, size=40) if shift else 0)
        write_run(root, 0, name, seq, targets, curves[name][1], budget=60_000_000, curve=curves[name][0])
        losses[get_scheme(SCHEME_OF[name]).name, 0, 60] = float(seq.sum() / targets.sum())
    return root, losses, curves


@pytest.mark.parametrize("gap2", [0.15, -0.15])
def test_two_seeds_at_the_longer_budget_say_what_each_seeds_interval_says(longer, gap2):
    """Seed 2 of both at 60 M beside seed 0 (+0.05): two seeds make the t-interval wide (recomputed from Student's
    table); where it holds 0 and both seeds' bootstrap intervals lie above 0 the sentence says every seed finds the
    control the better, too few seeds for the interval; where the seeds disagree, no gap over seeds."""
    from macaron.studies import zoo

    root, losses, _ = longer
    rng = np.random.default_rng(5)
    targets = np.array(zoo.runs(root)[-1].seq_targets)
    base = rng.uniform(2.0, 3.0, size=len(targets)) * targets
    for name, shift in (("transformer-mini", gap2), ("transformer-halves-mini", 0.0)):
        seq = base + shift * targets + (rng.normal(0, 0.2, size=len(targets)) if shift else 0)
        write_run(root, 2, name, seq, targets, [0, 1.2, 2.5], budget=60_000_000)
        losses[get_scheme(SCHEME_OF[name]).name, 2, 60] = float(seq.sum() / targets.sum())
    gaps = [losses["lie-trotter", s, 60] - losses["lie-trotter-halves", s, 60] for s in (0, 2)]
    half = T975[1] * np.std(gaps, ddof=1) / math.sqrt(2)
    assert np.mean(gaps) - half < 0 < np.mean(gaps) + half  # the interval over two seeds holds 0
    said = zoo.finding(zoo.runs(root))
    assert (f"Trained to 60 M tokens (2 seeds), Transformer − control is {_minus(np.mean(gaps))} nats, 95 % interval "
            f"[{_minus(np.mean(gaps) - half)}, {_minus(np.mean(gaps) + half)}] over 2 seeds") in said
    assert f"seed 0 {_minus(gaps[0])}" in said and f"seed 2 {_minus(gaps[1])}" in said
    verdict = next(v for v in zoo.verdicts(zoo.differences(zoo.runs(root))).splitlines() if "60 M" in v)
    if gap2 > 0:
        assert "every seed finds the control the better, and 2 seeds are too few" in said
        assert "every seed finds Control the better, and 2 seeds are too few" in verdict
    else:
        assert "no gap found over seeds (seed 0" in said and "every seed" not in said
        assert "no difference found over seeds" in verdict and "every seed" not in verdict


def test_zoo_pairs_runs_only_at_equal_budgets(longer, capsys):
    """A 60 M pair is its own difference (one seed); the 20 M differences are those of the 20 M runs alone."""
    from macaron.studies import zoo

    root, losses, _ = longer
    assert main(["zoo", "--json", "--root", str(root)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted({r["budget"] for r in out["runs"]}) == [20_000_000, 60_000_000]
    long = [d for d in out["differences"] if d["budget"] == 60_000_000]
    assert [(d["a"], d["b"], d["seeds"]) for d in long] == [("lie-trotter", "lie-trotter-halves", 1)]
    assert long[0]["mean"] == pytest.approx(losses["lie-trotter", 0, 60] - losses["lie-trotter-halves", 0, 60])
    short = {(d["a"], d["b"]): d for d in out["differences"] if d["budget"] == 20_000_000}
    lt = [losses["lie-trotter", s][0] - losses["lie-trotter-halves", s][0] for s in range(3)]
    assert short["lie-trotter", "lie-trotter-halves"]["seeds"] == 3
    assert short["lie-trotter", "lie-trotter-halves"]["mean"] == pytest.approx(sum(lt) / 3)
    with pytest.raises(ValueError, match="one budget at a time"):
        zoo.difference(zoo.runs(root), "lie-trotter", "lie-trotter-halves")
    assert main(["zoo", "--markdown", "--root", str(root)]) == 0
    tables = capsys.readouterr().out.split("\n\n")
    rows = [r.split(" | ") for r in tables[1].splitlines()[2:]]
    assert [r[1] for r in rows].count("60 M") == 1 and [r[1] for r in rows].count("20 M") == 4
    said = tables[2].splitlines()  # several budgets: each verdict names its own
    assert said[-1].startswith("- Lie–Trotter − Control, 60 M tokens: ") and "on one seed" in said[-1]
    # the lesson's sentences stay on the budget most runs share, the longer pair said after them
    runs = zoo.runs(root)
    short = zoo.finding([r for r in runs if r.budget == 20_000_000])
    assert zoo.finding(runs).startswith(short + " Trained to 60 M tokens")


def test_zoo_path_is_each_evaluations_gap_and_the_gap_aligned_at_the_plateau_exits(longer, capsys):
    """Recomputed from the fixture's curves: a − b at every evaluation, the exits at the first context effect of
    1 nat, and the gap k steps after each run's own exit."""
    root, _, curves = longer
    assert main(["zoo", "--path", "--json", "--root", str(root)]) == 0
    found = {(p["seed"], p["budget"]): p for p in json.loads(capsys.readouterr().out)}
    assert set(found) == {(0, 20_000_000), (1, 20_000_000), (2, 20_000_000), (0, 60_000_000)}
    p = found[0, 60_000_000]
    (la, ea), (lb, eb) = curves["transformer-mini"], curves["transformer-halves-mini"]
    assert p["step"] == [250 * i for i in range(8)] and p["tokens"] == [500_000 * i for i in range(8)]
    assert p["difference"] == pytest.approx([x - y for x, y in zip(la, lb)])
    ia, ib = next(i for i, e in enumerate(ea) if e >= 1), next(i for i, e in enumerate(eb) if e >= 1)
    assert p["exit"] == [250 * ia, 250 * ib] == [1000, 500]
    assert p["after"] == [250 * k for k in range(len(la) - ia)]
    assert p["aligned"] == pytest.approx([la[ia + k] - lb[ib + k] for k in range(len(la) - ia)])
    assert main(["zoo", "--path", "lie-trotter,strang", "--root", str(root)]) == 0
    text = capsys.readouterr().out
    assert "lie-trotter − strang, seed 2, 20 M tokens" in text and "60 M" not in text  # no 60 M Strang
    assert main(["zoo", "--path", "lie-trotter,nonsense", "--root", str(root)]) == 2
    assert "unknown scheme 'nonsense'" in capsys.readouterr().err


def test_race_gap_figure_draws_each_path_and_marks_each_exit_on_it(longer):
    """Valid Plotly; each budget's paths in both panels, the longer budget heavier; the exit markers lie on their
    path at the exit's tokens, in each scheme's colour."""
    import plotly.graph_objects as go

    from macaron import plot
    from macaron.plot import style
    from macaron.studies import zoo
    from test_plot import decoded

    root, _, curves = longer
    paths = zoo.paths(zoo.runs(root))
    fig = go.Figure(plot.race_gaps(paths).to_dict())
    lines = [d for d in fig.data if d.mode == "lines"]
    assert len(lines) == 2 * len(paths)
    named = {d.name for d in lines if d.showlegend is not False}
    assert named == {"20 M tokens, seeds 0, 1, 2", "60 M tokens, seed 0"}
    heavy = [d for d in lines if d.legendgroup == "60 M"]
    assert all(d.line.width > max(x.line.width for x in lines if x.legendgroup == "20 M") for d in heavy)
    np.testing.assert_allclose(decoded(heavy[0].y), [x - y for x, y in zip(*(curves[n][0] for n in curves))])
    exits = {d.name: d for d in fig.data if d.mode == "markers"}
    control = exits["Control leaves the plateau"]
    assert control.marker.color == style.scheme_style("lie-trotter-halves").color
    p = paths[-1]
    assert (p["budget"], p["exit"][1]) == (60_000_000, 500)
    assert decoded(control.x)[-1] == pytest.approx(1.0) and decoded(control.y)[-1] == pytest.approx(
        p["difference"][p["step"].index(500)])
    lo, hi = fig.layout.yaxis.range
    assert lo < 0 < hi and all(lo <= y <= hi for q in paths for y in q["difference"] + q["aligned"])


def test_the_lessons_longer_sentence_says_no_more_than_one_seed_and_the_seed_spread_allow(longer):
    """lasting(): the longest budget's Transformer − control beside the same seed's at 20 M, read against its
    bootstrap interval (recomputed here from the per-sequence losses) and the 20 M seed spread: "no gap is left" when
    the interval holds 0, "cannot say" when the gap is within the spread, "more than a later start" beyond it."""
    from macaron.studies import zoo

    root, losses, _ = longer
    runs = zoo.runs(root)
    sd = max(np.std([losses[s, seed][0] for seed in range(3)], ddof=1) for s in ("lie-trotter", "lie-trotter-halves"))
    targets = np.array(runs[-1].seq_targets)
    control = next(r for r in runs if r.budget == 60_000_000 and r.scheme == "lie-trotter-halves")

    def with_gap(gap):  # the 60 M Transformer at `gap` nats behind the control, its per-sequence noise kept
        seq = np.array(control.seq_loss) + gap * targets + np.random.default_rng(3).normal(0, 0.2, size=len(targets))
        moved = [dataclasses.replace(r, seq_loss=list(seq), loss=float(seq.sum() / targets.sum()))
                 if (r.budget, r.scheme) == (60_000_000, "lie-trotter") else r for r in runs]
        point = seq.sum() / targets.sum() - control.loss  # and its normal interval, the bootstrap's stand-in
        diff = seq - np.array(control.seq_loss)
        se = math.sqrt(len(diff) * np.var(diff - point * targets, ddof=1)) / targets.sum()
        return zoo.finding(moved), point, se

    at20 = losses["lie-trotter", 0][0] - losses["lie-trotter-halves", 0][0]
    for gap in (0.0, sd / 2, 3 * sd):
        said, point, se = with_gap(gap)
        assert f"Trained to 60 M tokens (1 seed), Transformer − control is {_minus(point)} nats" in said
        assert f"the same seed at 20 M: {_minus(at20)}" in said
        holds = point - 2.2 * se <= 0 <= point + 2.2 * se  # a margin past 1.96 for the bootstrap's own noise
        if gap == 0.0:
            assert holds and "no gap is left at that seed" in said
        elif gap < sd:
            assert not point - 1.7 * se <= 0 and "cannot say whether the lead lasts" in said and f"{sd:.3f}" in said
        else:
            assert "the lead is more than a later start" in said
    assert "Trained to" not in zoo.finding([r for r in runs if r.budget == 20_000_000])
