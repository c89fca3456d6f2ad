"""Splitting lab: the figure builders (macaron.plot.lab) and the Streamlit page (app/views/lab.py).

The page tests drive app/main.py with AppTest on the tiny random models of conftest.py and walk
every widget: systems × sub-flow solvers, every slider at both ends, the scheme list, the
magnifier, the untied-halves and random-systems studies, the trained-network section (sentence,
presets, model pickers) and no models.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

from macaron.lab import (
    ParticlePaths,
    commuting_system,
    convergence_study,
    distance,
    initial_positions,
    linear_system,
    particle_paths,
)
from macaron.plot import lab as lf
from macaron.plot import style
from macaron.schemes import FULL, SCHEMES

ROOT = Path(__file__).resolve().parent.parent
MAIN = str(ROOT / "app" / "main.py")
OKABE_ITO = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"}


def validated(fig: go.Figure) -> go.Figure:
    """Rebuild with Plotly's validation on: raises on any invalid property (the builders skip it)."""
    return go.Figure(fig.to_dict())


# ---- figures ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def linear_paths():
    system = linear_system(n=12, beta=1.0)
    x0 = initial_positions(12, 2)
    paths = particle_paths(system, x0, horizon=1.0, n_steps=5, solver="euler")
    dense_t = np.linspace(0, 1, 21)
    dense = np.concatenate([x0[None], system.flows(FULL, dense_t[1:], x0)])
    return paths, dense_t, dense


@pytest.fixture(scope="module")
def linear_study():
    return convergence_study(linear_system(n=16), initial_positions(16, 2))


def test_one_colour_marker_and_dash_per_scheme():
    styles = [style.scheme_style(s) for s in SCHEMES]
    assert set(style.SCHEME_STYLE) == set(SCHEMES)
    assert len({s.color for s in styles}) == len(styles)
    assert len({s.symbol for s in styles}) == len(styles)
    assert {s.color for s in styles} | {style.EXACT_COLOR} <= OKABE_ITO | {"#882255"}  # colour-blind safe (+ Tol's
    # muted wine for the one scheme past Okabe–Ito's eight)
    assert SCHEMES["lie-trotter"].layer == "Transformer layer" and SCHEMES["strang"].layer == "Macaron layer"
    assert style.scheme_style("nonsense").color  # unknown schemes still draw
    assert style.scheme_style("macaron") == style.scheme_style("strang")  # a model's alias, the same look


def test_particles_animation_frames_readout_and_magnifier(linear_paths):
    paths, dense_t, dense = linear_paths
    fig = lf.toy_particles(paths, dense_t, dense, magnify=5)
    validated(fig)
    frames = fig.raw_frames  # as built: plain dicts holding the arrays
    K = len(paths.times)
    assert len(frames) == K == 6
    # the animation starts on the last step, where the errors have piled up
    assert fig.layout.sliders[0].active == K - 1
    names = [s for s in SCHEMES if s in paths.schemes]
    for f, frame in enumerate(frames):
        assert len(frame["data"]) == len(frame["traces"])
        title = frame["layout"]["title"]["text"]
        assert f"step {f} of {K - 1}" in title
        for s in names:
            err = distance(paths.schemes[s][f], paths.exact[f])
            assert f"{SCHEMES[s].short}</b> {err:.3g}" in title
    # scheme markers sit at exact + 5·(scheme − exact)
    markers = {d["name"].split(" (")[0]: d for d in frames[-1]["data"] if d["mode"] == "markers" and d["xaxis"] == "x"}
    lt = markers[SCHEMES["lie-trotter"].short]
    want = paths.exact[-1] + 5 * (paths.schemes["lie-trotter"][-1] - paths.exact[-1])
    assert np.allclose(lt["x"], want[:, 0], atol=1e-4) and np.allclose(lt["y"], want[:, 1], atol=1e-4)
    assert any("×5" in a.text for a in fig.layout.annotations)
    # the error chart holds the true errors, one line per scheme
    lines = [d for d in fig.data if d.xaxis == "x2" and d.mode == "lines+markers"]
    assert len(lines) == len(names)
    for d in lines:
        s = next(k for k in names if SCHEMES[k].short == d.name)
        assert np.allclose(d.y, distance(paths.schemes[s], paths.exact), atol=1e-5)
    # one legend entry per scheme plus the exact flow
    legend = [d.name for d in fig.data if d.showlegend is not False]
    assert len(legend) == len(names) + 1 and "exact flow" in legend


def test_particles_animation_edge_cases():
    # one step, two particles, no scheme selected, an elongated cloud
    exact = np.zeros((2, 2, 2))
    exact[:, 1] = [[0.0, 10.0], [0.1, 12.0]]
    bare = ParticlePaths(np.array([0.0, 0.5]), exact, {})
    fig = validated(lf.toy_particles(bare))
    assert len(fig.frames) == 2
    assert fig.layout.yaxis.scaleanchor is None  # 1 : 12 cloud: axes freed, and the plot says so
    assert any("not to the same scale" in a.text for a in fig.layout.annotations)
    round_cloud = ParticlePaths(np.array([0.0, 0.5]), np.random.default_rng(0).normal(size=(2, 5, 2)),
                                    {"strang": np.random.default_rng(1).normal(size=(2, 5, 2))})
    fig = validated(lf.toy_particles(round_cloud, start=0))
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.sliders[0].active == 0


def test_six_schemes_wrap_the_readout(linear_paths):
    paths, dense_t, dense = linear_paths
    assert len(paths.schemes) == 6
    fig = lf.toy_particles(paths, dense_t, dense)
    assert fig.layout.title.text.count("<br>") == 2  # 3 schemes, then 3, under the time line
    assert fig.layout.margin.t > lf.ANIM_TOP


def test_convergence_figure_slopes_guides_and_axes(linear_study):
    for solver in ("exact", "euler"):
        fig = validated(lf.convergence(linear_study, solver, ["lie-trotter", "strang", "unsplit"]))
        named = [d for d in fig.data if d.showlegend]
        for d in named:
            scheme = next(s for s in SCHEMES if d.name.startswith(SCHEMES[s].short + " ("))
            local = f"{linear_study.local_slope[scheme][solver]:.2f}"
            glob = f"{linear_study.global_slope[scheme][solver]:.2f}"
            assert f"slope local {local}, global {glob}" in d.name
        # unsplit Euler exists with Euler sub-steps only
        assert len(named) == (2 if solver == "exact" else 3)
        guides = {a.text for a in fig.layout.annotations if "∝" in a.text}
        assert guides == {"<b>∝ h¹</b>", "<b>∝ h²</b>", "<b>∝ h³</b>"}
        assert fig.layout.xaxis.type == fig.layout.yaxis.type == fig.layout.xaxis2.type == "log"
        ys = np.concatenate([np.asarray(d.y, float) for d in fig.data])
        assert np.all(np.isfinite(ys)) and np.all(ys > 0)
        # guides run under every curve of their panel
        for xa in ("x", "x2"):
            data = [np.asarray(d.y) for d in fig.data if d.xaxis == xa and d.mode == "lines+markers"]
            guide = [np.asarray(d.y) for d in fig.data if d.xaxis == xa and d.mode == "lines"]
            assert guide and all((g <= c + 1e-300).all() for g in guide for c in data)
    # measured slopes match the theory for exact sub-flows (the figure shows what Theorem 1 says)
    assert abs(linear_study.local_slope["strang"]["exact"] - 3) < 0.25
    assert abs(linear_study.local_slope["lie-trotter"]["exact"] - 2) < 0.25


def test_round_off_errors_read_exact_not_as_a_slope():
    study = convergence_study(commuting_system(n=8), initial_positions(8, 2))
    fig = validated(lf.convergence(study, "exact"))
    assert all("slope local exact, global exact" in d.name for d in fig.data if d.showlegend)
    assert np.isfinite(fig.layout.yaxis.range).all()
    rows = lf.slope_rows(study)
    assert rows[0]["local slope"].startswith("exact")
    # β = 0: the linear F vanishes, every splitting is exact with exact sub-flows
    study0 = convergence_study(linear_system(n=8, beta=0.0), initial_positions(8, 2))
    validated(lf.convergence(study0, "exact"))
    validated(lf.convergence(study0, "euler"))


def test_slope_rows(linear_study):
    rows = lf.slope_rows(linear_study)
    assert len(rows) == 5 + 6  # exact: five splittings; Euler: those and unsplit
    assert set(rows[0]) == {"scheme", "network layer", "sub-flows", "local slope", "global slope",
                            "error at finest h"}
    strang = next(r for r in rows if r["network layer"] == "Macaron layer" and r["sub-flows"] == "exact")
    assert strang["local slope"].endswith("(h³)") and strang["global slope"].endswith("(h²)")
    assert len(lf.slope_rows(linear_study, ["strang"])) == 2


def test_layer_bars_ratio_histogram_kappa_curves_and_model_colours():
    fig = validated(lf.layer_bars([("T", np.array([0.1, 0.2, 0.3]), "#E69F00"),
                                   ("M control", np.array([0.05, 0.1]), "#009E73", "/")], "κ"))
    assert fig.layout.barmode == "group" and [len(d.y) for d in fig.data] == [3, 2]
    assert list(fig.data[0].x) == ["layer 1", "layer 2", "layer 3"] and fig.data[1].marker.pattern.shape == "/"
    assert fig.layout.yaxis.range[1] >= 0.3 and fig.layout.yaxis.range[0] == 0
    negative = lf.layer_bars([("cos", np.array([0.4, -0.1]), "#CC79A7")], "cos")  # a negative cosine is drawn
    assert negative.layout.yaxis.range[0] <= -0.1 < 0.4 <= negative.layout.yaxis.range[1]
    barely = lf.layer_bars([("cos", np.array([1.83, -0.01]), "#CC79A7")], "cos")  # lab 3c: its number under the bar
    lo, hi = barely.layout.yaxis.range  # had 0.2 % of the height below the line: the number sat on "layer 2"
    assert -lo / (hi - lo) >= 0.08
    log = validated(lf.layer_bars([("ratio", np.array([116.0, 0.3, 0.2]), "#444444")], "ratio", log=True,
                                  line=(1.0, "step = state")))
    assert log.layout.yaxis.type == "log"
    level = log.layout.shapes[0]  # the reference level: drawn under the bars and their numbers, named in the legend
    assert (level.y0, level.y1, level.layer, level.xref) == (1.0, 1.0, "below", "paper")
    assert log.data[-1].name == "step = state" and log.data[-1].line.dash == level.line.dash == "dash"
    validated(lf.layer_bars([], "gap"))
    validated(lf.layer_bars([("zero", np.zeros(2), "#444444")], "gap"))
    ratios = np.array([0.5, 0.6, 0.7, 1.2, 0.9])
    hist = validated(lf.ratio_histogram(ratios))
    assert sum(sum(d.y) for d in hist.data) == 5 and "20% of 5 systems: Strang worse" in hist.layout.annotations[0].text
    curves = validated(lf.kappa_curves(np.array([[0.1, 0.2, 0.4], [1.0, 1.0, 1.0]]), (1.0, 0.5, 0.25), "κ"))
    assert len(curves.data) == 2 and curves.layout.xaxis.type == "log"
    assert lf.model_colors(["transformer", "macaron"]) == [style.scheme_style("lie-trotter").color,
                                                           style.scheme_style("strang").color]
    assert lf.model_colors(["macaron", "macaron"]) == list(style.SLOT_COLORS)  # no borrowed scheme colour
    assert lf.model_colors(["bert", "transformer"]) == list(style.SLOT_COLORS)


def _notes(fig) -> str:
    return " ".join(a.text for a in fig.layout.annotations if "lies on" in a.text)


def test_a_line_on_another_line_is_named(linear_study):
    """With exact sub-flows the control's ½G, ½G is one G: its line lies on Lie–Trotter's (both panels of the orders,
    and the error over time), and each chart says so in words; with Euler sub-steps its errors differ: where they are
    still drawn within 1 % of the axis of Lie–Trotter's the chart says 'almost on', elsewhere nothing."""
    control, lt = SCHEMES["lie-trotter-halves"].short, SCHEMES["lie-trotter"].short
    said = re.compile(rf"<b>{control}</b>.* lies on .*<b>{lt}</b>")
    shown = ["lie-trotter", "strang", "lie-trotter-halves"]
    fig = validated(lf.convergence(linear_study, "exact", shown))
    notes = [a for a in fig.layout.annotations if "lies on" in a.text]
    assert sorted(a.xref for a in notes) == ["x domain", "x2 domain"] and all(said.search(a.text) for a in notes)
    assert "Strang" not in _notes(fig)  # Strang's line is its own
    fig = validated(lf.convergence(linear_study, "euler", shown))
    span = np.diff(fig.layout.yaxis.range)[0]  # decades on the (shared) y axis
    for xa, part in (("x", linear_study.local_error), ("x2", linear_study.global_error)):
        apart = np.max(np.abs(np.log10(part["lie-trotter-halves"]["euler"] / part["lie-trotter"]["euler"]))) / span
        note = " ".join(a.text for a in fig.layout.annotations if a.xref == f"{xa} domain")
        assert ("almost on" in note) == (apart <= 0.01) and " lies on " not in note, (xa, apart)
    system, x0 = linear_system(n=12), initial_positions(12, 2)
    for solver, noted in (("exact", True), ("euler", False)):
        paths = particle_paths(system, x0, n_steps=5, solver=solver,
                               schemes={s: SCHEMES[s].substeps for s in shown})
        errors = {s: distance(paths.schemes[s], paths.exact) for s in shown}  # what the chart beside draws
        assert (np.max(np.abs(errors["lie-trotter-halves"] - errors["lie-trotter"])) < 1e-9) == noted
        fig = validated(lf.toy_particles(paths))
        assert bool(said.search(_notes(fig))) == noted and "Strang" not in _notes(fig)
        if noted:
            assert [a.xref for a in fig.layout.annotations if "lies on" in a.text] == ["x2 domain"]


def test_the_control_has_one_name():
    """One name wherever the scheme F, ½G, ½G is shown: legends, tables and the races' words."""
    control = SCHEMES["lie-trotter-halves"]
    assert control.short == "Control" and control.title.startswith("Control:")
    assert style.scheme_name("lie-trotter-halves") == "Control (Macaron's sub-layers in Transformer order)"
    assert style.scheme_name("transformer-halves") == style.scheme_name("lie-trotter-halves")  # a model's alias
    assert not any("halved" in s.short and "G" in s.short for s in SCHEMES.values())


def test_nice_ticks():
    assert lf.nice_ticks(0.004, 0.1) == [0.005, 0.01, 0.02, 0.05, 0.1]
    assert lf.nice_ticks(1 / 45, 0.25) == [0.05, 0.1, 0.2]


def test_figures_export_to_html(linear_paths, linear_study):
    paths, dense_t, dense = linear_paths
    for fig in (lf.toy_particles(paths, dense_t, dense), lf.convergence(linear_study, "exact"),
                lf.layer_bars([("T", np.ones(2), "#E69F00")], "gap")):
        assert "<html>" in fig.to_html(include_plotlyjs=False)


# ---- the page ---------------------------------------------------------------------------------------
def _lab(timeout: float = 60):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(MAIN, default_timeout=timeout)
    at.run()
    at.switch_page("views/lab.py")
    at.run()
    return at


def _clean(at) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.fixture(autouse=True, scope="module")
def no_race(tmp_path_factory):
    """Sections 1–3 counted alone: section 4 reads an empty race (its own test reads the stored one)."""
    from macaron.studies import zoo

    stored, zoo.RACE = zoo.RACE, tmp_path_factory.mktemp("no-race")
    yield
    zoo.RACE = stored


def test_section_4_draws_the_stored_race_and_says_what_it_shows(monkeypatch):
    """The race stored in pretrained/race: its curves and its paired differences drawn, each difference's verdict
    and the runs' table shown; with none stored, the page says how to train them."""
    from macaron.studies import translation_race as bleu_race
    from macaron.studies import zoo

    monkeypatch.setattr(zoo, "RACE", zoo.PRETRAINED / "race")
    stored = zoo.runs()
    lab = _lab()
    assert not lab.exception and any(h.value.startswith("4 ·") for h in lab.header)
    specs = [json.loads(c.proto.spec) for c in lab.get("plotly_chart")[-3:]]
    assert specs[0]["layout"]["xaxis"]["title"]["text"] == "tokens seen (millions)"
    assert len([t for t in specs[0]["data"] if t.get("mode") == "lines"]) == len({(r.scheme, r.budget)
                                                                                  for r in stored})
    paths = zoo.paths(stored)  # the Transformer − control gap: each seed's path in both panels
    assert paths and len([t for t in specs[2]["data"] if t.get("mode") == "lines"]) == 2 * len(paths)
    assert "Does the split FFN's lead last?" in [h.value for h in lab.subheader]
    shown = " ".join(m.value for m in lab.markdown)
    verdicts = zoo.verdicts(zoo.differences(stored))  # each names its budget: 20 M and 60 M runs are stored
    assert verdicts and verdicts in shown and ", 60 M tokens: " in verdicts
    longer = zoo.lasting(stored).strip()  # what the 60 M pair says about the 20 M lead, under the gap chart
    assert longer.startswith("Trained to 60 M tokens") and longer in shown
    assert len(lab.dataframe[-1].value) == len(stored)
    translators = zoo.runs(task="translation")  # and the translators' race, beside the paper's claim
    assert "And as translators?" in [h.value for h in lab.subheader]
    finding = bleu_race.finding(translators)
    assert "Macaron − Transformer is" in finding and "+1.0 BLEU on IWSLT14" in finding and finding in shown
    assert bleu_race.markdown(translators) in shown


def _charts(at) -> int:
    return len(at.get("plotly_chart"))


TOY = 4       # particles, orders, untied halves, random systems
NETWORK = 5   # step ratio, κ bars, κ(s) of each of the two models, the half-FFN tie (the Macaron model)


@pytest.fixture(scope="module")
def lab(app_env):
    at = _lab()
    _clean(at)
    return at


def test_page_renders_all_three_sections(lab):
    assert lab.title[0].value.startswith("Splitting lab")
    headers = [h.value for h in lab.header]
    assert any(h.startswith("1 ·") for h in headers) and any(h.startswith("3 ·") for h in headers)
    assert _charts(lab) == TOY + NETWORK
    assert len(lab.latex) >= 10  # the equations beside each picture
    assert lab.radio(key="l_sys").value == "linear"  # the fast system by default
    assert lab.radio(key="l_sub").value == "exact"
    assert "Theorem 1" in lab.info[0].value
    assert len(lab.dataframe) == 4  # orders, untied orders, random grid, spread per kind
    subheaders = [h.value for h in lab.subheader]
    assert any("Untied halves" in h for h in subheaders) and any("half-FFNs one operator" in h for h in subheaders)


def test_every_system_and_solver(lab):
    for kind in ("attention", "commuting", "linear"):
        for solver in ("euler", "exact"):
            lab.radio(key="l_sys").set_value(kind)
            lab.radio(key="l_sub").set_value(solver).run()
            _clean(lab)
            assert _charts(lab) == TOY + NETWORK
            text = " ".join(i.value for i in lab.info)
            if kind == "commuting" and solver == "exact":
                assert "exact here" in text
            elif solver == "euler":
                assert "does **not** raise the order" in text
    assert lab.radio(key="l_sub").value == "exact"


def test_sliders_at_both_ends(lab):
    ends = {"l_beta": (0.0, 3.0), "l_n": (2, 96), "l_T": (0.5, 4.0), "l_steps": (1, 40)}
    for key, (lo, hi) in ends.items():
        for v in (lo, hi):
            lab.slider(key=key).set_value(v).run()
            _clean(lab)
            assert _charts(lab) == TOY + NETWORK
        lab.slider(key=key).set_value({"l_beta": 1.0, "l_n": 24, "l_T": 1.0, "l_steps": 8}[key]).run()
    # the extreme corner, on the slow system with Euler sub-steps
    lab.radio(key="l_sys").set_value("attention")
    lab.radio(key="l_sub").set_value("euler")
    lab.slider(key="l_beta").set_value(3.0)
    lab.slider(key="l_n").set_value(2)
    lab.slider(key="l_steps").set_value(1).run()
    _clean(lab)
    for key, v in (("l_sys", "linear"), ("l_sub", "exact")):
        lab.radio(key=key).set_value(v)
    lab.slider(key="l_beta").set_value(1.0)
    lab.slider(key="l_n").set_value(24)
    lab.slider(key="l_steps").set_value(8).run()
    _clean(lab)


def test_scheme_list_and_magnifier(lab):
    lab.multiselect(key="l_show_ms").set_value([]).run()
    _clean(lab)
    assert any("Pick at least one scheme" in i.value for i in lab.info)
    assert _charts(lab) == TOY - 1 + NETWORK  # the exact flow alone; no log-log plot without a scheme
    lab.multiselect(key="l_show_ms").set_value(["unsplit"]).run()  # exists with Euler sub-steps only
    _clean(lab)
    assert any("unsplit Euler exists only with Euler" in i.value for i in lab.info)
    lab.multiselect(key="l_show_ms").set_value(list(SCHEMES)).run()
    _clean(lab)
    assert _charts(lab) == TOY + NETWORK
    for m in (1, 20, 10):
        lab.select_slider(key="l_mag").set_value(m).run()
        _clean(lab)
    lab.multiselect(key="l_show_ms").set_value(["lie-trotter", "strang", "unsplit"]).run()
    _clean(lab)


def test_untied_and_random_studies_react_to_their_controls(lab):
    for eps in (0.05, 1.0, 0.2):
        lab.select_slider(key="l_eps").set_value(eps).run()
        _clean(lab)
    lab.select_slider(key="l_fs").set_value(3.0)
    lab.select_slider(key="l_gs").set_value(3.0).run()
    _clean(lab)
    assert _charts(lab) == TOY + NETWORK
    lab.select_slider(key="l_fs").set_value(1.0)
    lab.select_slider(key="l_gs").set_value(0.3).run()


def test_network_section_widgets(lab, monkeypatch):
    assert lab.text_input(key="l_text").value  # a default sentence
    assert lab.selectbox(key="l_a").value == "tiny-transformer"
    assert lab.selectbox(key="l_b").value == "tiny-macaron"
    lab.selectbox(key="l_preset").set_value("bank (river)").run()
    _clean(lab)
    assert "river" in lab.text_input(key="l_text").value
    lab.text_input(key="l_text").set_value("").run()  # nothing to read: a hint, not a traceback
    _clean(lab)
    assert _charts(lab) == TOY and any("Type a sentence" in i.value for i in lab.info)
    lab.text_input(key="l_text").set_value("ü ☃ ✓").run()  # odd characters: whatever the model says, no crash
    assert not lab.exception
    lab.text_input(key="l_text").set_value("the cat sat on the mat .").run()
    _clean(lab)
    assert _charts(lab) == TOY + NETWORK
    lab.selectbox(key="l_b").set_value("tiny-transformer").run()  # two Transformers: no half-FFNs to compare
    _clean(lab)
    assert _charts(lab) == TOY + NETWORK - 1 and any("pick a Macaron model" in i.value for i in lab.info)
    monkeypatch.setenv("MACARON_MODEL_ROOTS", "/")  # folders of one's own: on one's own computer only
    lab.run()
    lab.selectbox(key="l_b").set_value("Your own model folder…").run()  # no folder yet: an info
    _clean(lab)
    assert any("Type the path" in i.value for i in lab.info)
    lab.text_input(key="l_b_folder").set_value("/no/such/folder").run()  # a bad folder: a clear error
    assert not lab.exception and any("could not be loaded" in e.value for e in lab.error)
    assert _charts(lab) == TOY + 3  # the Transformer's bars still show; no tie without a Macaron model
    lab.selectbox(key="l_b").set_value("tiny-macaron").run()
    _clean(lab)


def test_post_ln_models_show_their_norms_own_move(tokenizer, tmp_path, monkeypatch):
    """Post-LN (as the shipped minis): 3a adds each model's LayerNorms' own move, hatched, and says why;
    3b says that κ leaves the norm out. Pre-LN models (the other tests) show neither."""
    from conftest import make_tiny_models
    from macaron.sources.loading import load
    from macaron.studies import bridge

    monkeypatch.setenv("MACARON_MODELS_DIR", str(make_tiny_models(tmp_path, tokenizer, norm="post")))
    at = _lab()
    _clean(at)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    bars = {t["name"].split(":")[0]: t for spec in specs for t in spec["data"]
            if "LayerNorms' own move" in t.get("name", "")}
    assert sorted(bars) == ["tiny-macaron", "tiny-transformer"]
    for name, bar in bars.items():  # the norm's own move, not the operator's move beside it
        model = load(str(tmp_path / name))
        want = bridge.norm_move(model, model.trace(at.text_input(key="l_text").value))[0]
        assert bar["marker"]["pattern"]["shape"] == "/" and np.allclose(bar["y"], want, rtol=0.01)
    said = " ".join(c.value for c in at.caption)
    assert "does not shrink with the step" in said and "without the LayerNorm after it" in said


def test_no_models_still_runs_the_toy_lab(app_env, tmp_path, monkeypatch):
    monkeypatch.setenv("MACARON_MODELS_DIR", str(tmp_path))
    at = _lab()
    assert not at.exception
    assert any("No model found" in w.value for w in at.warning)
    assert _charts(at) == TOY  # the toy studies; no trained network to measure
    assert at.slider(key="l_steps").value == 8


def test_url_sets_the_view(app_env):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(MAIN, default_timeout=60)  # as if a shared link had been opened
    at.query_params.update(sys="attention", sub="euler", steps="5", mag="2", show="strang,unsplit", beta="9")
    at.run()
    at.switch_page("views/lab.py")
    at.run()
    _clean(at)
    assert at.radio(key="l_sys").value == "attention" and at.radio(key="l_sub").value == "euler"
    assert at.slider(key="l_steps").value == 5 and at.select_slider(key="l_mag").value == 2
    assert at.multiselect(key="l_show_ms").value == ["strang", "unsplit"]
    assert at.slider(key="l_beta").value == 1.0  # out of range: the default


def _in_order(node):
    """Every element under an AppTest node, in the order the page shows them."""
    kids = getattr(node, "children", None)
    if kids is None:
        yield node
        return
    for k in sorted(kids):
        yield from _in_order(kids[k])


def test_the_step_is_h_everywhere_on_the_page(lab):
    """Issue 77: the README and the site write the step h, the lab wrote γ. No γ is left in any text, formula,
    widget or chart of the page."""
    shown = [str(getattr(e, "value", "")) for e in _in_order(lab.main)] + [str(getattr(e, "value", "")) for e in
                                                                           _in_order(lab.sidebar)]
    shown += [getattr(w, "help", "") or "" for kind in ("slider", "radio", "select_slider", "multiselect")
              for w in lab.get(kind)]
    shown += [c.proto.spec for c in lab.get("plotly_chart")]
    assert not any("γ" in t or "\\gamma" in t or "u03b3" in t for t in shown)
    assert any("step size h" in t for t in shown) and any("O(h^3)" in t or "O(h³)" in t for t in shown)


@pytest.mark.parametrize("query", [{}, {"lesson": "4"}, {"present": "1"}])
def test_f_and_g_are_said_where_they_first_appear(app_env, query):
    """Issue 77: the lab used F and G before it said which is which. The first of the page's own texts that names
    them says F is the diffusion (attention) and G the convection (the FFN), as the registry has them; so does the
    sidebar where it is shown. A lesson step's sentence (macaron.lesson) is not the page's own."""
    from streamlit.testing.v1 import AppTest

    from macaron.schemes import CONVECTION, DIFFUSION, OPERATOR

    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params.update(query)
    at.run()
    if "lesson" not in query:  # a lesson step opens its own page
        at.switch_page("views/lab.py")
        at.run()
    _clean(at)
    assert at.title[0].value.startswith("Splitting lab")
    names = re.compile(r"\b[FG]\b")
    says = re.compile(rf"\bF\b[*\s=]*{OPERATOR[DIFFUSION][0]}\W+{OPERATOR[DIFFUSION][1]}.*\bG\b[*\s=]*"
                      rf"{OPERATOR[CONVECTION][0]}\W+(the )?{OPERATOR[CONVECTION][1]}")
    for where in (at.main, at.sidebar):
        texts = [str(e.value) for e in _in_order(where) if e.type in ("markdown", "caption")
                 and not str(e.value).startswith(":material/school:")]
        first = next((t for t in texts if names.search(t)), None)
        if where is at.sidebar and "present" in query:
            continue  # no sidebar on a projector
        assert first is not None and says.search(first), (query, first)


def test_page_has_no_stray_widget_keys():
    """Every widget key in the page is namespaced l_… (pages share one session state)."""
    src = (ROOT / "app" / "views" / "lab.py").read_text()
    keys = re.findall(r'key="([^"]+)"', src)
    assert keys and all(k.startswith("l_") for k in keys)


def _trained_traces(at) -> list[dict]:
    """The page's last chart's data lines (3e's chart: the last on the page)."""
    return [t for t in json.loads(at.get("plotly_chart")[-1].proto.spec)["data"] if "slope local" in t.get("name", "")]


def test_trained_orders_section_draws_each_models_record_and_names_a_damaged_one(tokenizer, tmp_path, monkeypatch):
    """3e: for a model whose depth is time, its measured orders (macaron.studies.orders' record) as the toy lab's chart,
    with its slopes and their intervals in the table; a damaged record is a warning naming the file; a pair
    without records gets the hint of where they exist."""
    import torch

    import macaron
    from macaron import ModelConfig
    from macaron.studies import orders

    for scheme in ("transformer", "macaron"):
        torch.manual_seed(0)
        cfg = ModelConfig(scheme=scheme, d_model=32, n_layers=2, n_heads=4, ffn_total=128, max_len=128, dropout=0.0,
                          vocab_size=tokenizer.get_vocab_size(), name=f"tiny-{scheme}", norm="post", norm_affine=False,
                          shared=True, step=0.5, tied_halves=scheme == "macaron")
        macaron.save(macaron.build(cfg, tokenizer), tmp_path / f"tiny-{scheme}")
    model = macaron.load(str(tmp_path / "tiny-macaron"))
    record = orders.measure(model, ["the cat sat ."], ["the cat sat ."])
    (tmp_path / "tiny-macaron" / orders.FILE).write_text(json.dumps(record))
    (tmp_path / "tiny-transformer" / orders.FILE).write_text("{\"gammas\": [0.5, 0.2")  # cut short
    monkeypatch.setenv("MACARON_MODELS_DIR", str(tmp_path))
    at = _lab()
    assert not at.exception
    assert any(h.value.startswith("3e") for h in at.subheader)
    assert any("tiny-transformer" in w.value and "orders.json: not valid JSON" in w.value for w in at.warning)
    assert _charts(at) == TOY + NETWORK + 1  # one record: one chart, the page's last
    trained = _trained_traces(at)
    assert len(trained) == 4  # two schemes, two panels (local, global)
    np.testing.assert_allclose(trained[0]["x"], record["gammas"], rtol=1e-3)
    np.testing.assert_allclose(trained[0]["y"], record["local_error"]["lie-trotter"]["exact"], rtol=1e-3)
    table = at.dataframe[-1].value  # 3e's table is the section's last
    row = table[(table["scheme"].str.startswith("Strang")) & (table["sub-flows"] == "exact")].iloc[0]
    fit, low, high = record["local_slope"]["strang"]["exact"]
    assert row["local slope"] == f"{fit:.2f} [{low:.2f}, {high:.2f}] (h³)"  # tied halves: the theorem's 3
    at.radio(key="l_sub3").set_value("euler").run()
    assert not at.exception
    trained = _trained_traces(at)
    np.testing.assert_allclose(trained[0]["y"], record["local_error"]["lie-trotter"]["euler"], rtol=1e-3)
    (tmp_path / "tiny-macaron" / orders.FILE).write_text(json.dumps(dict(record, weights="0" * 16)))
    at.run()  # the weights changed since: stale, so not drawn
    assert not at.exception and _charts(at) == TOY + NETWORK
    assert any("tiny-macaron" in w.value and "measured on other weights" in w.value for w in at.warning)
    (tmp_path / "tiny-macaron" / orders.FILE).unlink()
    (tmp_path / "tiny-transformer" / orders.FILE).unlink()
    import shutil  # neither pick measured, another listed model is (the ODE pair as shipped): that one is drawn
    shutil.copytree(tmp_path / "tiny-macaron", tmp_path / "tiny-ode")
    (tmp_path / "tiny-ode" / orders.FILE).write_text(json.dumps(record))
    at.run()
    assert not at.exception and _charts(at) == TOY + NETWORK + 1
    assert any("Neither model picked above" in i.value and "shown instead: tiny-ode" in i.value for i in at.info)
    solver = at.radio(key="l_sub3").value
    np.testing.assert_allclose(_trained_traces(at)[0]["y"], record["local_error"]["lie-trotter"][solver], rtol=1e-3)
    shutil.rmtree(tmp_path / "tiny-ode")
    at.text_input(key="l_text").set_value("").run()  # 3e reads the folders, not the sentence
    assert not at.exception and any("Neither model has measured orders" in i.value for i in at.info)
