"""AppTest of the Dynamics page on the tiny models of conftest.py."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
MAIN = str(ROOT / "app" / "main.py")
TIMEOUT = 180


@pytest.fixture(autouse=True)
def _models(app_env):
    yield


def opened(query: dict) -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=TIMEOUT)
    at.query_params.update(query)
    at.switch_page("views/dynamics.py")
    at.run(timeout=TIMEOUT)
    assert not at.exception, [e.message for e in at.exception]
    return at


def captions(at: AppTest) -> str:
    return " ".join(str(c.value) for c in at.caption)


def chart_keys(at: AppTest) -> set[str]:
    return {c.key for c in at.get("plotly_chart")}


MEASURED = {f"d_{k}" for k in ("clusters", "rank_one", "cosines", "energy", "step", "entropy", "ds_gap", "leaders",
                               "first_token", "attention_rank")}


def test_two_models_on_a_sentence_set_then_on_one_sentence():
    at = opened({"set": "everyday"})
    assert "Dynamics" in at.title[0].value
    assert [s.value for s in at.selectbox if s.label.startswith("Model")] == ["tiny-transformer", "tiny-macaron"]
    assert chart_keys(at) == MEASURED
    text = captions(at)
    assert "160 sentences" in text and "Sinkformers" in text and "Dong, Cordonnier & Loukas" in text
    assert "Run the ODE experiments" in " ".join(i.value for i in at.info)
    at.radio(key="d_view").set_value("one").run(timeout=TIMEOUT)
    assert not at.exception and "one sentence" in captions(at)
    assert at.query_params["view"] == "one"


def test_experiments_and_the_runs_past_the_trained_depth():
    at = opened({"view": "one", "s": "the cat sat on the mat .", "exp": "1"})
    assert at.toggle(key="d_exp").value
    assert chart_keys(at) == MEASURED | {"d_experiments", "d_extended", "d_ext_energy"}
    assert "masked" in captions(at) and "Past the trained depth" in " ".join(m.value for m in at.markdown)


def test_an_empty_sentence_is_explained_not_raised():
    at = opened({"view": "one", "s": "   "})
    assert at.warning and not at.get("plotly_chart")


def test_one_stage_control_moves_both_models(app_env, tmp_path, monkeypatch):
    """Two models with stages of training: one control sets both to the same stage; the charts name the
    stage and measure other weights; a model without stages stays as it is beside one that has them."""
    import json
    import shutil

    from conftest import add_stages

    a = add_stages(shutil.copytree(app_env / "tiny-transformer", tmp_path / "a"))
    b = add_stages(shutil.copytree(app_env / "tiny-macaron", tmp_path / "b"))
    monkeypatch.setenv("MACARON_MODELS", f"{a},{b},{app_env / 'tiny-macaron'}")
    query = {"a": "a", "b": "b", "view": "one", "s": "the cat sat on the mat ."}
    at = opened(query)
    clusters = {}
    for stage in ("final", "plateau"):
        at.select_slider(key="d_stage").set_value(stage)
        at.run(timeout=TIMEOUT)
        fig = json.loads(next(c for c in at.get("plotly_chart") if c.key == "d_clusters").proto.spec)
        names = [d.get("name", "") for d in fig["data"]]
        assert any(f"A: a · {stage}" in n for n in names) and any(f"B: b · {stage}" in n for n in names), names
        clusters[stage] = [d["y"] for d in fig["data"]]
        assert f"a: {stage} ·" in captions(at) and f"b: {stage} ·" in captions(at)
    assert clusters["final"] != clusters["plateau"] and at.query_params["at"] in ("plateau", ["plateau"])
    at = opened({**query, "b": "tiny-macaron", "at": "rise"})
    assert at.select_slider(key="d_stage").value == "rise"
    assert "a: rise ·" in captions(at) and "tiny-macaron:" not in captions(at)
