"""macaron.plot: pure figure builders (synthetic trajectories, no model, no Streamlit)."""
from __future__ import annotations

import json

import numpy as np
import plotly
import plotly.graph_objects as go
import pytest

import macaron
from macaron import plot
from macaron.plot import style
from macaron.plot.particles import MOST_LABELLED, plane, plot_widths
from macaron.schemes import CONVECTION, DIFFUSION, FULL, OPERATOR_NAME, SCHEMES
from macaron.studies import analysis

OKABE_ITO = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"}
TOL_WINE = "#882255"  # Paul Tol's muted palette (colour-blind safe), for the one scheme past Okabe–Ito's eight
WIDTHS = (366.0, 940.0)  # a plot's narrowest and widest width in pixels (1024 to 1920 screens)


def validated(fig: go.Figure) -> go.Figure:
    """Plotly's full validation of everything the builder produced, frames included."""
    return go.Figure(fig.to_dict())


def frame_traces(fig: go.Figure, f: int) -> list[dict]:
    """The traces of frame f, complete: the figure's traces with the frame's updates applied."""
    frame = fig.to_dict()["frames"][f]
    traces = [dict(t) for t in fig.to_dict()["data"]]
    for i, update in zip(frame["traces"], frame["data"]):
        traces[i].update(update)
    return traces


def decoded(v) -> np.ndarray:
    """An array as Plotly sends it (a typed-array spec or a list) back as numbers."""
    if isinstance(v, dict):
        import base64
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        return a.reshape([int(s) for s in str(v["shape"]).split(",")]) if "shape" in v else a
    return np.asarray([np.nan if x is None else x for x in np.ravel(v)], dtype=float)


def label_boxes(xy, labels, xr, yr, width, height, narrowest, font=14):
    """Label boxes on a plot `width` wide: beside a dot a fixed offset in pixels, on a leader line a
    fixed place in the data (placed on the narrowest plot)."""
    px = (xy[:, 0] - xr[0]) * width / (xr[1] - xr[0])
    py = (xy[:, 1] - yr[0]) * height / (yr[1] - yr[0])
    out = []
    for i, lab in enumerate(labels):
        w, h = style.text_size(lab.text, font)
        cx = (px[i] * narrowest / width + lab.dx) * width / narrowest if lab.leader else px[i] + lab.dx
        out.append((cx - w / 2, cx + w / 2, py[i] + lab.dy - h / 2, py[i] + lab.dy + h / 2))
    return np.array(out), px, py


def assert_clean_labels(xy, labels, xr, yr, height, widths=WIDTHS, font=14):
    """At every width of the range: inside the plot, no two overlapping, none covering another particle."""
    for width in np.linspace(*widths, 9):
        boxes, px, py = label_boxes(xy, labels, xr, yr, width, height, widths[0], font)
        assert boxes[:, 0].min() >= -1e-6 and boxes[:, 1].max() <= width + 1e-6
        assert boxes[:, 2].min() >= -1e-6 and boxes[:, 3].max() <= height + 1e-6
        for i, a in enumerate(boxes):
            rest = boxes[i + 1:]
            assert not np.any((a[0] < rest[:, 1]) & (rest[:, 0] < a[1]) & (a[2] < rest[:, 3]) & (rest[:, 2] < a[3]))
            d = style.DOT_PX - 0.5
            covered = (px > a[0] - d) & (px < a[1] + d) & (py > a[2] - d) & (py < a[3] + d)
            covered[i] = False
            assert not covered.any(), (labels[i], np.flatnonzero(covered))


# ---- one meaning per colour ---------------------------------------------------------------------
def test_each_colour_has_one_meaning_and_is_colour_blind_safe():
    kinds = {style.KIND_COLOR[DIFFUSION], style.KIND_COLOR[CONVECTION]}
    schemes = [style.scheme_style(s) for s in SCHEMES]
    assert len(kinds) == 2 and kinds | {s.color for s in schemes} | {style.EXACT_COLOR} <= OKABE_ITO | {TOL_WINE}
    assert not kinds & {s.color for s in schemes}  # no scheme borrows a kind's colour
    assert len({s.color for s in schemes}) == len(schemes)
    # a sub-step running F and G at once is the unsplit scheme's one step: one meaning, its colour
    assert style.KIND_COLOR[FULL] == style.scheme_style("unsplit").color
    # particles are not coloured: colour on a particles plot means a kind of sub-step
    colors, _ = style.token_style(["a", "b", "[CLS]", "[MASK]"])
    assert colors[0] == colors[1] == style.PARTICLE_COLOR and not set(colors) & (kinds | OKABE_ITO - {"#000000"})
    # models A and B: their own encoding (dash and marker), never a kind's colour
    a, b = style.MODEL_LOOK
    assert a.dash != b.dash and a.symbol != b.symbol and not set(style.SLOT_COLORS) & kinds
    # the same words in every legend
    assert style.scheme_name("transformer") == "Lie–Trotter (Transformer layer)"
    assert style.scheme_name("strang") == "Strang–Marchuk (Macaron layer)"
    assert style.KIND_NAME == OPERATOR_NAME


def test_model_lines_take_their_scheme_colour_and_own_dash(synthetic):
    t, m = synthetic("transformer"), synthetic("macaron")
    colors = plot.model_colors(["transformer", "macaron"])
    fig = validated(plot.lines_over_depth([("A", t.times, t.times), ("B", m.times, m.times)], "y", colors=colors))
    assert [d.line.color for d in fig.data] == [style.scheme_style("lie-trotter").color,
                                                style.scheme_style("strang").color]
    assert [d.line.dash for d in fig.data] == [look.dash for look in style.MODEL_LOOK]
    grey = validated(plot.lines_over_depth([("A", t.times, t.times), ("B", m.times, m.times)], "y"))
    assert {d.line.color for d in grey.data} <= set(style.SLOT_COLORS)


# ---- the particles animation: one figure, one clock -------------------------------------------
@pytest.mark.parametrize("scheme", ["transformer", "macaron"])
def test_particles_animation_redraws_what_changes_and_keeps_one_clock(scheme, synthetic):
    traj = synthetic(scheme)
    proj = analysis.project(traj)
    fig = validated(plot.particles(traj, proj, start=2))
    S = len(traj.labels)
    assert len(fig.frames) == S and fig.layout.sliders[0].active == 2 and len(fig.layout.sliders[0].steps) == S
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["▶ Play", "❚❚ Pause"]
    # every frame is redrawn (titles and annotations change), during Play and when the slider is dragged
    assert fig.layout.updatemenus[0].buttons[0].args[1]["frame"]["redraw"] is True
    assert all(step.args[1]["frame"]["redraw"] is True for step in fig.layout.sliders[0].steps)
    xr, yr = fig.layout.xaxis.range, fig.layout.yaxis.range
    assert fig.layout.xaxis.autorange is False and fig.layout.yaxis.autorange is False
    assert xr[0] <= proj.coords[..., 0].min() and proj.coords[..., 0].max() <= xr[1]
    assert yr[0] <= proj.coords[..., 1].min() and proj.coords[..., 1].max() <= yr[1]
    heat = next(i for i, d in enumerate(fig.data) if d.type == "heatmap")
    for f, frame in enumerate(fig.frames):
        title = frame.layout.title.text
        assert f"sub-step {f} of {traj.n_steps}" in title
        notes = " ".join(a.text for a in frame.layout.annotations)
        z = decoded(frame_traces(fig, f)[heat]["z"])
        if f == 0:
            assert "embedding" in title and "no sub-step yet" in notes
            continue
        step = traj.steps[f - 1]
        assert step.label.split(" · ")[0] in title and OPERATOR_NAME[step.kind] in title
        assert OPERATOR_NAME[step.kind] in notes  # the matrix beside says the same sub-step
        if step.kind == DIFFUSION:  # the matrix of this very sub-step, in per cent
            np.testing.assert_allclose(z, np.rint(100 * traj.mixing[f - 1].mean(0)), atol=0.5)
        else:  # convection: each particle reads only itself
            np.testing.assert_array_equal(z, 100 * np.eye(len(traj.tokens)))
    # the move just made is drawn in its kind's colour, the other kind's move is empty
    kinds = [d.name for d in fig.data]
    f1 = frame_traces(fig, 1)
    moved, other = traj.steps[0].kind, ({DIFFUSION, CONVECTION} - {traj.steps[0].kind}).pop()
    assert np.isfinite(decoded(f1[kinds.index(OPERATOR_NAME[moved])]["x"])).any()
    assert not np.isfinite(decoded(f1[kinds.index(OPERATOR_NAME[other])]["x"])).any()
    assert fig.data[kinds.index(OPERATOR_NAME[moved])].line.color == style.KIND_COLOR[moved]
    assert "PC1" in fig.layout.xaxis.title.text and "%" in fig.layout.xaxis.title.text


def test_particles_label_every_particle_up_to_30_without_overlap(synthetic):
    words = ("after the long meeting , the tired engineers walked slowly to the small cafe near the old station "
             "and ordered coffee , tea and two slices of cake . extraordinarily").split()[:MOST_LABELLED]
    traj = synthetic("macaron", tokens=["[CLS]"] + words + ["[SEP]"], seed=3)
    traj.states[0] *= 1e-3  # the embedding: one dot in the raw view
    proj = analysis.project(traj)
    fig = plot.particles(traj, proj, height=480, width=(660, 1560))
    m = dict(fig.layout.margin.to_plotly_json())
    widths, height = plot_widths((660, 1560), m, fig.layout.xaxis.domain[1]), 480 - m["t"] - m["b"]
    assert widths[0] < 380 and widths[1] > 900  # from a 1024 screen with the sidebar to a 1920 one
    p = plane(traj, proj, size_px=(widths, height))
    (x0, x1), (y0, y1) = p.ranges
    unit = widths[0] / (x1 - x0)
    assert height / (y1 - y0) == pytest.approx(unit)  # true aspect on the narrowest plot ...
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis.scaleratio == 1
    for width in np.linspace(*widths, 5):  # ... kept on a wider one by widening x around its centre, as Plotly does
        xr = ((x0 + x1) / 2 - width / unit / 2, (x0 + x1) / 2 + width / unit / 2)
        for f, labels in enumerate(p.labels):
            assert all(lab is not None for lab in labels), f  # every particle, every frame
            assert_clean_labels(proj.coords[f], labels, xr, p.ranges[1], height, (width, width))
    # the figure draws exactly those labels, in one text trace (leader lines where moved away)
    names = [d.name for d in fig.data]
    f0 = frame_traces(fig, 0)
    assert sorted(f0[names.index("labels")]["text"]) == sorted(lab.text for lab in p.labels[0])
    assert np.isfinite(decoded(f0[names.index("leaders")]["x"])).any()  # the collapsed embedding needs them


@pytest.mark.parametrize("layout", ["random", "one point", "a line", "a cluster and outliers"])
def test_label_placement_has_no_overlaps_at_30_tokens(layout):
    rng = np.random.default_rng(5)
    n = 30
    xy = {"random": rng.standard_normal((n, 2)),
          "one point": rng.standard_normal((n, 2)) * 1e-6,
          "a line": rng.standard_normal((n, 2)) * [1, 0.02],
          "a cluster and outliers": np.vstack([rng.standard_normal((n - 3, 2)) * 0.02, [[5, 5], [-5, 3], [0, -4]]])
          }[layout]
    texts = [f"token{i}" for i in range(n)]
    xr, yr = style.padded_range(xy[:, 0]), style.padded_range(xy[:, 1])
    labels = style.place_labels(xy, texts, xr, yr, WIDTHS, 290)
    assert all(lab is not None for lab in labels)
    assert_clean_labels(xy, labels, xr, yr, 290)
    # the [MASK] is labelled first, so in full, whatever is crowded around it (words may be shortened)
    toks = ["word"] * 29 + ["[MASK]"]
    crowd = style.place_labels(np.zeros((30, 2)), toks, (-1, 1), (-1, 1), WIDTHS, 290,
                               order=style.label_priority(toks))
    assert crowd[-1].text == "[MASK]"


def test_labels_stay_put_while_their_place_is_free():
    xy = np.array([[0.0, 0.0], [1.0, 1.0]])
    first = style.place_labels(xy, ["a", "b"], (-2, 2), (-2, 2), WIDTHS, 290)
    moved = style.place_labels(xy + 0.05, ["a", "b"], (-2, 2), (-2, 2), WIDTHS, 290, prefer=first)
    assert moved == first


def test_particles_animation_3d_has_fixed_scene(synthetic):
    traj = synthetic("macaron")
    fig = validated(plot.particles(traj, analysis.project(traj, 3)))
    assert any(d.type == "scatter3d" for d in fig.data)
    for ax in ("xaxis", "yaxis", "zaxis"):
        assert getattr(fig.layout.scene, ax).autorange is False


def test_escaped_text_never_carries_live_html(synthetic):
    evil = "<script>alert(1)</script>"
    traj = synthetic(tokens=["[CLS]", evil, "<b>x</b>", "[SEP]"])
    spec = plot.particles(traj, analysis.project(traj, hide_special=False), labels="all").to_json()
    assert "<script>" not in spec and "&lt;script&gt;" in spec
    assert "<script>" not in json.dumps(plot.mixing_heatmap(traj, 0).to_dict())
    html = plot.attribution_html(traj.tokens, np.array([0.0, 1.0, -0.5, 0.0]))
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_token_style_marks_specials_and_the_mask():
    c, m = style.token_style(["[CLS]", "[MASK]", "a"])
    assert c == [style.SPECIAL_COLOR, style.MASK_COLOR, style.PARTICLE_COLOR]
    assert m == ["square-open", "star", "circle"]


def test_mixing_heatmap(synthetic):
    traj = synthetic("macaron")
    step = analysis.diffusion_steps(traj)[0]
    heat = validated(plot.mixing_heatmap(traj, step, head=1))
    np.testing.assert_allclose(decoded(heat.to_dict()["data"][0]["z"]), np.rint(100 * traj.mixing[step][1]), atol=0.5)
    assert "head 2" in heat.layout.title.text
    with pytest.raises(ValueError, match="convection"):
        plot.mixing_heatmap(traj, 0)  # Macaron starts with ½ convection: no mixing there


# ---- readable from the back of a room ----------------------------------------------------------------
PRESENTER_1280 = dict(width=1204, height=508, font_size=18)  # the figure at 1280 × 720, ?present=1 (Chromium)
SCREEN_1280 = dict(width=916, height=480)                    # and beside the sidebar (Chromium)
LONG = ("after the long meeting , the tired engineers walked slowly to the small cafe near the old station and "
        "ordered coffee , tea and two slices of cake .").split()


def arrow_head(size: float) -> tuple[float, float]:
    """(length, width) in px of plotly.js's "arrow" marker of `size`, from its own definition in the plotly.js this
    Plotly ships: a triangle with its tip at the point and its base 2r·sin(a) behind it, 2·2r·cos(a) wide, r = size/2
    and a = π/k with k read from the source."""
    import re as regex
    from pathlib import Path

    js = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text()
    k = float(regex.search(r"arrow:\{n:53,f:function\(\w,\w,\w\)\{[^}]*?var \w=\w+/([\d.]+),", js).group(1))
    return size * np.sin(np.pi / k), 2 * size * np.cos(np.pi / k)


@pytest.mark.parametrize("size", [{}, PRESENTER_1280])
def test_arrow_heads_show_which_way_each_particle_moved(synthetic, size):
    """Issue 77: the heads were 11 px markers whose tips hid under the dots. Each move now ends in a head at least 14 px
    long and 9 px wide (on a projector larger, with the labels), standing off the particle's dot by its radius and
    rim, so none of it is under the dot drawn on top of it."""
    traj = synthetic("transformer")
    fig = plot.particles(traj, analysis.project(traj), start=1, **size).to_dict()
    data = {d.get("name"): d for d in fig["data"]}
    dot, labels = data["particles"]["marker"], data["labels"]["textfont"]["size"]
    names = [n for n in data if n in (OPERATOR_NAME[DIFFUSION], OPERATOR_NAME[CONVECTION])]
    assert names and list(data).index("particles") > max(list(data).index(n) for n in names)  # dots on top
    for name in names:
        marker = data[name]["marker"]
        assert marker["symbol"] == "arrow" and marker["angleref"] == "previous"
        heads = [s for s in marker["size"] if s]
        assert len(heads) == len(decoded(data["particles"]["x"]))  # one a particle, at the end of its move
        length, width = arrow_head(min(heads))
        assert length >= 14 and width >= 9 and length >= labels  # as long as a label is tall, or longer
        assert marker["standoff"] >= dot["size"] / 2 + dot["line"]["width"]


def test_on_a_projector_the_matrix_names_are_as_large_as_the_labels_or_it_gives_way(synthetic):
    """Issue 77: in presenter mode at 1280 × 720 the matrix's names were 8 px beside 18 px labels. On a projector
    they are the labels' size, each row and column of the matrix at least that tall and wide; where a sentence has
    more tokens than that leaves room for, the matrix gives way to the plane and a note says where who pulls whom
    is (the dotted lines). On a screen the matrix stays, names down to 8 px."""
    short = synthetic("transformer")  # 7 tokens
    fig = plot.particles(short, analysis.project(short), start=1, **PRESENTER_1280).to_dict()
    layout, label = fig["layout"], next(d for d in fig["data"] if d.get("name") == "labels")["textfont"]["size"]
    assert any(d["type"] == "heatmap" for d in fig["data"])
    assert layout["yaxis2"]["tickfont"]["size"] >= label == 18 and layout["xaxis2"]["tickfont"]["size"] >= label
    plot_w = PRESENTER_1280["width"] - layout["margin"]["l"] - layout["margin"]["r"]
    plot_h = PRESENTER_1280["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    n = len(short.tokens)
    assert np.diff(layout["xaxis2"]["domain"])[0] * plot_w / n >= label  # a column as wide as a name is tall
    assert np.diff(layout["yaxis2"]["domain"])[0] * plot_h / n >= label  # a row as tall
    long = synthetic("transformer", tokens=["[CLS]"] + LONG + ["[SEP]"], seed=3)
    fig = plot.particles(long, analysis.project(long), start=1, **PRESENTER_1280).to_dict()
    assert not any(d["type"] == "heatmap" for d in fig["data"]) and "xaxis2" not in fig["layout"]
    plane_share, legend = fig["layout"]["xaxis"]["domain"][1], fig["layout"]["legend"]
    assert 0.64 < plane_share < 1.0  # the plane takes the matrix's room but a column, where the legend stands
    assert legend["orientation"] == "v" and legend["x"] == 1.0 and legend["xanchor"] == "right"
    note = " ".join(a["text"] for a in fig["layout"]["annotations"])
    assert "who pulls whom</b>: the dotted lines" in note
    assert f"its matrix of {len(long.tokens)} words does not fit" in note
    assert any(d.get("name") == "who pulls whom" and d.get("showlegend") is not False for d in fig["data"])
    on_screen = plot.particles(long, analysis.project(long), start=1, **SCREEN_1280).to_dict()
    assert any(d["type"] == "heatmap" for d in on_screen["data"])
    assert 8 <= on_screen["layout"]["yaxis2"]["tickfont"]["size"] <= 12


def test_hovering_a_particle_after_a_diffusion_says_whom_it_listened_to_most(synthetic):
    """Issue 77: on a projector's plane the dotted lines are hard to follow; a particle's hover says it in words,
    read here from the trajectory's own attention weights (head mean, [CLS] and [SEP] hidden, itself left out)."""
    traj = synthetic("transformer", seed=5)
    proj = analysis.project(traj)
    fig = plot.particles(traj, proj)
    words = [t for t, k in zip(traj.tokens, proj.keep) if k]
    for f in range(len(traj.labels)):
        said = next(t for t in frame_traces(fig, f) if t.get("name") == "particles")["hovertext"]
        assert [h.split("<br>")[0] for h in said] == [f"<b>{w}</b>" for w in words]
        if f == 0 or traj.mixing[f - 1] is None:
            assert not any("listened" in h for h in said)
            continue
        w = traj.mixing[f - 1].mean(0)[np.ix_(proj.keep, proj.keep)]
        np.fill_diagonal(w, -1)
        for i, h in enumerate(said):
            j = int(w[i].argmax())
            if w[i, j] >= max(0.05, 1.5 / len(traj.tokens)):
                assert h.endswith(f"listened most to <b>{words[j]}</b> ({100 * w[i, j]:.0f} %)")


def test_a_focus_particle_is_ringed_and_its_weights_are_spelled_out_frame_by_frame(synthetic):
    """Issue 77: at 1280×720 on a projector the matrix gives way; the particle in focus is ringed where it is at every
    frame, and after each attention sub-step the figure names the four it listened to most, read here from the
    trajectory's own weights by a plain sort (head mean, itself and [CLS]/[SEP] included, the row of the matrix)."""
    traj = synthetic("macaron", seed=3)  # "the" twice: a repeated word goes by its place
    proj = analysis.project(traj)
    bank = traj.tokens.index("bank")
    fig = plot.particles(traj, proj, focus=bank, font_size=18, width=1180, height=400)  # the matrix gives way
    kept = int(np.sum(proj.keep[:bank]))
    for f in range(len(traj.labels)):
        ring = next(t for t in frame_traces(fig, f) if t.get("name") == "focus")
        np.testing.assert_allclose([decoded(ring["x"])[0], decoded(ring["y"])[0]], proj.coords[f, kept], rtol=1e-6)
        said = " ".join(a["text"] for a in fig.to_dict()["frames"][f]["layout"]["annotations"])
        if f == 0:
            assert "bank" not in said
        elif traj.mixing[f - 1] is None:
            assert said.endswith("<b>bank</b> reads only itself")
        else:
            row = traj.mixing[f - 1].mean(0)[bank].astype(float)
            top = sorted(range(len(row)), key=lambda j: -row[j])[:4]
            names = ["itself" if j == bank else f"{j}·the" if traj.tokens[j] == "the" else traj.tokens[j] for j in top]
            assert said.endswith("<b>bank</b> listened to: " + " · ".join(
                f"{n} {100 * row[j]:.0f} %" for n, j in zip(names, top)))
    assert not any(t.get("name") == "focus" for t in plot.particles(traj, proj).to_dict()["data"])  # none unasked
    hidden = plot.particles(traj, proj, focus=0)  # [CLS], left out of the plane: named, not ringed
    ring = next(t for t in frame_traces(hidden, 1) if t.get("name") == "focus")
    assert np.isnan(decoded(ring["x"])).all()
    with pytest.raises(macaron.InputError, match="focus=7: no such particle; this trajectory has 7"):
        plot.particles(traj, proj, focus=7)
    validated(fig)


def test_each_frames_title_names_the_guess_given_for_its_state(synthetic):
    """guesses (the logit lens's first answer per state): each frame's title ends with its own, quoted (a lone comma
    stays visible); none asked, none said."""
    traj = synthetic("macaron")
    proj = analysis.project(traj)
    guesses = [[(f"w{f}", f / 100), ("other", 0.0)] for f in range(len(traj.labels))]
    fig = plot.particles(traj, proj, guesses=guesses, start=2).to_dict()
    for f, frame in enumerate(fig["frames"]):
        assert frame["layout"]["title"]["text"].endswith(f"  ·  guess: “w{f}” {f} %")
    assert fig["layout"]["title"]["text"].endswith("guess: “w2” 2 %")  # the opening frame's
    assert not any("guess" in f["layout"]["title"]["text"] for f in plot.particles(traj, proj).to_dict()["frames"])


def test_displacement_bars_span_layer_time_on_one_scale(synthetic):
    t, m = synthetic("transformer"), synthetic("macaron")
    fig = validated(plot.displacement([t, m], ["T", "M"]))
    bars = [d for d in fig.data if d.type == "bar"]
    widths = {d.name: sorted(set(np.round(np.asarray(d.width) / 0.92, 6))) for d in bars if d.xaxis == "x2"}
    assert widths == {OPERATOR_NAME["convection"]: [0.25], OPERATOR_NAME["diffusion"]: [0.5]}
    assert fig.layout.yaxis2.matches == "y"  # the two panels are compared: one ‖Δx‖ scale
    seen = validated(plot.displacement([t], normalised=True))  # the moves the operators read
    moves = analysis.displacement_norms(analysis.standardise(t.states)).mean(1)
    bars = sorted((x, y) for d in seen.data if d.type == "bar" for x, y in zip(d.x, d.y))
    np.testing.assert_allclose([y for _, y in bars], moves, rtol=1e-5)
    validated(plot.displacement_heatmap(t))


def test_compare_animation_synchronised_by_layer_time(synthetic):
    t, m = synthetic("transformer"), synthetic("macaron")
    fig = validated(plot.compare([t, m], [analysis.project(t), analysis.project(m)], ["A", "B"], start_time=1.0))
    grid = analysis.time_grid(t, m)
    assert [f.name for f in fig.frames] == [f"{g:g}" for g in grid]
    f1 = next(f for f in fig.frames if f.name == "1")
    titles = [a.text for a in f1.layout.annotations if a.text.startswith("<b>")]
    assert "layer 1" in titles[0] and "layer 1" in titles[1]  # both panels at the end of layer 1
    assert "t = 1" in f1.layout.title.text
    assert fig.layout.sliders[0].active == list(grid).index(1.0)
    assert fig.layout.sliders[0].steps[0].args[1]["frame"]["redraw"] is True


def test_overlay_animation_on_the_same_clock(synthetic):
    t, m = synthetic("transformer"), synthetic("macaron")
    result = analysis.procrustes(t, m)
    fig = validated(plot.overlay(result, t, m, ["A", "B"], start_time=3.0))
    grid = analysis.time_grid(t, m)
    assert [f.name for f in fig.frames] == [f"{g:g}" for g in grid]
    assert "t = 3" in fig.layout.title.text and "residual here" in fig.layout.title.text
    assert len(fig.data[1].hovertext) == 5  # the words, not [CLS]/[SEP]


def test_other_figures_validate(synthetic):
    t, m = synthetic("transformer"), synthetic("macaron")
    validated(plot.cka(analysis.cka(t, m), t, m, "A", "B"))
    validated(plot.lines_over_depth([("A", t.times, analysis.mean_pairwise_cosine(t.states))], "cos"))
    guesses = [[("paris", 0.5), ("lyon", 0.2)] for _ in t.labels]
    validated(plot.logit_lens(guesses, t))


def test_slides_draw_a_frame_and_the_animation_offline(synthetic):
    import io

    from PIL import Image

    from macaron.plot import slides

    traj = synthetic("transformer")
    proj = analysis.project(traj, normalised=True)
    png = slides.frame(traj, proj, 1)
    assert Image.open(io.BytesIO(png)).size == (2560, 1440)  # 16:9, twice 1280 × 720
    svg = slides.frame(traj, proj, 2, fmt="svg").decode()
    assert "layer 1 · " in svg and OPERATOR_NAME[CONVECTION] in svg and "sub-step 2 of 6" in svg  # text, not paths
    assert style.KIND_COLOR[CONVECTION].lower() in svg.lower()
    gif = Image.open(io.BytesIO(slides.movie(traj, proj)))
    assert gif.n_frames == len(traj.labels) and gif.size == (1280, 720)
    if slides.can_write_mp4():
        assert slides.movie(traj, proj, fmt="mp4")[4:8] == b"ftyp"
    with pytest.raises(ValueError):
        slides.frame(traj, proj, fmt="gif")


def test_html_export_is_self_contained(synthetic):
    t = synthetic()
    html = plot.to_html(plot.particles(t, analysis.project(t)), "demo <x>")
    assert html.lstrip().lower().startswith("<html") or "<!doctype html>" in html.lower()[:200]
    assert "plotly.js" in html.lower() or "Plotly.newPlot" in html
    assert "<script src=" not in html and "<title>demo &lt;x&gt;</title>" in html  # plotly.js inlined
    assert '"frames"' in html or "Plotly.addFrames" in html
