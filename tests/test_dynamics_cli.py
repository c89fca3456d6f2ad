"""`python -m macaron dynamics` on the tiny models of conftest.py, and the figures it draws."""
import csv
import json

import numpy as np
import plotly.graph_objects as go
import pytest

from macaron import sentences
from macaron.__main__ import main
from macaron.plot import dynamics as P
from macaron.studies import dynamics as D

TEXTS = ["the cat sat on the mat .", "i went to the bank to deposit my money .", "the capital of france is paris .",
         "she played the piano while he washed the dishes ."]


def test_the_shipped_sentence_sets():
    assert sentences.names() == ["all", "everyday", "technical"]
    everyday, technical = sentences.read("everyday"), sentences.read("technical")
    assert len(everyday) >= 150 and len(technical) >= 150 and sentences.read() == everyday + technical
    assert len(set(everyday + technical)) == len(everyday + technical)  # no sentence twice
    with pytest.raises(FileNotFoundError, match="shipped sets"):
        sentences.read("nonsense")


def test_cli_writes_every_measure_and_figure(models_dir, tmp_path, capsys):
    file = tmp_path / "s.txt"
    file.write_text("# a comment\n" + "\n".join(TEXTS) + "\n\n")
    out = tmp_path / "out"
    models = [str(models_dir / f"tiny-{s}") for s in ("transformer", "macaron")]
    code = main(["dynamics", "--model", models[0], "--model", models[1], "--sentences", str(file), "--out", str(out),
                 "--experiments", "3", "--extend", "2", "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert "4 sentences" in capsys.readouterr().out
    rows = list(csv.DictReader((out / "measures.csv").open()))
    assert {r["model"] for r in rows} == {"tiny-transformer", "tiny-macaron"}
    assert {r["measure"] for r in rows} == {*D.STATE_MEASURES, "step", *D.HEAD_MEASURES}
    experiments = list(csv.DictReader((out / "experiments.csv").open()))
    assert {r["kind"] for r in experiments} == {"own", "order", "refine", "extend"}
    assert all(r["n_sentences"] == "3" for r in experiments)
    roles = list(csv.DictReader((out / "leaders_by_role.csv").open()))
    assert {r["key"] for r in roles} >= {"[CLS]", "[SEP]", "word"}
    summary = json.loads((out / "dynamics.json").read_text())
    assert summary["n_sentences"] == 4 and set(summary["models"]) == {"tiny-transformer", "tiny-macaron"}
    assert summary["models"]["tiny-macaron"]["extended"]["times"][-1] == 4.0  # 2 layers + 2 repeats
    html = (out / "dynamics.html").read_text()
    assert html.count("plotly.js v") <= 2 and "Rank collapse" in html and "Sinkformers" in html
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert "clusters.png" in pngs and "experiments.png" in pngs and "extended_clusters.png" in pngs
    assert all((out / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)


def test_cli_reports_a_missing_sentence_file(models_dir, tmp_path, capsys):
    code = main(["dynamics", "--model", str(models_dir / "tiny-macaron"), "--sentences", str(tmp_path / "none.txt"),
                 "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 2 and "no such sentence file" in capsys.readouterr().err


def test_cli_on_cuda_needs_a_gpu(models_dir, tmp_path, capsys):
    import torch
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    code = main(["dynamics", "--model", str(models_dir / "tiny-macaron"), "--device", "cuda", "--out", str(tmp_path)])
    assert code == 2 and "no CUDA GPU" in capsys.readouterr().err


@pytest.fixture(scope="module")
def measured(models_dir):
    import macaron

    models = [macaron.load(models_dir / f"tiny-{s}") for s in ("transformer", "macaron")]
    sets = [D.measure_set(m, TEXTS) for m in models]
    extended = [D.measure_set(m, TEXTS, program=D.extended(m, 2)) for m in models]
    results = [D.run_experiments(m, TEXTS[:2], D.standard_experiments(m, (2,), (1,))) for m in models]
    return models, sets, extended, results


def test_figures_are_valid_plotly_and_draw_as_png(measured, tmp_path):
    models, sets, extended, results = measured
    figures = [P.over_depth(sets, m) for m in (*D.STATE_MEASURES, "step")]
    figures += [P.attention(sets, m) for m in D.HEAD_MEASURES]
    figures += [P.cosine_histograms(sets), P.leaders(sets), P.over_depth(extended, "clusters", trained_depth=2),
                P.experiments(results, ["A", "B"], [m.config.scheme for m in models])]
    for i, fig in enumerate(figures):
        go.Figure(fig.to_dict())  # Plotly validates every property
        P.to_png(fig, tmp_path / f"{i}.png")
        assert (tmp_path / f"{i}.png").stat().st_size > 5000


def test_curves_show_the_median_and_the_quartiles(measured):
    _, sets, extended, _ = measured
    fig = P.over_depth(sets[:1], "clusters").to_dict()
    band, line = fig["data"]
    spread = sets[0].state["clusters"]
    assert np.allclose(line["y"], spread.median) and np.allclose(band["y"], list(spread.q75) + list(spread.q25[::-1]))
    shaded = P.over_depth(extended, "energy", trained_depth=2).to_dict()["layout"]["shapes"][0]
    assert (shaded["x0"], shaded["x1"]) == (2, 4)


def test_experiment_rows_keep_each_variant_under_its_base(measured):
    _, _, _, results = measured
    rows = P.experiments(results, ["A", "B"], ["transformer", "macaron"]).to_dict()["layout"]["yaxis"]["categoryarray"]
    assert "as trained" not in rows and len(rows) == len(set(rows))
    for name in rows:
        if " · layers" in name:
            assert rows[rows.index(name) - 1] == name.split(" · layers")[0]
