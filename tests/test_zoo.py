"""The race's command (`python -m macaron zoo`): every figure it prints is recomputed here from the stored fixture's
numbers with independent code (Student's t from its table; the bootstrap against the delta method's normal
interval)."""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from macaron.__main__ import main
from macaron.schemes import get_scheme

T975 = {1: 12.7062, 2: 4.3027, 3: 3.1824}  # Student's t, 97.5 % quantile, by degrees of freedom (a printed table)
SCHEME_OF = {"transformer-mini": "transformer", "macaron-mini": "macaron", "transformer-halves-mini":
             "transformer-halves", "parallel-mini": "unsplit"}


def _minus(x):
    return f"{x:+.3f}".replace("-", "−")


def write_run(root, seed, name, seq_loss, targets, effects, parameters=5_000_000):
    """A race run as pretrain writes it: training.json (final figures with per-sequence losses) and metrics.jsonl."""
    folder = root / f"seed-{seed}" / name
    folder.mkdir(parents=True)
    loss = float(np.sum(seq_loss) / np.sum(targets))
    final = {"loss": loss, "accuracy": 0.4 + seed / 100, "context_effect": effects[-1],
             "seq_loss": [float(x) for x in seq_loss], "seq_targets": [int(x) for x in targets]}
    facts = {"config": {"scheme": SCHEME_OF[name], "name": name, "shared": False, "tied_halves": False,
                         "n_layers": 6, "d_model": 64, "norm": "post"},
             "seed": seed, "tokens": 20_000_000 + seed, "parameters": parameters, "final": final}
    (folder / "training.json").write_text(json.dumps(facts))
    rows = [{"type": "eval", "step": 250 * i, "tokens": 500_000 * i, "loss": 7 - i / 4, "accuracy": 0.1,
             "context_effect": e} for i, e in enumerate(effects)]
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
    keys = {"scheme", "seed", "tokens", "parameters", "loss", "accuracy", "context_effect", "plateau_step", "shared",
            "tied_halves"}
    for (scheme, seed), r in runs.items():
        assert set(r) == keys
        assert r["loss"] == pytest.approx(losses[scheme, seed][0]) and r["tokens"] == 20_000_000 + seed
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
        assert row[3] == f"{losses[scheme, int(row[2])][0]:.4f}"
    differences = tables[1].splitlines()[2:]
    assert differences[0].startswith("| Lie–Trotter − Strang–Marchuk | 3 | +")
    said = tables[2].splitlines()  # a verdict a difference, in the differences' order, as strong as its interval
    assert len(said) == len(differences) and all(s.startswith("- ") for s in said)
    assert said[0].startswith("- Lie–Trotter − Strang–Marchuk: +")
    assert said[0].endswith("Strang–Marchuk is the better here.")
    assert said[1].startswith("- Lie–Trotter, G halved − Strang–Marchuk: no difference found over seeds")
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

    from macaron import plot, zoo
    from macaron.plot import style
    from test_plot import decoded

    runs = zoo.runs(race[0])
    drawn = plot.race_curves(runs)
    curves = go.Figure(drawn.to_dict())  # raises on an invalid property
    lines = {d["name"]: d for d in drawn.to_plotly_json()["data"] if d.get("mode") == "lines"}
    assert set(lines) == {"Lie–Trotter, 3 seeds", "Strang–Marchuk, 3 seeds", "Lie–Trotter, G halved, 3 seeds",
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
        "Lie–Trotter − Strang–Marchuk", "Lie–Trotter, G halved − Strang–Marchuk", "Lie–Trotter − Lie–Trotter, G halved",
        "unsplit Euler − Strang–Marchuk"] and [len(d.x) for d in dots] == [3, 3, 3, 1]
    diamonds = [d for d in fig.data if d.marker.symbol == "diamond"]  # a mean only where there are seeds to average
    assert [d.y[0] for d in diamonds] == [d.y[0] for d in dots[:3]]


def test_the_lessons_sentence_says_no_more_than_the_control_interval_over_seeds(race):
    """finding(): "no difference" exactly when the t-interval of control − Strang (recomputed here) holds 0, which
    way only when it does not, no answer from one seed, none from figures that are not finite, and its figures with
    the minus sign."""
    from macaron import zoo

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
        assert "-" not in said.replace("sub-layers", "") and ("no difference found" in said) == (lo <= 0 <= hi)
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
        if not lo <= 0 <= hi:
            assert all(_minus(x) in said for x in (mean, lo, hi))
    assert "not yet an answer" in zoo.finding([r for r in runs if r.seed == 0])
    assert "no seed with both" in zoo.finding([r for r in runs if r.scheme != "lie-trotter-halves"])
    assert "no answer, its figures are not finite" in zoo.finding(moved(float("nan")))
    assert "no answer" in zoo.verdict(zoo.difference(moved(float("nan")), "lie-trotter-halves", "strang"))
    teacher = zoo.findings(runs)
    assert "6 × 64, post-LN" in teacher and "20 M tokens a run" in teacher
    for d in zoo.differences(runs)[:3]:  # the three questions, each with the interval it has
        seeds = ", ".join(_minus(p["difference"]) for p in d["per_seed"])
        assert f"{_minus(d['mean'])} nats (seeds {seeds}; t-interval [{_minus(d['t95'][0])}, {_minus(d['t95'][1])}])" \
            in teacher
