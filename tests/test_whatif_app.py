"""What if… in the app (issue 75, item 4): a panel on Particles, Compare and Translate chooses an intervention; the
figure plays the altered run over the run as trained (its ghosts) on one clock, a chart beside it each particle's
distance from its own path, the answer before → after; in the address bar; a bad choice is a message, never a
traceback. In AppTest and, for what is drawn while it plays, in Debian's Chromium.

The models are the suite's tiny random ones (conftest: two encoders, two translators). What the figure and the page
show is recomputed here from the models' own traces by plain numpy and torch, not by the figure's code.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import urllib.parse
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

import macaron
from conftest import make_tiny_models, make_tiny_translation
from macaron import interventions as iv
from macaron import plot
from macaron.plot.whatif import Run
from macaron.studies import analysis
from macaron.translation.model import EXAMPLES
from served import PATIENCE
from test_plot import decoded, frame_traces, validated

ROOT = Path(__file__).resolve().parent.parent
MAIN = str(ROOT / "app" / "main.py")
TIMEOUT = 300
SENTENCE = "the capital of france is [MASK] ."
SOURCE = EXAMPLES["de"][0]  # the Translate page's first preset: every word in the tiny translators' dictionary


@pytest.fixture(scope="module")
def folder(tmp_path_factory, tokenizer) -> Path:
    """The tiny encoders and the tiny translators in one folder of models."""
    out = tmp_path_factory.mktemp("whatif-models")
    make_tiny_translation(out)
    return make_tiny_models(out, tokenizer)


@pytest.fixture(autouse=True)
def _served_models(folder, monkeypatch):
    monkeypatch.setenv("MACARON_MODELS_DIR", str(folder))
    monkeypatch.delenv("MACARON_MODELS", raising=False)


def opened(query: dict, page: str | None = None) -> AppTest:
    """The app opened at a link, on `page` (as its navigation moves there); no exception raised."""
    at = AppTest.from_file(MAIN, default_timeout=TIMEOUT)
    at.query_params.update(query)
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def rerun(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def figure(at: AppTest) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def named(fig: dict, name: str) -> list[int]:
    return [i for i, t in enumerate(fig["data"]) if t.get("name") == name]


def query(at: AppTest) -> dict:
    return {k: at.query_params[k][0] if isinstance(at.query_params[k], list) else at.query_params[k]
            for k in at.query_params}


def note(fig: dict) -> str:
    """What the figure says was done, under its title, as plain text, its lines joined."""
    text = next(a["text"] for a in fig["layout"]["annotations"] if a["text"].startswith("<b>What if:</b>"))
    return re.sub(r"<[^>]+>", "", text.replace("<br>", " "))


def said(elements) -> str:
    """What the page says, its Markdown escapes taken off (a word may hold '#', '*' or brackets)."""
    return " ".join(str(e.value) for e in elements).replace("\\", "")


def top_words(model, traj, k: int = 3) -> str:
    """The k likeliest words at the run's [MASK], by the model's head on its final states, as the panel says them."""
    with torch.no_grad():
        p = torch.softmax(model.head(torch.as_tensor(traj.final))[traj.guess_at], -1)
    top = p.topk(k)
    return ", ".join(f"{model.tokenizer.id_to_token(int(i))} {float(q):.0%}" for q, i in zip(top.values, top.indices))


# ---- the figure, held against the two traces -----------------------------------------------------------------------
def test_the_figure_plays_the_altered_run_over_its_ghosts_on_one_clock(folder):
    """Frame by frame: the particles are the altered run's states, the hollow ghosts the run as trained at the same
    sub-step, each ghost joined to its own particle and ending its unaltered path; the chart's lines are each
    particle's ‖altered − as trained‖ / ‖as trained‖, its cursor at the frame's layer time."""
    model = macaron.load(folder / "tiny-macaron", device="cpu")
    plain = model.trace(SENTENCE)
    altered = model.trace(SENTENCE, interventions=[iv.Off("diffusion", layers=[0])])
    pp, pa = analysis.project_together(plain, altered, k=2, normalised=False, hide_special=True)
    fig = plot.whatif([Run(plain, altered, pp, pa, iv.effect(model, plain, altered))])
    validated(fig)
    spec = fig.to_dict()
    keep = [i for i, t in enumerate(plain.tokens) if t not in ("[CLS]", "[SEP]")]

    def projected(states):  # one PCA of both runs: the same axes for particle and ghost
        return (states[:, keep].astype(np.float64) - pp.mean) @ pp.components.T

    ours, theirs = projected(altered.states), projected(plain.states)
    distance = np.array([[np.linalg.norm(altered.states[s, i].astype(np.float64) - plain.states[s, i])
                          / np.linalg.norm(plain.states[s, i].astype(np.float64)) for i in keep]
                         for s in range(len(plain.states))])
    assert distance[0].max() == 0 and distance[-1].max() > 1e-3  # the change moves particles, and only after t = 0
    assert len(spec["frames"]) == len(altered.states)
    for f in range(len(altered.states)):
        traces = frame_traces(fig, f)
        by_name = {t["name"]: t for t in traces if t.get("name") in ("particles", "unaltered", "strayed", "now",
                                                                        "unaltered path")}
        dots = np.stack([decoded(by_name["particles"]["x"]), decoded(by_name["particles"]["y"])], -1)
        ghosts = np.stack([decoded(by_name["unaltered"]["x"]), decoded(by_name["unaltered"]["y"])], -1)
        np.testing.assert_allclose(dots, ours[f], atol=1e-4)
        np.testing.assert_allclose(ghosts, theirs[f], atol=1e-4)
        joins = np.stack([decoded(by_name["strayed"]["x"]), decoded(by_name["strayed"]["y"])], -1).reshape(-1, 3, 2)
        np.testing.assert_allclose(joins[:, 0], ours[f], atol=1e-4)
        np.testing.assert_allclose(joins[:, 1], theirs[f], atol=1e-4)
        paths = np.stack([decoded(by_name["unaltered path"]["x"]), decoded(by_name["unaltered path"]["y"])], -1)
        np.testing.assert_allclose(paths.reshape(len(keep), f + 2, 2)[:, :-1], theirs[:f + 1].transpose(1, 0, 2),
                                   atol=1e-4)
        cursor = [t for t in traces if t.get("name") == "now"]
        assert decoded(cursor[0]["x"]).tolist() == [altered.times[f]] * 2
        np.testing.assert_allclose(decoded(cursor[1]["y"]), distance[f], rtol=1e-4, atol=1e-7)
        if f:
            assert altered.steps[f - 1].label.split(" · ")[1] in spec["frames"][f]["layout"]["title"]["text"]
    lines = {spec["data"][i]["name"]: decoded(spec["data"][i]["y"]) for i in range(len(spec["data"]))
             if spec["data"][i].get("xaxis") == "x2" and spec["data"][i].get("mode") == "lines"
             and spec["data"][i]["name"] != "now"}
    for j, i in enumerate(keep):
        np.testing.assert_allclose(lines[plain.tokens[i]], distance[:, j], rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(lines["mean"], distance.mean(1), rtol=1e-4, atol=1e-7)
    assert "What if: diffusion off in layer 1" in note(spec)


# ---- Particles --------------------------------------------------------------------------------------------------
def test_choosing_an_intervention_on_particles_changes_the_figure_the_answer_and_the_url(folder):
    at = opened({"s": SENTENCE})
    assert not named(figure(at), "unaltered") and "if" not in query(at)
    at.selectbox(key="p_if").set_value("off")
    rerun(at)
    fig = figure(at)
    assert named(fig, "unaltered") and not any(t["type"] == "heatmap" for t in fig["data"])  # the ghosts' figure
    assert {"if": "off", "if_kind": "diffusion"}.items() <= query(at).items() and "if_layers" not in query(at)
    assert "What if: diffusion off in every layer" in note(fig)
    model = macaron.load(folder / "tiny-transformer", device="cpu")
    plain, off = model.trace(SENTENCE), model.trace(SENTENCE, interventions=[iv.Off("diffusion")])
    page = said(at.markdown)
    assert f"before: {top_words(model, plain)} → after: {top_words(model, off)}" in page.replace("*", "")
    at.multiselect(key="p_if_layers").set_value([1])
    rerun(at)
    assert query(at)["if_layers"] == "1" and "What if: diffusion off in layer 2" in note(figure(at))
    once = model.trace(SENTENCE, interventions=[iv.Off("diffusion", layers=[1])])
    assert f"after: {top_words(model, once)}" in said(at.markdown).replace("*", "")
    at.selectbox(key="p_if").set_value("scale")
    rerun(at)
    at.number_input(key="p_if_factor").set_value(2.5)
    rerun(at)
    assert {"if": "scale", "if_factor": "2.5", "if_layers": "1"}.items() <= query(at).items()
    assert "What if: diffusion ×2.5 in layer 2" in note(figure(at))
    twice = model.trace(SENTENCE, interventions=[iv.Scale("diffusion", 2.5, layers=[1])])
    assert f"after: {top_words(model, twice)}" in said(at.markdown).replace("*", "")
    at.selectbox(key="p_if").set_value("")
    rerun(at)
    assert not named(figure(at), "unaltered") and "if" not in query(at)
    assert any(t["type"] == "heatmap" for t in figure(at)["data"])  # who pulls whom again


def test_a_link_opens_the_panel_and_the_altered_run(folder):
    """A shared link reopens the choice: a particle held from the end of layer 1, drawn still from there on."""
    at = opened({"s": SENTENCE, "if": "hold", "if_token": "3", "if_t": "1", "m": "tiny-macaron"})
    assert at.selectbox(key="p_if").value == "hold" and at.selectbox(key="p_if_token").value == 3
    assert {"if": "hold", "if_token": "3", "if_t": "1"}.items() <= query(at).items()
    fig = validated_spec(at)
    model = macaron.load(folder / "tiny-macaron", device="cpu")
    traj = model.trace(SENTENCE)
    at_1 = traj.layer_boundaries()[1]
    row = sum(t not in ("[CLS]", "[SEP]") for t in traj.tokens[:3])  # its row among the particles drawn
    seen = []
    for f in range(len(traj.states)):
        particles = next(t for t in frame_traces(fig, f) if t.get("name") == "particles")
        seen.append((decoded(particles["x"])[row], decoded(particles["y"])[row]))
    assert len(set(seen[at_1:])) == 1 and len(set(seen[:at_1 + 1])) > 1  # it moves, then stays
    assert f"token 3 ({traj.tokens[3]}) held still from t = 1 on" in said(at.markdown)


def validated_spec(at: AppTest):
    import plotly.graph_objects as go

    return go.Figure(figure(at))


@pytest.mark.parametrize("link, says", [
    ({"if": "head", "if_head": "9"}, "head 9 does not exist: layer 0's attention has heads 0–3"),
    ({"if": "off", "if_layers": "0,5"}, "layer 5 does not exist: this model has layers 0–1"),
    ({"if": "scale", "if_factor": "inf"}, "factor=inf: give a finite number"),
    ({"if": "off", "if_kind": "cross"}, "acts on a decoder's cross-attention, and this model has none"),
    ({"if": "cut", "if_token": "40"}, "token 40 does not exist: the sentence has tokens 0–8"),
])
def test_a_bad_choice_in_a_link_is_a_message_and_the_panel_offers_what_exists(link, says):
    at = opened({"s": SENTENCE, **link})
    assert says in said(at.warning), said(at.warning)
    assert at.selectbox(key="p_if").value == ""  # nothing chosen: the values on offer are this model's
    assert "if" not in query(at) and not named(figure(at), "unaltered")  # the run as trained is drawn


def test_a_patch_from_a_sentence_of_another_length_says_so_and_keeps_the_panel(folder):
    at = opened({"s": SENTENCE, "if": "patch", "if_token": "2", "if_t": "1",
                 "if_other": "the capital of germany is berlin and rome is the capital of italy ."})
    assert "patch from a sentence of the same length" in said(at.warning)
    assert at.selectbox(key="p_if").value == "patch"  # the other sentence can be mended where it is typed
    at.text_input(key="p_if_other").set_value("the capital of italy is [MASK] .")
    rerun(at)
    assert len(at.warning) == 0 and named(figure(at), "unaltered")
    assert query(at)["if_other"] == "the capital of italy is [MASK] ."
    model = macaron.load(folder / "tiny-transformer", device="cpu")
    source = model.trace("the capital of italy is [MASK] .")
    patched = model.trace(SENTENCE, interventions=[iv.Patch(source, token=2, state=source.layer_boundaries()[1])])
    assert f"after: {top_words(model, patched)}" in said(at.markdown).replace("*", "")


# ---- Compare and Translate --------------------------------------------------------------------------------------
def test_compare_plays_both_altered_runs_over_their_ghosts():
    """One model, two sentences: the same particle held in both, each panel over its own ghosts on one clock."""
    at = opened({"mode": "sentences", "s1": "the cat sat on the mat .", "s2": "the dog sat on the rug .",
                 "if": "hold", "if_token": "3", "if_t": "1"}, "views/compare.py")
    fig = figure(at)
    assert len(named(fig, "unaltered")) == 2 and "xaxis2" in fig["layout"] and "xaxis3" in fig["layout"]
    assert {"if": "hold", "if_token": "3", "if_t": "1"}.items() <= query(at).items()
    panels = [a["text"] for a in fig["layout"]["annotations"][2:]]  # first what was done, the chart's heading
    assert panels[0].startswith("<b>sentence A</b>") and panels[1].startswith("<b>sentence B</b>")
    spec = validated_spec(at)
    times = [float(f["name"]) for f in spec.to_dict()["frames"]]
    for i in named(fig, "particles"):  # each held particle (its row 2: [CLS] is not drawn) stays where it was at t = 1
        drawn = [(decoded(frame_traces(spec, k)[i]["x"])[2], decoded(frame_traces(spec, k)[i]["y"])[2])
                 for k in range(len(times))]
        assert len({xy for t, xy in zip(times, drawn) if t >= 1}) == 1 and len(set(drawn)) > 1
    at.selectbox(key="c_if").set_value("")
    rerun(at)
    assert not named(figure(at), "unaltered") and "if" not in query(at)


def test_translate_plays_the_translation_without_its_external_field(folder):
    at = opened({"beam": "1", "src": SOURCE, "m": "tiny-macaron-de-en", "if": "off", "if_kind": "cross"},
                "views/translate.py")
    fig = figure(at)
    assert named(fig, "unaltered") and "What if: external field off in every layer" in note(fig)
    translator = macaron.load(folder / "tiny-macaron-de-en", device="cpu")
    before = translator.translate(SOURCE, beam=1)
    after = translator.translate(SOURCE, beam=1, interventions=[iv.Off("cross")])
    page = said(at.markdown)
    assert f"before: “{before.text}”" in page and f"after: “{after.text}”" in page.replace("*", "")
    common = 0  # the translation's particles both runs share: the decoder's inputs alike from the start
    while common < min(len(before.target.token_ids), len(after.target.token_ids)) and \
            before.target.token_ids[common] == after.target.token_ids[common]:
        common += 1
    assert f"with a ghost: {common} of {len(after.target.tokens)}" in said(at.caption)
    assert {"if": "off", "if_kind": "cross"}.items() <= query(at).items()


def test_translate_names_a_system_without_the_sub_step():
    at = opened({"beam": "1", "src": SOURCE, "if": "off", "if_kind": "cross", "if_system": "source"},
                "views/translate.py")
    assert "the source system (the encoder) has no cross-attention" in said(at.warning)
    assert at.selectbox(key="t_if").value == "off" and not named(figure(at), "unaltered")


# ---- what Chromium draws ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(folder, tmp_path_factory):
    from served import server as app_server

    env = {k: v for k, v in os.environ.items() if k != "MACARON_MODELS"}
    env["MACARON_MODELS_DIR"] = str(folder)
    with app_server(env, tmp_path_factory.mktemp("server") / "streamlit.log") as (url, _):
        yield url


# What the first figure draws: its title, the What-if note, and per trace named so the drawn points' positions
DRAWN = """() => {
    const g = document.querySelector('.js-plotly-plot');
    const points = (name) => g._fullData.filter(t => t.name === name).map(t => Array.from(
        g.querySelectorAll('.trace' + t.uid + ' path.point')).map(p => p.getAttribute('transform')));
    return {title: g.querySelector('.gtitle')?.textContent || '',
            note: Array.from(g.querySelectorAll('.annotation-text')).map(a => a.textContent).join(' '),
            ghosts: points('unaltered'), particles: points('particles')};
}"""


def shown(page, address: str) -> None:
    """Open `address` and wait until the altered run's figure is drawn (what it says was done, under its title) and
    Streamlit has finished running the page."""
    from test_browser import QUIET

    page.goto(address)
    page.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot .annotation-text'))"
                           ".some(a => a.textContent.startsWith('What if:'))", timeout=180_000)
    page.wait_for_function(QUIET, timeout=180_000)


def play_to_the_end(page, last: str) -> list[dict]:
    """▶ Play, and what is drawn as each new title comes, until the title holds `last`."""
    seen = [page.evaluate(DRAWN)]
    page.locator(".js-plotly-plot .updatemenu-button").first.click()
    while last not in seen[-1]["title"]:
        page.wait_for_function("t => (document.querySelector('.js-plotly-plot .gtitle')?.textContent || '') !== t",
                               arg=seen[-1]["title"], timeout=PATIENCE)
        seen.append(page.evaluate(DRAWN))
    return seen


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists() and not shutil.which("chromium"), reason="no Chromium")
@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
@pytest.mark.parametrize("path, what, last", [
    (f"/?s={urllib.parse.quote(SENTENCE)}&if=off&if_layers=0", "diffusion", "sub-step 4 of 4"),
    (f"/translate?beam=1&src={urllib.parse.quote(SOURCE)}&m=tiny-macaron-de-en&if=off&if_kind=cross",
     "external field", "sub-step 14 of 14"),
])
def test_the_altered_run_plays_beside_its_ghost(server, browser, size, path, what, last):
    """Each particle is drawn with its hollow ghost (a translation's words past the first one the altered run wrote
    differently have none); as the run plays, the title names each sub-step and the drawn particles leave their
    ghosts. Screenshots while it plays, for a person to look at."""
    from test_browser import SHOTS, no_errors

    pg = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        shown(pg, server + path)
        no_errors(pg)
        seen = play_to_the_end(pg, last)
        assert len({s["title"] for s in seen}) >= 4
        for s in seen:  # one plane: one trace of ghosts, one of particles
            assert what in s["note"] and 0 < len(s["ghosts"][0]) <= len(s["particles"][0])
        together = [s["ghosts"][0] == s["particles"][0][:len(s["ghosts"][0])] for s in seen]
        assert together[0] and not all(together)  # at t = 0 on their ghosts, then apart
        SHOTS.mkdir(exist_ok=True)
        pg.screenshot(path=str(SHOTS / f"whatif-{path.split('?')[0].strip('/') or 'particles'}-{size[0]}x{size[1]}"
                                       ".png"))
        no_errors(pg)
    finally:
        pg.close()


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists() and not shutil.which("chromium"), reason="no Chromium")
@pytest.mark.parametrize("path, prefix", [
    (f"/?s={urllib.parse.quote(SENTENCE)}&if=scale&if_factor=0.5&if_layers=0,1", "p"),
    (f"/translate?beam=1&src={urllib.parse.quote(SOURCE)}&if=patch&if_token=2&if_t=1&if_other={urllib.parse.quote(SOURCE)}",
     "t"),
    ("/compare?if=head&if_head=1", "c")])
def test_the_panel_and_its_figure_meet_wcag21(server, browser, path, prefix):
    """axe-core's WCAG 2.1 A and AA rules (tests/test_a11y.py's) on the first screen with the altered run drawn, then
    with the panel in view, its widgets drawn."""
    pytest.importorskip("axe_playwright_python.base")
    from test_a11y import IN_VIEW, axe_violations, report

    pg = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        shown(pg, server + path)
        found = axe_violations(pg)
        panel = pg.locator(f"[class*='st-key-{prefix}_whatif']")
        panel.scroll_into_view_if_needed()
        pg.wait_for_function("e => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; }",
                             arg=panel.element_handle(), timeout=10_000)
        found += axe_violations(pg, IN_VIEW)
        assert not found, report(found)
    finally:
        pg.close()
